"""A ``${VAR}`` value is data: substituted after templates are compiled, never as source."""

from __future__ import annotations

from pathlib import Path

import pytest

from sanctum import Interrupt
from sanctum.oracle.scripted import ScriptedOracle
from sanctum.ritualfile import compile_ritual, load_ritual
from sanctum.ritualfile.env import interpolate
from sanctum.ritualfile.expressions import check_template, compile_template, shown_source

RITUAL = """\
sanctum: 1
name: data
inputs:
  ticket: {type: string}
aether:
  answer: {}
oracles:
  echo: {provider: scripted, responses: ["ok"]}
entry: ask
sigils:
  ask:
    oracle: echo
    prompt: "Ticket: {{ ticket }} -- ${FOOTER} -- {{ 'q=${FOOTER}' }}"
    output: answer
    next: stop
  stop:
    interrupt: "Stop? ${FOOTER}"
    until: "false"
    next: END
public: [FOOTER]
"""

FOOTERS = [
    "{{ ticket | upper }}",
    "{% for x in range(3) %}X{% endfor %}",
    'it\'s "quoted" \\ {# not a comment #} }} {{',
    "ünïcode 😀 {{",
]


@pytest.mark.parametrize("footer", FOOTERS)
def test_the_model_and_the_interrupt_receive_the_literal_value(tmp_path: Path, footer: str) -> None:
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    path = tmp_path / "data.yaml"
    path.write_text(RITUAL, encoding="utf-8")
    oracle = ScriptedOracle(["ok"])
    spec = load_ritual(path, env={"FOOTER": footer})
    rite = compile_ritual(spec, oracles={"echo": oracle})
    with pytest.raises(Interrupt) as paused:
        rite.invoke({"ticket": "abc"})
    assert paused.value.reason == f"Stop? {footer}"
    messages, _tools = oracle.calls[0]
    prompt = messages[-1]["content"]
    assert prompt == f"Ticket: abc -- {footer} -- q={footer}"


def test_inputs_are_never_rendered_twice(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    path = tmp_path / "data.yaml"
    path.write_text(RITUAL, encoding="utf-8")
    oracle = ScriptedOracle(["ok"])
    rite = compile_ritual(load_ritual(path, env={"FOOTER": "f"}), oracles={"echo": oracle})
    with pytest.raises(Interrupt):
        rite.invoke({"ticket": "{{ 7 * 7 }}"})
    assert oracle.calls[0][0][-1]["content"] == "Ticket: {{ 7 * 7 }} -- f -- q=f"


def test_the_parsed_source_holds_a_placeholder_never_the_value() -> None:
    text, done = interpolate("plain ${X} text", {"X": "{{ y }}"})
    assert text == "plain {{ y }} text"
    assert done[0].at == 6
    assert shown_source(text, done) == "plain ${X} text"
    assert check_template(text, set(), done) == []  # `y` is no name: the value is text
    template = compile_template(text, sigil="s", field="prompt", done=done)
    assert template.render({}) == "plain {{ y }} text"
    assert template.source == "plain ${X} text"
