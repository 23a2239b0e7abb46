"""Reading the index: works by identifier, title candidates (exact title keys first, then FTS5
candidates re-ranked by rapidfuzz), DOI prefixes' agencies, venue lists, and what each
snapshot is (its date names every answer: "OpenAlex snapshot 2026-11").

Opened read-only: many servers and checks may share one index file.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from urllib.parse import quote

import orjson
from rapidfuzz import fuzz
from rapidfuzz.utils import default_process

from citelsp.documents.text import normalize_title
from citelsp.index.build import LABELS, SCHEMA_VERSION, decode
from citelsp.index.keys import arxiv_key, doi_key, title_keys
from citelsp.resolution.outcome import Record

CANDIDATES = 10
"""Title candidates returned, best first."""
FTS_ROWS = 40
"""FTS5 matches re-ranked per title (best bm25 first)."""
_STOPWORDS = frozenset(
    ("a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "is", "of", "on",
     "or", "the", "to", "with"))


class IndexOpenError(Exception):
    """The file is missing, unreadable or not a citelsp index."""


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


class LocalIndex:
    """One index file, read-only."""

    def __init__(self, path: Path) -> None:
        self.path = path
        if not path.is_file():
            raise IndexOpenError(f"{path}: no such index file")
        try:
            self.db = sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode=ro", uri=True,
                                      check_same_thread=False)
            self.db.execute("PRAGMA query_only = 1")
            row = self.db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
            if row is None or row[0] != SCHEMA_VERSION:
                raise IndexOpenError(f"{path}: an index of another version (build it again)")
            self.snapshots = {s.source: s for s in self._snapshots()}
        except sqlite3.DatabaseError as exc:
            raise IndexOpenError(f"{path}: not a citelsp index ({exc})") from None

    def _snapshots(self) -> Iterable[Snapshot]:
        rows = self.db.execute("SELECT source, snapshot, works, malformed, unreadable, problems,"
                               " paths, loaded_at FROM sources ORDER BY source")
        for source, when, works, malformed, unreadable, problems, paths, loaded in rows:
            yield Snapshot(source, when, works or 0, malformed or 0, unreadable or 0,
                           tuple(orjson.loads(problems or "[]")),
                           tuple(orjson.loads(paths or "[]")), loaded)

    def by_key(self, key: str) -> list[Hit]:
        rows = self.db.execute("SELECT w.source, w.record FROM ids i JOIN works w ON w.id = "
                               "i.work WHERE i.key = ? ORDER BY w.id", (key,))
        return [Hit(decode(blob), self.snapshots[source]) for source, blob in rows]

    def by_title(self, title: str, limit: int = CANDIDATES) -> list[Hit]:
        """Works whose title equals ``title`` under matching's normalizations, then FTS5
        candidates holding every word of it, re-ranked by rapidfuzz's ratio; best first."""
        keys = sorted(title_keys(title))
        exact = [row[0] for row in self.db.execute(
            f"SELECT DISTINCT work FROM title_keys WHERE key IN ({','.join('?' * len(keys))})",
            keys)] if keys else []
        if exact:  # only an exact title can match; candidates are for when none is held
            return self._works(exact)
        near = []
        if (query := _fts_query(normalize_title(title))) is not None:
            rows = self.db.execute("SELECT rowid, title FROM titles WHERE titles MATCH ? "
                                   "ORDER BY rank LIMIT ?", (query, FTS_ROWS)).fetchall()
            scored = sorted((-fuzz.ratio(title, t or "", processor=default_process), w)
                            for w, t in rows)
            near = [w for _, w in scored]
        return self._works(near[:limit])

    def _works(self, ids: Sequence[int]) -> list[Hit]:
        if not ids:
            return []
        rows = dict((w, (s, b)) for w, s, b in self.db.execute(
            f"SELECT id, source, record FROM works WHERE id IN ({','.join('?' * len(ids))})",
            list(ids)))
        return [Hit(decode(rows[w][1]), self.snapshots[rows[w][0]]) for w in ids if w in rows]

    def agency(self, prefix: str) -> str | None:
        row = self.db.execute("SELECT agency FROM prefixes WHERE prefix = ?",
                              (prefix.lower(),)).fetchone()
        return row[0] if row else None

    def venue(self, name: str) -> list[tuple[str, int]]:
        """(source, works) for each snapshot that names a venue ``name`` (case as given)."""
        return list(self.db.execute("SELECT source, works FROM venues WHERE name = ?", (name,)))

    def size_bytes(self) -> int:
        return self.path.stat().st_size

    def close(self) -> None:
        self.db.close()


def _fts_query(normalized: str) -> str | None:
    """Every distinct word but the commonest, each quoted (FTS5's implicit AND)."""
    words = [w for w in dict.fromkeys(normalized.split()) if w not in _STOPWORDS]
    return " ".join(f'"{w}"' for w in words) if words else None


class LocalIndexes:
    """Several index files asked in turn (``citelsp.index`` may name more than one)."""

    def __init__(self, indexes: Sequence[LocalIndex]) -> None:
        self.indexes = tuple(indexes)

    @classmethod
    def open(cls, paths: Iterable[Path]) -> LocalIndexes:
        return cls([LocalIndex(Path(p).expanduser()) for p in paths])

    @property
    def snapshots(self) -> list[Snapshot]:
        return [s for index in self.indexes for s in index.snapshots.values()]

    def by_doi(self, doi: str) -> list[Hit]:
        key = doi_key(doi)
        return [h for index in self.indexes for h in index.by_key(key)] if key else []

    def by_arxiv(self, arxiv_id: str) -> list[Hit]:
        key = arxiv_key(arxiv_id)
        return [h for index in self.indexes for h in index.by_key(key)]

    def by_title(self, title: str, limit: int = CANDIDATES) -> list[Hit]:
        return [h for index in self.indexes for h in index.by_title(title, limit)]

    def agency(self, prefix: str) -> str | None:
        return next((a for index in self.indexes if (a := index.agency(prefix))), None)

    def stale(self, days: int, today: date) -> list[Snapshot]:
        """Snapshots older than ``days``: said once, since their answers may lag."""
        return [s for s in self.snapshots if (age := s.age_days(today)) is not None
                and age > days]

    def close(self) -> None:
        for index in self.indexes:
            index.close()
