"""Writing the index: one SQLite file (standard library) with the works' Records, an exact
identifier table, exact title keys, an FTS5 title index, venue lists and what each snapshot
was.

A build loads in bulk (large ``executemany`` batches, no journal, indexes and the FTS index
made once at the end, into a new file that replaces the old one only when complete); an
update adds newer files to an existing index in place, a work read again replacing its older
copy. Only the fields verification needs are kept: the Record the service parsers give.
"""

from __future__ import annotations

import gc
import os
import sqlite3
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from multiprocessing import get_context
from pathlib import Path
from typing import NamedTuple

import orjson

from citelsp.index.keys import identifier_keys, record_title_keys, venue_names
from citelsp.index.readers import (
    Entry,
    Part,
    Tally,
    arxiv,
    crossref,
    datacite,
    dblp,
    is_tar,
    openalex,
    parts,
    read_parts,
)
from citelsp.resolution.identifiers import doi_prefix
from citelsp.resolution.outcome import Record
from citelsp.resolution.records import PARSER_VERSION

LAYOUT_VERSION = "3"
SCHEMA_VERSION = f"{LAYOUT_VERSION}+records{PARSER_VERSION}"
"""What an index says it is (``meta`` ``schema``): its tables' layout and the version of the
record parsers that wrote its Records (``records.PARSER_VERSION``). Whatever holds it, an
index that says otherwise is not read but built again: records older parsers wrote may say
what today's would not, and an update must not mix the two."""
BATCH = 5000
PARALLEL_BYTES = 64 * 2**20
"""A folder larger than this is parsed by one process per core."""
READERS = {"openalex": openalex, "crossref": crossref, "dblp": dblp, "arxiv": arxiv,
           "datacite": datacite}
"""Snapshot readers by source, in the order a build reads them: each has ``wanted`` (the
files of a folder or archive it reads) and ``read_part`` (one file's entries)."""
LABELS = {"openalex": "OpenAlex", "crossref": "Crossref", "dblp": "DBLP", "arxiv": "arXiv",
          "datacite": "DataCite"}
AGENCIES = {"crossref": "Crossref", "datacite": "DataCite"}
"""Sources whose every DOI is registered with them: their prefixes route a DOI (doiRA)."""

