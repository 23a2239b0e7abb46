"""Verifying many references: one shared client, cache and set of batched lookups,
concurrency across hosts, at most one resolution in flight per reference identity, one
lookup per question within a run, cancellation.

Callers ask for references one by one (``resolve``, from the server's workers, most urgent
first) or all at once (``resolve_all``); the engine gathers the identifier lookups that
resolutions ask for meanwhile into batch requests (``lookups``), in the order they were
asked. Per-origin pacing lives in the HTTP layer, so references run concurrently while each
service still sees requests at the interval it asks for.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from citelsp.config import Settings
from citelsp.documents.model import Reference
from citelsp.index.adapter import open_index
from citelsp.resolution import cache as answer_cache
from citelsp.resolution.asking import ARXIV_RECHECK_DELAY_S, Context, Memo, Resolution, ask
from citelsp.resolution.budget import DailyBudget, allowances
from citelsp.resolution.http import HttpClient
from citelsp.resolution.identifiers import arxiv_from_doi, normalize_arxiv, normalize_doi
from citelsp.resolution.identity import reference_identity
from citelsp.resolution.lookups import Lookups
from citelsp.resolution.outcome import Found, Record, Unreachable
from citelsp.resolution.pacing import RANK
from citelsp.resolution.redis_pacing import SharedPacing
from citelsp.resolution.resolve import resolve_reference
from citelsp.resolution.sources import Sources

if TYPE_CHECKING:
    import httpx

log = logging.getLogger(__name__)

START_CHUNK = 10
"""References ``resolve_all`` starts per turn of the event loop."""
DEFAULT_CONCURRENCY = 10_000
"""References ``resolve_all`` keeps in flight. A resolution mostly waits (the engine batches
and paces), and a batch can only carry the identifiers asked for while it gathers: with a
few hundred in flight, 5,000 references sent arXiv 64 small batches (3 s apart) where 8
full ones do. The engine keeps the order they were asked in."""
PROBE_TIMEOUT_S = 5.0


@dataclass
class _Shared:
    """One resolution in flight and how many callers wait for it."""

    task: asyncio.Future[Resolution]
    waiters: int = 0


class Engine:
    """Owns the HTTP client, the answer cache and the sources; shared by CLI and server."""

    def __init__(self, settings: Settings, *, transport: httpx.AsyncBaseTransport | None = None,
                 use_cache: bool | None = None,
                 arxiv_recheck_delay: float = ARXIV_RECHECK_DELAY_S,
                 clock: Callable[[], float] = time.time,
                 notice: Callable[[str], None] | None = None) -> None:
        """``arxiv_recheck_delay`` exists so tests need not wait arXiv's 3 s between misses;
        ``clock`` (wall time) says which day's budget requests are charged to; ``notice``
        tells the writer once what the engine cannot do as asked (shared pacing gone)."""
        self.settings = settings
        use = settings.use_cache if use_cache is None else use_cache
        directory, budgets = settings.cache_dir if use else None, allowances(settings)
        self.shared = SharedPacing.open(settings, directory, budgets, clock=clock,
                                        notice=notice or log.warning) \
            if settings.pacing_url else None
        """Pacing and budgets shared by every process through Redis (``citelsp.pacingUrl``)."""
        self.budget = self.shared.budget if self.shared is not None \
            else DailyBudget(directory, budgets, clock=clock)
        """The day's budgets, kept beside the cache (``--no-cache``: in this process)."""
        self.http = HttpClient(settings, transport=transport, budget=self.budget,
                               pacer=self.shared.pacer if self.shared is not None else None)
        self.sources = Sources.create(self.http, settings)
        self.lookups = Lookups(self.sources, self.http)
        self.memo = Memo()
        self.arxiv_recheck_delay = arxiv_recheck_delay
        self.cache = (
            answer_cache.AnswerCache(
                settings.cache_dir,
                url=settings.cache_url,
                version=answer_cache.CACHE_VERSION,
                stale_days=settings.stale_days,
                notice=notice,
            )
            if use
            else None
        )
        self.index, self.index_notes = open_index(settings)
        self._inflight: dict[tuple[str, bool], _Shared] = {}
        self._ranks = itertools.count()
        """Resolutions asked for earlier get the paced slots first (``pacing.RANK``)."""

    def context(self, *, refresh: bool = False) -> Context:
        return Context(
            sources=self.sources,
            cache=self.cache,
            offline=self.settings.offline,
            refresh=refresh,
            arxiv_recheck_delay=self.arxiv_recheck_delay,
            lookups=self.lookups,
            memo=self.memo,
            triangulate=self.settings.triangulate,
            index=self.index,
            claims=self.shared.claims if self.shared is not None and self.cache is not None
            else None,
        )

    async def resolve(self, ref: Reference, *, refresh: bool = False) -> Resolution:
        """Resolve one reference; callers asking for the same identity share one resolution.

        The shared work is cancelled only when every caller waiting for it is cancelled.
        """
        key = (reference_identity(ref), refresh)
        shared = self._inflight.get(key)
        if shared is None:
            rank = next(self._ranks)
            task = asyncio.ensure_future(_ranked(rank, resolve_reference(
                ref, self.context(refresh=refresh))))
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

    def cached_pass(self) -> contextlib.AbstractContextManager[None]:
        """A pass of ``from_cache`` over many references: keys not cached when it began are
        misses without a database query (``AnswerCache.pass_over``)."""
        return contextlib.nullcontext() if self.cache is None else self.cache.pass_over()

    async def from_cache(self, ref: Reference) -> Resolution:
        """The resolution from cached answers alone; ``complete`` is False when it needed an
        answer the cache does not hold (the sources not asked say "offline")."""
        context = self.context()
        context.offline = True
        return await resolve_reference(ref, context)

    async def record_for(self, identifier: str) -> Record | str:
        """The work a DOI or arXiv id names (to create an entry from it), or why there is
        none. The local index first; then through the cache: Crossref, then DataCite, then
        content negotiation for a DOI; arXiv for an arXiv id."""
        context = self.context()
        arxiv_id = normalize_arxiv(identifier)
        doi = normalize_doi(identifier)
        if doi is not None and (in_doi := arxiv_from_doi(doi)) is not None:
            doi, arxiv_id = None, in_doi
        if arxiv_id is not None and doi is None:
            plan = [("arxiv", "id", arxiv_id, self.sources.arxiv.by_arxiv_id)]
        elif doi is not None:
            plan = [("crossref", "doi", doi, self.sources.crossref.by_doi),
                    ("datacite", "doi", doi, self.sources.datacite.by_doi),
                    ("doi_registry", "csl", doi, self.sources.doi_registry.csl)]
        else:
            return f"'{identifier}' is neither a DOI (10.NNNN/…) nor an arXiv id"
        if self.index is not None:
            hits = self.index.by_doi(doi) if doi is not None else self.index.by_arxiv(arxiv_id)
            order = [resolver for resolver, *_ in plan]
            hits.sort(key=lambda h: order.index(h.record.source)
                      if h.record.source in order else len(order))
            if hits:
                return hits[0].record
        why = "no source has a record of it"
        for resolver, form, query, lookup in plan:
            asked = await ask(context, resolver, form, query,
                              lambda lookup=lookup, query=query: lookup(query))
            if isinstance(asked.answer, Found) and asked.answer.records:
                return asked.answer.records[0]
            if asked.answer is None:
                why = ("it could not be looked up offline (no cached answer); try again "
                       "online, or add the entry by hand")
            elif isinstance(asked.answer, Unreachable):
                why = f"no source could be reached ({asked.answer.reason})"
        return f"{identifier}: {why}"

    async def probe(self, timeout_s: float = PROBE_TIMEOUT_S) -> str | None:
        """None when the network looks usable (a connection to Crossref opens); else why not,
        so a run without a network goes offline at once instead of failing every lookup."""
        return await self.http.reachable("crossref", timeout_s)

    async def resolve_all(
        self,
        refs: Iterable[Reference],
        *,
        refresh: bool = False,
        concurrency: int = DEFAULT_CONCURRENCY,
        on_done: Callable[[int, int], None] | None = None,
    ) -> list[Resolution]:
        """Resolve every reference, at most ``concurrency`` at once; results in input order.

        References are started ``START_CHUNK`` at a time, each chunk in its own turn of the
        event loop, so that the first batches leave while later references are still being
        read (starting 5,000 at once held every request back for seconds)."""
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

        tasks: list[asyncio.Future[Resolution]] = []
        try:
            for n, ref in enumerate(refs):
                tasks.append(asyncio.ensure_future(one(ref)))
                if n % START_CHUNK == START_CHUNK - 1:
                    await asyncio.sleep(0)
            return list(await asyncio.gather(*tasks))
        except asyncio.CancelledError:
            for task in tasks:
                task.cancel()
            raise

    def clear_cache(self) -> None:
        self.memo.clear()
        if self.cache is not None:
            self.cache.clear()

    async def prepare(self) -> None:
        """Make what the first request needs now, off the event loop (``HttpClient.prepare``);
        nothing offline."""
        if not self.settings.offline:
            await self.http.prepare()

    async def aclose(self) -> None:
        for shared in list(self._inflight.values()):
            shared.task.cancel()
        self.lookups.close()
        if self.index is not None:
            self.index.close()
        await self.http.aclose()
        if self.shared is not None:
            await self.shared.aclose()
        if self.cache is not None:
            self.cache.close()


async def _ranked(rank: int, resolution: Awaitable[Resolution]) -> Resolution:
    """Run ``resolution`` with its requests ranked ``rank`` (its task's own context)."""
    RANK.set(rank)
    return await resolution


def _rekeyed(resolution: Resolution, ref: Reference) -> Resolution:
    """A shared resolution reported under this reference's own key."""
    if resolution.key == ref.key:
        return resolution
    return Resolution(**{**resolution.__dict__, "key": ref.key})
