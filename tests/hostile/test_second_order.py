"""No second-order rendering: run data is never template or expression source.

Inputs, ``resume --update`` values, spell results and model outputs holding
``{{ ... }}``, ``{% ... %}`` or ``${X}`` reach the model, the Aether, the interrupt
reason and the Seals as those very characters.
"""

from __future__ import annotations

import asyncio
import json
import textwrap
from pathlib import Path

import pytest

from sanctum.api import resume, run
from sanctum.codex.memory import MemoryCodex
from sanctum.errors import Interrupt
from sanctum.oracle.scripted import ScriptedOracle
from sanctum.ritualfile import compile_ritual, load_ritual
from tests.cli.helpers import invoke

HOSTILE = [
    "{{ secret }}",
    "{{ 7 * 7 }}",
    "{% for i in range(3) %}X{% endfor %}",
    "${HOME}",
    "${SECRET_VAR:-x}",
    "$${X} {# comment #} {%- raw %}{{ raw }}{% endraw %}",
    "}} {{ {% %} '\" \\",
]

RITUAL = """
sanctum: 1
name: echo
inputs:
  ticket: {type: string}
  secret: {type: string, default: "the-conduit-secret"}
aether:
  answer: {}
  second: {}
  found: {}
  approved: {default: ""}
  verdict: {}
oracles:
  model: {provider: scripted, responses: ["unused"]}
tomes:
  tools: {path: spells}
entry: ask
sigils:
  ask:
    oracle: model
    system: "You answer {{ ticket | length }} chars."
    prompt: "Ticket: {{ ticket }}"
    output: answer
    next: look
  look:
    spell: echo
    arguments: {text: "{{ answer }}"}
    output: found
    next: again
  again:
    oracle: model
    prompt: "Model said: {{ answer }} / spell said: {{ found }}"
    output: second
    next: wait
  wait:
    interrupt: "Approve {{ approved }} for {{ found }}?"
    until: "approved != ''"
    next: judge
  judge:
    set: {verdict: "approved ~ ' | ' ~ found"}
    next: END
"""


def _folder(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    spell = tmp_path / "spells" / "echo"
    spell.mkdir(parents=True)
    (spell / "spell.json").write_text(
        '{"name": "echo", "entrypoint": "spell.py:echo", "description": "Echoes.",'
        ' "parameters": {"type": "object", "properties": {"text": {"type": "string"}}}}',
        encoding="utf-8",
    )
    (spell / "spell.py").write_text(
        "def echo(text):\n    return 'spell<' + text + '>'\n", encoding="utf-8"
    )
    path = tmp_path / "echo.yaml"
    path.write_text(textwrap.dedent(RITUAL).lstrip(), encoding="utf-8")
    return path


@pytest.mark.parametrize("text", HOSTILE)
def test_input_model_output_spell_result_and_update_are_never_rendered_again(
    tmp_path: Path, text: str
) -> None:
    path = _folder(tmp_path)
    oracle = ScriptedOracle([f"model<{text}>", "fine"])
    codex = MemoryCodex()
    rite = compile_ritual(load_ritual(path, env={}), oracles={"model": oracle}, codex=codex)
    with pytest.raises(Interrupt) as paused:
        rite.invoke({"ticket": text}, invocation_id="i")
    first, second = (messages for messages, _tools in oracle.calls)
    assert first[0]["content"] == f"You answer {len(text)} chars."
    assert first[-1]["content"] == f"Ticket: {text}"
    assert second[-1]["content"] == (
        f"Model said: model<{text}> / spell said: spell<model<{text}>>"
    )
    assert paused.value.reason == f"Approve  for spell<model<{text}>>?"
    final = rite.invoke(None, invocation_id="i", updates={"approved": text})
    assert final["ticket"] == text
    assert final["answer"] == f"model<{text}>"
    assert final["found"] == f"spell<model<{text}>>"
    assert final["verdict"] == f"{text} | spell<model<{text}>>"
    seals = asyncio.run(codex.list("i"))
    assert any(seal.metadata.get("updates") == {"approved": text} for seal in seals)


def test_the_facade_and_the_command_line_keep_an_update_verbatim(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _folder(tmp_path)
    said = "model {{ secret }} {% if true %}yes{% endif %}"
    path.write_text(
        path.read_text(encoding="utf-8").replace(
            'responses: ["unused"]', f"responses: [{said!r}, 'fine']"
        ),
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    text = "{{ secret }} {% if true %}yes{% endif %} ${HOME}"
    paused = asyncio.run(
        run(path, inputs={"ticket": text}, codex="sqlite:///c.db", invocation_id="i").wait()
    )
    assert paused.status == "paused"
    assert paused.reason == f"Approve  for spell<{said}>?"
    done = asyncio.run(resume("i", updates={"approved": text}, codex="sqlite:///c.db").wait())
    assert done.status == "done"
    assert done.aether["verdict"] == f"{text} | spell<{said}>"
    assert done.aether["answer"] == said
    shown = invoke(
        ["seals", "--invocation", "i", "--codex", "sqlite:///c.db", "--json", "--values"],
        tmp_path,
    )
    assert shown.exit_code == 0, shown.output
    assert json.dumps(text)[1:-1] in shown.stdout


def test_a_command_line_input_and_update_holding_template_text_stay_text(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    path = tmp_path / "pause.yaml"
    path.write_text(
        textwrap.dedent(
            """\
            sanctum: 1
            name: pause
            inputs:
              note: {type: string}
            aether:
              reply: {default: ""}
              both: {}
            entry: wait
            sigils:
              wait:
                interrupt: "Note {{ note }}; reply {{ reply }}"
                until: "reply != ''"
                next: join
              join:
                set: {both: "note ~ ' + ' ~ reply"}
                next: END
            """
        ),
        encoding="utf-8",
    )
    text = "{{ note }}{% set x = 1 %}${HOME}"
    paused = invoke(
        ["run", str(path), "-i", f"note={text}", "--invocation", "p", "--json"], tmp_path
    )
    assert paused.exit_code == 3, paused.output
    result = json.loads(paused.stdout.splitlines()[-1])
    assert result["reason"] == f"Note {text}; reply "
    resumed = invoke(["resume", "--invocation", "p", "-u", f"reply={text}", "--json"], tmp_path)
    assert resumed.exit_code == 0, resumed.output
    final = json.loads(resumed.stdout.splitlines()[-1])
    assert final["aether"]["both"] == f"{text} + {text}"
    assert final["aether"]["note"] == text
