"""Verifying many references: one shared client and cache, concurrency across hosts,
at most one resolution in flight per reference identity, cancellation.

Per-host pacing lives in the HTTP layer, so references run concurrently while each host
still sees requests at the interval it asks for.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import httpx

from citelsp.config import Settings
from citelsp.documents.model import Reference
from citelsp.resolution import cache as answer_cache
from citelsp.resolution.asking import ARXIV_RECHECK_DELAY_S, Context, Resolution
from citelsp.resolution.http import HttpClient
from citelsp.resolution.identity import reference_identity
from citelsp.resolution.resolve import resolve_reference
from citelsp.resolution.sources import Sources

log = logging.getLogger(__name__)

DEFAULT_CONCURRENCY = 16


@dataclass
class _Shared:
    """One resolution in flight and how many callers wait for it."""

    task: asyncio.Future[Resolution]
    waiters: int = 0


class Engine:
    """Owns the HTTP client, the answer cache and the sources; shared by CLI and server."""

    def __init__(self, settings: Settings, *, transport: httpx.AsyncBaseTransport | None = None,
                 use_cache: bool | None = None,
                 arxiv_recheck_delay: float = ARXIV_RECHECK_DELAY_S) -> None:
        """``arxiv_recheck_delay`` exists so tests need not wait arXiv's 3 s between misses."""
        self.settings = settings
        self.http = HttpClient(settings, transport=transport)
        self.sources = Sources.create(self.http, settings)
        self.arxiv_recheck_delay = arxiv_recheck_delay
        use = settings.use_cache if use_cache is None else use_cache
        self.cache = (
            answer_cache.AnswerCache(
                settings.cache_dir,
                version=answer_cache.CACHE_VERSION,
                stale_days=settings.stale_days,
            )
            if use
            else None
        )
        self._inflight: dict[tuple[str, bool], _Shared] = {}

    def context(self, *, refresh: bool = False) -> Context:
        return Context(
            sources=self.sources,
            cache=self.cache,
            offline=self.settings.offline,
            refresh=refresh,
            arxiv_recheck_delay=self.arxiv_recheck_delay,
        )

    async def resolve(self, ref: Reference, *, refresh: bool = False) -> Resolution:
        """Resolve one reference; callers asking for the same identity share one resolution.

        The shared work is cancelled only when every caller waiting for it is cancelled.
        """
        key = (reference_identity(ref), refresh)
        shared = self._inflight.get(key)
        if shared is None:
            task = asyncio.ensure_future(resolve_reference(ref, self.context(refresh=refresh)))
            shared = self._inflight[key] = _Shared(task)
            task.add_done_callback(lambda _t: self._forget(key, shared))
        shared.waiters += 1
        try:
            resolution = await asyncio.shield(shared.task)
        except asyncio.CancelledError:
            shared.waiters -= 1
            if shared.waiters == 0:
                shared.task.cancel()
            raise
        shared.waiters -= 1
        return _rekeyed(resolution, ref)

    def _forget(self, key: tuple[str, bool], shared: _Shared) -> None:
        if self._inflight.get(key) is shared:
            del self._inflight[key]

    async def cached(self, ref: Reference) -> Resolution | None:
        """The resolution from cached answers alone, or None if it needs the network."""
        if self.cache is None:
            return None
        context = self.context()
        context.offline = True
        resolution = await resolve_reference(ref, context)
        return resolution if resolution.complete else None

    async def resolve_all(
        self,
        refs: Iterable[Reference],
        *,
        refresh: bool = False,
        concurrency: int = DEFAULT_CONCURRENCY,
        on_done: Callable[[int, int], None] | None = None,
    ) -> list[Resolution]:
        """Resolve every reference, at most ``concurrency`` at once; results in input order."""
        refs = list(refs)
        limit = asyncio.Semaphore(concurrency)
        done = 0

        async def one(ref: Reference) -> Resolution:
            nonlocal done
            async with limit:
                resolution = await self.resolve(ref, refresh=refresh)
            done += 1
            if on_done is not None:
                on_done(done, len(refs))
            return resolution

        return list(await asyncio.gather(*(one(r) for r in refs)))

    def clear_cache(self) -> None:
        if self.cache is not None:
            self.cache.clear()

    async def aclose(self) -> None:
        for shared in list(self._inflight.values()):
            shared.task.cancel()
        await self.http.aclose()
        if self.cache is not None:
            self.cache.close()


def _rekeyed(resolution: Resolution, ref: Reference) -> Resolution:
    """A shared resolution reported under this reference's own key."""
    if resolution.key == ref.key:
        return resolution
    return Resolution(**{**resolution.__dict__, "key": ref.key})
