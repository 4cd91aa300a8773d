"""Rituals whose parts come from the worker's own checkout (``worker --project-dir``).

Only a ritual's YAML travels through the queue. A ritual with parts beside it (Python
modules named by ``call:`` or ``reducer:``, spell folders under ``tomes:``, circle
files) can still be queued when every worker has the project checked out: ``sanctum
submit --parts-from-worker`` records the ritual's path in its project and the sha256
of every part (:func:`manifest`), and ``sanctum worker --project-dir DIR`` runs the
ritual file found at that path under DIR once every file there has the recorded digest
(:class:`Checkout`). Nothing is ever written into DIR; a file missing or different
there refuses the job with one line, shown in ``sanctum queue``.

A job's manifest, ``{"ritual": "rituals/x.yaml", "files": {"rituals/x.yaml":
"sha256:<hex>", "rituals/steps.py": "sha256:<hex>", ...}}`` (posix paths relative to
the project folder), is also kept on the Invocation's Seals (:data:`PROJECT_KEY`), so a
queued resume runs the same files.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from sanctum.errors import SealError

__all__ = ["PROJECT_KEY", "Checkout", "manifest"]

PROJECT_KEY = "queue_project"
"""Seal metadata key of the manifest a worker ran the Invocation's files by."""

_YAML = (".yaml", ".yml")


def _digest(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def _spell_files(folder: Path, root: Path) -> dict[str, str]:
    """Every file of a spell folder (``__pycache__`` left out), by project path."""
    found: dict[str, str] = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and "__pycache__" not in path.relative_to(folder).parts:
            found[path.resolve().relative_to(root).as_posix()] = _digest(path)
    return found


def manifest(file: Any) -> dict[str, Any]:
    """The manifest of a loaded ritual file for a ``--parts-from-worker`` submit.

    The files are the ritual file itself, its circle files and the Python modules
    beside each file that ``call:`` or ``reducer:`` names (``RitualFile.parts``), and
    every file of its spell folders (``tomes:``, its circles' too). Modules those
    modules import, and installed packages, are not listed.

    Args:
        file: A ``sanctum.ritualfile.RitualFile``.

    Returns:
        ``{"ritual": project path, "files": {project path: "sha256:<hex>"}}``.

    Raises:
        SealError: If the ritual or one of its parts lies outside its project folder
            (a worker could not find it under ``--project-dir``).
    """
    from sanctum.ritualfile.resolve import confine, project_root

    root = project_root(file.path, file.spec.project)
    record = file.metadata["ritual"]
    where = record["project_path"]
    outside = [path for path in record["parts"] if PurePosixPath(path).is_absolute()]
    if where is None or outside:
        shown = ", ".join(outside) if outside else str(file.path)
        raise SealError(
            f"cannot submit {file.path.name} with its parts from the workers: {shown} lies "
            f"outside its project folder {root}; move it inside, or declare the folder "
            "with `project:`"
        )
    files: dict[str, str] = {where: file.digest, **record["parts"]}

    def tomes(ritual: Any) -> None:
        folder = ritual.path.resolve().parent
        for tome in ritual.spec.tomes.values():
            try:
                target = confine(folder, tome.path, root, "spell folder")
            except Exception as exc:
                raise SealError(f"cannot submit {file.path.name}: {exc}") from None
            files.update(_spell_files(target, root))
        for circle in ritual.circles.values():
            tomes(circle)

    tomes(file)
    return {"ritual": where, "files": dict(sorted(files.items()))}


class Checkout:
    """A worker's project folder: where the parts of ``--parts-from-worker`` jobs are.

    Args:
        folder: The ``--project-dir`` folder (the project's root, as on the
            submitter's machine), or None when the worker has none.

    The worker imports Python parts once per process (Python keeps a module it
    imported), so a job naming another version of a Python file this worker already
    checked is refused with a request to restart the worker.

    Raises:
        SealError: If ``folder`` is given but is no folder.
    """

    def __init__(self, folder: Path | None) -> None:
        if folder is not None and not folder.is_dir():
            raise SealError(f"--project-dir {folder} is not a folder")
        self.folder = folder.resolve() if folder is not None else None
        self._checked: dict[str, str] = {}
        """Project path → the digest this process checked (and may have imported)."""

    def _inside(self, folder: Path, relative: str) -> Path:
        path = PurePosixPath(relative)
        if path.is_absolute() or ".." in path.parts or not path.parts:
            raise SealError(f"the job names {relative!r}, which is not inside a project folder")
        target = (folder / Path(*path.parts)).resolve()
        if not target.is_relative_to(folder):
            raise SealError(f"{relative} leads outside the project folder {folder} (a symlink?)")
        return target

    def ritual(self, job: Mapping[str, Any]) -> Path:
        """The ritual file of a job's manifest, once every file of it checks out.

        Args:
            job: The manifest (``{"ritual", "files"}``).

        Returns:
            The ritual file's path under the project folder.

        Raises:
            SealError: One line: the worker has no ``--project-dir``, or a file is
                missing, differs from the submitted one, or is another version of a
                Python file this worker already imported.
        """
        if self.folder is None:
            raise SealError(
                "this invocation runs its parts from a project checkout: start the worker "
                "with --project-dir DIR (the project's folder)"
            )
        files = job.get("files")
        where = job.get("ritual")
        if not isinstance(files, Mapping) or not isinstance(where, str) or where not in files:
            raise SealError("the job's project manifest is malformed; submit it again")
        for relative, wanted in files.items():
            target = self._inside(self.folder, str(relative))
            if not target.is_file():
                raise SealError(f"{relative} is missing from the project folder {self.folder}")
            have = _digest(target)
            if have != wanted:
                raise SealError(
                    f"{relative} in {self.folder} differs from the submitted one (sha256 "
                    f"{have[7:19]} here, {str(wanted)[7:19]} submitted); check out the "
                    "submitter's version"
                )
            before = self._checked.get(str(relative))
            if before is not None and before != wanted and not str(relative).endswith(_YAML):
                raise SealError(
                    f"this worker already imported another version of {relative}; restart "
                    "it to run this one"
                )
        for relative, wanted in files.items():
            self._checked[str(relative)] = str(wanted)
        return self._inside(self.folder, where)
