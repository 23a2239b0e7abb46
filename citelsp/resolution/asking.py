"""Asking a source through the answer cache, and what one reference's resolution holds.

``ask`` is the one place a lookup meets the cache: cached answers first (unless a re-verify
asks for fresh ones), the network unless offline, and outages never stored. Every resolver
module asks through it, so caching and offline behaviour are the same everywhere. Within a
run the same question (resolver, form, normalized query) is asked once: concurrent askers
share the one lookup in flight, and without a cache a ``Memo`` remembers recent answers.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING

from citelsp.resolution.cache import AnswerCache
from citelsp.resolution.identifiers import ReferenceIds
from citelsp.resolution.outcome import (
    Answer,
    Found,
    NotChecked,
    Outcome,
    Retraction,
    Unreachable,
    not_checked,
)
from citelsp.resolution.sources import Sources

if TYPE_CHECKING:
    from citelsp.index.query import LocalIndexes
    from citelsp.resolution.lookups import Lookups
    from citelsp.resolution.redis_pacing import Claims

RETRACTION_SOURCES = ("crossref", "openalex")
"""Where retraction status comes from: Crossref ``updated-by``/``update-to``, OpenAlex."""
ARXIV_RECHECK_DELAY_S = 3.0
MEMO_SIZE = 20_000
"""Answers a cache-less engine remembers (a ``--no-cache`` run of a large library)."""

Question = tuple[str, str, str]
"""(resolver, form, normalized query): what the cache and the memo key answers by."""


class Memo:
    """The lookups of one engine in flight, and recent answers when there is no cache."""

    def __init__(self, keep: int = MEMO_SIZE) -> None:
        self.inflight: dict[Question, asyncio.Task[tuple[Answer, datetime]]] = {}
        self.recent: OrderedDict[Question, tuple[Answer, datetime]] = OrderedDict()
        self.keep = keep

    def remember(self, question: Question, answer: Answer, at: datetime) -> None:
        if isinstance(answer, Unreachable):
            return
        self.recent[question] = (answer, at)
        self.recent.move_to_end(question)
        while len(self.recent) > self.keep:
            self.recent.popitem(last=False)

    def clear(self) -> None:
        self.recent.clear()


@dataclass
class Context:
    """What a resolution may use: sources, cache, and whether it may go to the network."""

    sources: Sources
    cache: AnswerCache | None = None
    offline: bool = False
    refresh: bool = False
    """Bypass cached answers (re-verify now); fresh answers are still stored."""
    today: date = field(default_factory=date.today)
    arxiv_recheck_delay: float = ARXIV_RECHECK_DELAY_S
    """Seconds between the two arXiv ``id_list`` requests that must both miss."""
    lookups: Lookups | None = None
    """Batched identifier lookups; without them every lookup is asked alone."""
    memo: Memo | None = None
    triangulate: bool = False
    """Ask every source, not only those the request plan needs (``citelsp.triangulate``)."""
    index: LocalIndexes | None = None
    """The local index of snapshots, asked before any service (``citelsp.index``)."""
    claims: Claims | None = None
    """Questions other processes are asking (``redis_pacing``): their answers come to the
    cache."""


@dataclass
class Asked:
    """An answer with where it came from; ``answer`` is None when offline and not cached."""

    answer: Answer | None
    from_cache: bool = False
    checked_at: datetime | None = None
    age_days: float | None = None
    stale: bool = False
    via: str | None = None
    """The snapshot a local index answered from ("OpenAlex snapshot 2026-11")."""


@dataclass
class Resolution:
    """Every resolver's outcome for one reference, plus what routing learned on the way."""

    key: str
    ids: ReferenceIds
    outcomes: dict[str, Outcome]
    retraction: Retraction | None = None
    agency: str | None = None
    authoritative: str | None = None
    cache_age_days: float | None = None
    cache_stale_advisory: bool = False
    complete: bool = True
    """False when an offline resolution lacked a cached answer it needed."""
    venue_links: dict[str, frozenset[str]] = field(default_factory=dict)
    """From a local index's venue lists: each name (``venue_key`` form) the matched records
    give their venue, and the names the snapshots give that venue too (abbreviations,
    series). Kept with the resolution, so that an edited venue is judged without the index."""

    @property
    def unchecked(self) -> NotChecked | None:
        """Why no source answered for this reference, if none did (``not_checked``)."""
        return not_checked(self.outcomes)

    @property
    def wants_network(self) -> bool:
        """Whether asking again when the network is back could tell more: an answer was
        missing offline, or no source answered."""
        return not self.complete or self.unchecked is not None


