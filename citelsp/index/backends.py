"""Where an index lives: a SQLite file (the default, standard library only) or a PostgreSQL
database named by its URL (``postgresql://…``; needs the ``team`` extra, psycopg)."""

from __future__ import annotations

from pathlib import Path

from citelsp.index.build import IndexFileError, IndexWriter
from citelsp.index.query import IndexBackend, IndexOpenError, LocalIndex

_NEEDS_PSYCOPG = ("a PostgreSQL index needs psycopg: pip install 'citelsp[team]' "
                  "(or psycopg[binary])")


def is_database_url(where: str | Path) -> bool:
    return isinstance(where, str) and where.startswith(("postgresql://", "postgres://"))


def open_backend(where: str | Path) -> IndexBackend:
    """The index at ``where``, read-only; IndexOpenError when it cannot be used."""
    if not is_database_url(where):
        return LocalIndex(Path(where).expanduser())
    try:
        from citelsp.index.postgres import PostgresIndex
    except ImportError:
        raise IndexOpenError(_NEEDS_PSYCOPG) from None
    return PostgresIndex(str(where))


def open_writer(where: str | Path, *, fresh: bool) -> IndexWriter:
    """A writer of a new index (``fresh``) or of an update to the one at ``where``."""
    if not is_database_url(where):
        return IndexWriter(Path(where).expanduser(), fresh=fresh)
    try:
        from citelsp.index.postgres import PostgresWriter
    except ImportError:
        raise IndexFileError(_NEEDS_PSYCOPG) from None
    return PostgresWriter(str(where), fresh=fresh)
