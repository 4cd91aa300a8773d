"""Expressions are bounded before they allocate.

Every operation that builds a string or a list sizes its result first and refuses
past MAX_ITEMS (1,000,000 characters or items); one evaluation builds at most
MAX_BUILT_BYTES in all. A part of an expression that depends on no name is evaluated
when the file is validated, so its refusal is a positioned problem (exit status 2);
anything else is refused at run time, failing the sigil with a message naming the
sigil and the field. The memory bound is measured in a subprocess.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sanctum.errors import RitualFileError, SigilExecutionError
from sanctum.ritualfile import check_ritual, compile_ritual
from sanctum.ritualfile.expressions import (
    MAX_BUILT_BYTES,
    MAX_ITEMS,
    ExpressionError,
    check_expression,
    compile_expression,
    compile_template,
)
from tests.cli.helpers import sanctum

THE_EXAMPLE = "(('x' * 100000).replace('x', 'x' * 10000)) | length"

AETHER = {"s": "x", "n": 100_000, "m": 10_000, "big": "y" * 900_000, "one": [0], "w": "😀"}

RUN_TIME = {
    "((s * n).replace(s, s * m)) | length": "replace() would build 1,000,000,000",
    "(s * n) | replace(s, s * m) | length": "filter replace would build 1,000,000,000",
    "((s * n) ~ (s * n) ~ (s * n) ~ (s * n) ~ (s * n) ~ (s * n) ~ (s * n) ~ (s * n) ~ "
    "(s * n) ~ (s * n) ~ (s * n)) | length": "concatenation (~) would build more than 1,000,000",
    "([s * n] * m) | join | length": "repetition took the expression past",
    "([big] * 2) | join | length": "filter join would build more than 1,000,000",
    "(s * n).join([s] * m) | length": "join() would build",
    "s * 10**9": "repetition would build 1,000,000,000",
    "one * 10**9": "repetition would build 1,000,000,000",
    "(big + big) | length": "concatenation would exceed",
    "('%s' * 20) % ((s * n,) * 20)": "%-formatting would build more than 1,000,000",
    "'%s%s' | format(big, big)": "filter format would build more than 1,000,000",
    "s | center(10**9)": "filter center would build 1,000,000,000",
    "s.center(10**9)": "center() would build 1,000,000,000",
    "s.ljust(10**9)": "ljust() would build 1,000,000,000",
    "s.rjust(10**9)": "rjust() would build 1,000,000,000",
    "s.zfill(10**9)": "zfill() would build 1,000,000,000",
    "((s ~ '\\n') * n) | indent(m)": "filter indent would build",
    "one | batch(10**9, 0) | list": "filter batch would build 1,000,000,001",
    "one | slice(10**9) | list": "slice into 1000000000 parts refused",
    "range(10**9) | list": "range of 1000000000 items refused",
    "(one * 1000000) | map('float') | list | length": "past 24 MiB built in all",
    "(w * 900000) | list | length": "past 24 MiB built in all",
    "([one * 1000000] * 2) | sum(start=[]) | length": "filter sum would build 2,000,000",
    "sum([one * 1000000] * 2, []) | length": "sum would build 2,000,000",
    "([one * 100000] * 20) | string | length": "filter string would build more than",
    "str([one * 100000] * 20) | length": "str() would build more than",
    "([one * 100000] * 20) | tojson | length": "filter tojson would build more than",
    "one | tojson(indent=10**6)": "tojson indent 1000000 refused",
    "(w * 999999) | urlencode | length": "filter urlencode would build 11,999,988",
    "((s ~ ' ') * 500000).split() | length": "split() would take the expression past",
    "(big | upper, big | upper, big | upper, big | upper, big | upper, big | upper, "
    "big | upper, big | upper, big | upper, big | upper, big | upper, big | upper, "
    "big | upper, big | upper, big | upper, big | upper, big | upper, big | upper, "
    "big | upper, big | upper, big | upper, big | upper, big | upper, big | upper, "
    "big | upper, big | upper, big | upper, big | upper, big | upper) | length": (
        "past 24 MiB built in all"
    ),
    "(big ~ big)[:] | length": "concatenation (~) would build more than 1,000,000",
}


@pytest.mark.parametrize("source", sorted(RUN_TIME))
def test_each_operation_is_refused_at_run_time_naming_sigil_and_field(source: str) -> None:
    expr = compile_expression(source, sigil="grow", field="set.x")
    with pytest.raises(ExpressionError) as caught:
        expr.evaluate(AETHER)
    message = str(caught.value)
    assert message.startswith(f"sigil 'grow': set.x `{source}`: refused by the sandbox: ")
    assert RUN_TIME[source] in message
    assert caught.value.sigil == "grow"
    assert caught.value.field == "set.x"


TEMPLATES = [
    "{% for i in range(10000) %}{% set t = big ~ i %}{% endfor %}",
    "{% for i in range(10000) %}{{ big | length }}{% set t = big | upper %}{% endfor %}",
    "{{ [one * 100000] * 20 }}",
    "{% set l = one * 1000000 %}{% set l2 = l + l %}",
]


@pytest.mark.parametrize("source", TEMPLATES)
def test_templates_are_bounded_too(source: str) -> None:
    template = compile_template(source, sigil="say", field="prompt")
    with pytest.raises(ExpressionError, match=r"^sigil 'say': prompt `.*refused by the sandbox"):
        template.render(AETHER)


ALLOWED = {
    "(s * n) | length": 100_000,
    "'a-b' | replace('-', '+')": "a+b",
    "'ab'.replace('', '.')": ".a.b.",
    "['a', 'b'] | join(', ')": "a, b",
    "', '.join(['a', 'b'])": "a, b",
    "'x' | center(5)": "  x  ",
    "'x'.ljust(3) ~ '|'": "x  |",
    "'7'.zfill(3)": "007",
    "'a\\nb' | indent(2)": "a\n  b",
    "'%s-%03d' | format('a', 7)": "a-007",
    "'%(k)s!' % {'k': 'v'}": "v!",
    "[1, 2, 3, 4, 5] | batch(2, 0) | list": [[1, 2], [3, 4], [5, 0]],
    "[1, 2, 3, 4, 5] | slice(2) | list": [[1, 2, 3], [4, 5]],
    "[[1], [2, 3]] | sum(start=[])": [1, 2, 3],
    "sum([1, 2, 3])": 6,
    "(big ~ '') | length": 900_000,
    "big[:3]": "yyy",
    "[1, 2] * 3": [1, 2, 1, 2, 1, 2],
    "big | default('') | length": 900_000,
    "str([1, 'a'])": "[1, 'a']",
    "'a b  c'.split()": ["a", "b", "c"],
}


@pytest.mark.parametrize("source", sorted(ALLOWED))
def test_ordinary_uses_still_work(source: str) -> None:
    assert compile_expression(source, sigil="a", field="f").evaluate(AETHER) == ALLOWED[source]


def test_the_limits_are_what_the_docs_say() -> None:
    assert MAX_ITEMS == 1_000_000
    assert MAX_BUILT_BYTES == 24 * 1024 * 1024
    assert check_expression("s * 1000000", {"s"}) == []  # exactly the limit is fine
    assert compile_expression("'x' * 1000000", sigil="a", field="f").evaluate({}) == "x" * MAX_ITEMS


CONSTANT = [
    THE_EXAMPLE,
    "'x' * 10**9",
    "(['x'] * 10**7) | join",
    "'%0999d' % 1 ~ 'y' * 999999",
    "range(20000) | list",
    "'ab' | center(10**8) | length",
]


@pytest.mark.parametrize("source", CONSTANT)
def test_a_part_depending_on_no_name_is_refused_when_validated(source: str) -> None:
    (problem,) = check_expression(source, set())
    assert problem.startswith("refused by the sandbox: ")


def _ritual(tmp_path: Path, source: str) -> Path:
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    path = tmp_path / "grow.yaml"
    path.write_text(
        textwrap.dedent(
            f"""\
            sanctum: 1
            name: grow
            inputs:
              s: {{type: string, default: x}}
            aether:
              size: {{}}
            entry: a
            sigils:
              a:
                set:
                  size: "{source}"
                next: END
            """
        ),
        encoding="utf-8",
    )
    return path


def test_the_example_is_a_positioned_problem_with_exit_status_2(tmp_path: Path) -> None:
    path = _ritual(tmp_path, THE_EXAMPLE)
    (problem,) = check_ritual(path)
    assert (problem.line, problem.column) == (11, 13)
    assert problem.message == (
        f"sigil 'a': `{THE_EXAMPLE}`: refused by the sandbox: replace() would build "
        "1,000,000,000 items (limit 1,000,000)"
    )
    with pytest.raises(RitualFileError):
        compile_ritual(path)
    for command in (["validate", str(path)], ["run", str(path), "--codex", "memory:"]):
        done = sanctum(command, tmp_path)
        assert done.returncode == 2, done.stderr
        shown = done.stdout + done.stderr
        assert f"{path}:11:13: sigil 'a': `{THE_EXAMPLE}`: refused by the sandbox" in shown


def test_a_run_time_refusal_fails_the_sigil_naming_it_and_the_field(tmp_path: Path) -> None:
    source = "((s * 100000).replace(s, s * 10000)) | length"
    path = _ritual(tmp_path, source)
    assert check_ritual(path) == []
    with pytest.raises(SigilExecutionError) as caught:
        compile_ritual(path).invoke({})
    assert isinstance(caught.value.__cause__, ExpressionError)
    assert f"sigil 'a': set.size `{source}`: refused by the sandbox: replace() would build" in str(
        caught.value.__cause__
    )
    done = sanctum(["run", str(path), "--codex", "memory:", "--json"], tmp_path)
    assert done.returncode == 1
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["status"] == "failed"
    assert "set.size" in result["error"]
    assert "refused by the sandbox" in result["error"]


PROBE = """
import json, resource, sys
from sanctum.ritualfile import check_ritual
from sanctum.ritualfile.expressions import ExpressionError, compile_expression, compile_template