async def ask(ctx: Context, resolver: str, form: str, query: str,
              call: Callable[[], Awaitable[Answer]]) -> Asked:
    """Cache first (unless refreshing), then the network (unless offline); outages never stored."""
    if ctx.cache is not None and not ctx.refresh:
        hit = ctx.cache.get(resolver, form, query)
        if hit is not None:
            return Asked(hit.answer, True, hit.stored_at, hit.age_days, hit.stale)
    if ctx.offline:
        return Asked(None)
    memo = ctx.memo
    if memo is None:
        answer, at = await _asked_live(ctx, resolver, form, query, call)
        return Asked(answer, False, at, 0.0)
    question = (resolver, form, query.strip().lower())
    if ctx.cache is None and not ctx.refresh and (recent := memo.recent.get(question)):
        return Asked(recent[0], False, recent[1], 0.0)
    task = memo.inflight.get(question)
    if task is None:
        task = asyncio.ensure_future(_asked_live(ctx, resolver, form, query, call))
        memo.inflight[question] = task
        keep = ctx.cache is None
        task.add_done_callback(lambda t: _settled(memo, question, t, keep))
    answer, at = await asyncio.shield(task)
    return Asked(answer, False, at, 0.0)


async def _asked_live(ctx: Context, resolver: str, form: str, query: str,
                      call: Callable[[], Awaitable[Answer]]) -> tuple[Answer, datetime]:
    """Ask and store; with ``claims`` (processes pacing together, which share the cache
    folder on one machine or the cache database) only one process asks a question at a
    time, and the others take its answer from the cache."""
    cache, claims = ctx.cache, ctx.claims
    question = f"{resolver}\0{form}\0{query.strip().lower()}"
    shared = claims is not None and cache is not None and not ctx.refresh  # re-verify: fresh
    mine = await claims.claim(question) if shared else None
    while mine is False:  # another process asked it: its answer is in the cache, if it got one
        assert cache is not None and claims is not None
        hit = cache.get(resolver, form, query)
        if hit is not None:
            return hit.answer, hit.stored_at
        mine = await claims.claim(question)
    if not mine:
        return await _stored(ctx, resolver, form, query, await call())
    assert claims is not None and cache is not None
    async with claims.held(question):
        # Another process may have stored it between this one's look in the cache and its
        # claim: look again, now that nobody else asks.
        if (hit := cache.get(resolver, form, query)) is not None:
            return hit.answer, hit.stored_at
        return await _stored(ctx, resolver, form, query, await call())


async def _stored(ctx: Context, resolver: str, form: str, query: str,
                  answer: Answer) -> tuple[Answer, datetime]:
    if ctx.cache is not None and not isinstance(answer, Unreachable):
        ctx.cache.put(resolver, form, query, answer, kind=_cache_kind(resolver, form, answer))
    return answer, datetime.now(UTC)


def _settled(memo: Memo, question: Question, task: asyncio.Task, keep: bool) -> None:
    if memo.inflight.get(question) is task:
        del memo.inflight[question]
    if keep and not task.cancelled() and task.exception() is None:
        memo.remember(question, *task.result())


def _cache_kind(resolver: str, form: str, answer: Answer) -> str | None:
    """A record of the cited DOI from a retraction source carries retraction status, which
    lives 30 days rather than a record's 90."""
    if form == "doi" and resolver in RETRACTION_SOURCES and isinstance(answer, Found):
        return "retraction"
    return None
