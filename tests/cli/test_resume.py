"""``sanctum resume``: updates, changed files, time-travel, unknown invocations."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.helpers import APPROVE, COUNTER, invoke, write_ritual


def _pause(tmp_path: Path, invocation: str = "a1") -> Path:
    ritual = write_ritual(tmp_path, "approve.yaml", APPROVE)
    paused = invoke(["run", str(ritual), "-i", "name=Ada", "--invocation", invocation], tmp_path)
    assert paused.exit_code == 3, paused.output
    return ritual


def test_updates_answer_the_interrupt(tmp_path: Path) -> None:
    _pause(tmp_path)
    result = invoke(
        ["resume", "--invocation", "a1", "-u", "answered=true", "-u", "approved=true"], tmp_path
    )
    assert result.exit_code == 0, result.output
    assert 'status = "sent"' in result.stdout


def test_without_an_answer_it_pauses_again(tmp_path: Path) -> None:
    _pause(tmp_path)
    result = invoke(["resume", "--invocation", "a1"], tmp_path)
    assert result.exit_code == 3
    assert "resume with: sanctum resume --invocation a1" in result.stdout


def test_update_file(tmp_path: Path) -> None:
    _pause(tmp_path)
    (tmp_path / "answer.json").write_text('{"answered": true}', encoding="utf-8")
    result = invoke(["resume", "--invocation", "a1", "--update-file", "answer.json"], tmp_path)
    assert result.exit_code == 0
    assert 'status = "held"' in result.stdout


def test_a_changed_ritual_is_refused_unless_forced(tmp_path: Path) -> None:
    ritual = _pause(tmp_path)
    ritual.write_text(APPROVE.replace("'held'", "'kept'"), encoding="utf-8")
    refused = invoke(["resume", "--invocation", "a1", "-u", "answered=true"], tmp_path)
    assert refused.exit_code == 2
    assert "changed since invocation 'a1'" in refused.stderr
    assert "--force" in refused.stderr
    forced = invoke(["resume", "--invocation", "a1", "-u", "answered=true", "--force"], tmp_path)
    assert forced.exit_code == 0
    assert 'status = "kept"' in forced.stdout


def test_a_deleted_ritual_is_named(tmp_path: Path) -> None:
    ritual = _pause(tmp_path)
    ritual.unlink()
    result = invoke(["resume", "--invocation", "a1"], tmp_path)
    assert result.exit_code == 2
    assert "no longer exists" in result.stderr


def test_unknown_invocation(tmp_path: Path) -> None:
    _pause(tmp_path)
    result = invoke(["resume", "--invocation", "ghost"], tmp_path)
    assert result.exit_code == 2
    assert "unknown invocation 'ghost'" in result.stderr
    assert "Traceback" not in result.output


def test_a_missing_codex_is_named_and_not_created(tmp_path: Path) -> None:
    result = invoke(["resume", "--invocation", "a1"], tmp_path)
    assert result.exit_code == 2
    assert "no codex here yet" in result.stderr
    assert not (tmp_path / ".sanctum").exists()
    other = invoke(["resume", "--invocation", "a1", "--codex", "sqlite:///gone.db"], tmp_path)
    assert other.exit_code == 2
    assert "does not exist" in other.stderr
    assert not (tmp_path / "gone.db").exists()


def test_a_misspelled_update_is_refused_with_a_suggestion(tmp_path: Path) -> None:
    _pause(tmp_path)
    typo = invoke(["resume", "--invocation", "a1", "-u", "aproved=true"], tmp_path)
    assert typo.exit_code == 2, typo.output
    assert "declares no conduit 'aproved'; did you mean 'approved'?" in typo.stderr
    assert "failed" not in typo.output
    (tmp_path / "answer.yaml").write_text("answerd: true\n", encoding="utf-8")
    from_file = invoke(["resume", "--invocation", "a1", "--update-file", "answer.yaml"], tmp_path)
    assert from_file.exit_code == 2
    assert "did you mean 'answered'?" in from_file.stderr
    # nothing was resumed: the invocation still answers a correct resume
    good = invoke(["resume", "--invocation", "a1", "-u", "answered=true"], tmp_path)
    assert good.exit_code == 0, good.output


def test_updates_are_read_for_the_conduit_type(tmp_path: Path) -> None:
    _pause(tmp_path)
    wrong = invoke(["resume", "--invocation", "a1", "-u", "approved=yes"], tmp_path)
    assert wrong.exit_code == 2
    assert "must be of type boolean" in wrong.stderr
    nan = invoke(["resume", "--invocation", "a1", "-u", "answered=NaN"], tmp_path)
    assert nan.exit_code == 2
    assert "NaN and Infinity are not allowed" in nan.stderr
    text = invoke(
        ["resume", "--invocation", "a1", "-u", "answered=true", "-u", "name=42", "--json"],
        tmp_path,
    )
    assert text.exit_code == 0, text.output
    # `name` is an input of type string: 42 arrives as the text "42"
    assert json.loads(text.stdout.splitlines()[-1])["aether"]["name"] == "42"


def test_time_travel_from_an_earlier_seal(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "counter.yaml", COUNTER)
    first = invoke(["run", str(ritual), "-i", "limit=3", "--invocation", "c1"], tmp_path)
    assert first.exit_code == 0
    seals = invoke(["seals", "--invocation", "c1", "--json", "--values"], tmp_path)
    rows = [json.loads(line) for line in seals.stdout.splitlines()]
    earliest = rows[0]
    assert earliest["aether"]["count"] == 1
    again = invoke(
        ["resume", "--invocation", "c1", "--seal", earliest["seal_id"], "--json"], tmp_path
    )
    assert again.exit_code == 0, again.output
    final = json.loads(again.stdout.splitlines()[-1])
    assert final["aether"]["trail"] == [1, 2, 3]
    unknown = invoke(["resume", "--invocation", "c1", "--seal", "nope"], tmp_path)
    assert unknown.exit_code == 2
    assert "has no seal 'nope'" in unknown.stderr


REDUCED = """\
sanctum: 1
name: reduced
aether:
  count: {reducer: add, type: integer, default: 0}
  trail: {reducer: append, default: []}
  bag: {reducer: merge_dict, default: {}}
  answered: {type: boolean, default: false}
