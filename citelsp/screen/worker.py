"""What a screening worker does with one job: verify a work's references with the normal
engine and store their resolutions, then return (and only then is the job acknowledged).

One engine per worker process, on the queue's event loop, shared by every job running at
once: identifier lookups of concurrent jobs go out in the same batches, and pacing and the
cache are those the settings configure.
"""

from __future__ import annotations

import logging
import os
import socket
import time

import psycopg
from psycopg.types.json import Jsonb

from citelsp.config import Settings
from citelsp.resolution.engine import Engine
from citelsp.screen import codec, store
from citelsp.screen.queue import SourcesUnreachable, StoreUnavailable
from citelsp.screen.works import reference_from

log = logging.getLogger(__name__)


class Verifying:
    """The job of ``citelsp screen worker``: ``verify(work, last_try)``."""

    def __init__(self, settings: Settings, db_url: str) -> None:
        self.settings = settings
        self.db_url = db_url
        self.name = f"{socket.gethostname()}:{os.getpid()}"
        self._engine: Engine | None = None

    async def verify(self, work: str, last_try: bool) -> None:
        """Resolve the references of ``work`` that have no stored resolution, and store
        them in one transaction. Nothing to do when a delivery before this one stored them.
        ``SourcesUnreachable`` (unless ``last_try``) when no source answered for some: those
        stay pending for the retry, the others are stored."""
        started = time.monotonic()
        try:
            async with await store.connect_async(self.db_url) as conn:
                rows = await (await conn.execute(store.PENDING_REFERENCES, (work,))).fetchall()
            if not rows:
                log.info("%s: already verified", work)
                return
            refs = [reference_from(data) for _identity, data in rows]
            resolutions = await self.engine().resolve_all(refs)
            keep = [(identity, resolution) for (identity, _), resolution
                    in zip(rows, resolutions, strict=True) if last_try or not _outage(resolution)]
            async with await store.connect_async(self.db_url) as conn, conn.transaction():
                for identity, resolution in keep:
                    unchecked = resolution.unchecked
                    await conn.execute(store.STORE_RESULT, (
                        identity, Jsonb(codec.encode(resolution)), self.name,
                        unchecked.kind if unchecked is not None else None))
        except psycopg.Error as exc:
            log.warning("citelsp: the screening database failed (%s) — %s is tried again "
                        "later", store.first_line(exc), work)
            raise StoreUnavailable(store.first_line(exc)) from exc
        log.info("%s: %d of %d reference(s) verified in %.1f s", work, len(keep), len(rows),
                 time.monotonic() - started)
        if len(keep) < len(rows):
            why = f"{work}: no source could be reached for {len(rows) - len(keep)} reference(s)"
            log.warning("citelsp: %s — tried again later", why)
            raise SourcesUnreachable(why)

    def engine(self) -> Engine:
        """Made on the event loop by the first job (its HTTP client belongs to that loop)."""
        if self._engine is None:
            self._engine = Engine(self.settings)
        return self._engine

    async def close(self) -> None:
        if self._engine is not None:
            await self._engine.aclose()
            self._engine = None


def _outage(resolution) -> bool:
    """No source answered because none could be reached (not a spent budget: waiting a
    minute will not bring that back)."""
    unchecked = resolution.unchecked
    return unchecked is not None and unchecked.kind == "outage"
