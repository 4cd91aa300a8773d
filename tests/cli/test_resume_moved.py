"""``resume`` after the project folder moved, ``--ritual PATH``, and what the digest covers.

A Seal records the ritual's absolute path, its path relative to the project root, and
the digests of the file, its circle files and the Python modules it calls. ``resume``
finds a moved project from the working directory; ``--ritual`` names the file; any
change of the file, a circle file or a module is refused unless ``--force``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.cli.helpers import APPROVE, invoke, sanctum

CALLING = """\
sanctum: 1
name: calling
inputs:
  name: {type: string}
aether:
  answered: {type: boolean, default: false}
  status: {type: string}
entry: ask
sigils:
  ask:
    interrupt: "Go on?"
    until: "answered"
    next: finish
  finish:
    call: "finish_steps:finish"
    next: END
"""

FINISH = "def finish(aether):\n    return {'status': 'finished'}\n"

CIRCLED = """\
sanctum: 1
name: circled
inputs:
  name: {type: string}
aether:
  answered: {type: boolean, default: false}
  status: {type: string}
entry: ask
sigils:
  ask:
    interrupt: "Go on?"
    until: "answered"
    next: inner
  inner:
    circle: parts/inner.yaml
    next: END
"""

INNER = """\
sanctum: 1
name: inner
aether:
  status: {type: string}
entry: mark
sigils:
  mark: {set: {status: "'inner'"}, next: END}
"""


def _project(root: Path, files: dict[str, str]) -> Path:
    (root / ".git").mkdir(parents=True)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def _pause(project: Path, ritual: str) -> None:
    done = invoke(["run", ritual, "--invocation", "m1", "-i", "name=Ada"], project)
    assert done.exit_code == 3, done.output


def test_a_moved_project_resumes_from_its_new_folder(tmp_path: Path) -> None:
    old = _project(tmp_path / "old", {"rituals/approve.yaml": APPROVE})
    _pause(old, "rituals/approve.yaml")
    new = tmp_path / "new"
    shutil.move(old, new)
    done = invoke(["resume", "--invocation", "m1", "-u", "answered=true", "-q"], new)
    assert done.exit_code == 0, done.output
    assert done.stdout.splitlines()[-1] == "✓ done  invocation m1"


def test_a_ritual_found_nowhere_names_both_paths_and_ritual_option(tmp_path: Path) -> None:
    old = _project(tmp_path / "old", {"rituals/approve.yaml": APPROVE})
    _pause(old, "rituals/approve.yaml")
    codex = old / ".sanctum"
    (old / "rituals/approve.yaml").unlink()
    done = invoke(["resume", "--invocation", "m1", "--codex", str(codex / "codex.db")], tmp_path)
    assert done.exit_code == 2
    assert done.stderr.splitlines() == [
        f"error: invocation 'm1' ran the ritual {old.resolve()}/rituals/approve.yaml, which "
        "no longer exists (nor is rituals/approve.yaml below the working directory); "
        "restore the file, or name where it is now with --ritual PATH"
    ]


def test_ritual_option_names_the_file_and_is_still_checked(tmp_path: Path) -> None:
    old = _project(tmp_path / "old", {"rituals/approve.yaml": APPROVE})
    _pause(old, "rituals/approve.yaml")
    elsewhere = tmp_path / "elsewhere.yaml"
    elsewhere.write_text(APPROVE, encoding="utf-8")
    (old / "rituals/approve.yaml").unlink()
    args = ["resume", "--invocation", "m1", "-u", "answered=true", "-q"]
    done = invoke([*args, "--ritual", str(elsewhere)], old)
    assert done.exit_code == 0, done.output


def test_a_changed_ritual_named_with_ritual_is_refused_unless_forced(tmp_path: Path) -> None:
    old = _project(tmp_path / "old", {"rituals/approve.yaml": APPROVE})
    _pause(old, "rituals/approve.yaml")
    changed = tmp_path / "changed.yaml"
    changed.write_text(APPROVE.replace("'held'", "'kept'"), encoding="utf-8")
    args = ["resume", "--invocation", "m1", "-u", "answered=true", "-q", "--ritual", str(changed)]
    refused = invoke(args, old)
    assert refused.exit_code == 2
    assert refused.stderr.splitlines() == [
        f"error: the ritual {changed} changed since invocation 'm1' ran it; resuming may "
        "misbehave. Restore the file, or pass --force to resume with the new version"
    ]
    forced = invoke([*args, "--force"], old)
    assert forced.exit_code == 0, forced.output


def test_a_changed_python_module_is_refused_unless_forced(tmp_path: Path) -> None:
    project = _project(
        tmp_path / "p", {"rituals/calling.yaml": CALLING, "rituals/finish_steps.py": FINISH}
    )
    _pause(project, "rituals/calling.yaml")
    (project / "rituals/finish_steps.py").write_text(FINISH.replace("finished", "other"), "utf-8")
    args = ["resume", "--invocation", "m1", "-u", "answered=true"]
    refused = invoke(args, project)
    assert refused.exit_code == 2
    assert refused.stderr.splitlines() == [
        f"error: rituals/finish_steps.py, run by the ritual "
        f"{project.resolve()}/rituals/calling.yaml, changed since invocation 'm1' ran it; "
        "resuming may misbehave. Restore the old version, or pass --force to resume with "
        "the new one"
    ]
    forced = sanctum([*args, "--force"], project)  # a fresh process imports the new module
    assert forced.returncode == 0, forced.stderr
    assert 'status = "other"' in forced.stdout


def test_a_changed_circle_file_is_refused(tmp_path: Path) -> None:
    project = _project(
        tmp_path / "p", {"rituals/circled.yaml": CIRCLED, "rituals/parts/inner.yaml": INNER}
    )
    _pause(project, "rituals/circled.yaml")
    inner = project / "rituals/parts/inner.yaml"
    inner.write_text(INNER.replace("'inner'", "'changed'"), encoding="utf-8")
    refused = invoke(["resume", "--invocation", "m1", "-u", "answered=true"], project)
    assert refused.exit_code == 2
    assert refused.stderr.startswith("error: rituals/parts/inner.yaml, run by the ritual ")
