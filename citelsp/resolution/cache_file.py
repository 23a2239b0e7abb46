"""The answer cache's database file: whose it is, whether it is sound, how it may be opened.

The cache directory can be any directory (``citelsp.cacheDir``), and another process may hold
the database, so a file named ``cache.db`` is trusted only when it is verifiably ours: our
SQLite ``application_id`` in its header (written when we create the file), or, for a database
from before that marker, diskcache's two tables holding keys in our format. Only such a file is
ever rebuilt, and only when SQLite's own check finds it damaged. A foreign file, a lock or a
read-only file or directory never leads to a deletion: the cache then reads only, or is off.

The read-only store reads diskcache's ``Cache`` table directly (``key``, ``raw``, ``value``; our
values are short strings that diskcache keeps inline), because opening ``diskcache.Cache``
always writes its settings.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import uuid
from collections.abc import Iterator
from contextlib import closing, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

DATABASE = "cache.db"
COMPANIONS = ("cache.db-wal", "cache.db-shm")
APPLICATION_ID = 0x43495445
"""``CITE``: SQLite's header field for the program a database belongs to (offset 68)."""
_HEADER = b"SQLite format 3\x00"
_LEGACY_TABLES = {"Settings", "Cache"}

Ownership = Literal["absent", "ours", "foreign"]
Soundness = Literal["sound", "damaged", "unknown"]
Access = Literal["writable", "locked", "read_only"]


@dataclass(frozen=True)
class Inspection:
    ownership: Ownership
    why: str
    """For a foreign file: what it is, for the log line that explains why the cache is off."""


def inspect(directory: Path) -> Inspection:
    """Whose ``cache.db`` in ``directory`` is; reads, never writes or creates anything."""
    path = directory / DATABASE
    try:
        info = path.lstat()
    except FileNotFoundError:
        return Inspection("absent", "")
    except OSError as exc:
        return Inspection("foreign", f"cannot be examined ({exc.strerror})")
    if not stat.S_ISREG(info.st_mode):
        return Inspection("foreign", "is not a regular file")
    try:
        with path.open("rb") as file:
            header = file.read(100)
    except OSError as exc:
        return Inspection("foreign", f"cannot be read ({exc.strerror})")
    if len(header) < 100 or not header.startswith(_HEADER):
        return Inspection("foreign", "is not an SQLite database")
    application_id = int.from_bytes(header[68:72], "big")
    if application_id == APPLICATION_ID:
        return Inspection("ours", "")
    if application_id == 0 and _has_our_legacy_layout(path):
        return Inspection("ours", "")
    return Inspection("foreign", "is another program's SQLite database")


def soundness(directory: Path, wait_s: float) -> Soundness:
    """SQLite's ``quick_check`` of our database: ``unknown`` when it could not run (a lock)."""
    try:
        with closing(_read_only(directory / DATABASE, wait_s)) as con:
            rows = con.execute("PRAGMA quick_check").fetchall()
    except sqlite3.OperationalError:
        return "unknown"
    except sqlite3.DatabaseError:
        return "damaged"
    return "sound" if rows == [("ok",)] else "damaged"


def create(directory: Path) -> None:
    """Create an empty database carrying our marker, atomically: another process sees either
    no ``cache.db`` or a marked one (built aside, then hard-linked into place)."""
    directory.mkdir(parents=True, exist_ok=True)
    aside = directory / f".{DATABASE}.{os.getpid()}.{uuid.uuid4().hex}"
    try:
        with closing(sqlite3.connect(aside)) as con:
            con.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            con.commit()
        with suppress(FileExistsError):
            os.link(aside, directory / DATABASE)
    finally:
        aside.unlink(missing_ok=True)


def remove(directory: Path) -> None:
    """Delete our damaged database and its companions (the caller verified both)."""
    for name in (DATABASE, *COMPANIONS):
        (directory / name).unlink(missing_ok=True)


def mark(directory: Path, wait_s: float) -> None:
    """Write our marker into a database adopted from before the marker existed."""
    with closing(_read_write(directory / DATABASE, wait_s)) as con:
        if con.execute("PRAGMA application_id").fetchone()[0] != APPLICATION_ID:
            con.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            con.commit()


def access(directory: Path, wait_s: float) -> Access:
    """Whether we may write: a write transaction is begun and rolled back, waiting at most
    ``wait_s`` for another process's lock (diskcache itself would retry for 60 s)."""
    try:
        with closing(_read_write(directory / DATABASE, wait_s)) as con:
            con.execute("BEGIN IMMEDIATE")
            con.rollback()
    except sqlite3.OperationalError as exc:
        return not_writable(exc)
    return "writable"


def not_writable(exc: sqlite3.OperationalError) -> Access:
    """Why a write failed: another process's lock, or a read-only file or directory."""
    return "locked" if "locked" in str(exc) or "busy" in str(exc) else "read_only"


class ReadOnlyStore:
    """``get`` on our database without writing anything; every change is ignored."""

    def __init__(self, directory: Path, wait_s: float) -> None:
        self._con = _read_only(directory / DATABASE, wait_s)

    def get(self, key: str) -> str | None:
        row = self._con.execute(
            "SELECT value FROM Cache WHERE key = ? AND raw = 1", (key,)
        ).fetchone()
        return row[0] if row is not None and isinstance(row[0], str) else None

    def iterkeys(self) -> Iterator[str]:
        for (key,) in self._con.execute("SELECT key FROM Cache WHERE raw = 1"):
            if isinstance(key, str):
                yield key

    def set(self, key: str, value: str, expire: float | None = None) -> None:
        """Ignored: the database is read-only or held by another process."""

    def delete(self, key: str) -> None:
        """Ignored, as ``set``."""

    def clear(self) -> None:
        """Ignored, as ``set``."""

    def close(self) -> None:
        self._con.close()


def _read_write(path: Path, wait_s: float) -> sqlite3.Connection:
    """A connection that never creates the file (it must be ours already)."""
    return sqlite3.connect(f"{path.resolve().as_uri()}?mode=rw", uri=True, timeout=wait_s)


def _read_only(path: Path, wait_s: float) -> sqlite3.Connection:
    """A read-only connection; ``immutable`` when the directory cannot hold WAL companions."""
    uri = path.resolve().as_uri()
    try:
        con = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=wait_s)
        con.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
        return con
    except sqlite3.OperationalError as exc:
        if "unable to open" not in str(exc):
            raise
    return sqlite3.connect(f"{uri}?immutable=1", uri=True, timeout=wait_s)


def _has_our_legacy_layout(path: Path) -> bool:
    """diskcache's ``Settings`` and ``Cache`` tables, with keys as we write them (a JSON list
    starting with the cache version), or none yet."""
    try:
        with closing(_read_only(path, 1.0)) as con:
            tables = {row[0] for row in con.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")}
            if not tables >= _LEGACY_TABLES:
                return False
            row = con.execute("SELECT key FROM Cache LIMIT 1").fetchone()
    except sqlite3.Error:
        return False
    return row is None or (isinstance(row[0], str) and row[0].startswith('["'))
