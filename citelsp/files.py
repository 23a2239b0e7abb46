"""Reading files citelsp did not write, defensively: only regular files, never more than a
size cap (a FIFO would hang a read, ``/dev/zero`` would fill memory), and never through a
symbolic link that leads out of the folder it should stay in."""

from __future__ import annotations

import os
import stat
from pathlib import Path

MAX_FILE_BYTES = 32 * 1024 * 1024
"""Documents, bibliographies, decisions and slug maps larger than this are not read."""


class FileRefused(OSError):
    """A path citelsp will not read: not a regular file, or too large."""


def read_bytes(path: Path, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes: never a FIFO, a device such as
    ``/dev/zero``, or a file that grows past the limit while it is read. The checks are made
    on the opened file (opened without blocking), so a path swapped meanwhile is no way round
    them."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except ValueError as exc:  # a NUL in the path
        raise FileRefused(str(exc)) from None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise FileRefused("not a regular file")
        if info.st_size > limit:
            raise FileRefused(f"larger than {limit // (1024 * 1024)} MiB")
        data = f.read(limit + 1)
    if len(data) > limit:
        raise FileRefused(f"larger than {limit // (1024 * 1024)} MiB")
    return data


def inside(path: Path, root: Path) -> bool:
    """Whether ``path``, with every symbolic link on the way followed, stays under
    ``root``."""
    try:
        return path.resolve().is_relative_to(root.resolve())
    except (OSError, ValueError, RuntimeError):  # a loop of links, a NUL
        return False
