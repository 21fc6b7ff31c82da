"""Files and folders only their owner may open: the store holds students' questions, key
hashes and the courses' files, so nothing in the data folder is created readable by others."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

FOLDER_MODE = 0o700
FILE_MODE = 0o600


def private_dir(path: Path) -> Path:
    """`path`, created with mode 0700 when it is missing (an existing folder keeps its mode:
    the operator may have opened it on purpose)."""
    if not path.is_dir():
        path.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
    return path


def private_file(path: Path) -> Path:
    """`path`, created empty with mode 0600 (and its folder 0700) when it is missing; an
    existing file of this user that others may read loses those bits (group bits stay: an
    operator may have given a backup group access on purpose).

    SQLite gives its -wal and -shm files the mode of the database file, so creating the
    database this way keeps those private too."""
    private_dir(path.parent)
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE))
    except FileExistsError:
        found = path.stat()
        if found.st_uid == os.geteuid() and found.st_mode & 0o007:
            with contextlib.suppress(OSError):  # a read-only mount: the store still opens
                path.chmod(stat.S_IMODE(found.st_mode) & ~0o007)
    return path


def write_private(path: Path, text: str) -> Path:
    """Write `text` to `path` (replacing it) with mode 0600 from the first byte."""
    private_dir(path.parent)
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    return path
