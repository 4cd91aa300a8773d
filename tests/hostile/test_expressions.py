"""Hostile expressions: every refusal names the sigil and the expression."""

from __future__ import annotations

from pathlib import Path

import pytest

from sanctum.errors import RitualFileError, SigilExecutionError
from sanctum.ritualfile import compile_ritual
from sanctum.ritualfile.expressions import ExpressionError, compile_expression, compile_template

RUNTIME_REFUSALS = {
    "'x' * 10**9": "repetition would build",
    "[0] * 10**9": "repetition would build",
    "range(10**9) | list": "range of 1000000000 items refused",
    "10 ** 100000": "is too large",
    "'%999999999d' % 1": "huge or computed width",
    "s.__class__": "refused",
    "s.format(1)": "not offered",
    "s|attr('__class__')": "refused",
    "(s ~ s) * 600000": "repetition would build",
}


@pytest.mark.parametrize("source", sorted(RUNTIME_REFUSALS))
def test_runtime_refusals_name_sigil_and_expression(source: str) -> None:
    expr = compile_expression(source, sigil="evil", field="set.x")
    with pytest.raises(ExpressionError) as caught:
        expr.evaluate({"s": "ab"})
    message = str(caught.value)
    assert message.startswith(f"sigil 'evil': set.x `{source}`: ")
    assert RUNTIME_REFUSALS[source] in message
    assert caught.value.sigil == "evil"
    assert caught.value.expression == source


def test_template_output_is_capped() -> None:
    template = compile_template(
        "{% for i in range(10000) %}{% for j in range(10000) %}xxxxxxxxxx{% endfor %}{% endfor %}",
        sigil="evil",
        field="prompt",
    )
    with pytest.raises(ExpressionError, match="template output exceeds"):
        template.render({})


STATIC_REFUSALS = [
    ("x.__class__.__mro__", "attribute '__class__' refused"),
    ("cycler.__init__.__globals__", "attribute '__init__' refused"),
    ("lipsum(n=10**9)", "calling 'lipsum' is not offered"),
    ("x.format(1)", "calling method 'format' is not offered"),
    ("(x)(1)", "calling 'x' is not offered"),
]


@pytest.mark.parametrize(("source", "expected"), STATIC_REFUSALS)
def test_refused_at_validate_time_with_position(source: str, expected: str, tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    path = tmp_path / "r.yaml"
    path.write_text(
        "sanctum: 1\nname: t\naether: {x: {}}\nentry: a\nsigils:\n"
        f'  a:\n    set: {{x: "{source}"}}\n    next: END\n'
    )
    with pytest.raises(RitualFileError) as caught:
        compile_ritual(path)
    first = caught.value.problems[0]
    assert (first.line, first.column) == (7, 14)
    assert first.message.startswith(f"sigil 'a': `{source}`: ")
    assert any(expected in p.message for p in caught.value.problems)


def test_template_statements_refused(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    path = tmp_path / "r.yaml"
    path.write_text(
        "sanctum: 1\nname: t\naether: {x: {}}\noracles: {o: {provider: scripted}}\nentry: a\n"
        "sigils:\n  a:\n    oracle: o\n    prompt: \"{% include '/etc/passwd' %}\"\n"
        "    output: x\n    next: END\n"
    )
    with pytest.raises(RitualFileError, match="9:13: sigil 'a': statement include is not allowed"):
        compile_ritual(path)


def test_refusal_at_run_time_fails_the_sigil(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    path = tmp_path / "r.yaml"
    path.write_text(
        "sanctum: 1\nname: t\naether: {x: {}}\ninputs: {count: {type: integer}}\nentry: a\n"
        "sigils:\n  a: {set: {x: \"'x' * count\"}, next: END}\n"
    )
    rite = compile_ritual(path)
    with pytest.raises(SigilExecutionError) as caught:
        rite.invoke({"count": 10**9})
    assert isinstance(caught.value.__cause__, ExpressionError)
    assert "sigil 'a': set.x `'x' * count`" in str(caught.value.__cause__)
