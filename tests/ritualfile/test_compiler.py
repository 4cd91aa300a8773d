from __future__ import annotations

from pathlib import Path

import pytest

from sanctum.codex.memory import MemoryCodex
from sanctum.errors import ExpressionError, Interrupt, RitualFileError, SanctumError
from sanctum.oracle.scripted import ScriptedOracle
from sanctum.ritual import Rite
from sanctum.ritualfile import check_ritual, compile_ritual, load_ritual
from tests.ritualfile.helpers import MINIMAL, problems_of, write


def test_compile_minimal(tmp_path: Path) -> None:
    rite = compile_ritual(write(tmp_path, MINIMAL))
    assert isinstance(rite, Rite)
    assert rite.manifest["sigils"] == ["a"]
    assert rite.invoke({}) == {"x": 1}


async def test_interrupt_until_and_resume(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        sanctum: 1
        name: t
        aether: {ok: {default: false}, said: {}}
        oracles: {o: {provider: scripted, responses: ["hello"]}}
        entry: speak
        sigils:
          speak: {oracle: o, prompt: "hi", output: said, next: ask}
          ask:
            interrupt: "Approve {{ said }}?"
            until: ok
            next: END
        """,
    )
    rite = compile_ritual(path, codex=MemoryCodex())
    with pytest.raises(Interrupt) as paused:
        await rite.ainvoke({}, invocation_id="i")
    assert paused.value.reason == "Approve hello?"
    assert await rite.ainvoke(invocation_id="i", updates={"ok": True}) == {
        "said": "hello",
        "ok": True,
    }


def test_oracle_override_and_usage_messages(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        sanctum: 1
        name: t
        aether: {said: {}, messages: {reducer: append}}
        oracles: {o: {provider: openai, model: m, base_url: "http://127.0.0.1:9/v1"}}
        entry: speak
        sigils:
          speak: {oracle: o, prompt: "hi", output: said, messages: messages, next: END}
        """,
    )
    from sanctum.oracle.base import OracleResponse

    oracle = ScriptedOracle([OracleResponse(text="yo", usage={"prompt_tokens": 3})])
    result = compile_ritual(path, oracles={"o": oracle}).invoke({})
    assert result["said"] == "yo"
    assert result["messages"] == [
        {"role": "assistant", "content": "yo", "usage": {"prompt_tokens": 3}}
    ]
    assert oracle.calls[0][0] == [{"role": "user", "content": "hi"}]


def test_engine_errors_point_at_sigils(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        sanctum: 1
        name: t
        aether: {x: {}}
        entry: a
        sigils:
          a: {set: {x: "1"}, next: END}
          lonely: {set: {x: "2"}, next: END}
        """,
    )
    assert [str(p) for p in check_ritual(path)] == [
        f"{path}:7:3: sigil 'lonely' cannot be reached: no `entry`, `next`, `routes` or "
        "`on_error` leads to it; add it to a `next:` (or a route) or remove it"
    ]


def test_call_resolution_is_scoped_and_lazy(tmp_path: Path) -> None:
    (tmp_path / "steps.py").write_text(
        "def double(aether):\n    return {'x': aether['x'] * 2}\nraise_on_import = False\n"
    )
    path = write(
        tmp_path,
        """
        sanctum: 1
        name: t
        inputs: {x: {type: integer}}
        entry: a
        sigils:
          a: {call: "steps:double", next: END}
          b: {call: "steps:nope", next: END}
        """,
    )
    # validate without resolving never imports: only the graph check runs
    problems = check_ritual(path)
    assert [p.message.split(":")[0] for p in problems] == ["sigil 'b' cannot be reached"]
    with pytest.raises(RitualFileError) as caught:
        compile_ritual(path)
    assert any(
        p.line == 7 and "module 'steps' has no 'nope'" in p.message for p in caught.value.problems
    )


def test_policy_and_named_policy(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        sanctum: 1
        name: t
        aether: {x: {}}
        policies:
          quick:
            {timeout: 0.5, retries: 2, backoff: {base: 0.01, cap: 0.01}, retry_on: [ValueError]}
        default_policy: quick
        entry: a
        sigils:
          a: {set: {x: "1"}, next: END, policy: {timeout: 1}}
        """,
    )
    rite = compile_ritual(path)
    assert rite.invoke({}) == {"x": 1}


def test_circle_cycle_shows_chain(tmp_path: Path) -> None:
    body = """
    sanctum: 1
    name: {name}
    aether: {{x: {{}}}}
    entry: c
    sigils:
      c: {{circle: {other}, next: END}}
    """
    write(tmp_path, body.format(name="a", other="b.yaml"), "a.yaml")
    write(tmp_path, body.format(name="b", other="a.yaml"), "b.yaml")
    lines = problems_of(tmp_path / "a.yaml")
    assert lines[0] == "6:15: circle file 'b.yaml' has problems (see below)"
    assert lines[1] == "6:15: circle files form a cycle: a.yaml -> b.yaml -> a.yaml"


def test_load_returns_spec_with_source(tmp_path: Path) -> None:
    spec = load_ritual(write(tmp_path, MINIMAL))
    assert spec.name == "tiny"
    assert spec._source is not None


