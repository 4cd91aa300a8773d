"""Issue 22's rough edges, each through the real command line (CliRunner)."""

from __future__ import annotations

from pathlib import Path

from tests.cli.helpers import GREET, invoke, write_ritual


def test_a_codex_in_a_missing_folder_is_refused(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "greet.yaml", GREET)
    result = invoke(["run", str(ritual), "--codex", "sqlite:///no/such/dir/x.db"], tmp_path)
    assert result.exit_code == 2
    folder = tmp_path / "no" / "such" / "dir"
    assert result.stderr.splitlines() == [
        f"error: the folder of the codex {folder / 'x.db'} does not exist ({folder}); check "
        "the path, or create the folder first — a typo never becomes a new folder (only "
        "the default .sanctum/ is created when missing)"
    ]
    assert not (tmp_path / "no").exists()


def test_the_default_codex_folder_is_created(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "greet.yaml", GREET)
    result = invoke(["run", str(ritual), "-q"], tmp_path)
    assert result.exit_code == 0, result.output
    assert (tmp_path / ".sanctum" / "codex.db").is_file()
