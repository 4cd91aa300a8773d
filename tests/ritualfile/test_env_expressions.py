"""A ``${VAR}`` value in an expression field is data: a string constant, never source.

Every expression field (``set`` values, ``when``, ``until``, ``scatter.over``, a
scatter's inline ``set``) and spell ``arguments`` bind the value after the expression
is parsed, so ``FOO="1 + 1"`` gives the string ``"1 + 1"`` and a value written to break
out of its quotes (``x) or (1``, ``' or 'a' == 'a``) changes nothing.
"""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path

import pytest

from sanctum import Interrupt
from sanctum.codex.memory import MemoryCodex
from sanctum.errors import RitualFileError, SigilExecutionError
from sanctum.ritualfile import check_ritual, compile_ritual, load_ritual
from sanctum.ritualfile.env import interpolate
from sanctum.ritualfile.expressions import check_expression, compile_expression, shown_source

HOSTILE = [
    "1 + 1",
    "x) or (1",
    "' or 'a' == 'a",
    '" or "a" == "a',
    "{{ secret }}",
    "secret",
    "\\' ~ secret ~ \\'",
    "sanctum_env_0_",
    "ünï 😀 \\u0041",
]


def _write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    path = tmp_path / "r.yaml"
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


def _expression(source: str, env: dict[str, str]) -> object:
    text, done = interpolate(source, env)
    assert check_expression(text, {"secret", "x"}, done) == []
    compiled = compile_expression(text, sigil="s", field="set.v", done=done)
    assert env["FOO"] not in compiled.source or ("${FOO}" in source and not done)
    return compiled.evaluate({"secret": "hidden", "x": 1})


@pytest.mark.parametrize("value", HOSTILE)
def test_a_bare_value_is_a_string_constant(value: str) -> None:
    assert _expression("${FOO}", {"FOO": value}) == value


@pytest.mark.parametrize("value", HOSTILE)
def test_a_value_inside_quotes_is_those_characters(value: str) -> None:
    assert _expression("'<${FOO}>'", {"FOO": value}) == f"<{value}>"
    assert _expression('"<${FOO}>" | upper', {"FOO": value}) == f"<{value.upper()}>"


@pytest.mark.parametrize("value", HOSTILE)
def test_a_value_cannot_change_what_a_condition_means(value: str) -> None:
    assert _expression("x == 2 and ${FOO} == 'no'", {"FOO": value}) is False
    assert _expression("'${FOO}' == 'no'", {"FOO": value}) is False
    assert _expression("${FOO} == '${FOO}'", {"FOO": value}) is True


def test_messages_show_the_variable_never_its_value() -> None:
    text, done = interpolate("${FOO} + 1", {"FOO": "s3cr3t-value"})
    assert shown_source(text, done) == "${FOO} + 1"
    compiled = compile_expression(text, sigil="s", field="set.v", done=done)
    with pytest.raises(Exception) as caught:
        compiled.evaluate({})
    assert "${FOO} + 1" in str(caught.value)
    assert "s3cr3t-value" not in str(caught.value)


def test_a_value_glued_to_a_name_is_a_problem() -> None:
    text, done = interpolate("x${FOO} > 1", {"FOO": "abc"})
    (problem,) = check_expression(text, {"x", "xabc"}, done)
    assert problem.startswith("${FOO} stands inside a name here;")
    text, done = interpolate("x | ${FOO}", {"FOO": "upper"})
    assert check_expression(text, {"x"}, done)[0].startswith("${FOO} stands inside a name")


RITUAL = """
sanctum: 1
name: envdata
inputs:
  secret: {type: string, default: hidden}
aether:
  bare: {}
  quoted: {}
  joined: {}
  listed: {}
  routed: {default: none}
  spread: {}
  called: {}
  nums: {default: [1, 2]}
tomes:
  text: {path: spells}
entry: first
sigils:
  first:
    set:
      bare: "${FOO}"
      quoted: "'<${FOO}>'"
      joined: "${FOO} ~ '|' ~ secret"
      listed: "[${FOO}, ${FOO} | length]"
    next: route
  route:
    routes:
      - when: "${FOO} == '1 + 1' or '${FOO}' == 'x) or (1'"
        to: matched
      - when: "'${FOO}' == 'nope'"
        to: injected
      - to: unmatched
  matched:
    set: {routed: "'matched'"}
    next: spread
  injected:
    set: {routed: "'injected'"}
    next: spread
  unmatched:
    set: {routed: "'unmatched'"}
    next: spread
  spread:
    scatter:
      over: "nums"
      item: n
      into: spread
      sigil: {set: {v: "n ~ ${FOO}"}}
    next: call
  call:
    spell: echo
    arguments: {text: "${FOO}", typed: "{{ ${FOO} }}", nested: {deep: ["<${FOO}>"]}}
    output: called
    next: wait
  wait:
    interrupt: "Proceed with ${FOO}?"
    until: "${FOO} == '1 + 1' or ${FOO} == 'x) or (1'"
    next: END
public: [FOO]
"""

