"""The answer cache in PostgreSQL, shared by every process and machine of a team.

A store with the surface ``AnswerCache`` uses of diskcache (``get``, ``set``, ``delete``,
``clear``, ``close``), holding the same keys and JSON values in one table. Each write is one
``INSERT … ON CONFLICT DO UPDATE`` in a transaction of its own (a batch in one transaction),
so concurrent writers never lose or tear an answer and a process killed mid-write leaves
nothing half-written; of two answers to one question the later stored wins.

PostgreSQL down or restarted mid-run: one line says so (and one more when it is back), reads
are misses meanwhile, and writes wait in memory to be stored when a background thread has
reconnected; at close they are given a last few seconds, and any still waiting are reported
(they are looked up again by the next run), never dropped in silence. Calls are synchronous,
like diskcache's: one statement on loopback takes a fraction of a millisecond.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime

import psycopg

from citelsp.resolution.cache import Row, Unavailable
from citelsp.uris import shown_url

log = logging.getLogger("citelsp.cache")

SCHEMA_VERSION = 1
"""Of the tables below; a database holding a newer one is left alone (the cache is off)."""
TABLE = "citelsp_answers"
META = "citelsp_answers_schema"
_SCHEMA_LOCK = 0x43495445_0001
"""The advisory lock that lets one of several processes racing to create the schema do it."""
_SCHEMA = (
    f"""CREATE TABLE IF NOT EXISTS {META} (
        singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
        version integer NOT NULL)""",
    f"""CREATE TABLE IF NOT EXISTS {TABLE} (
        key text PRIMARY KEY,
        version text NOT NULL,
        resolver text NOT NULL,
        form text NOT NULL,
        stored_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        value text NOT NULL)""",
    f"CREATE INDEX IF NOT EXISTS {TABLE}_expires_at ON {TABLE} (expires_at)",
    f"INSERT INTO {META} (version) VALUES ({SCHEMA_VERSION}) ON CONFLICT DO NOTHING",
)
_UPSERT = (
    f"INSERT INTO {TABLE} AS t (key, version, resolver, form, stored_at, expires_at, value) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (key) DO UPDATE SET "
    "version = EXCLUDED.version, resolver = EXCLUDED.resolver, form = EXCLUDED.form, "
    "stored_at = EXCLUDED.stored_at, expires_at = EXCLUDED.expires_at, value = EXCLUDED.value "
    "WHERE t.stored_at <= EXCLUDED.stored_at"
)
CONNECT_TIMEOUT_S = 5
STATEMENT_TIMEOUT_MS = 10_000
"""A lookup never waits longer for one statement (a lock, a stalled server)."""
RETRY_S = (0.5, 1.0, 2.0, 5.0, 10.0)
"""Waits between reconnection attempts; the last repeats."""
CLOSING_WAIT_S = 10.0
"""How long ``close`` keeps trying to store answers that wait for the database."""
PENDING_LIMIT = 200_000
"""Answers kept in memory for an unreachable database; past it the oldest are reported lost."""


class PostgresStore:
    """The answers table of one database, through one connection of this process."""

    lists_keys = False
    """``AnswerCache.pass_over`` does not list a shared table's keys: it may hold millions."""

    def __init__(self, url: str, *, clock: Callable[[], float] = time.time,
                 notice: Callable[[str], None] | None = None,
                 retry_s: tuple[float, ...] = RETRY_S,
                 closing_wait_s: float | None = None) -> None:
        """Connects and creates the schema if needed; raises ``Unavailable`` only for a
        schema this citelsp cannot use. An unreachable database is retried in the
        background, with one message. ``notice`` tells the writer (default: a warning),
        always on the thread that called the store."""
        self.where = shown_url(url)
        self._notice = notice or log.warning
        self._news: list[str] = []
        """Messages for ``notice``, said at the next call (the retry thread's too)."""
        self._url = url
        self._clock = clock
        self._retry_s = retry_s
        self._closing_wait_s = CLOSING_WAIT_S if closing_wait_s is None else closing_wait_s
        self._lock = threading.RLock()
        self._conn = None
        self._pending: dict[str, tuple[str, float, float]] = {}
        """Writes waiting for the database: key → (value, ttl in seconds, stored at)."""
        self._lost = 0
        self._why = ""
        """Why the database was last found unreachable."""
        self._closing = threading.Event()
        self._retrying: threading.Thread | None = None
        try:
            self._conn = self._connect()
        except Unavailable:
            raise
        except Exception as exc:
            self._went_down(exc)
        self._tell()

    # --- what AnswerCache calls -------------------------------------------------------------

    def get(self, key: str) -> str | None:
        self._tell()
        with self._lock:
            waiting = self._pending.get(key)
            if waiting is not None:
                return waiting[0]
            conn = self._conn
            if conn is None:
                return None
            try:
                row = conn.execute(f"SELECT value FROM {TABLE} WHERE key = %s",
                                   (key,)).fetchone()
            except Exception as exc:
                self._failed(exc)
                return None
        return row[0] if row is not None else None

    def set(self, key: str, value: str, expire: float | None = None) -> None:
        self._tell()
        with self._lock:
            entry = (value, float(expire or 0.0), self._clock())
            conn = self._conn
            if conn is None:
                self._wait(key, entry)
                return
            try:
                conn.execute(_UPSERT, _row(key, entry))
            except Exception as exc:
                self._failed(exc)  # raises unless the connection is lost
                self._wait(key, entry)

    def delete(self, key: str) -> None:
        with self._lock:
            self._pending.pop(key, None)
            self._execute(f"DELETE FROM {TABLE} WHERE key = %s", (key,))

    def clear(self) -> int:
        """Remove every answer; how many were stored."""
        with self._lock:
            self._pending.clear()
            return self._execute(f"DELETE FROM {TABLE}")

    def close(self) -> None:
        """Store what waits (trying for a few seconds if the database is down), then close;
        say how many answers could not be stored."""
        self._closing.set()
        retrying = self._retrying
        if retrying is not None:
            retrying.join()
        with self._lock:
            deadline = time.monotonic() + self._closing_wait_s
            while self._pending and self._conn is None and time.monotonic() < deadline:
                self._reconnect()
                if self._conn is None:
                    time.sleep(0.5)
            if self._pending and self._conn is not None:
                self._flush(self._conn)
            lost = self._lost + len(self._pending)
            if lost:
                self._news.append(f"citelsp: {lost} answer{'s' if lost != 1 else ''} could not "
                                  f"be stored in the shared cache {self.where} ({self._why}); "
                                  "the next run looks them up again")
            self._pending.clear()
            self._lost = 0
            if self._conn is not None:
                with contextlib.suppress(Exception):
                    self._conn.close()
                self._conn = None
        self._tell()

    # --- maintenance (citelsp cache) --------------------------------------------------------

    def rows(self) -> list[Row]:
        """Answers by cache version and resolver, live and expired."""
        rows = self._execute(
            f"SELECT version, resolver, count(*) FILTER (WHERE expires_at > now()), "
            f"count(*) FILTER (WHERE expires_at <= now()) FROM {TABLE} "
            "GROUP BY version, resolver ORDER BY version, resolver", fetch=True)
        return [Row(*row) for row in rows]

    def prune(self, version: str) -> int:
        """Remove expired answers and those of other cache versions; how many."""
        return self._execute(
            f"DELETE FROM {TABLE} WHERE version <> %s OR expires_at <= now()", (version,))

    # --- connection -------------------------------------------------------------------------

    def _connect(self):
        """A new connection with the schema in place; ``Unavailable`` for a schema from a
        newer citelsp, any other exception when the database cannot be reached."""
        conn = psycopg.connect(
            self._url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S,
            application_name="citelsp cache", keepalives=1, keepalives_idle=30,
            tcp_user_timeout=STATEMENT_TIMEOUT_MS,
            options=f"-c statement_timeout={STATEMENT_TIMEOUT_MS}")
        try:
            found = _schema_version(conn)
            if found is None:
                with conn.transaction():
                    conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
                    for statement in _SCHEMA:
                        conn.execute(statement)
                found = _schema_version(conn)
            if found != SCHEMA_VERSION:
                raise Unavailable(f"the shared cache {self.where} has schema version {found}, "
                                  f"this citelsp knows {SCHEMA_VERSION}: upgrade citelsp, or "
                                  "use another database")
        except psycopg.errors.InsufficientPrivilege as exc:
            conn.close()
            raise Unavailable(f"the shared cache {self.where} cannot be set up: "
                              f"{_reason(exc)}") from exc
        except BaseException:
            conn.close()
            raise
        return conn

    def _execute(self, statement: str, params: tuple = (), *, fetch: bool = False):
        """Run one maintenance statement without the lookups' time limit (pruning millions
        of rows takes a while); ``Unavailable`` when the database cannot be had."""
        with self._lock:
            if self._conn is None:
                self._reconnect()
            conn = self._conn
            if conn is None:
                raise Unavailable(f"the shared cache {self.where} is unreachable ({self._why})")
            try:
                with conn.transaction():
                    conn.execute("SET LOCAL statement_timeout = 0")
                    cursor = conn.execute(statement, params)
                    return cursor.fetchall() if fetch else cursor.rowcount
            except Exception as exc:
                with contextlib.suppress(Exception):
                    self._failed(exc)
                raise Unavailable(f"the shared cache {self.where}: {_reason(exc)}") from exc

    def _failed(self, exc: Exception) -> None:
        """A lost connection starts the reconnection; any other error is the caller's."""
        conn = self._conn
        if conn is not None and not conn.closed and not conn.broken:
            raise exc
        self._went_down(exc)

    def _went_down(self, exc: Exception) -> None:
        if self._conn is not None:
            with contextlib.suppress(Exception):
                self._conn.close()
            self._conn = None
        self._why = _reason(exc)
        self._news.append(f"citelsp: the shared cache {self.where} is unreachable ({self._why}); "
                          "looking answers up live and storing them when it is back")
        if not self._closing.is_set() and (self._retrying is None
                                           or not self._retrying.is_alive()):
            self._retrying = threading.Thread(target=self._retry, name="citelsp-cache-retry",
                                              daemon=True)
            self._retrying.start()

    def _retry(self) -> None:
        """Reconnect in the background (lookups never wait for it), then store what waits."""
        for attempt in range(1_000_000):
            wait = self._retry_s[min(attempt, len(self._retry_s) - 1)]
            if self._closing.wait(wait):
                return
            if self._reconnect():
                return

    def _reconnect(self) -> bool:
        """One attempt: connect, store what waits, and go on with the new connection."""
        try:
            conn = self._connect()
        except Exception as exc:
            self._why = _reason(exc)
            return False
        with self._lock:
            if self._conn is not None:  # close() got there first
                conn.close()
                return True
            try:
                stored = self._flush(conn)
            except Exception as exc:
                if conn.closed or conn.broken:
                    conn.close()
                    return False
                self._lost += len(self._pending)  # the database refuses them: reported at close
                self._pending.clear()
                self._why = _reason(exc)
                stored = 0
            self._conn = conn
            self._news.append(f"citelsp: the shared cache {self.where} is reachable again"
                              + (f"; {stored} answer{'s' if stored != 1 else ''} that waited "
                                 "stored" if stored else ""))
        return True

    def _flush(self, conn) -> int:
        """Store every waiting answer in one transaction (all or none)."""
        waiting = list(self._pending.items())
        if not waiting:
            return 0
        with conn.transaction(), conn.cursor() as cursor:
            cursor.executemany(_UPSERT, [_row(key, entry) for key, entry in waiting])
        for key, entry in waiting:
            if self._pending.get(key) is entry:
                del self._pending[key]
        return len(waiting)

    def _tell(self) -> None:
        """Say what happened since the last call, on the caller's thread."""
        if self._news:
            with self._lock:
                news, self._news = self._news, []
            for message in news:
                self._notice(message)

    def _wait(self, key: str, entry: tuple[str, float, float]) -> None:
        self._pending.pop(key, None)
        self._pending[key] = entry
        if len(self._pending) > PENDING_LIMIT:
            del self._pending[next(iter(self._pending))]
            self._lost += 1


def _schema_version(conn) -> int | None:
    exists = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (META,)).fetchone()[0]
    if not exists:
        return None
    row = conn.execute(f"SELECT version FROM {META}").fetchone()
    return None if row is None else int(row[0])


def _row(key: str, entry: tuple[str, float, float]) -> tuple:
    """The columns of one upsert: the key's parts (``[version, resolver, form, query]``),
    when it was stored and until when it lives."""
    value, ttl_s, stored_at = entry
    try:
        version, resolver, form, _query = json.loads(key)
    except (ValueError, TypeError):
        version = resolver = form = ""
    return (key, str(version), str(resolver), str(form),
            datetime.fromtimestamp(stored_at, UTC),
            datetime.fromtimestamp(stored_at + ttl_s, UTC), value)


def _reason(exc: BaseException) -> str:
    """The first line of a database error, without the connection string."""
    text = str(exc).strip().splitlines()
    return text[0] if text and text[0] else type(exc).__name__
