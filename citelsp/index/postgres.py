"""The local index in PostgreSQL (``citelsp index build postgresql://…``): the same works,
identifiers, exact title keys, venues and snapshots as the SQLite file, for many processes on
many machines. Titles are searched with ``pg_trgm`` (a GIN trigram index) in place of FTS5;
its candidates go to the same re-ranking and matching (``query.IndexBackend``).

Each build is a generation: a schema of its own (``citelsp_index_<transaction>``) that
``citelsp_index.live`` names. A build COPYs into a new generation inside one transaction, makes
its indexes, points ``live`` at it and drops the old one as it commits: a reader never sees a
half-built index, and a build that fails or is killed leaves the old one as it was (PostgreSQL
rolls it back, the new schema with it). A reader's statement reads one generation whole; one
that finds its generation dropped reads ``live`` again and asks the new one. An update COPYs
into temporary tables and merges them into the live generation in one transaction: readers see
the old index until it commits. One writer at a time (a transaction-level advisory lock).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import suppress
from pathlib import Path
from typing import TypeVar

import psycopg

from citelsp.index.build import (
    SCHEMA_VERSION,
    IndexFileError,
    IndexWriter,
    Loaded,
    _Row,
    source_row,
    version_problem,
)
from citelsp.index.query import (
    CANDIDATES,
    LINKS,
    SOURCES_COLUMNS,
    TEXT_ROWS,
    Hit,
    IndexBackend,
    IndexOpenError,
    IndexQueryError,
    snapshot_of,
)
from citelsp.uris import shown_url

HOME = "citelsp_index"
"""The schema whose table ``live`` names the generation readers use."""
WRITER_LOCK = 0x6369_7465_6C73_70  # "citelsp": one build or update at a time
CONNECT_TIMEOUT_S = 10
SIMILARITY = 0.6
"""pg_trgm's similarity threshold for title candidates (its ``%``). A title with a typo
shares about 0.8 of its trigrams; a near match needs a rapidfuzz ratio of 0.70, which a title
sharing less than 0.6 seldom reaches; and the GIN index skips far more at 0.6 than at
pg_trgm's default 0.3 (an absent title among 200,000 generated works: 2.2 s at 0.3, 0.12 s at
0.5)."""
CANDIDATES_TIMEOUT_MS = 200
"""Longest a title's trigram candidates may take. They only ever give near matches (an exact
title is found by its title keys first), so a search that takes longer gives none rather
than hold a check up."""
SNAPSHOTS_TTL_S = 60.0
"""A reader reads the snapshots' dates and counts again after this long: an update may have
added newer files since."""
T = TypeVar("T")

_TABLES = """
CREATE TABLE {s}.meta(key text PRIMARY KEY, value text);
CREATE TABLE {s}.works(id bigint NOT NULL, source text NOT NULL, key text NOT NULL,
    title text, record bytea NOT NULL);
CREATE TABLE {s}.ids(key text NOT NULL, work bigint NOT NULL);
CREATE TABLE {s}.title_keys(key bigint NOT NULL, work bigint NOT NULL);
CREATE TABLE {s}.venues(name text NOT NULL, source text NOT NULL, works bigint NOT NULL,
    PRIMARY KEY(name, source));
CREATE TABLE {s}.venue_names(name text NOT NULL, venue text NOT NULL, source text NOT NULL,
    works bigint NOT NULL, PRIMARY KEY(name, venue, source));
CREATE TABLE {s}.prefixes(prefix text PRIMARY KEY, agency text NOT NULL);
CREATE TABLE {s}.sources(source text PRIMARY KEY, snapshot text, latest_folder text,
    works bigint, malformed bigint, unreadable bigint, problems text, paths text,
    loaded_at text);
"""
_INDEXES = """
ALTER TABLE {s}.works ADD PRIMARY KEY (id);
CREATE INDEX ON {s}.works(source, key);
CREATE INDEX ON {s}.ids(key, work);
CREATE INDEX ON {s}.title_keys(key, work);
CREATE INDEX ON {s}.works USING gin (title gin_trgm_ops);
"""
_DROP_OLDER_COPIES = """
CREATE TEMP TABLE stale ON COMMIT DROP AS SELECT w.id FROM {s}.works w JOIN (SELECT source,
    key, max(id) AS newest FROM {s}.works GROUP BY source, key HAVING count(*) > 1) d
    ON w.source = d.source AND w.key = d.key AND w.id < d.newest;
