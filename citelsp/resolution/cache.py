"""The answer cache: what each source said, never what we decided from it.

Entries are keyed by resolver, query form, normalized query and ``CACHE_VERSION``, and stored as
JSON text (no pickles) in a ``Store``: diskcache, which is safe for several processes sharing
one directory, or a PostgreSQL table that a team shares (cache_postgres.py, ``cacheUrl``).
The cache is an optimisation: any failure to read is a miss, any failure to write is ignored.
Only our own database is ever rebuilt, and only when SQLite finds it damaged; a foreign file,
a lock or a read-only file or directory leaves the cache read-only or off (cache_file.py).
"""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

import diskcache
import orjson

from citelsp.resolution import cache_file
from citelsp.resolution.outcome import (
    Agency,
    Alias,
    Answer,
    Found,
    Handle,
    Malformed,
    NotFound,
    Record,
    Unreachable,
)
from citelsp.resolution.records import PARSER_VERSION
from citelsp.uris import shown_url

CACHE_VERSION = PARSER_VERSION
"""Changes whenever what is stored, how it is parsed, or what a lookup asks changes: a parser's
output through ``records.PARSER_VERSION`` (which local indexes carry too); a change to what a
lookup asks alone by a suffix here (``f"{PARSER_VERSION}.1"``)."""

DAY_S = 86400.0
FOUND_TTL_DAYS = 90
NOT_FOUND_TTL_DAYS = 7
RETRACTION_TTL_DAYS = 30
_INLINE_LIMIT = 1 << 22
"""Keep every value inside sqlite, so that rebuilding means deleting the database files only
and the read-only store can read values from the table."""
_LOCK_TIMEOUT_S = 2.0
"""How long an operation waits for another process's lock before it is a miss (or skipped)."""

log = logging.getLogger("citelsp.cache")


class Store(Protocol):
    """Where the JSON text of answers lives: what ``AnswerCache`` uses of ``diskcache.Cache``
    (also ``cache_file.ReadOnlyStore`` and ``cache_postgres.PostgresStore``). A store without
    ``lists_keys = False`` can list its keys cheaply (``pass_over``)."""

    def get(self, key: str) -> object: ...
    def set(self, key: str, value: str, expire: float | None = None) -> object: ...
    def delete(self, key: str) -> object: ...
    def clear(self) -> object: ...
    def close(self) -> None: ...


class Unavailable(Exception):
    """A maintenance command cannot use the cache (``citelsp cache``): why, in words."""


@dataclass(frozen=True)
class Row:
    """Stored answers of one cache version and resolver, for ``citelsp cache stats``."""

    version: str
    resolver: str
    live: int
    expired: int


@dataclass(frozen=True)
class CachedAnswer:
    answer: Answer
    stored_at: datetime
    age_days: float
    stale: bool
    """Older than the ``stale_days`` setting: still used, but flagged (cache_stale_advisory)."""


