"""``sanctum validate`` warns about spells an agent may cast without an access label."""

from __future__ import annotations

import shutil
from pathlib import Path

from sanctum.api import validate_warnings
from tests.cli.helpers import REPO, invoke

EXAMPLE = REPO / "examples" / "approval"
MANIFEST = Path("spells") / "tickets" / "read_ticket" / "spell.json"


def _unlabeled(tmp_path: Path) -> Path:
    folder = tmp_path / "approval"
    shutil.copytree(EXAMPLE, folder)
    (folder / MANIFEST).write_text(
        '{"name": "read_ticket", "entrypoint": "spell.py:read_ticket"}', encoding="utf-8"
    )
    (folder / ".git").mkdir()
    return folder / "ticket.yaml"


def test_an_unlabeled_spell_is_a_warning_not_a_problem(tmp_path: Path) -> None:
    ritual = _unlabeled(tmp_path)
    done = invoke(["validate", str(ritual)], tmp_path)
    assert done.exit_code == 0, done.output
    assert done.stdout.splitlines() == [f"{ritual}: ok"]
    (warning,) = [line for line in done.stderr.splitlines() if "warning:" in line]
    assert warning == (
        f"{ritual}:28:16: warning: tome 'desk': 'read_ticket' has no access label and counts "
        'as write; add "access": "read", "propose" or "write" to its spell.json'
    )


def test_labeled_spells_and_narrowed_agents_give_no_warning(tmp_path: Path) -> None:
    assert validate_warnings(EXAMPLE / "ticket.yaml") == []
    ritual = _unlabeled(tmp_path)
    text = ritual.read_text(encoding="utf-8")
    ritual.write_text(
        text.replace(
            "      approve: [write]\n", "      approve: [write]\n      spells: [update_email]\n"
        ),
        encoding="utf-8",
    )
    assert validate_warnings(ritual) == []  # the agent may not cast read_ticket


def test_a_file_that_does_not_load_has_no_warnings(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("sanctum: 1\nname: [\n", encoding="utf-8")
    assert validate_warnings(broken) == []
