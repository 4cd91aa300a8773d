"""``validate`` places a mistake inside a ``|`` or ``>-`` block at its own line."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.helpers import invoke

RITUAL = """\
sanctum: 1
name: interp
aether:
  said: {}
oracles:
  bard: {provider: scripted, responses: ["hail"]}
entry: speak
sigils:
  speak:
    oracle: bard
    prompt: STYLE
      Line one is fine.
      Line two ${SANCTUM_TEST_UNSET_VARIABLE} breaks.
    output: said
    next: END
"""


@pytest.mark.parametrize("style", ["|", ">-"])
def test_an_unset_variable_in_a_block_is_reported_where_it_is_written(
    tmp_path: Path, style: str
) -> None:
    (tmp_path / "r.yaml").write_text(RITUAL.replace("STYLE", style), encoding="utf-8")
    done = invoke(["validate", "r.yaml"], tmp_path)
    assert done.exit_code == 2
    assert done.stdout.splitlines() == [
        "r.yaml:13:16: environment variable SANCTUM_TEST_UNSET_VARIABLE is not set; set it, "
        "or give a default with ${SANCTUM_TEST_UNSET_VARIABLE:-default}"
    ]


VERSIONS = """\
sanctum: 1
name: ver
aether:
  out: {}
  versions: {default: [3.8, 3.9, 3.10]}
entry: s
sigils:
  s: {set: {out: "versions"}, next: END}
"""


def test_a_default_that_drops_digits_is_warned_about_but_valid(tmp_path: Path) -> None:
    (tmp_path / "ver.yaml").write_text(VERSIONS, encoding="utf-8")
    done = invoke(["validate", "ver.yaml"], tmp_path)
    assert done.exit_code == 0
    assert done.stdout.splitlines() == ["ver.yaml: ok"]
    assert done.stderr.splitlines() == [
        "ver.yaml:5:34: warning: conduit 'versions': `3.10` in its default is read as the "
        'number 3.1; quote it ("3.10") if it is text, such as a version'
    ]