class AnswerCache:
    """Answers by (resolver, form, query) under one directory, or in the PostgreSQL database
    ``url`` names, shared safely between processes."""

    def __init__(
        self,
        directory: Path,
        *,
        url: str | None = None,
        version: str = CACHE_VERSION,
        stale_days: int = 30,
        clock: Callable[[], float] = time.time,
        notice: Callable[[str], None] | None = None,
    ) -> None:
        """``notice`` tells the writer when a shared cache goes and comes back (default: a
        warning in the log)."""
        self._directory = Path(directory)
        self._notice = notice or log.warning
        self._url = url
        self._version = version
        self._stale_days = stale_days
        self._clock = clock
        self._cache: Store | None = self._open_shared() if url else self._open()
        self._present: set[str] | None = None
        """The keys stored when a ``pass_over`` began (and those stored since)."""
        self._told: set[tuple[str, str]] = set()
        """Failures already logged as warnings: a full disk fails every write the same way,
        and once logged it thousands of times."""

    @contextlib.contextmanager
    def pass_over(self) -> Iterator[None]:
        """Within this block a key that was not stored when it began is a miss without a
        query: a pass over a library that is mostly not cached (offline, or opened for the
        first time) asked SQLite 27,000 times for 11,000 references. An answer another
        process stores meanwhile is missed, and looked up again as if it were not cached."""
        if self._cache is None or not getattr(self._cache, "lists_keys", True):
            yield
            return
        try:
            self._present = set(self._cache.iterkeys())
        except Exception as exc:  # then every key is asked for, as outside a pass
            self._failed("listing", exc)
        try:
            yield
        finally:
            self._present = None

    def get(self, resolver: str, form: str, query: str) -> CachedAnswer | None:
        """The stored answer; ``None`` when absent, expired, of another version or unreadable."""
        present = self._present
        if self._cache is None or present is not None and not present:
            return None
        key = self._key(resolver, form, query)
        if present is not None and key not in present:
            return None
        try:
            raw = self._cache.get(key)
        except Exception as exc:  # a cache failure is a miss, never an error
            self._failed("read", exc)
            return None
        if not isinstance(raw, str):
            return None
        try:
            entry = _loads(raw)
            if entry["version"] != self._version:
                return None
            stored_at, expires_at = float(entry["stored_at"]), float(entry["expires_at"])
            answer = _decode(entry["answer"])
        except (ValueError, KeyError, TypeError):
            return None
        now = self._clock()
        if now >= expires_at:
            return None
        age_days = max(0.0, now - stored_at) / DAY_S
        return CachedAnswer(
            answer=answer,
            stored_at=datetime.fromtimestamp(stored_at, UTC),
            age_days=age_days,
            stale=self._stale_days > 0 and age_days > self._stale_days,
        )

    def put(
        self, resolver: str, form: str, query: str, answer: Answer, *, kind: str | None = None
    ) -> None:
        """Store ``answer`` (never an ``Unreachable``); ``kind="retraction"`` lives 30 days."""
        if isinstance(answer, Unreachable) or self._cache is None:
            return
        now = self._clock()
        ttl_s = _ttl_days(answer, kind) * DAY_S
        try:
            value = _dumps(
                {
                    "version": self._version,
                    "stored_at": now,
                    "expires_at": now + ttl_s,
                    "answer": _encode(answer),
                }
            )
            key = self._key(resolver, form, query)
            self._cache.set(key, value, expire=ttl_s)
            if self._present is not None:
                self._present.add(key)
        except Exception as exc:  # a cache failure must not stop a verification
            self._failed("write", exc)

    def delete(self, resolver: str, form: str, query: str) -> None:
        if self._cache is None:
            return
        try:
            self._cache.delete(self._key(resolver, form, query))
        except Exception as exc:
            self._failed("delete", exc)

    def clear(self) -> None:
        if self._cache is None:
            return
        try:
            self._cache.clear()
        except Exception as exc:
            self._failed("clear", exc)

    def close(self) -> None:
        if self._cache is not None:
            try:
                self._cache.close()
            except Exception:
                log.debug("closing the answer cache failed", exc_info=True)
            self._cache = None

    @property
    def shared(self) -> bool:
        """The cache is a database other writers' processes use too (``citelsp.cacheUrl``)."""
        return self._url is not None

    @property
    def where(self) -> str:
        """The directory, or the database URL without its password."""
        return str(self._directory) if not self._url else getattr(self._cache, "where", "")

    def stats(self) -> list[Row]:
        """Stored answers by version and resolver (``citelsp cache stats``)."""
        store = self._store()
        if hasattr(store, "rows"):
            return store.rows()
        counts: dict[tuple[str, str], list[int]] = {}
        now = self._clock()
        for _, key, entry in self._entries(store):
            count = counts.setdefault((str(key[0]), str(key[1])), [0, 0])
            count[0 if entry is not None and now < float(entry["expires_at"]) else 1] += 1
        return [Row(v, r, live, expired) for (v, r), (live, expired) in sorted(counts.items())]

    def prune(self) -> int:
        """Remove expired answers and those of other versions; how many
        (``citelsp cache prune``)."""
        store = self._store()
        if hasattr(store, "prune"):
            return store.prune(self._version)
        now = self._clock()
        gone = [raw for raw, key, entry in self._entries(store) if entry is None
                or key[0] != self._version or now >= float(entry["expires_at"])]
        for raw in gone:
            store.delete(raw)
        return len(gone)

    def purge(self) -> int:
        """Remove every answer; how many there were (``citelsp cache clear``)."""
        store = self._store()
        if hasattr(store, "rows"):
            return store.clear()
        return int(store.clear() or 0)

    def _store(self) -> Store:
        """The store for a maintenance command; ``Unavailable`` when there is none to change."""
        if isinstance(self._cache, cache_file.ReadOnlyStore):
            raise Unavailable(f"the answer cache in {self.where} is read-only or held by "
                              "another process")
        if self._cache is None:
            where = shown_url(self._url) if self._url else self.where
            raise Unavailable(f"the answer cache in {where} could not be opened")
        return self._cache

    @staticmethod
    def _entries(store: Any) -> Iterator[tuple[str, list, dict | None]]:
        """Each key of a local store, decoded, with its entry (None when unreadable)."""
        for raw_key in list(store.iterkeys()):
            try:
                key = json.loads(raw_key)
            except ValueError:
                continue
            if not isinstance(key, list) or len(key) != 4:
                continue
            try:
                raw = store.get(raw_key)
                entry = _loads(raw) if isinstance(raw, str) else None
                if entry is not None:
                    float(entry["expires_at"])
            except (ValueError, KeyError, TypeError):
                entry = None
            yield raw_key, key, entry

    def _key(self, resolver: str, form: str, query: str) -> str:
        """``json.dumps([version, resolver, form, normalized query])``, built from its parts
        (a fifth of ``json.dumps``'s time, which an offline pass paid 27,000 times). The
        version is part of the key, so another version's entry is never even read."""
        return (f"[{_string(self._version)}, {_string(resolver)}, {_string(form)}, "
                f"{_string(query.strip().lower())}]")

    def _open(self) -> diskcache.Cache | cache_file.ReadOnlyStore | None:
        """Our database, writable if we may, else read-only; ``None`` when it is not ours or
        cannot be had. Never raises: a cache problem is a log line, not an error."""
        directory = self._directory
        try:
            found = cache_file.inspect(directory)
            if found.ownership == "foreign":
                log.warning("answer cache off: %s %s; remove it or set another cache directory",
                            directory / cache_file.DATABASE, found.why)
                return None
            if found.ownership == "ours" and cache_file.soundness(
                    directory, _LOCK_TIMEOUT_S) == "damaged":
                log.warning("answer cache in %s is damaged; rebuilding it", directory)
                cache_file.remove(directory)
                found = cache_file.Inspection("absent", "")
            if found.ownership == "absent":
                cache_file.create(directory)
            return self._connect()
        except Exception as exc:
            log.warning("answer cache in %s off (%s: %s)", directory, type(exc).__name__, exc)
            return None

    def _open_shared(self) -> Store | None:
        """The PostgreSQL store ``url`` names; ``None`` (the cache off, said once) when
        psycopg is missing or the database is not one this citelsp can use. An unreachable
        database is not such a case: the store keeps trying to reach it."""
        url = self._url or ""
        if urlsplit(url).scheme not in ("postgresql", "postgres"):
            self._notice(f"citelsp: the cache URL {shown_url(url)} is not a PostgreSQL URL "
                         "(postgresql://user@host/database); the answer cache is off")
            return None
        try:
            from citelsp.resolution import cache_postgres
        except ImportError as exc:
            self._notice("citelsp: the shared cache needs psycopg (pip install "
                         f"'citelsp[team]'); the answer cache is off ({exc})")
            return None
        try:
            return cache_postgres.PostgresStore(url, clock=self._clock, notice=self._notice)
        except Unavailable as exc:
            self._notice(f"citelsp: {exc}; the answer cache is off")
            return None

    def _connect(self) -> diskcache.Cache | cache_file.ReadOnlyStore:
        directory = self._directory
        how = cache_file.access(directory, _LOCK_TIMEOUT_S)
        if how == "writable":
            try:
                cache_file.mark(directory, _LOCK_TIMEOUT_S)
                return diskcache.Cache(
                    str(directory), timeout=_LOCK_TIMEOUT_S, disk_min_file_size=_INLINE_LIMIT
                )
            except sqlite3.OperationalError as exc:
                how = cache_file.not_writable(exc)
        log.warning("answer cache in %s is %s; reading only", directory,
                    "held by another process" if how == "locked" else "read-only")
        return cache_file.ReadOnlyStore(directory, _LOCK_TIMEOUT_S)

    def _failed(self, action: str, exc: Exception) -> None:
        """Log (a warning once per action and error, then at debug level); rebuild only when
        SQLite confirms that our database is damaged."""
        condition = (action, f"{type(exc).__name__}: {exc}")
        told = condition in self._told
        self._told.add(condition)
        log.log(logging.DEBUG if told else logging.WARNING, "answer cache %s failed (%s)%s",
                action, condition[1], "" if told else "; the same failure again is not logged")
        if type(exc) is not sqlite3.DatabaseError:  # locks and I/O errors are subclasses
            return
        if cache_file.soundness(self._directory, _LOCK_TIMEOUT_S) != "damaged":
            return
        self.close()
        self._cache = self._open()


