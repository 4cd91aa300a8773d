"""Checking, before anything runs, that an output file of a Ward can be created."""

from __future__ import annotations

import errno
from pathlib import Path

__all__ = ["nearest_folder"]


def nearest_folder(path: Path, what: str) -> Path:
    """The nearest existing folder on the way to ``path`` (where it would be created).

    Args:
        path: The file a Ward will write.
        what: What the file is, for the message (``"audit path"``, ``"trace path"``).

    Returns:
        That folder.

    Raises:
        NotADirectoryError: When the nearest existing entry on the way is a file.
    """
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise NotADirectoryError(
            errno.ENOTDIR,
            f"the {what} {path} cannot be created: {folder} is a file, not a folder",
        )
    return folder
