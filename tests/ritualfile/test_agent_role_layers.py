"""The agent block's role as layers: checked where written, compiled, and what is sent."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from sanctum.api import validate_warnings
from sanctum.oracle import OracleResponse, ScriptedOracle, SpellCall
from sanctum.oracle.base import Message
from sanctum.ritualfile import check_ritual, compile_ritual

from .helpers import write

SOUL = "You are the helpdesk of Acme Pumps.\nAnswer in two sentences at most.\n"

SPELL = '''
def order(number: str) -> str:
    """Look an order up.

    Args:
        number: The order number.
    """
    return f"order {number}: shipped on Monday"
'''

RITUAL = """
sanctum: 1
name: helpdesk
inputs:
  question: {type: string}
  today: {type: string, default: Monday}
aether:
  messages: {reducer: append}
  tier: {default: gold}
  answer: {}
oracles:
  main: {provider: scripted}
tomes:
  desk: {path: spells}
entry: work
sigils:
  work:
    agent:
      oracle: main
      tome: desk
      role: ROLE
    prompt: "{{ question }}"
    output: answer
    next: END
"""

LAYERS = """
        stable: {file: SOUL.md}
        context: "Customer tier: {{ tier }}"
        volatile: "Today: {{ today }}"
"""


def ritual(tmp_path: Path, role: str) -> Path:
    folder = tmp_path / "spells" / "order"
    folder.mkdir(parents=True)
    (folder / "spell.py").write_text(SPELL, encoding="utf-8")
    (folder / "spell.json").write_text(
        '{"name": "order", "entrypoint": "spell.py:order", "access": "read"}', encoding="utf-8"
    )
    (tmp_path / "SOUL.md").write_text(SOUL, encoding="utf-8")
    return write(tmp_path, RITUAL.replace("ROLE", role))


def located(path: Path) -> list[str]:
    return [f"{p.line}:{p.column}: {p.message}" for p in check_ritual(path)]


def script() -> list[OracleResponse | str]:
    return [
        OracleResponse("", [SpellCall("order", {"number": "A-1"})]),
        OracleResponse("", [SpellCall("order", {"number": "A-2"})]),
        "Both orders shipped on Monday.",
    ]


def raw(messages: list[Message]) -> str:
    return json.dumps(messages, ensure_ascii=False)


def test_a_string_role_is_sent_as_the_seed_s_first_message(tmp_path: Path) -> None:
    path = ritual(tmp_path, '"Be brief."')
    oracle = ScriptedOracle(script())
    final = compile_ritual(path, oracles={"main": oracle}).invoke({"question": "Where?"})
    assert all(m[0] == {"role": "system", "content": "Be brief."} for m, _ in oracle.calls)
    assert "system_prompt" not in final


def test_layers_send_the_file_and_the_context_once_and_volatile_last(tmp_path: Path) -> None:
    path = ritual(tmp_path, LAYERS)
    assert located(path) == []
    oracle = ScriptedOracle(script())
    rite = compile_ritual(path, oracles={"main": oracle})
    final = rite.invoke({"question": "Where are orders A-1 and A-2?"})
    assert final["answer"] == "Both orders shipped on Monday."
    requests = [messages for messages, _ in oracle.calls]
    assert len(requests) == 3
    system = {"role": "system", "content": f"{SOUL.rstrip()}\n\nCustomer tier: gold"}
    assert all(request[0] == system for request in requests)
    for before, after in itertools.pairwise(requests):
        assert raw(after[: len(before) - 1]) == raw(before[:-1])
    # the volatile template sees the run's Aether (as `prompt:` does), at each consultation
    assert requests[0][-1]["content"] == "Where are orders A-1 and A-2?\n\nToday: Monday"
    for request in requests:
        assert [i for i, m in enumerate(request) if "Today:" in m["content"]] == [len(request) - 1]
    assert "Today:" not in json.dumps(final)
    assert [m["role"] for request in requests for m in request].count("system") == 3


def test_a_misspelled_layer_key_is_placed_with_a_did_you_mean(tmp_path: Path) -> None:
    path = ritual(tmp_path, LAYERS.replace("volatile:", "volatil:"))
    assert located(path) == [
        "23:9: unknown key 'volatil' in sigil 'work' (agent.role); did you mean 'volatile'? "
        "(allowed: context, stable, volatile)"
    ]


def test_a_misspelled_file_key_is_placed_with_a_did_you_mean(tmp_path: Path) -> None:
    path = ritual(tmp_path, LAYERS.replace("{file:", "{fil:"))
    problems = located(path)
    assert (
        "21:18: unknown key 'fil' in sigil 'work' (agent.role.stable); did you mean 'file'? "
        "(allowed: file)" in problems
    )


def test_a_missing_role_file_is_reported_at_its_name(tmp_path: Path) -> None:
    path = ritual(tmp_path, LAYERS.replace("SOUL.md", "SOUL-v2.md"))
    wanted = (tmp_path / "SOUL-v2.md").resolve()
    assert located(path) == [
        f"21:24: sigil 'work': role file 'SOUL-v2.md' does not exist ({wanted}); create it, "
        "or write `stable:` as text"
    ]


def test_a_role_file_outside_the_project_is_refused(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (tmp_path / "secret.md").write_text("outside", encoding="utf-8")
    path = ritual(project, LAYERS.replace("SOUL.md", "../secret.md"))
    problems = located(path)
    assert len(problems) == 1
    assert problems[0].startswith("21:24: sigil 'work': role file '../secret.md' resolves to ")
    assert "outside the project folder" in problems[0]


def test_a_layer_template_naming_an_unknown_conduit_is_placed(tmp_path: Path) -> None:
    path = ritual(tmp_path, LAYERS.replace("{{ tier }}", "{{ teir }}"))
    assert located(path) == [
        "22:18: sigil 'work': 'teir' is not a conduit or input; did you mean 'tier'?"
    ]


def test_a_literal_stable_layer_needs_no_file(tmp_path: Path) -> None:
    path = ritual(tmp_path, '\n        stable: "Be kind."\n        context: "Tier {{ tier }}"')
    oracle = ScriptedOracle(["Hello."])
    compile_ritual(path, oracles={"main": oracle}).invoke({"question": "Hi"})
    assert oracle.calls[0][0][0] == {"role": "system", "content": "Be kind.\n\nTier gold"}
    assert oracle.calls[0][0][-1] == {"role": "user", "content": "Hi"}


def test_validate_warns_when_the_context_reads_an_input(tmp_path: Path) -> None:
    path = ritual(tmp_path, LAYERS.replace("{{ tier }}", "{{ tier }} ({{ question }})"))
    assert located(path) == []  # a warning, not an error
    warnings = [f"{w.line}:{w.column}: {w.message}" for w in validate_warnings(path)]
    assert warnings == [
        "22:18: warning: sigil 'work': the role's context reads input 'question', text the "
        "caller supplies, into the system prompt; move it to `prompt:` or `volatile:` unless "
        "every caller is trusted"
    ]
    assert validate_warnings(ritual(tmp_path / "clean", LAYERS)) == []


def test_an_empty_role_file_name_is_placed_and_named(tmp_path: Path) -> None:
    path = ritual(tmp_path, LAYERS.replace("SOUL.md", '""'))
    assert located(path) == ["21:24: sigil 'work': role file is empty; name a file such as SOUL.md"]


def test_a_role_file_that_is_a_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "persona").mkdir()
    path = ritual(tmp_path, LAYERS.replace("SOUL.md", "persona"))
    problems = located(path)
    assert len(problems) == 1
    assert problems[0].startswith("21:24: sigil 'work': role file 'persona' is a folder (")
