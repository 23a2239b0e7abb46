"""Per-origin pacing: the interval each service asks for between two requests, adapted to what
it says while we talk to it (DESIGN.md §9).

An origin is (scheme, host, port), so a local mirror or a test server on another port of the
same host is paced on its own. Each origin starts from its documented interval (the settings);
a 429 halves its rate and holds every caller back for the ``Retry-After``; the rate is restored
one halving per quiet period without a 429. ``x-rate-limit-limit``/``-interval`` (Crossref) and
``x-ratelimit-limit``/``-remaining``/``-reset`` (the common form) can only slow an origin down:
the documented interval stays the fastest we go.

Hand-written rather than a rate-limiter library (aiolimiter, limits, pyrate-limiter): those are
token buckets that allow bursts and have no notion of a server-announced hold, a rate halved
on refusal, or a floor set by response headers; the policy here is a minimum spacing that a
429 must widen for every caller of the origin at once (``rate_limited``, ``hold``).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import re
import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from citelsp.config import Settings

Origin = tuple[str, str, int]
"""(scheme, lowercase host, port), the default port filled in."""

RANK: ContextVar[int] = ContextVar("citelsp_request_rank", default=sys.maxsize)
"""The rank of the reference a request is made for: lower was asked for earlier (nearer the
cursor). The engine sets it per resolution; a slot goes to the lowest rank waiting."""

RESERVED: ContextVar[Origin | None] = ContextVar("citelsp_reserved_slot", default=None)
"""An origin whose slot the current task already holds (``Pacer.reserve``): its next request
there goes without waiting again."""

DEFAULT_INTERVAL_S = 0.2
"""For origins no endpoint names (doi.org's content-negotiation targets): doi.org's pacing."""
QUIET_PERIOD_S = 10.0
"""After this long without a 429, a halved rate is doubled back (one step per period): a
service that still refuses halves it again at once, one that refused a stray early request
(a delayed arrival) does not keep a long run at half speed."""
SAFETY_MARGIN = 1.1
"""Requests are spaced 10 % wider than asked: a service counts arrivals, and its clock is not
ours (a request that waits in its accept queue arrives late, the next one on time). Over a
window of N requests the slack adds up to N × 10 % of an interval. 5 % still let one request
in 2,500 be refused at the simulated limits on a loaded machine."""
MAX_SLOWDOWN = 64.0
MAX_HOLD_S = 60.0
"""The longest pause callers wait out, whatever asks for it (``Retry-After``, a reset, an
announced ``x-rate-limit-*`` interval, a slowdown, a configured interval): a longer one closes
the origin for that long instead, and its requests are reported unreachable at once."""
_DEFAULT_PORTS = {"http": 80, "https": 443}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m)?\s*$", re.IGNORECASE)
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0}
_EPOCH_FLOOR = 1_000_000_000
"""A reset value above this is a Unix time, below it a number of seconds."""


def origin_of(url: str) -> Origin:
    """The origin of ``url`` (a base URL or a request URL)."""
    parts = urlsplit(url)
    scheme = (parts.scheme or "https").lower()
    try:
        port = parts.port
    except ValueError:  # a malformed base URL: the HTTP layer refuses it before any request
        port = None
    return scheme, (parts.hostname or "").lower(), port or _DEFAULT_PORTS.get(scheme, 0)


@dataclass
class _State:
    """One origin's pacing: the next free slot and how far it is slowed down."""

    base: float
    next_at: float = 0.0
    slowdown: float = 1.0
    announced: float = 0.0
    """The interval the origin's own rate-limit headers imply (0 when it said nothing)."""
    last_refusal: float | None = None
    closed_until: float = 0.0
    """Until when the origin asked for a pause too long to wait out (see ``closed_for``)."""
    queue: list[tuple[int, int, int, asyncio.Future[None]]] = field(default_factory=list)
    """Callers waiting for a slot: urgent ones first, then by rank, then as they came."""
    dispatcher: asyncio.Task | None = None


class Pacer:
    """Spaces requests per origin; callers of one origin queue in order, origins run in parallel."""

    def __init__(
        self,
        intervals: Mapping[Origin, float],
        *,
        default_interval_s: float = DEFAULT_INTERVAL_S,
        quiet_period_s: float = QUIET_PERIOD_S,
        margin: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> None:
        """``margin`` widens every spacing (``SAFETY_MARGIN`` for the real services)."""
        self._intervals = {o: min(max(0.0, s), MAX_HOLD_S) for o, s in intervals.items()}
        self._margin = max(1.0, margin)
        self._default = min(max(0.0, default_interval_s), MAX_HOLD_S)
        self._quiet = quiet_period_s
        self._clock = clock
        self._sleep = sleep
        self._states: dict[Origin, _State] = {}
        self._order = itertools.count()

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> Pacer:
        """Intervals keyed by each endpoint's origin; endpoints sharing one get the largest."""
        intervals: dict[Origin, float] = {}
        for endpoint in settings.endpoints.values():
            origin = origin_of(endpoint.base_url)
            if origin[1]:
                seconds = endpoint.min_interval_ms / 1000
                intervals[origin] = max(seconds, intervals.get(origin, 0.0))
        return cls(intervals, margin=SAFETY_MARGIN, clock=clock, sleep=sleep)

    def _state(self, origin: Origin) -> _State:
        state = self._states.get(origin)
        if state is None:
            state = self._states[origin] = _State(self._intervals.get(origin, self._default))
        return state

    def interval(self, origin: Origin) -> float:
        """The spacing in force now: documented × slowdown, or what the origin announced;
        never more than ``MAX_HOLD_S``."""
        state = self._state(origin)
        self._restore(state)
        return min(max(state.base * state.slowdown, state.announced), MAX_HOLD_S)

    def _spacing(self, origin: Origin) -> float:
        """The interval with the safety margin, within ``MAX_HOLD_S``."""
        return min(self.interval(origin) * self._margin, MAX_HOLD_S)

    async def wait(self, origin: Origin, *, urgent: bool = False) -> None:
        """Return when a request to ``origin`` may be sent, and reserve that slot. Slots go
        to ``urgent`` callers first (a batch request answers many references at once), then
        by the rank of the reference asking (``RANK``), then in the order callers came."""
        state = self._state(origin)
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(state.queue, (0 if urgent else 1, RANK.get(), next(self._order), future))
        if state.dispatcher is None or state.dispatcher.done():
            state.dispatcher = asyncio.ensure_future(self._dispatch(origin, state))
        await future

    async def _dispatch(self, origin: Origin, state: _State) -> None:
        """Hand out the origin's slots one interval apart, to the best waiting caller at the
        moment the slot opens (a hold or an urgent caller may have come meanwhile)."""
        while state.queue:
            delay = state.next_at - self._clock()
            if delay > 0:
                await self._sleep(delay)
                continue
            *_key, future = heapq.heappop(state.queue)
            if future.done():  # its caller was cancelled
                continue
            state.next_at = self._clock() + self._spacing(origin)
            future.set_result(None)
            await asyncio.sleep(0)  # the caller sends before the next slot is considered

    def sent(self, origin: Origin) -> None:
        """A request to ``origin`` leaves now: the next one leaves at least an interval later,
        however late this one left after its slot (a busy event loop may hold a send back,
        and the service counts arrivals, so the next request must not look early)."""
        state = self._state(origin)
        state.next_at = max(state.next_at, self._clock() + self._spacing(origin))

    async def reserve(self, origin: Origin) -> None:
        """Take the origin's next slot as an urgent caller and mark it held (``RESERVED``) for
        the request this task sends next. A batch reserves first and takes its keys after, so
        what arrives while it waits still joins it, and paced single lookups of less urgent
        references cannot take every slot from it."""
        await self.wait(origin, urgent=True)
        RESERVED.set(origin)

    @staticmethod
    def release() -> None:
        """Drop this task's reservation, used or not."""
        RESERVED.set(None)

    @staticmethod
    def holds(origin: Origin) -> bool:
        """Whether this task holds a reserved slot at ``origin``; taking it clears the mark."""
        if RESERVED.get() != origin:
            return False
        RESERVED.set(None)
        return True

    def hold(self, origin: Origin, seconds: float) -> None:
        """Keep every caller away from ``origin`` for ``seconds`` from now; a pause longer
        than ``MAX_HOLD_S`` closes the origin instead (nobody waits that long)."""
        state = self._state(origin)
        now = self._clock()
        if seconds > MAX_HOLD_S:
            state.closed_until = max(state.closed_until, now + seconds)
        else:
            state.next_at = max(state.next_at, now + seconds)

    def closed_for(self, origin: Origin) -> float:
        """Seconds the origin still asks every caller to stay away (0 when open): a request
        then is reported unreachable at once instead of being sent or held for so long."""
        return max(0.0, self._state(origin).closed_until - self._clock())

    def rate_limited(self, origin: Origin, retry_after: float | None) -> None:
        """A 429: halve the origin's rate and hold it for ``Retry-After`` (or one interval)."""
        state = self._state(origin)
        state.slowdown = min(state.slowdown * 2, MAX_SLOWDOWN)
        state.last_refusal = self._clock()
        self.hold(origin, retry_after if retry_after is not None else self.interval(origin))

    def observe(self, origin: Origin, headers: Mapping[str, str]) -> None:
        """Read a response's rate-limit headers (lowercase names): an announced limit sets a
        floor under the interval; nothing remaining holds the origin until the reset. An
        announced interval longer than ``MAX_HOLD_S`` (one request an hour) closes the origin
        for that long, as a long ``Retry-After`` does: nobody waits an hour for a slot."""
        state = self._state(origin)
        for prefix in ("x-rate-limit-", "x-ratelimit-"):
            limit = _number(headers.get(prefix + "limit"))
            window = _duration(headers.get(prefix + "interval"))
            if limit and limit > 0 and window:
                announced = window / limit
                state.announced = min(announced, MAX_HOLD_S)
                if announced > MAX_HOLD_S:
                    self.hold(origin, announced)
            remaining = _number(headers.get(prefix + "remaining"))
            reset = _number(headers.get(prefix + "reset"))
            if remaining is not None and remaining < 1 and reset is not None:
                seconds = reset - time.time() if reset > _EPOCH_FLOOR else reset
                self.hold(origin, max(0.0, seconds))

    def _restore(self, state: _State) -> None:
        """One halving undone per quiet period since the last 429."""
        if state.slowdown <= 1 or state.last_refusal is None:
            return
        now = self._clock()
        if now - state.last_refusal >= self._quiet:
            state.slowdown = max(1.0, state.slowdown / 2)
            state.last_refusal = now if state.slowdown > 1 else None


def _number(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _duration(value: str | None) -> float | None:
    """``1s``, ``60s``, ``500ms``, ``1m`` or a bare number of seconds."""
    m = _DURATION.match(value or "")
    if not m:
        return None
    return float(m.group(1)) * _UNITS[(m.group(2) or "s").lower()]
