"""Reading files citelsp did not write, defensively: only regular files, never more than a
size cap (a FIFO would hang a read, ``/dev/zero`` would fill memory), and never through a
symbolic link that leads out of the folder it should stay in. Writing files under a
workspace (decisions, reports) the same way: never through a link out of it, atomically."""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
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
    link that leads out of ``root``; a link inside it is replaced, never followed.

    Where the platform allows, the folders are then opened one by one from ``root`` without
    following links and the file is written relative to the last of them, so a folder
    swapped for a link between the check and the write is refused, not written through."""
    real_root, real_parent = root.resolve(), target.parent.resolve()
    for path in (target.parent, target):
        if not inside(path, root):
            raise OutsideWorkspace(f"{target} is not written: {path} leads outside the "
                                   f"workspace {root} (a symbolic link)")
    if not _DIR_FD:
        target.parent.mkdir(parents=True, exist_ok=True)
        _write_atomically(target.parent, target.name, data, None)
        return
    parts = real_parent.relative_to(real_root).parts
    fd = os.open(real_root, _DIR_FLAGS)
    try:
        for part in parts:
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, dir_fd=fd)
            try:
                child = os.open(part, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=fd)
            except OSError as exc:  # ELOOP / ENOTDIR: swapped for a link or a file
                raise OutsideWorkspace(f"{target} is not written: {part} changed into a "
                                       f"link or a file while it was written ({exc.strerror})"
                                       ) from None
            os.close(fd)
            fd = child
        _write_atomically(target.parent, target.name, data, fd)
    finally:
        os.close(fd)


_DIR_FD = {os.open, os.mkdir, os.rename, os.unlink} <= os.supports_dir_fd
"""POSIX (``os.replace`` takes directory descriptors wherever ``os.rename`` does)."""
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)


def _write_atomically(folder: Path, name: str, data: bytes, dir_fd: int | None) -> None:
    """A temporary file beside ``name``, fsynced, renamed over it (relative to ``dir_fd``
    when one is given)."""
    tmp = f".{name}.{secrets.token_hex(6)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(
        os, "O_CLOEXEC", 0)
    where = {"dir_fd": dir_fd} if dir_fd is not None else {}
    path = tmp if dir_fd is not None else str(folder / tmp)
    fd = os.open(path, flags, 0o644, **where)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if dir_fd is not None:
            os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        else:
            os.replace(path, folder / name)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(path, **where)
        raise
