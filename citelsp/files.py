"""Reading files citelsp did not write, defensively: only regular files, never more than a
size cap (a FIFO would hang a read, ``/dev/zero`` would fill memory), and never through a
symbolic link that leads out of the folder it should stay in. Writing files under a
workspace (decisions, reports) the same way: never through a link out of it, atomically."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

MAX_FILE_BYTES = 32 * 1024 * 1024
"""Documents, bibliographies, decisions and slug maps larger than this are not read."""


class FileRefused(OSError):
    """A path citelsp will not read: not a regular file, or too large."""


class OutsideWorkspace(ValueError):
    """A path under a workspace that a symbolic link leads out of it: citelsp neither reads
    nor writes there."""


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


def write_inside(root: Path, target: Path, data: bytes) -> None:
    """Write ``data`` to ``target`` under the workspace ``root``, atomically (a temporary file
    renamed over it, so a reader never sees half a file). Refused with ``OutsideWorkspace``
    when its folder (``.citelsp`` as a link to elsewhere) or ``target`` itself is a symbolic
    link that leads out of ``root``; a link inside it is replaced, never followed."""
    for path in (target.parent, target):
        if not inside(path, root):
            raise OutsideWorkspace(f"{target} is not written: {path} leads outside the "
                                   f"workspace {root} (a symbolic link)")
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