_TABLES = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS works(id INTEGER PRIMARY KEY, source TEXT NOT NULL,
    key TEXT NOT NULL, title TEXT, record BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS ids(key TEXT NOT NULL, work INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS title_keys(key INTEGER NOT NULL, work INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS venues(name TEXT NOT NULL, source TEXT NOT NULL,
    works INTEGER NOT NULL, PRIMARY KEY(name, source)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS venue_names(name TEXT NOT NULL, venue TEXT NOT NULL,
    source TEXT NOT NULL, works INTEGER NOT NULL, PRIMARY KEY(name, venue, source))
    WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS prefixes(prefix TEXT PRIMARY KEY, agency TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sources(source TEXT PRIMARY KEY, snapshot TEXT, latest_folder TEXT,
    works INTEGER, malformed INTEGER, unreadable INTEGER, problems TEXT, paths TEXT,
    loaded_at TEXT);
"""
_INDEXES = """
CREATE INDEX IF NOT EXISTS works_key ON works(source, key);
CREATE INDEX IF NOT EXISTS ids_key ON ids(key);
CREATE INDEX IF NOT EXISTS title_keys_key ON title_keys(key);
CREATE VIRTUAL TABLE IF NOT EXISTS titles USING fts5(title, content='works',
    content_rowid='id', tokenize='unicode61 remove_diacritics 2');
"""


class IndexFileError(Exception):
    """The index file cannot be written or is not a citelsp index."""


@dataclass(frozen=True)
class Subset:
    """Which works to keep: a range of years, a list of venues (case-insensitive), or all."""

    years: tuple[int, int] | None = None
    venues: frozenset[str] | None = None

    def keeps(self, record: Record) -> bool:
        if self.years is not None:
            low, high = self.years
            if not any(low <= y <= high for y in record.years):
                return False
        if self.venues is not None:
            names = {n.casefold() for n in (record.venue, *record.venue_aliases) if n}
            return not names.isdisjoint(self.venues)
        return True


EVERY_WORK = Subset()


@dataclass
class Loaded:
    """What one source's files gave: works kept, lines skipped, files cut short."""

    source: str
    tally: Tally
    kept: int = 0
    replaced: int = 0
    snapshot: str | None = None
    seconds: float = 0.0


class _Row(NamedTuple):
    """One work ready to insert: what a parsing process sends the writing one."""

    key: str
    title: str | None
    blob: bytes
    ids: tuple[str, ...]
    title_keys: tuple[int, ...]
    venues: tuple[str, ...]
    venue_names: tuple[tuple[str, str], ...]
    prefix: str | None
    date: str | None


def _rows(entries: Iterable[Entry], subset: Subset) -> list[_Row]:
    rows = []
    for entry in entries:
        record = entry.record
        if subset.keeps(record):
            rows.append(_Row(
                work_key(record), record.title, encode(record),
                tuple(identifier_keys(record)), tuple(record_title_keys(record)),
                tuple({record.venue, *record.venue_aliases} - {None, ""}),
                tuple(venue_names(record)),
                doi_prefix(record.doi) if record.doi else None, entry.date))
    return rows


def _prepare_part(job: tuple[str, Part, str | None, Subset]) -> tuple[list[_Row], Tally]:
    """One file's rows, in a parsing process."""
    source, part, since, subset = job
    tally = Tally()
    with _few_collections():
        return _rows(READERS[source].read_part(part, tally, since), subset), tally


@contextmanager
def _few_collections() -> Iterator[None]:
    """Python's cyclic collector run far less often while records are read: a build makes
    millions of short-lived objects (none in cycles) and holds a file's rows, which the
    default thresholds had the collector traverse again and again (a quarter of a build)."""
    before = gc.get_threshold()
    gc.set_threshold(50_000, 20, 100)
    try:
        yield
    finally:
        gc.set_threshold(*before)


def _size(path: Path) -> int:
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size


class IndexWriter:
    """Loads snapshot files into an index file. ``fresh``: a new index, written beside ``path``
    and moved over it by ``close``; otherwise ``path`` is updated in place.

    ``add`` (reading, parsing in processes, batching) is every backend's; another backend's
    writer overrides only where rows go (``_insert``, ``_begin``, ``_commit``, ``_remember``,
    ``_latest_folder``, ``close``, ``abandon``)."""

    def __init__(self, path: Path, *, fresh: bool) -> None:
        self.path = path
        self.fresh = fresh
        self.target = path.with_name(path.name + ".building") if fresh else path
        if fresh:
            self.target.unlink(missing_ok=True)
        elif not path.is_file():
            raise IndexFileError(f"{path}: no index to update (build one first)")
        try:
            self.db = sqlite3.connect(self.target, isolation_level=None)
            self.db.executescript(_PRAGMAS if fresh else _UPDATE_PRAGMAS)
            if fresh:
                self.db.executescript(_TABLES)
                self.db.execute("INSERT INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
            else:
                _check_schema(self.db, path)
        except sqlite3.DatabaseError as exc:
            raise IndexFileError(f"{path}: {exc}") from None
        self.next_id = (self.db.execute("SELECT max(id) FROM works").fetchone()[0] or 0) + 1
        self.venues: Counter[tuple[str, str]] = Counter()
        self.venue_names: Counter[tuple[str, str, str]] = Counter()
        """(another name, venue, source): works whose record gives both names."""
        self.prefixes: dict[str, str] = {}
        self.loaded: list[Loaded] = []

    def add(self, source: str, path: Path, *, subset: Subset = EVERY_WORK,
            progress: Callable[[int], None] | None = None, workers: int | None = None
            ) -> Loaded:
        """Read ``path`` with ``source``'s reader and load what ``subset`` keeps. An update
        reads only OpenAlex folders newer than the last one loaded. A folder's files are
        parsed by ``workers`` processes (default: one per core) while this one writes."""
        since = self._latest_folder(source) if not self.fresh else None
        loaded = Loaded(source, Tally())
        started = time.monotonic()
        if workers is None:  # processes pay off on a large folder or archive only
            large = _size(path) > PARALLEL_BYTES and (path.is_dir() or is_tar(path))
            workers = os.cpu_count() or 1 if large else 1
        self._begin()
        with _few_collections():
            self._read(source, path, since, subset, loaded, progress, workers)
        self._commit()
        loaded.seconds = time.monotonic() - started
        self._remember(source, path, loaded)
        self.loaded.append(loaded)
        return loaded

    def _read(self, source: str, path: Path, since: str | None, subset: Subset,
              loaded: Loaded, progress: Callable[[int], None] | None, workers: int) -> None:
        """Parse and insert every work of ``path`` (in the open transaction)."""
        reader = READERS[source]
        if workers > 1:
            chosen = parts(path, lambda name: reader.wanted(name, since))
            with get_context("spawn").Pool(workers) as pool:
                waiting: deque = deque()
                for part in chosen:  # in order, a few files ahead: a tar is never all read
                    waiting.append(pool.apply_async(_prepare_part, ((source, part, since,
                                                                      subset),)))
                    if len(waiting) > 2 * workers:
                        self._take(source, *waiting.popleft().get(), loaded, progress)
                while waiting:
                    self._take(source, *waiting.popleft().get(), loaded, progress)
        else:
            entries = read_parts(reader, path, loaded.tally, since)
            for batch in _batches(entries, BATCH):
                self._insert(source, _rows(batch, subset), loaded)
                if progress is not None:
                    progress(len(batch))

    def _take(self, source: str, rows: list[_Row], tally: Tally, loaded: Loaded,
              progress: Callable[[int], None] | None) -> None:
        """One file's rows from a parsing process."""
        self._insert(source, rows, loaded)
        loaded.tally.merge(tally)
        if progress is not None:
            progress(tally.works)

    def _insert(self, source: str, rows: list[_Row], loaded: Loaded) -> None:
        if not self.fresh:  # a work twice in one batch: its last copy (a build drops older
            rows = list({row.key: row for row in rows}.values())  # copies at the end)
            loaded.replaced += sum(self._drop(source, row.key) for row in rows)
        works, ids, titles = self._number(source, rows, loaded)
        self.db.executemany("INSERT INTO works VALUES (?, ?, ?, ?, ?)", works)
        self.db.executemany("INSERT INTO ids VALUES (?, ?)", ids)
        self.db.executemany("INSERT INTO title_keys VALUES (?, ?)", titles)
        if not self.fresh:
            self.db.executemany("INSERT INTO titles(rowid, title) VALUES (?, ?)",
                                [(w[0], w[3]) for w in works if w[3]])

    def _number(self, source: str, rows: list[_Row], loaded: Loaded
                ) -> tuple[list[tuple], list[tuple], list[tuple]]:
        """Give each row its work id and count its venues, DOI prefix and date: the
        ``works`` (id, source, key, title, record), ``ids`` and ``title_keys`` rows (key,
        work) that every backend writes."""
        works, ids, titles = [], [], []
        agency = AGENCIES.get(source)
        for row in rows:
            work = self.next_id
            self.next_id += 1
            works.append((work, source, row.key, row.title, row.blob))
            ids.extend((k, work) for k in row.ids)
            titles.extend((k, work) for k in row.title_keys)
            for name in row.venues:
                self.venues[(name, source)] += 1
            for name, venue in row.venue_names:
                self.venue_names[(name, venue, source)] += 1
            if agency and row.prefix:
                self.prefixes.setdefault(row.prefix, agency)
            if row.date and (loaded.snapshot is None or row.date > loaded.snapshot):
                loaded.snapshot = row.date
        loaded.kept += len(rows)
        return works, ids, titles

    def _drop(self, source: str, key: str) -> int:
        """Remove the older copy of a work read again (an update); 1 if there was one."""
        row = self.db.execute("SELECT id, title, record FROM works WHERE source = ? AND key = ?",
                              (source, key)).fetchone()
        if row is None:
            return 0
        work, title, blob = row
        old = decode(blob)
        self.db.executemany("DELETE FROM ids WHERE key = ? AND work = ?",
                            [(k, work) for k in identifier_keys(old)])
        self.db.executemany("DELETE FROM title_keys WHERE key = ? AND work = ?",
                            [(k, work) for k in record_title_keys(old)])
        if title:
            self.db.execute("INSERT INTO titles(titles, rowid, title) VALUES ('delete', ?, ?)",
                            (work, title))
        self.db.execute("DELETE FROM works WHERE id = ?", (work,))
        return 1

    def _latest_folder(self, source: str) -> str | None:
        row = self.db.execute("SELECT latest_folder FROM sources WHERE source = ?",
                              (source,)).fetchone()
        return row[0] if row else None

    def _begin(self) -> None:
        self.db.execute("BEGIN")

    def _commit(self) -> None:
        self.db.execute("COMMIT")

    def _remember(self, source: str, path: Path, loaded: Loaded) -> None:
        row = self.db.execute("SELECT snapshot, latest_folder, malformed, unreadable, problems,"
                              " paths FROM sources WHERE source = ?", (source,)).fetchone()
        self.db.execute("INSERT OR REPLACE INTO sources VALUES (?, ?, ?, NULL, ?, ?, ?, ?, ?)",
                        source_row(row, source, path, loaded))

    def close(self) -> None:
        """Finish: drop older copies, make the indexes and the FTS index, count, and move a
        fresh build over ``path``."""
        db = self.db
        db.execute("BEGIN")
        db.executemany(
            "INSERT INTO venues VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET works = works + "
            "excluded.works", [(n, s, c) for (n, s), c in self.venues.items()])
        db.executemany(
            "INSERT INTO venue_names VALUES (?, ?, ?, ?) ON CONFLICT DO UPDATE SET works = "
            "works + excluded.works", [(*k, c) for k, c in self.venue_names.items()])
        db.executemany("INSERT OR IGNORE INTO prefixes VALUES (?, ?)", self.prefixes.items())
        db.execute("COMMIT")
        if self.fresh:
            db.executescript(_INDEXES)
            _drop_older_copies(db)
            db.execute("INSERT INTO titles(titles) VALUES ('rebuild')")
        db.execute("UPDATE sources SET works = (SELECT count(*) FROM works "
                   "WHERE works.source = sources.source)")
        db.execute("ANALYZE")
        db.close()
        if self.fresh:
            os.replace(self.target, self.path)

    def abandon(self) -> None:
        self.db.close()
        if self.fresh:
            self.target.unlink(missing_ok=True)


_PRAGMAS = """
PRAGMA journal_mode = OFF;
PRAGMA synchronous = OFF;
PRAGMA cache_size = -262144;
PRAGMA temp_store = FILE;
"""


_UPDATE_PRAGMAS = """
PRAGMA cache_size = -262144;
PRAGMA synchronous = NORMAL;
"""
"""An update keeps SQLite's rollback journal: servers may be reading the index meanwhile,
and an interrupted update must leave it as it was (a build writes a new file instead)."""


def _check_schema(db: sqlite3.Connection, path: Path) -> None:
    try:
        row = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
    except sqlite3.DatabaseError:
        row = None
    if row is None:
        raise IndexFileError(f"{path}: not a citelsp index of this version (build it again)")
    if (problem := version_problem(row[0])) is not None:
        raise IndexFileError(f"{path}: {problem}")


def version_problem(said: str | None) -> str | None:
    """Why an index whose ``meta`` says ``said`` cannot be read, or None when it can."""
    if said == SCHEMA_VERSION:
        return None
    layout, _, records = (said or "").partition("+records")
    if layout == LAYOUT_VERSION:  # also an index from before the parsers' version was kept
        return (f"its records were parsed by another citelsp's record parsers (version "
                f"{records or 'not recorded'}; this one's are {PARSER_VERSION}): build it "
                "again")
    return "an index of another version (build it again)"


def _drop_older_copies(db: sqlite3.Connection) -> None:
    """A work read twice in one build (an OpenAlex work in two ``updated_date`` folders)
    keeps its last copy."""
    db.execute("CREATE TEMP TABLE stale AS SELECT w.id FROM works w JOIN (SELECT source, key, "
               "max(id) AS newest FROM works GROUP BY source, key HAVING count(*) > 1) d "
               "ON w.source = d.source AND w.key = d.key AND w.id < d.newest")
    if db.execute("SELECT count(*) FROM stale").fetchone()[0]:
        db.execute("BEGIN")
        for table, column in (("ids", "work"), ("title_keys", "work"), ("works", "id")):
            db.execute(f"DELETE FROM {table} WHERE {column} IN (SELECT id FROM stale)")
        db.execute("COMMIT")
    db.execute("DROP TABLE stale")


def source_row(row: tuple | None, source: str, path: Path, loaded: Loaded) -> tuple:
    """A ``sources`` row (all but ``works``, counted at the end) after ``loaded``: ``row``
    is (snapshot, latest_folder, malformed, unreadable, problems, paths) before it, if any."""
    snapshot, folder, malformed, unreadable, problems, paths = row or (None, None, 0, 0,
                                                                       "[]", "[]")
    folder = max(filter(None, [folder, loaded.snapshot if source == "openalex" else None]),
                 default=None)
    return (source, max(filter(None, [snapshot, loaded.snapshot]), default=None), folder,
            malformed + loaded.tally.malformed, unreadable + loaded.tally.unreadable,
            orjson.dumps([*orjson.loads(problems), *loaded.tally.problems][-50:]).decode(),
            orjson.dumps(sorted({*orjson.loads(paths), str(path)})).decode(),
            datetime.now(UTC).isoformat(timespec="seconds"))


def work_key(record: Record) -> str:
    """What makes two copies of one work the same work within a source (an arXiv id without
    its version, else the source's id)."""
    return record.arxiv_id if record.source == "arxiv" and record.arxiv_id else \
        record.source_id or record.doi or ""


def encode(record: Record) -> bytes:
    """The Record as compact JSON: fields at their defaults are left out."""
    data = record.to_dict()
    return orjson.dumps({k: v for k, v in data.items() if v or k == "source"})


def decode(blob: bytes) -> Record:
    return Record.from_dict(orjson.loads(blob))


def _batches(entries: Iterable[Entry], size: int) -> Iterator[list[Entry]]:
    batch: list[Entry] = []
    for entry in entries:
        batch.append(entry)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch
