"""Names `run` refuses are refused by `validate` too: an oracle's fallback chain and an
agent's spell allowlist, with a did-you-mean."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sanctum.ritualfile import check_ritual
from tests.cli.helpers import sanctum

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "approval"
SMALL = '  small: {provider: scripted, responses: {work: ["x"]}}\n'


def _edited(tmp_path: Path, old: str, new: str) -> Path:
    shutil.copytree(EXAMPLE, tmp_path / "approval")
    ritual = tmp_path / "approval" / "ticket.yaml"
    text = ritual.read_text(encoding="utf-8")
    assert old in text
    ritual.write_text(text.replace(old, new), encoding="utf-8")
    return ritual


CASES = [
    (
        "oracles:\n  clerk:\n    provider: scripted\n",
        f"oracles:\n{SMALL}  clerk:\n    provider: scripted\n    fallback: [smal]\n",
        "oracle 'clerk': fallback 'smal' is not under `oracles:`; did you mean 'small'?",
    ),
    (
        "    provider: scripted\n",
        "    provider: scripted\n    fallback: [clerk]\n",
        "oracle 'clerk' names itself as its fallback; name another oracle under `oracles:`",
    ),
    (
        "      approve: [write]\n",
        "      approve: [write]\n      spells: [read_tiket]\n",
        "sigil 'work': no spell named 'read_tiket' in tome 'desk'; did you mean 'read_ticket'?",
    ),
]


@pytest.mark.parametrize(("old", "new", "expected"), CASES)
def test_validate_refuses_a_name_run_refuses(
    tmp_path: Path, old: str, new: str, expected: str
) -> None:
    ritual = _edited(tmp_path, old, new)
    problems = [p.message for p in check_ritual(ritual)]
    assert problems == [expected]
    assert [p.message for p in check_ritual(ritual, resolve=True)] == [expected]


def test_the_cli_validate_exits_2_on_a_misspelled_spell(tmp_path: Path) -> None:
    old, new, expected = CASES[2]
    ritual = _edited(tmp_path, old, new)
    done = sanctum(["validate", str(ritual)], tmp_path)
    assert done.returncode == 2
    assert f"{ritual}:39:16: {expected}" in done.stdout + done.stderr


def test_a_fallback_to_another_oracle_is_fine(tmp_path: Path) -> None:
    ritual = _edited(
        tmp_path,
        "oracles:\n  clerk:\n    provider: scripted\n",
        f"oracles:\n{SMALL}  clerk:\n    provider: scripted\n    fallback: [small]\n",
    )
    assert check_ritual(ritual, resolve=True) == []
