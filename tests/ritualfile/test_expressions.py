from __future__ import annotations

from pathlib import Path

import pytest

from sanctum.ritualfile.expressions import (
    ExpressionError,
    check_expression,
    check_template,
    compile_expression,
    compile_template,
)
from tests.ritualfile.helpers import problems_of, write

KNOWN = {"category", "ticket", "items", "n"}


def test_valid_expression_and_condition() -> None:
    assert check_expression("category == 'billing' and n > 1", KNOWN) == []
    expr = compile_expression("category == 'billing'", sigil="route", field="when")
    assert expr.condition({"category": "billing"}) is True


def test_undefined_name_did_you_mean_and_quote_hint() -> None:
    assert check_expression("categroy == 1", KNOWN) == [
        "'categroy' is not a conduit or input; did you mean 'category'?"
    ]
    assert check_expression("failed", KNOWN) == [
        "'failed' is not a conduit or input; declare it under `aether:` or `inputs:` "
        "(to write the text failed, quote it inside the expression: \"'failed'\")"
    ]


def test_braces_and_syntax() -> None:
    assert check_expression("{{ n > 1 }}", KNOWN) == [
        "braces in an expression field: conditions and set values are bare expressions; "
        "write `n > 1`"
    ]
    assert check_expression("n >", KNOWN) == ["invalid expression: unexpected 'end of template'"]
    assert check_template("{{ n ", KNOWN)[0].startswith("invalid template: unexpected end")


def test_condition_must_be_boolean() -> None:
    expr = compile_expression("n", sigil="route", field="when")
    with pytest.raises(ExpressionError, match="gave int 3, not a boolean") as caught:
        expr.condition({"n": 3})
    assert caught.value.sigil == "route"
    assert caught.value.expression == "n"


def test_runtime_undefined_names_sigil() -> None:
    expr = compile_expression("n + 1", sigil="bump", field="set.n")
    with pytest.raises(ExpressionError, match=r"sigil 'bump': set.n `n \+ 1`: 'n' is undefined"):
        expr.evaluate({})


def test_templates_render_and_native_values() -> None:
    template = compile_template("Hi {{ ticket | upper }}!", sigil="s", field="prompt")
    assert template.render({"ticket": "ada"}) == "Hi ADA!"
    assert compile_template("{{ n * 2 }}", sigil="s", field="a").value({"n": 2}) == 4
    assert compile_template("n={{ n }}", sigil="s", field="a").value({"n": 2}) == "n=2"
    loop = "{% for i in items %}[{{ i }}]{% endfor %}"
    assert check_template(loop, KNOWN) == []
    assert compile_template(loop, sigil="s", field="p").render({"items": [1, 2]}) == "[1][2]"


def test_offered_methods_and_functions() -> None:
    expr = compile_expression("ticket.strip().lower() ~ len(items)", sigil="s", field="f")
    assert expr.evaluate({"ticket": " AB ", "items": [1]}) == "ab1"


# --------------------------------------------------------------------------- filters, tests


def test_misspelled_filter_in_an_expression_is_a_problem_not_a_crash() -> None:
    assert check_expression("out | lenght > 0", {"out"}) == [
        "unknown filter 'lenght'; did you mean 'length'?"
    ]


def test_misspelled_filter_and_unknown_test_in_a_template() -> None:
    problems = check_template("{{ name | uper }} {{ name is nosuch }}", {"name"})
    assert problems[0] == "unknown filter 'uper'; did you mean 'upper'?"
    assert problems[1].startswith("unknown test 'nosuch'; offered tests: boolean, ")
    assert "==" not in problems[1]  # the operator aliases are no names to offer


@pytest.mark.parametrize("name", ["wordwrap", "urlize", "xmlattr", "random", "pprint"])
def test_filters_the_sandbox_left_out_are_named_as_such(name: str) -> None:
    (problem,) = check_expression(f"x | {name}", {"x"})
    assert problem.startswith(f"filter {name!r} is not offered in the sandbox; offered filters: ")


def test_unknown_filter_in_a_ritual_file_is_positioned(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        sanctum: 1
        name: t
        aether: {out: {default: []}}
        entry: a
        sigils:
          a:
            routes:
              - when: "out | lenght > 0"
                to: END
              - to: END
        """,
    )
    assert problems_of(path) == [
        "8:15: sigil 'a': `out | lenght > 0`: unknown filter 'lenght'; did you mean 'length'?"
    ]