DELETE FROM {s}.ids WHERE work IN (SELECT id FROM stale);
DELETE FROM {s}.title_keys WHERE work IN (SELECT id FROM stale);
DELETE FROM {s}.works WHERE id IN (SELECT id FROM stale);
DROP TABLE stale;
"""
"""A work read twice in one build (an OpenAlex work in two ``updated_date`` folders) keeps
its last copy, as in the SQLite index."""
_MERGE = """
DELETE FROM pg_temp.works n USING pg_temp.works m
    WHERE n.source = m.source AND n.key = m.key AND n.id < m.id;
CREATE TEMP TABLE gone ON COMMIT DROP AS WITH d AS (DELETE FROM {s}.works w USING
    pg_temp.works n WHERE w.source = n.source AND w.key = n.key RETURNING w.id)
    SELECT id FROM d;
DELETE FROM {s}.ids WHERE work IN (SELECT id FROM gone);
DELETE FROM {s}.title_keys WHERE work IN (SELECT id FROM gone);
INSERT INTO {s}.works SELECT * FROM pg_temp.works;
INSERT INTO {s}.ids SELECT * FROM pg_temp.ids WHERE work IN (SELECT id FROM pg_temp.works);
INSERT INTO {s}.title_keys SELECT * FROM pg_temp.title_keys
    WHERE work IN (SELECT id FROM pg_temp.works);
"""
"""An update's works replace their older copies (same source and key), in the live tables."""


def _connect(url: str, *, autocommit: bool, timeout_ms: int = 0) -> psycopg.Connection:
    """A connection with pg_trgm's threshold set and statements cancelled after
    ``timeout_ms`` (0: never)."""
    return psycopg.connect(url, autocommit=autocommit, connect_timeout=CONNECT_TIMEOUT_S,
                           application_name="citelsp index",
                           options=f"-c pg_trgm.similarity_threshold={SIMILARITY} "
                                   f"-c statement_timeout={int(timeout_ms)}")


def _opened(url: str, where: str, prepare: Callable[[psycopg.Connection], None],
            error: type[Exception], *, autocommit: bool) -> psycopg.Connection:
    """A connection ``prepare`` has readied; ``error`` (naming ``where``, never the password)
    when either fails."""
    try:
        conn = _connect(url, autocommit=autocommit)
    except psycopg.Error as exc:
        raise error(f"{where}: cannot connect ({_first_line(exc)})") from None
    try:
        prepare(conn)
    except psycopg.Error as exc:
        conn.close()
        raise error(f"{where}: {_first_line(exc)}") from None
    except error:
        conn.close()
        raise
    return conn


def _script(conn: psycopg.Connection, script: str, schema: str) -> None:
    for statement in filter(str.strip, script.format(s=schema).split(";")):
        conn.execute(statement)


def _text(value: str | None) -> str | None:
    """PostgreSQL's text holds no NUL; one in a snapshot's title must not fail a build."""
    return value.replace("\x00", "") if value and "\x00" in value else value


def _live(conn: psycopg.Connection) -> str | None:
    """The generation readers use, or None when the database holds no index."""
    if conn.execute(f"SELECT to_regclass('{HOME}.live')").fetchone()[0] is None:
        return None
    row = conn.execute(f"SELECT generation FROM {HOME}.live").fetchone()
    return row[0] if row else None


class _Moved(Exception):
    """The generation a reader used was dropped by a build: read ``live`` again."""


class _TimedOut(Exception):
    """A statement ran past its timeout and was cancelled."""


