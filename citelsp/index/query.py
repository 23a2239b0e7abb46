"""Reading the index: works by identifier, title candidates (exact title keys first, then text
candidates re-ranked by rapidfuzz), DOI prefixes' agencies, venue lists, and what each
snapshot is (its date names every answer: "OpenAlex snapshot 2026-11").

The lookups are the same whatever holds the index (``IndexBackend``): a SQLite file here, or
PostgreSQL (``postgres``). Opened read-only: many servers and checks may share one index.
"""

from __future__ import annotations

import logging
import sqlite3
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TypeVar
from urllib.parse import quote

import orjson
from rapidfuzz import fuzz
from rapidfuzz.utils import default_process

from citelsp.documents.text import normalize_title
from citelsp.documents.works import venue_key
from citelsp.index.build import LABELS, decode, version_problem
from citelsp.index.keys import arxiv_key, doi_key, title_keys
from citelsp.resolution.outcome import Record

log = logging.getLogger(__name__)
T = TypeVar("T")

CANDIDATES = 10
"""Title candidates returned, best first."""
LINKS = 1000
"""Venue names linked to one name at most (a series links every volume's title)."""
TEXT_ROWS = 40
"""Text candidates (FTS5 matches, trigram neighbours) re-ranked per title."""
_STOPWORDS = frozenset(
    ("a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "is", "of", "on",
     "or", "the", "to", "with"))


class IndexOpenError(Exception):
    """The file or database is missing, unreadable or not a citelsp index."""


class IndexQueryError(Exception):
    """An index that was open cannot answer now (its database went away)."""


@dataclass(frozen=True)
class Snapshot:
    """One source's snapshot in an index: where answers from it come from."""

    source: str
    date: str | None
    works: int
    malformed: int = 0
    unreadable: int = 0
    problems: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    loaded_at: str | None = None

    @property
    def label(self) -> str:
        """"OpenAlex snapshot 2026-11": how every output names an answer from it."""
        name = f"{LABELS.get(self.source, self.source)} snapshot"
        return f"{name} {self.date[:7]}" if self.date else name

    def age_days(self, today: date) -> int | None:
        if not self.date:
            return None
        try:
            return (today - date.fromisoformat(self.date[:10])).days
        except ValueError:
            return None


@dataclass(frozen=True)
class Hit:
    """A work the index holds, and the snapshot it comes from."""

    record: Record
    snapshot: Snapshot


class IndexBackend(ABC):
    """One index, read-only, whatever holds it (a SQLite file, a PostgreSQL database): the
    storage answers four plain questions and the lookups, the exact title keys first and the
    rapidfuzz re-ranking of title candidates, are the same for every backend."""

    where: str
    """The file, or the database with no password: what messages name."""
    snapshots: dict[str, Snapshot]

    @abstractmethod
    def _key_rows(self, key: str) -> list[tuple[str, bytes]]:
        """(source, record) of the works an identifier key names, oldest first."""

    @abstractmethod
    def _exact_works(self, keys: Sequence[int]) -> list[int]:
        """The works one of these title keys names, oldest first."""

    @abstractmethod
    def _title_candidates(self, title: str) -> list[tuple[int, str | None]]:
        """(work, title) of works whose title resembles ``title`` (normalized), at most
        ``TEXT_ROWS``, best first as the backend ranks them."""

    @abstractmethod
    def _work_rows(self, ids: Sequence[int]) -> dict[int, tuple[str, bytes]]:
        """work → (source, record)."""

    @abstractmethod
    def agency(self, prefix: str) -> str | None:
        """The registration agency of a DOI prefix, from the sources that register DOIs."""

    @abstractmethod
    def venue(self, name: str) -> list[tuple[str, int]]:
        """(source, works) for each snapshot that names a venue ``name`` (case as given)."""

    @abstractmethod
    def venue_links(self, key: str) -> list[str]:
        """The venue names (``venue_key`` forms) that some snapshot's records give one venue
        with ``key``: its abbreviations, series, full names."""

    @abstractmethod
    def size_bytes(self) -> int: ...

    @abstractmethod
    def close(self) -> None: ...

    def _snapshot(self, source: str) -> Snapshot:
        return self.snapshots.get(source) or Snapshot(source, None, 0)

    def by_key(self, key: str) -> list[Hit]:
        return [Hit(decode(blob), self._snapshot(source)) for source, blob in
                self._key_rows(key)]

    def by_title(self, title: str, limit: int = CANDIDATES) -> list[Hit]:
        """Works whose title equals ``title`` under matching's normalizations, then the
        backend's text candidates (FTS5 words, trigrams) re-ranked by rapidfuzz's ratio;
        best first."""
        keys = sorted(title_keys(title))
        exact = self._exact_works(keys) if keys else []
        if exact:  # only an exact title can match; candidates are for when none is held
            return self._works(exact)
        rows = self._title_candidates(normalize_title(title))
        scored = sorted((-fuzz.ratio(title, t or "", processor=default_process), w)
                        for w, t in rows)
        return self._works([w for _, w in scored][:limit])

    def _works(self, ids: Sequence[int]) -> list[Hit]:
        rows = self._work_rows(ids) if ids else {}
        return [Hit(decode(rows[w][1]), self._snapshot(rows[w][0])) for w in ids if w in rows]


def snapshot_of(row: Sequence) -> Snapshot:
    """A ``sources`` row (source, snapshot, works, malformed, unreadable, problems, paths,
    loaded_at) as a Snapshot; both backends keep the same columns."""
    source, when, works, malformed, unreadable, problems, paths, loaded = row
    return Snapshot(source, when, works or 0, malformed or 0, unreadable or 0,
                    tuple(orjson.loads(problems or "[]")), tuple(orjson.loads(paths or "[]")),
                    loaded)