def _dumps(entry: dict) -> str:
    """JSON text, by orjson (a cached reopen reads thousands of entries, and storing one ran
    on the editor's event loop); text orjson refuses (a lone surrogate from a source) is
    written by ``json`` with escapes. Either reads back with either."""
    try:
        return orjson.dumps(entry).decode()
    except orjson.JSONEncodeError:
        return json.dumps(entry)


def _loads(raw: str) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:  # an escaped lone surrogate: only json reads it
        return json.loads(raw)


_string = json.encoder.encode_basestring_ascii
"""A JSON string literal, as ``json.dumps`` writes it."""


def _ttl_days(answer: Answer, kind: str | None) -> float:
    if kind == "retraction":
        return RETRACTION_TTL_DAYS
    match answer:
        case Found():
            return FOUND_TTL_DAYS
        case Agency(name=name):
            return FOUND_TTL_DAYS if name else NOT_FOUND_TTL_DAYS
        case Handle(exists=exists):
            return FOUND_TTL_DAYS if exists else NOT_FOUND_TTL_DAYS
        case Alias():
            return FOUND_TTL_DAYS
        case _:
            return NOT_FOUND_TTL_DAYS


def _encode(answer: Answer) -> dict:
    match answer:
        case Found(records=records):
            return {"type": "found", "records": [r.to_dict() for r in records]}
        case NotFound(detail=detail):
            return {"type": "not_found", "detail": detail}
        case Agency(name=name):
            return {"type": "agency", "name": name}
        case Handle(exists=exists):
            return {"type": "handle", "exists": exists}
        case Alias(doi=doi):
            return {"type": "alias", "doi": doi}
        case Malformed(detail=detail):
            return {"type": "malformed", "detail": detail}
    raise TypeError(f"{type(answer).__name__} is not cached")


def _decode(data: dict) -> Answer:
    match data["type"]:
        case "found":
            return Found(tuple(Record.from_dict(r) for r in data["records"]))
        case "not_found":
            return NotFound(data["detail"])
        case "agency":
            return Agency(data["name"])
        case "handle":
            return Handle(bool(data["exists"]))
        case "alias":
            return Alias(data["doi"])
        case "malformed":
            return Malformed(data["detail"])
    raise ValueError(f"unknown cached answer type {data['type']!r}")