entry: ask
sigils:
  ask:
    interrupt: "more?"
    until: "answered"
    next: END
"""


def test_updates_of_reducer_conduits_are_checked_before_resuming(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "reduced.yaml", REDUCED)
    assert invoke(["run", str(ritual), "--invocation", "r1"], tmp_path).exit_code == 3
    refused = {
        "count=abc": (
            "conduit 'count' must be of type integer, got string \"abc\" (its reducer adds the "
            "update to the integer value)"
        ),
        "count=2.5": "conduit 'count' must be of type integer, got float 2.5",
        "trail=7": "conduit 'trail' appends a list of items, got int 7; wrap a single item",
        "bag=[1]": "conduit 'bag' merges a mapping into its value, got list [1]",
    }
    for update, message in refused.items():
        result = invoke(["resume", "--invocation", "r1", "-u", update], tmp_path)
        assert result.exit_code == 2, (update, result.output)
        assert result.stderr.startswith(f"error: {message}"), result.stderr
        assert result.stderr.endswith("; nothing was resumed\n")
        assert "Python code" not in result.output
    answers = ["count=3", "trail=[1]", 'bag={"a": 1}', "answered=true"]
    done = invoke(
        ["resume", "--invocation", "r1", "--json", *(f"--update={a}" for a in answers)], tmp_path
    )
    assert done.exit_code == 0, done.output
    final = json.loads(done.stdout.splitlines()[-1])
    assert final["aether"] == {"count": 3, "trail": [1], "bag": {"a": 1}, "answered": True}