class PostgresIndex(IndexBackend):
    """The index in a PostgreSQL database, read-only. One connection in autocommit (psycopg
    serializes its use across threads); a connection lost is opened again once before the
    question is given up (then the services answer it)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.where = shown_url(url)
        self.text: psycopg.Connection | None = None
        self.conn = _opened(url, self.where, self._follow, IndexOpenError, autocommit=True)

    def _follow(self, conn: psycopg.Connection | None = None) -> None:
        """Use the generation ``live`` names now, and its snapshots."""
        self.conn = conn or self.conn
        schema = _live(self.conn)
        if schema is None:
            raise IndexOpenError(f"{self.where}: no citelsp index in this database (build "
                                 "one: citelsp index build URL …)")
        row = self.conn.execute(f"SELECT value FROM {schema}.meta WHERE key = 'schema'"
                                ).fetchone()
        if (problem := version_problem(row[0] if row else None)) is not None:
            raise IndexOpenError(f"{self.where}: {problem}")
        self.schema = schema
        self.snapshots = {s.source: s for s in map(snapshot_of, self.conn.execute(
            f"SELECT {SOURCES_COLUMNS} FROM {schema}.sources ORDER BY source"))}
        self.read_at = time.monotonic()

    def _current(self, ask: Callable[[], T]) -> T:
        """``ask()``, asked again of the new generation if a build replaced the one it read
        (each statement reads one generation whole). The snapshots are read again once
        they are ``SNAPSHOTS_TTL_S`` old."""
        if time.monotonic() - self.read_at > SNAPSHOTS_TTL_S:
            with suppress(psycopg.Error, IndexOpenError):  # the question says what is wrong
                self._follow()
        try:
            return ask()
        except _Moved:
            try:
                self._follow()
            except (psycopg.Error, IndexOpenError) as exc:
                raise IndexQueryError(str(exc)) from None
            return ask()

    def by_key(self, key: str) -> list[Hit]:
        return self._current(lambda: super(PostgresIndex, self).by_key(key))

    def by_title(self, title: str, limit: int = CANDIDATES) -> list[Hit]:
        return self._current(lambda: super(PostgresIndex, self).by_title(title, limit))

    def _rows(self, query: str, params: Sequence, *, text: bool = False) -> list[tuple]:
        """The rows of one statement on the current generation. ``text``: on the connection
        of text searches, whose statements are cancelled after ``CANDIDATES_TIMEOUT_MS`` (a
        connection of its own: a search in a worker thread never holds up a lookup)."""
        for attempt in (1, 2):
            try:
                conn = self._text_conn() if text else self.conn
                return conn.execute(query.format(s=self.schema), params).fetchall()
            except psycopg.errors.QueryCanceled:
                raise _TimedOut from None
            except (psycopg.errors.UndefinedTable, psycopg.errors.InvalidSchemaName):
                raise _Moved from None
            except psycopg.OperationalError as exc:
                if attempt == 2:
                    raise IndexQueryError(_first_line(exc)) from None
                try:
                    if text:
                        self.text.close()
                    else:
                        self.conn.close()
                        self.conn = _connect(self.url, autocommit=True)
                except psycopg.Error as again:
                    raise IndexQueryError(_first_line(again)) from None
            except psycopg.Error as exc:
                raise IndexQueryError(_first_line(exc)) from None
        return []

    def _text_conn(self) -> psycopg.Connection:
        if self.text is None or self.text.closed:
            self.text = _connect(self.url, autocommit=True, timeout_ms=CANDIDATES_TIMEOUT_MS)
        return self.text

    def _key_rows(self, key: str) -> list[tuple[str, bytes]]:
        return self._rows("SELECT w.source, w.record FROM {s}.ids i JOIN {s}.works w "
                          "ON w.id = i.work WHERE i.key = %s ORDER BY w.id", (key,))

    def _exact_works(self, keys: Sequence[int]) -> list[int]:
        return [r[0] for r in self._rows("SELECT DISTINCT work FROM {s}.title_keys "
                                         "WHERE key = ANY(%s) ORDER BY work", (list(keys),))]

    def _title_candidates(self, title: str) -> list[tuple[int, str | None]]:
        """Titles sharing enough trigrams with ``title`` (``%``: a similarity of
        ``SIMILARITY`` or more, through the GIN index), most similar first."""
        if not title.strip():
            return []
        try:
            return self._rows("SELECT id, title FROM {s}.works WHERE title %% %s "
                              "ORDER BY similarity(title, %s) DESC LIMIT %s",
                              (title, title, TEXT_ROWS), text=True)
        except _TimedOut:
            return []

    def _work_rows(self, ids: Sequence[int]) -> dict[int, tuple[str, bytes]]:
        return {w: (s, bytes(b)) for w, s, b in self._rows(
            "SELECT id, source, record FROM {s}.works WHERE id = ANY(%s)", (list(ids),))}

    def agency(self, prefix: str) -> str | None:
        rows = self._current(lambda: self._rows("SELECT agency FROM {s}.prefixes WHERE "
                                                "prefix = %s", (prefix.lower(),)))
        return rows[0][0] if rows else None

    def venue(self, name: str) -> list[tuple[str, int]]:
        return self._current(lambda: self._rows("SELECT source, works FROM {s}.venues WHERE "
                                                "name = %s", (name,)))

    def venue_links(self, key: str) -> list[str]:
        return [v for (v,) in self._current(lambda: self._rows(
            "SELECT DISTINCT venue FROM {s}.venue_names WHERE name = %s LIMIT %s",
            (_text(key), LINKS)))]

    def size_bytes(self) -> int:
        rows = self._rows("SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM "
                          "pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE "
                          "n.nspname = %s AND c.relkind = 'r'", (self.schema,))
        return int(rows[0][0])

    def close(self) -> None:
        self.conn.close()
        if self.text is not None:
            self.text.close()


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


class PostgresWriter(IndexWriter):
    """Loads snapshot files into the index in a PostgreSQL database (``IndexWriter.add``
    reads and parses; this writes with COPY). Everything happens in one transaction that
    ``close`` commits and ``abandon`` (or a lost connection) rolls back."""

    def __init__(self, url: str, *, fresh: bool) -> None:
        self.fresh = fresh
        self.where = shown_url(url)
        self.conn = _opened(url, self.where, self._prepare, IndexFileError, autocommit=False)
        self.next_id = self.conn.execute(
            f"SELECT coalesce(max(id), 0) + 1 FROM {self.schema}.works").fetchone()[0]
        self.venues: Counter[tuple[str, str]] = Counter()
        self.venue_names: Counter[tuple[str, str, str]] = Counter()
        self.prefixes: dict[str, str] = {}
        self.loaded: list[Loaded] = []

    def _prepare(self, conn: psycopg.Connection) -> None:
        """Take the writers' lock and make the tables rows are written to."""
        if not conn.execute("SELECT pg_try_advisory_xact_lock(%s)", (WRITER_LOCK,)).fetchone(
                )[0]:
            raise IndexFileError(f"{self.where}: another build or update of this index is "
                                 "running; try again when it is done")
        if self.fresh:
            xid = conn.execute("SELECT pg_current_xact_id()").fetchone()[0]
            self.schema = f"{HOME}_{xid}"
            try:
                conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
                conn.execute(f"CREATE SCHEMA {self.schema}")
            except psycopg.errors.InsufficientPrivilege as exc:
                raise IndexFileError(
                    f"{self.where}: {_first_line(exc)}: a build needs a user who may create "
                    "schemas (GRANT CREATE ON DATABASE …) and, unless it is there, the "
                    "pg_trgm extension") from None
            _script(conn, _TABLES, self.schema)
            conn.execute(f"INSERT INTO {self.schema}.meta VALUES ('schema', %s)",
                         (SCHEMA_VERSION,))
            return
        live = _live(conn)
        if live is None:
            raise IndexFileError(f"{self.where}: no index to update (build one first)")
        row = conn.execute(f"SELECT value FROM {live}.meta WHERE key = 'schema'").fetchone()
        if (problem := version_problem(row[0] if row else None)) is not None:
            raise IndexFileError(f"{self.where}: {problem}")
        self.schema = live
        for table in ("works", "ids", "title_keys"):
            conn.execute(f"CREATE TEMP TABLE {table} (LIKE {live}.{table}) ON COMMIT DROP")

    def add(self, source: str, path: Path, **options) -> Loaded:
        """``IndexWriter.add``, then (an update) the works read replace their older copies."""
        try:
            loaded = super().add(source, path, **options)
            if not self.fresh:
                loaded.replaced = self._merge()
            return loaded
        except psycopg.Error as exc:
            raise IndexFileError(f"{self.where}: {_first_line(exc)}") from None

    def _begin(self) -> None:
        """One transaction from the start: nothing to begin per source."""

    def _commit(self) -> None:
        """Nothing is committed before ``close``."""

    def _target(self, table: str) -> str:
        return f"{self.schema}.{table}" if self.fresh else f"pg_temp.{table}"

    def _insert(self, source: str, rows: list[_Row], loaded: Loaded) -> None:
        works, ids, titles = self._number(source, rows, loaded)
        freeze = " (FORMAT BINARY, FREEZE)" if self.fresh else " (FORMAT BINARY)"
        with self.conn.cursor() as cur:
            for table, types, data in (
                    ("works", ["int8", "text", "text", "text", "bytea"],
                     ((w, s, _text(k), _text(t), b) for w, s, k, t, b in works)),
                    ("ids", ["text", "int8"], ((_text(k), w) for k, w in ids)),
                    ("title_keys", ["int8", "int8"], titles)):
                with cur.copy(f"COPY {self._target(table)} FROM STDIN{freeze}") as copy:
                    copy.set_types(types)
                    for row in data:
                        copy.write_row(row)

    def _merge(self) -> int:
        """Move the update's works into the live tables; how many older copies they
        replaced (within the update, and in the index)."""
        conn = self.conn
        staged = conn.execute("SELECT count(*) FROM pg_temp.works").fetchone()[0]
        _script(conn, _MERGE, self.schema)
        gone = conn.execute("SELECT count(*) FROM pg_temp.gone").fetchone()[0]
        kept = conn.execute("SELECT count(*) FROM pg_temp.works").fetchone()[0]
        conn.execute("DROP TABLE pg_temp.gone")
        conn.execute("TRUNCATE pg_temp.works, pg_temp.ids, pg_temp.title_keys")
        return staged - kept + gone

    def _latest_folder(self, source: str) -> str | None:
        row = self.conn.execute(f"SELECT latest_folder FROM {self.schema}.sources WHERE "
                                "source = %s", (source,)).fetchone()
        return row[0] if row else None

    def _remember(self, source: str, path: Path, loaded: Loaded) -> None:
        row = self.conn.execute(f"SELECT snapshot, latest_folder, malformed, unreadable, "
                                f"problems, paths FROM {self.schema}.sources WHERE source = %s",
                                (source,)).fetchone()
        values = source_row(row, source, path, loaded)
        self.conn.execute(
            f"INSERT INTO {self.schema}.sources VALUES (%s, %s, %s, NULL, %s, %s, %s, %s, %s) "
            "ON CONFLICT (source) DO UPDATE SET snapshot = excluded.snapshot, latest_folder = "
            "excluded.latest_folder, malformed = excluded.malformed, unreadable = "
            "excluded.unreadable, problems = excluded.problems, paths = excluded.paths, "
            "loaded_at = excluded.loaded_at", values)

    def close(self) -> None:
        """Count, index and (a build) put the new schema in place of the old one; commit."""
        conn, s = self.conn, self.schema
        try:
            with conn.cursor() as cur:
                cur.executemany(
                    f"INSERT INTO {s}.venues VALUES (%s, %s, %s) ON CONFLICT (name, source) "
                    "DO UPDATE SET works = venues.works + excluded.works",
                    [(_text(n), src, c) for (n, src), c in self.venues.items()])
                cur.executemany(
                    f"INSERT INTO {s}.venue_names VALUES (%s, %s, %s, %s) ON CONFLICT (name, "
                    "venue, source) DO UPDATE SET works = venue_names.works + excluded.works",
                    [(_text(n), _text(v), src, c)
                     for (n, v, src), c in self.venue_names.items()])
                cur.executemany(f"INSERT INTO {s}.prefixes VALUES (%s, %s) ON CONFLICT DO "
                                "NOTHING", list(self.prefixes.items()))
            if self.fresh:
                _script(conn, _DROP_OLDER_COPIES, s)
                _script(conn, _INDEXES, s)
            conn.execute(f"UPDATE {s}.sources SET works = (SELECT count(*) FROM {s}.works "
                         f"WHERE works.source = sources.source)")
            if self.fresh:
                conn.execute(f"ANALYZE {s}.works, {s}.ids, {s}.title_keys")
                self._go_live()
            conn.commit()
        except psycopg.Error as exc:
            self.abandon()
            raise IndexFileError(f"{self.where}: {_first_line(exc)}") from None
        conn.close()

    def _go_live(self) -> None:
        """Point ``live`` at this build's generation and drop the one it replaces (its
        readers' statements finish first; their next ones read ``live`` again)."""
        conn = self.conn
        conn.execute(f"CREATE SCHEMA IF NOT EXISTS {HOME}")
        conn.execute(f"CREATE TABLE IF NOT EXISTS {HOME}.live(generation text NOT NULL)")
        old = _live(conn)
        conn.execute(f"DELETE FROM {HOME}.live")
        conn.execute(f"INSERT INTO {HOME}.live VALUES (%s)", (self.schema,))
        if old:
            conn.execute(f"DROP SCHEMA {old} CASCADE")

    def abandon(self) -> None:
        """Roll everything back: the index is as it was before."""
        with suppress(psycopg.Error):  # a connection that is gone was rolled back already
            self.conn.rollback()
        self.conn.close()