def test_module_calling_sys_exit_is_a_positioned_problem(tmp_path: Path) -> None:
    (tmp_path / "steps.py").write_text("import sys\nsys.exit(3)\n")
    (tmp_path / "reduce.py").write_text("raise SystemExit('bye')\n")
    path = write(
        tmp_path,
        """
        sanctum: 1
        name: t
        aether: {x: {reducer: "reduce:pick"}}
        entry: a
        sigils:
          a: {call: "steps:double", next: END}
        """,
    )
    assert check_ritual(path) == []  # nothing is imported without resolve
    with pytest.raises(RitualFileError) as caught:
        compile_ritual(path)
    assert [str(p) for p in caught.value.problems] == [
        f"{path}:3:23: reducer: module 'reduce' called sys.exit('bye') while being imported; "
        'move that call under `if __name__ == "__main__":`',
        f"{path}:6:13: call: module 'steps' called sys.exit(3) while being imported; "
        'move that call under `if __name__ == "__main__":`',
    ]


def test_spell_module_calling_sys_exit_is_a_positioned_problem(tmp_path: Path) -> None:
    spell = tmp_path / "spells" / "desk" / "quit"
    spell.mkdir(parents=True)
    (spell / "spell.json").write_text(
        '{"name": "quit", "entrypoint": "spell.py:quit", "description": "Quits.",'
        ' "parameters": {"type": "object", "properties": {}}}'
    )
    (spell / "spell.py").write_text("import sys\nsys.exit(4)\ndef quit():\n    return 1\n")
    path = write(
        tmp_path,
        """
        sanctum: 1
        name: t
        aether: {x: {}}
        tomes: {desk: {path: spells}}
        entry: a
        sigils:
          a: {spell: quit, output: x, next: END}
        """,
    )
    with pytest.raises(RitualFileError) as caught:
        compile_ritual(path)
    manifest = path.parent / "spells" / "desk" / "quit" / "spell.json"
    assert [str(p) for p in caught.value.problems] == [
        f"{path}:4:22: tome 'desk': {manifest}: importing spell.py called sys.exit(4)"
    ]


def test_a_circle_naming_a_folder_says_so(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        sanctum: 1
        name: t
        entry: a
        sigils:
          a: {circle: ., next: END}
        """,
    )
    (message,) = problems_of(path)
    assert message.startswith("5:15: circle '.' is a folder (")
    assert message.endswith("name a ritual file in it, e.g. `circle: parts/step.yaml`")


SCATTER = """
sanctum: 1
name: t
aether: {nums: {default: NUMS}, out: {}}
entry: a
sigils:
  a:
    scatter: {over: nums, into: out, PICK sigil: {call: "scatter_steps:double"}}
    next: END
"""


def _scatter(tmp_path: Path, nums: str, pick: str = "") -> Rite:
    (tmp_path / "scatter_steps.py").write_text(
        "def double(aether):\n    return {'result': aether['item'] * 2}\n"
    )
    text = SCATTER.replace("NUMS", nums).replace("PICK ", f"pick: {pick}, " if pick else "")
    return compile_ritual(write(tmp_path, text))


def test_scatter_over_a_non_list_names_the_expression_and_type(tmp_path: Path) -> None:
    with pytest.raises(SanctumError) as caught:
        _scatter(tmp_path, "5").invoke({})
    cause = caught.value.__cause__
    assert isinstance(cause, ExpressionError)
    assert str(cause) == "sigil 'a': scatter.over `nums` gave int 5, not a list to scatter over"


def test_scatter_pick_of_a_missing_key_names_the_keys_there_are(tmp_path: Path) -> None:
    assert _scatter(tmp_path, "[1, 2]", "result").invoke({})["out"] == [2, 4]
    with pytest.raises(SanctumError) as caught:
        _scatter(tmp_path, "[1, 2]", "nosuch").invoke({})
    assert str(caught.value.__cause__) == (
        "sigil 'a': scatter.pick 'nosuch': the result of item 0 has no key 'nosuch' "
        "(its keys: 'result'); pick one of them"
    )


async def test_an_agents_echoed_omens_are_masked_by_the_files_redactions(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        r"""
        sanctum: 1
        name: leak
        inputs:
          ticket: {type: string}
        aether:
          messages: {reducer: append, default: []}
          finding: {}
        oracles:
          local:
            provider: scripted
            responses: ["Customer bob@example.com, key sk-abcdefghijklmnopqrstuvwxyz"]
        entry: investigate
        sigils:
          investigate:
            agent: {oracle: local}
            prompt: "{{ ticket }}"
            output: finding
            next: END
        wards:
          - redact: {patterns: ['sk-[A-Za-z0-9]{20,}', '[\w.+-]+@[\w-]+\.[\w.]+']}
        """,
    )
    rite = compile_ritual(load_ritual(path), codex=MemoryCodex())
    seen = [repr(omen) async for omen in rite.astream({"ticket": "hi"}, mode="omens")]
    assert any("CircleEchoed" in text for text in seen)
    joined = "\n".join(seen)
    assert "bob@example.com" not in joined
    assert "sk-abcdefghij" not in joined
    assert "[REDACTED]" in joined