SOURCES_COLUMNS = ("source, snapshot, works, malformed, unreadable, problems, paths, loaded_at")


class LocalIndex(IndexBackend):
    """One SQLite index file, read-only (FTS5 gives the title candidates)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.where = str(path)
        if not path.is_file():
            raise IndexOpenError(f"{path}: no such index file")
        try:
            self.db = sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode=ro", uri=True,
                                      check_same_thread=False)
            self.db.execute("PRAGMA query_only = 1")
            row = self.db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
            if (problem := version_problem(row[0] if row else None)) is not None:
                raise IndexOpenError(f"{path}: {problem}")
            self.snapshots = {s.source: s for s in map(snapshot_of, self.db.execute(
                f"SELECT {SOURCES_COLUMNS} FROM sources ORDER BY source"))}
        except sqlite3.DatabaseError as exc:
            raise IndexOpenError(f"{path}: not a citelsp index ({exc})") from None

    def _key_rows(self, key: str) -> list[tuple[str, bytes]]:
        return self.db.execute("SELECT w.source, w.record FROM ids i JOIN works w ON w.id = "
                               "i.work WHERE i.key = ? ORDER BY w.id", (key,)).fetchall()

    def _exact_works(self, keys: Sequence[int]) -> list[int]:
        return [row[0] for row in self.db.execute(
            f"SELECT DISTINCT work FROM title_keys WHERE key IN ({','.join('?' * len(keys))}) "
            "ORDER BY work", keys)]

    def _title_candidates(self, title: str) -> list[tuple[int, str | None]]:
        """Works holding every word of the title but the commonest (FTS5's implicit AND),
        best bm25 first."""
        if (query := _fts_query(title)) is None:
            return []
        return self.db.execute("SELECT rowid, title FROM titles WHERE titles MATCH ? "
                               "ORDER BY rank LIMIT ?", (query, TEXT_ROWS)).fetchall()

    def _work_rows(self, ids: Sequence[int]) -> dict[int, tuple[str, bytes]]:
        return {w: (s, b) for w, s, b in self.db.execute(
            f"SELECT id, source, record FROM works WHERE id IN ({','.join('?' * len(ids))})",
            list(ids))}

    def agency(self, prefix: str) -> str | None:
        row = self.db.execute("SELECT agency FROM prefixes WHERE prefix = ?",
                              (prefix.lower(),)).fetchone()
        return row[0] if row else None

    def venue(self, name: str) -> list[tuple[str, int]]:
        return list(self.db.execute("SELECT source, works FROM venues WHERE name = ?", (name,)))

    def venue_links(self, key: str) -> list[str]:
        return [v for (v,) in self.db.execute(
            "SELECT DISTINCT venue FROM venue_names WHERE name = ? LIMIT ?", (key, LINKS))]

    def size_bytes(self) -> int:
        return self.path.stat().st_size

    def close(self) -> None:
        self.db.close()


def _fts_query(normalized: str) -> str | None:
    """Every distinct word but the commonest, each quoted (FTS5's implicit AND)."""
    words = [w for w in dict.fromkeys(normalized.split()) if w not in _STOPWORDS]
    return " ".join(f'"{w}"' for w in words) if words else None


class LocalIndexes:
    """Several indexes asked in turn (``citelsp.index`` may name more than one file, and
    ``citelsp.indexUrl`` a database). An index that cannot answer a question right now (a
    database gone away) answers nothing, so the question goes on to the services: absence
    from an index is never evidence."""

    def __init__(self, indexes: Sequence[IndexBackend]) -> None:
        self.indexes = tuple(indexes)
        self.failed: set[str] = set()
        """Indexes that could not answer once: said once in the log."""
        self._venues: dict[str, frozenset[str]] = {}

    @classmethod
    def open(cls, paths: Iterable[Path]) -> LocalIndexes:
        return cls([LocalIndex(Path(p).expanduser()) for p in paths])

    @property
    def snapshots(self) -> list[Snapshot]:
        return [s for index in self.indexes for s in index.snapshots.values()]

    def _each(self, ask: Callable[[IndexBackend], list[T]]) -> list[T]:
        found: list[T] = []
        for index in self.indexes:
            try:
                found += ask(index)
            except IndexQueryError as exc:
                if index.where not in self.failed:
                    self.failed.add(index.where)
                    log.warning("citelsp: the local index %s did not answer (%s); its questions "
                                "go to the services", index.where, exc)
        return found

    def by_doi(self, doi: str) -> list[Hit]:
        key = doi_key(doi)
        return self._each(lambda index: index.by_key(key)) if key else []

    def by_arxiv(self, arxiv_id: str) -> list[Hit]:
        key = arxiv_key(arxiv_id)
        return self._each(lambda index: index.by_key(key))

    def by_title(self, title: str, limit: int = CANDIDATES) -> list[Hit]:
        return self._each(lambda index: index.by_title(title, limit))

    def venue_links(self, name: str) -> frozenset[str]:
        """The names (``venue_key`` forms) the snapshots give one venue with ``name``; none
        is no evidence that a name is not the venue's."""
        key = venue_key(name)
        if key and key not in self._venues:
            self._venues[key] = frozenset(self._each(lambda index: index.venue_links(key)))
        return self._venues.get(key, frozenset())

    def agency(self, prefix: str) -> str | None:
        return next(iter(self._each(lambda index: [a] if (a := index.agency(prefix)) else [])),
                    None)

    def stale(self, days: int, today: date) -> list[Snapshot]:
        """Snapshots older than ``days``: said once, since their answers may lag."""
        return [s for s in self.snapshots if (age := s.age_days(today)) is not None
                and age > days]

    def close(self) -> None:
        for index in self.indexes:
            index.close()
