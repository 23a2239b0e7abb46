"""The screening's tables in PostgreSQL (psycopg 3): submissions, the references they cite
(one row per reference identity, with the work it names), and one stored resolution per
identity.

A stored resolution is written once (``ON CONFLICT DO NOTHING``): a job delivered twice, or
redelivered after its worker died between storing and acknowledging, finds its results
there and changes nothing. Submitting is idempotent too: a work is queued again only when a
submission brings a reference of it not seen before.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import psycopg
from psycopg.types.json import Jsonb

SCHEMA = """
CREATE TABLE IF NOT EXISTS screen_submission (
    id bigserial PRIMARY KEY,
    path text UNIQUE NOT NULL,
    submitted_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS screen_work (
    work text PRIMARY KEY,
    queued boolean NOT NULL DEFAULT false
);
CREATE TABLE IF NOT EXISTS screen_reference (
    identity text PRIMARY KEY,
    work text NOT NULL REFERENCES screen_work,
    reference jsonb NOT NULL
);
CREATE INDEX IF NOT EXISTS screen_reference_work ON screen_reference (work);
CREATE TABLE IF NOT EXISTS screen_cites (
    submission bigint NOT NULL REFERENCES screen_submission ON DELETE CASCADE,
    identity text NOT NULL REFERENCES screen_reference,
    PRIMARY KEY (submission, identity)
);
CREATE TABLE IF NOT EXISTS screen_result (
    identity text PRIMARY KEY REFERENCES screen_reference,
    resolution jsonb NOT NULL,
    verified_at timestamptz NOT NULL DEFAULT now(),
    worker text NOT NULL,
    unchecked text
);
"""
_SCHEMA_LOCK = "SELECT pg_advisory_xact_lock(hashtext('citelsp.screen.schema'))"
"""Creating tables is not safe to race (two ``CREATE TABLE IF NOT EXISTS`` can both try):
whoever comes second waits, then finds them."""

PENDING_REFERENCES = """
SELECT r.identity, r.reference FROM screen_reference r
LEFT JOIN screen_result s USING (identity)
WHERE r.work = %s AND s.identity IS NULL ORDER BY r.identity
"""
STORE_RESULT = """
INSERT INTO screen_result (identity, resolution, worker, unchecked) VALUES (%s, %s, %s, %s)
ON CONFLICT (identity) DO NOTHING
"""


class StoreError(Exception):
    """The database could not be reached or used; the message says which and why."""


@dataclass(frozen=True)
class Cited:
    """One distinct reference a submission cites: its identity, work, and portable form."""

    identity: str
    work: str
    reference: dict


@dataclass(frozen=True)
class Progress:
    """A submission's distinct references and how many have a stored resolution."""

    path: str
    references: int
    verified: int

    @property
    def pending(self) -> int:
        return self.references - self.verified


def connect(url: str, *, schema: bool = True) -> psycopg.Connection:
    """A connection, with the tables made first unless ``schema`` is False (they exist)."""
    try:
        conn = psycopg.connect(url, connect_timeout=10)
        if schema:
            with conn.transaction():
                conn.execute(_SCHEMA_LOCK)
                conn.execute(SCHEMA)
    except psycopg.Error as exc:
        raise StoreError(f"cannot use the screening database: {first_line(exc)}") from exc
    return conn


async def connect_async(url: str) -> psycopg.AsyncConnection:
    """A connection for a worker's job (the tables exist: ``connect`` made them)."""
    return await psycopg.AsyncConnection.connect(url, connect_timeout=10)


def record_submission(conn: psycopg.Connection, path: str, cited: Iterable[Cited]) -> int:
    """Store what a submission cites (replacing what an earlier submit of it stored); the
    number of references new to the screening."""
    new = 0
    with conn.transaction():
        submission = conn.execute(
            "INSERT INTO screen_submission (path) VALUES (%s) ON CONFLICT (path) DO UPDATE "
            "SET submitted_at = now() RETURNING id", (path,)).fetchone()[0]
        conn.execute("DELETE FROM screen_cites WHERE submission = %s", (submission,))
        for one in cited:
            conn.execute("INSERT INTO screen_work (work) VALUES (%s) ON CONFLICT DO NOTHING",
                         (one.work,))
            added = conn.execute(
                "INSERT INTO screen_reference (identity, work, reference) VALUES (%s, %s, %s) "
                "ON CONFLICT DO NOTHING RETURNING identity",
                (one.identity, one.work, Jsonb(one.reference))).fetchone()
            if added is not None:  # a reference not seen before: its work has a job to do
                new += 1
                conn.execute("UPDATE screen_work SET queued = false WHERE work = %s",
                             (one.work,))
            conn.execute("INSERT INTO screen_cites (submission, identity) VALUES (%s, %s) "
                         "ON CONFLICT DO NOTHING", (submission, one.identity))
    return new


def unqueued_works(conn: psycopg.Connection) -> list[str]:
    """Works with a reference that has no resolution and no job queued for it yet."""
    rows = conn.execute(
        "SELECT w.work FROM screen_work w WHERE NOT w.queued AND EXISTS (SELECT 1 FROM "
        "screen_reference r LEFT JOIN screen_result s USING (identity) WHERE r.work = w.work "
        "AND s.identity IS NULL) ORDER BY w.work").fetchall()
    return [row[0] for row in rows]


def mark_queued(conn: psycopg.Connection, works: list[str]) -> None:
    with conn.transaction():
        conn.execute("UPDATE screen_work SET queued = true WHERE work = ANY(%s)", (works,))


def unchecked_counts(conn: psycopg.Connection) -> dict[str, int]:
    """Stored resolutions no source answered for, by why (outage, budget, offline)."""
    return dict(conn.execute("SELECT unchecked, count(*) FROM screen_result WHERE unchecked "
                             "IS NOT NULL GROUP BY unchecked ORDER BY unchecked").fetchall())


def forget_unchecked(conn: psycopg.Connection) -> int:
    """Drop the stored resolutions no source answered for, and make their works queueable
    again; how many were dropped."""
    with conn.transaction():
        works = conn.execute(
            "DELETE FROM screen_result s USING screen_reference r WHERE s.unchecked IS NOT "
            "NULL AND r.identity = s.identity RETURNING r.work").fetchall()
        conn.execute("UPDATE screen_work SET queued = false WHERE work = ANY(%s)",
                     ([w for (w,) in works],))
    return len(works)


def submissions(conn: psycopg.Connection) -> list[str]:
    return [row[0] for row in conn.execute(
        "SELECT path FROM screen_submission ORDER BY path").fetchall()]


def progress(conn: psycopg.Connection) -> list[Progress]:
    rows = conn.execute(
        "SELECT s.path, count(c.identity), count(r.identity) FROM screen_submission s "
        "LEFT JOIN screen_cites c ON c.submission = s.id "
        "LEFT JOIN screen_result r ON r.identity = c.identity "
        "GROUP BY s.path ORDER BY s.path").fetchall()
    return [Progress(path, total, verified) for path, total, verified in rows]


def work_counts(conn: psycopg.Connection) -> tuple[int, int]:
    """(works, works whose every reference has a stored resolution)."""
    total, done = conn.execute(
        "SELECT count(*), count(*) FILTER (WHERE NOT EXISTS (SELECT 1 FROM screen_reference r "
        "LEFT JOIN screen_result s USING (identity) WHERE r.work = w.work "
        "AND s.identity IS NULL)) FROM screen_work w").fetchone()
    return total, done


def pending_count(conn: psycopg.Connection) -> int:
    """References of any submission without a stored resolution."""
    try:
        return conn.execute(
            "SELECT count(*) FROM screen_reference r LEFT JOIN screen_result s "
            "USING (identity) WHERE s.identity IS NULL").fetchone()[0]
    except psycopg.Error as exc:
        raise StoreError(f"the screening database: {first_line(exc)}") from exc


def stored(conn: psycopg.Connection, identities: list[str]) -> dict[str, dict]:
    """The stored resolutions (as JSON data) of these identities."""
    rows = conn.execute("SELECT identity, resolution FROM screen_result "
                        "WHERE identity = ANY(%s)", (identities,)).fetchall()
    return dict(rows)


def first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
