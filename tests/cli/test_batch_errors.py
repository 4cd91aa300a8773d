"""`sanctum run RITUAL --inputs FILE`: every bad line of a batch file is reported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sanctum.errors import RitualInputError
from tests.cli.helpers import GREET, invoke, sanctum, write_ritual


def _write(folder: Path, text: str) -> Path:
    path = folder / "batch.jsonl"
    path.write_text(text, encoding="utf-8")
    return path


def test_every_bad_line_is_reported_with_its_number_and_nothing_runs(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "greet.yaml", GREET)
    path = _write(tmp_path, '{"name": "Ada"}\nnot json\n[1, 2]\n\n{"name": "Bo"}\n"x"\n')
    done = sanctum(["run", str(ritual), "--inputs", "batch.jsonl"], tmp_path)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert lines[0] == f"error: bad batch file {path.name} (3 bad lines); nothing ran:"
    assert lines[1].startswith("batch.jsonl:2: not JSON (Expecting value")
    assert lines[2] == "batch.jsonl:3: each line must be a JSON object, not an array"
    assert lines[3] == "batch.jsonl:6: each line must be a JSON object, not a string"
    assert done.stdout == ""
    assert not (tmp_path / ".sanctum").exists()


def test_a_long_list_of_bad_lines_is_cut_with_a_count_of_the_rest(tmp_path: Path) -> None:
    from sanctum.api._batch import MAX_LISTED

    ritual = write_ritual(tmp_path, "greet.yaml", GREET)
    _write(tmp_path, "oops\n" * (MAX_LISTED + 7))
    result = invoke(["run", str(ritual), "--inputs", "batch.jsonl"], tmp_path)
    assert result.exit_code == 2
    listed = [line for line in result.output.splitlines() if line.startswith("batch.jsonl:")]
    assert len(listed) == MAX_LISTED
    assert f"({MAX_LISTED + 7} bad lines)" in result.output
    assert "… and 7 more bad lines" in result.output


def test_every_input_that_does_not_fit_is_reported_at_its_line(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "greet.yaml", GREET)
    rows = [{"name": "Ada"}, {"nmae": "Bo"}, {"name": "Cy"}, {"name": 3, "extra": 1}]
    _write(tmp_path, "# people to greet\n" + "".join(json.dumps(r) + "\n" for r in rows))
    done = sanctum(["run", str(ritual), "--inputs", "batch.jsonl", "--json"], tmp_path)
    assert done.returncode == 2
    stderr = done.stderr.splitlines()
    assert stderr[0] == "error: inputs do not fit the ritual (2 bad lines); nothing ran:"
    assert stderr[1].startswith("batch.jsonl:3: ")
    assert "nmae" in stderr[1]
    assert stderr[2].startswith("batch.jsonl:5: ")
    assert "extra" in stderr[2]
    error = json.loads(done.stdout)  # --json: the same report as one JSON line
    assert error["exit_status"] == 2
    assert "batch.jsonl:5" in error["error"]
    assert not (tmp_path / ".sanctum").exists()


@pytest.mark.parametrize("text", ["", "\n  \n", "# nothing yet\n\n# still nothing\n"])
def test_a_batch_with_no_invocation_is_bad_input_not_success(tmp_path: Path, text: str) -> None:
    ritual = write_ritual(tmp_path, "greet.yaml", GREET)
    _write(tmp_path, text)
    done = sanctum(["run", str(ritual), "--inputs", "batch.jsonl"], tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("error: batch.jsonl holds no invocation: write one JSON")
    assert done.stdout == ""


def test_comments_and_blank_lines_are_skipped_and_the_rest_runs(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "greet.yaml", GREET)
    _write(tmp_path, '# first\n{"name": "Ada"}\n\n   # indented comment\n{}\n')
    result = invoke(["run", str(ritual), "--inputs", "batch.jsonl"], tmp_path)
    assert result.exit_code == 0, result.output
    assert [line.split("\t")[1] for line in result.output.splitlines()] == ["done", "done"]


def test_a_missing_batch_file_is_bad_input(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "greet.yaml", GREET)
    result = invoke(["run", str(ritual), "--inputs", "gone.jsonl"], tmp_path)
    assert result.exit_code == 2
    assert "cannot read gone.jsonl: No such file or directory" in result.output


def test_read_batch_keeps_each_line_s_place(tmp_path: Path) -> None:
    from sanctum import api

    path = _write(tmp_path, '\n{"a": 1}\n# c\n{"b": [2]}\n')
    lines = api.read_batch(path)
    assert [dict(line) for line in lines] == [{"a": 1}, {"b": [2]}]
    assert [line.where for line in lines] == [f"{path}:2", f"{path}:4"]


def test_a_non_utf8_batch_file_is_named_in_a_clear_error(tmp_path: Path) -> None:
    from sanctum import api

    path = tmp_path / "batch.jsonl"
    path.write_bytes(b'{"name": "\xff"}\n')
    with pytest.raises(RitualInputError, match="not UTF-8") as caught:
        api.read_batch(path)
    assert caught.value.source == str(path)


def test_run_batch_lists_every_misfit_of_plain_mappings(tmp_path: Path) -> None:
    from sanctum import api

    ritual = write_ritual(tmp_path, "greet.yaml", GREET)
    with pytest.raises(RitualInputError) as caught:
        api.run_batch(ritual, [{"x": 1}, {"name": "ok"}, {"y": 2}], codex="memory:")
    message = str(caught.value).splitlines()
    assert message[0] == "inputs do not fit the ritual (2 bad inputs); nothing ran:"
    assert message[1].startswith("input 1: ")
    assert message[2].startswith("input 3: ")
