"""Per-host pacing: the minimum interval each service asks for between two requests.

Hand-written rather than a rate-limiter library: the policy is a per-host minimum interval
(not a token bucket that allows bursts), and a 429's ``Retry-After`` must hold back every
caller of that host, not only the one that was refused (``hold``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from urllib.parse import urlsplit

from citelsp.config import Settings

DEFAULT_INTERVAL_S = 0.2
"""For hosts no endpoint names (doi.org's content-negotiation targets): doi.org's own pacing."""


class Pacer:
    """Spaces requests per host; callers of one host queue, different hosts run concurrently."""

    def __init__(
        self,
        intervals: Mapping[str, float],
        *,
        default_interval_s: float = DEFAULT_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> None:
        self._intervals = {host.lower(): max(0.0, s) for host, s in intervals.items()}
        self._default = max(0.0, default_interval_s)
        self._clock = clock
        self._sleep = sleep
        self._next_at: dict[str, float] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> Pacer:
        """Intervals keyed by each endpoint's host; endpoints sharing a host get the largest."""
        intervals: dict[str, float] = {}
        for endpoint in settings.endpoints.values():
            host = (urlsplit(endpoint.base_url).hostname or "").lower()
            if host:
                seconds = endpoint.min_interval_ms / 1000
                intervals[host] = max(seconds, intervals.get(host, 0.0))
        return cls(intervals, clock=clock, sleep=sleep)

    def interval(self, host: str) -> float:
        return self._intervals.get(host.lower(), self._default)

    async def wait(self, host: str) -> None:
        """Return when a request to ``host`` may be sent, and reserve that slot."""
        key = host.lower()
        async with self._locks.setdefault(key, asyncio.Lock()):
            delay = self._next_at.get(key, 0.0) - self._clock()
            if delay > 0:
                await self._sleep(delay)
            self._next_at[key] = self._clock() + self.interval(key)

    def hold(self, host: str, seconds: float) -> None:
        """Keep every caller away from ``host`` for ``seconds`` from now (a 429 back-off)."""
        key = host.lower()
        self._next_at[key] = max(self._next_at.get(key, 0.0), self._clock() + seconds)