SPELL_JSON = (
    '{"name": "echo", "entrypoint": "spell.py:echo", "description": "Echoes.",'
    ' "parameters": {"type": "object", "properties": {"text": {"type": "string"},'
    ' "typed": {"type": "string"}, "nested": {"type": "object"}}}}'
)


@pytest.fixture
def ritual(tmp_path: Path) -> Path:
    spell = tmp_path / "spells" / "echo"
    spell.mkdir(parents=True)
    (spell / "spell.json").write_text(SPELL_JSON, encoding="utf-8")
    (spell / "spell.py").write_text(
        "def echo(text, typed, nested):\n"
        "    return {'text': text, 'typed': typed, 'nested': nested}\n",
        encoding="utf-8",
    )
    return _write(tmp_path, RITUAL)


@pytest.mark.parametrize("value", ["1 + 1", "x) or (1"])
def test_every_expression_field_takes_the_value_as_data(ritual: Path, value: str) -> None:
    rite = compile_ritual(load_ritual(ritual, env={"FOO": value}))
    final = rite.invoke({})  # `until` holds: the interrupt does not pause
    assert final["bare"] == value
    assert final["quoted"] == f"<{value}>"
    assert final["joined"] == f"{value}|hidden"
    assert final["listed"] == [value, len(value)]
    assert final["routed"] == "matched"
    assert final["spread"] == [{"v": f"1{value}"}, {"v": f"2{value}"}]
    assert final["called"] == {"text": value, "typed": value, "nested": {"deep": [f"<{value}>"]}}


def test_a_value_breaking_out_of_its_quotes_stays_inside(ritual: Path) -> None:
    hostile = "' == '' or '"  # pasted as source: `'' == '' or '' == 'nope'` would hold
    codex = MemoryCodex()
    rite = compile_ritual(load_ritual(ritual, env={"FOO": hostile}), codex=codex)
    with pytest.raises(Interrupt) as paused:
        rite.invoke({}, invocation_id="i")
    assert paused.value.reason == f"Proceed with {hostile}?"
    seal = asyncio.run(codex.get("i"))
    assert seal is not None
    snapshot = seal.aether
    assert snapshot["routed"] == "unmatched"
    assert snapshot["bare"] == hostile
    assert snapshot["called"]["typed"] == hostile


def test_scatter_over_a_value_is_a_string_not_a_list(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        """
        sanctum: 1
        name: t
        aether: {out: {}}
        entry: a
        sigils:
          a:
            scatter: {over: "${ITEMS}", item: it, into: out, sigil: {set: {v: "it"}}}
            next: END
        public: [ITEMS]
        """,
    )
    rite = compile_ritual(load_ritual(path, env={"ITEMS": "[1, 2, 3]"}))
    with pytest.raises(SigilExecutionError) as caught:
        rite.invoke({})
    assert "scatter.over `${ITEMS}` gave str '[1, 2, 3]', not a list" in str(caught.value)


def test_a_plain_yaml_value_is_typed_as_yaml_then_never_evaluated(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        """
        sanctum: 1
        name: t
        aether: {num: {}, s: {}}
        entry: a
        sigils:
          a:
            set:
              num: ${NUM}
              s: ${SUM}
            next: END
        public: [NUM, SUM]
        """,
    )
    rite = compile_ritual(load_ritual(path, env={"NUM": "5", "SUM": "2 * 3"}))
    assert rite.invoke({}) == {"num": 5, "s": "2 * 3"}


def test_validate_names_the_variable_and_never_shows_its_value(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        """
        sanctum: 1
        name: t
        aether: {x: {}}
        entry: a
        sigils:
          a: {set: {x: "nope${KEYISH} + 1"}, next: END}
        """,
    )
    problems = check_ritual(path, env={"KEYISH": "value-0f-the-env"})
    assert [p.message for p in problems] == [
        "sigil 'a': `nope${KEYISH} + 1`: ${KEYISH} stands inside a name here; a value read "
        "from the environment is text, never expression source: use it alone as a value, or "
        "inside quotes ('...${KEYISH}...')"
    ]
    with pytest.raises(RitualFileError) as caught:
        compile_ritual(path, env={"KEYISH": "value-0f-the-env"})
    assert "value-0f-the-env" not in str(caught.value)
