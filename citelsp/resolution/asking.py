"""Asking a source through the answer cache, and what one reference's resolution holds.

``ask`` is the one place a lookup meets the cache: cached answers first (unless a re-verify
asks for fresh ones), the network unless offline, and outages never stored. Every resolver
module asks through it, so caching and offline behaviour are the same everywhere.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime

from citelsp.resolution.cache import AnswerCache
from citelsp.resolution.identifiers import ReferenceIds
from citelsp.resolution.outcome import Answer, Found, Outcome, Retraction, Unreachable
from citelsp.resolution.sources import Sources

RETRACTION_SOURCES = ("crossref", "openalex")
"""Where retraction status comes from: Crossref ``updated-by``/``update-to``, OpenAlex."""
ARXIV_RECHECK_DELAY_S = 3.0


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
    """Seconds between the two arXiv ``id_list`` requests that must both miss (DESIGN.md §5)."""


@dataclass
class Asked:
    """An answer with where it came from; ``answer`` is None when offline and not cached."""

    answer: Answer | None
    from_cache: bool = False
    checked_at: datetime | None = None
    age_days: float | None = None
    stale: bool = False


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


async def ask(ctx: Context, resolver: str, form: str, query: str,
              call: Callable[[], Awaitable[Answer]]) -> Asked:
    """Cache first (unless refreshing), then the network (unless offline); outages never stored."""
    if ctx.cache is not None and not ctx.refresh:
        hit = ctx.cache.get(resolver, form, query)
        if hit is not None:
            return Asked(hit.answer, True, hit.stored_at, hit.age_days, hit.stale)
    if ctx.offline:
        return Asked(None)
    answer = await call()
    if ctx.cache is not None and not isinstance(answer, Unreachable):
        ctx.cache.put(resolver, form, query, answer, kind=_cache_kind(resolver, form, answer))
    return Asked(answer, False, datetime.now(UTC), 0.0)


def _cache_kind(resolver: str, form: str, answer: Answer) -> str | None:
    """A record of the cited DOI from a retraction source carries retraction status, which
    lives 30 days rather than a record's 90 (DESIGN.md §8)."""
    if form == "doi" and resolver in RETRACTION_SOURCES and isinstance(answer, Found):
        return "retraction"
    return None
