"""A scribe that records every change the ritual makes.

Local audit trail: one JSON Lines entry per applied delta, no external services. Each
line is ``{"timestamp": epoch, "sigil": name, "delta": {...}}``; non-JSON-serialisable
values are stringified rather than breaking the ritual. Place an AuditWard after a
RedactWard in the pipeline so the trail only ever contains redacted content — and last,
after any Ward that may veto, so that only deltas that are really applied are written.
"""

from __future__ import annotations

import errno
import json
import os
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sanctum.wards._jsonable import jsonable
from sanctum.wards._paths import nearest_folder
from sanctum.wards.base import Ward

__all__ = ["AuditWard"]


class AuditWard(Ward):
    """The ledger of deltas, written line by line to a local file.

    Ward — a middleware. Appends one JSON object per Sigil delta to ``path``; the file
    (and its missing parent folders) is created on the first write, never before.
    Writes are synchronous appends of one small line each — adequate for local-first
    auditing; use one file per Invocation for clean trails. The delta passes through
    unchanged (the very same mapping is returned).

    Args:
        path: The JSON Lines file to append to (``str`` or path-like).

    Example:
        >>> ward = AuditWard("runs/audit.jsonl")  # doctest: +SKIP
        >>> rite = ritual.compile(wards=[RedactWard([r"sk-\\w+"]), ward])  # doctest: +SKIP
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    async def after_sigil(
        self, name: str, aether: Mapping[str, Any], delta: Mapping[str, Any]
    ) -> Mapping[str, Any]:
        """Record the delta with a timestamp; pass it through unchanged.

        Args:
            name: The Sigil whose delta this is.
            aether: The Aether (state) the Sigil saw; not recorded.
            delta: The delta as the Wards before this one left it.

        Returns:
            ``delta`` itself.

        Raises:
            OSError: If ``path`` cannot be created or written (a folder in the way,
                no permission); the message names the path.
        """
        self.write(name, delta)
        return delta

    def check(self) -> None:
        """Refuse, before any Sigil runs, a path that can never be written.

        Nothing is created: the file still appears on the first write. Caught here: a
        ``path`` that is a folder, a folder on the way that is a file, an existing file
        or the nearest existing folder that this process may not write to. (What only a
        write can tell, such as a read-only file system, still fails at that write.)

        Raises:
            OSError: Naming ``path`` and what is wrong with it (``IsADirectoryError``,
                ``NotADirectoryError``, ``PermissionError``).
        """
        path = self.path
        if path.is_dir():
            raise IsADirectoryError(
                errno.EISDIR,
                f"the audit path {path} is a folder; name a file such as {path / 'audit.jsonl'}",
            )
        folder = nearest_folder(path, "audit path")
        if path.exists():
            if not os.access(path, os.W_OK):
                raise PermissionError(
                    errno.EACCES, f"the audit file {path} is not writable (permission denied)"
                )
        elif not os.access(folder, os.W_OK | os.X_OK):
            raise PermissionError(
                errno.EACCES,
                f"the audit file {path} cannot be created: the folder {folder} is not "
                "writable (permission denied)",
            )

    def write(self, sigil: str, delta: Mapping[str, Any]) -> None:
        """Append one entry for ``sigil``'s ``delta`` now.

        Args:
            sigil: The Sigil name to record.
            delta: The delta; values JSON cannot hold are stringified.

        Raises:
            OSError: If the audit file cannot be created or appended to.
        """
        entry = {"timestamp": time.time(), "sigil": str(sigil), "delta": jsonable(delta)}
        line = json.dumps(entry, allow_nan=False) + "\n"
        with self._lock:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with self.path.open("a", encoding="utf-8") as handle:
                    handle.write(line)
            except OSError as exc:
                raise OSError(
                    exc.errno,
                    f"AuditWard cannot append to {self.path}: {exc.strerror or exc}; "
                    "check that the path names a writable file, not a folder",
                ) from exc