aether = json.loads(sys.argv[3])
aether["big"] = "y" * 900_000
warm = compile_expression("s ~ s", sigil="w", field="f")
warm.evaluate(aether)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
kind, source = sys.argv[1], sys.argv[2]
refused = False
try:
    if kind == "file":
        refused = bool(check_ritual(source))
    elif kind == "template":
        compile_template(source, sigil="a", field="prompt").render(aether)
    else:
        compile_expression(source, sigil="a", field="set.x").evaluate(aether)
except ExpressionError:
    refused = True
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"refused": refused, "grew_kib": after - before}))
"""


def _grown(kind: str, source: str) -> tuple[bool, int]:
    aether = {k: v for k, v in AETHER.items() if k != "big"}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, kind, source, json.dumps(aether)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    answer = json.loads(done.stdout)
    return answer["refused"], answer["grew_kib"]


@pytest.mark.parametrize(
    ("kind", "source"),
    [
        ("expression", "((s * n).replace(s, s * m)) | length"),
        ("expression", THE_EXAMPLE),
        ("expression", "(one * 1000000) | map('float') | list | length"),
        ("expression", "((one * 1000000) | map('string') | list) | length"),
        ("expression", "(w * 900000) | list | length"),
        ("expression", "(w * 999999) | urlencode | length"),
        ("expression", "([one * 100000] * 20) | tojson | length"),
        ("expression", next(k for k in RUN_TIME if k.startswith("(big |"))),
        ("template", TEMPLATES[0]),
        ("template", TEMPLATES[1]),
    ],
)
def test_refusals_stay_under_64_mib_of_extra_memory(kind: str, source: str) -> None:
    refused, grew = _grown(kind, source)
    assert refused
    assert grew < 64 * 1024, f"{grew / 1024:.1f} MiB"


def test_the_example_in_a_file_is_refused_under_64_mib(tmp_path: Path) -> None:
    refused, grew = _grown("file", str(_ritual(tmp_path, THE_EXAMPLE)))
    assert refused
    assert grew < 64 * 1024, f"{grew / 1024:.1f} MiB"
