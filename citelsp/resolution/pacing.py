"""Per-origin pacing: the interval each service asks for between two requests, adapted to what
it says while we talk to it.

An origin is (scheme, host, port), so a local mirror or a test server on another port of the
same host is paced on its own. Within an origin each lane (``terms.Lane``: Crossref's single
records and its lists and queries) is spaced on its own, from its documented interval (the
settings); a 429 halves the lane's rate and holds every caller of the origin back for the
``Retry-After``; the rate is restored one halving per quiet period without a 429.
``x-rate-limit-limit``/``-interval`` (Crossref) and ``x-ratelimit-limit``/``-remaining``/
``-reset`` (the common form) can only slow a lane down: the documented interval stays the
fastest we go. No pause is ever longer than ``MAX_HOLD_S``: a longer one closes the origin.

Hand-written rather than a rate-limiter library (aiolimiter, limits, pyrate-limiter): those are
token buckets that allow bursts and have no notion of a server-announced hold, a rate halved
on refusal, or a floor set by response headers; the policy here is a minimum spacing that a
429 must widen for every caller of the origin at once (``rate_limited``, ``hold``).
Processes that pace together (``citelsp.pacingUrl``) share one schedule: ``redis_pacing``.
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
from citelsp.resolution import terms

Origin = tuple[str, str, int]
"""(scheme, lowercase host, port), the default port filled in."""

RANK: ContextVar[int] = ContextVar("citelsp_request_rank", default=sys.maxsize)
"""The rank of the reference a request is made for: lower was asked for earlier (nearer the
cursor). The engine sets it per resolution; a slot goes to the lowest rank waiting."""

RESERVED: ContextVar[tuple[Origin, str] | None] = ContextVar("citelsp_reserved_slot",
                                                            default=None)
"""An origin and lane whose slot the current task already holds (``Pacer.reserve``): its next
request there goes without waiting again."""

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


Key = tuple[Origin, str]
"""An origin and one of its lanes (``terms.Lane``): the unit a pacing state spaces."""


def intervals_for(settings: Settings) -> dict[Origin | Key, float]:
    """Intervals keyed by each endpoint's origin and by its lanes (``terms.lanes``:
    ``minIntervalMs`` times the lane's documented factor); endpoints sharing an origin get
    the largest."""
    intervals: dict[Origin | Key, float] = {}
    identified = bool(settings.mailto)
    for name, endpoint in settings.endpoints.items():
        origin = origin_of(endpoint.base_url)
        if not origin[1]:
            continue
        seconds = endpoint.min_interval_ms / 1000
        intervals[origin] = max(seconds, intervals.get(origin, 0.0))
        for lane_name, lane in terms.lanes(name, identified=identified).items():
            key = (origin, lane_name)
            intervals[key] = max(seconds * lane.factor, intervals.get(key, 0.0))
    return intervals


@dataclass
class _State:
    """One lane's pacing: the next free slot and how far it is slowed down."""

    base: float
    next_at: float = 0.0
    slowdown: float = 1.0
    announced: float = 0.0
    """The interval the origin's own rate-limit headers imply (0 when it said nothing)."""
    last_refusal: float | None = None
    queue: list[tuple[int, int, int, asyncio.Future[None]]] = field(default_factory=list)
    """Callers waiting for a slot: urgent ones first, then by rank, then as they came."""
    dispatcher: asyncio.Task | None = None


class Pacer:
    """Spaces requests per origin and lane; callers of one lane queue in order, lanes and
    origins run in parallel, and a hold or a closing (``Retry-After``) stops a whole origin."""

    def __init__(
        self,
        intervals: Mapping[Origin | Key, float],
        *,
        default_interval_s: float = DEFAULT_INTERVAL_S,
        quiet_period_s: float = QUIET_PERIOD_S,
        margin: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> None:
        """``intervals`` by origin (every lane of it) or by (origin, lane); ``margin`` widens
        every spacing (``SAFETY_MARGIN`` for the real services)."""
        self._intervals = {k: min(max(0.0, s), MAX_HOLD_S) for k, s in intervals.items()}
        self._margin = max(1.0, margin)
        self._default = min(max(0.0, default_interval_s), MAX_HOLD_S)
        self._quiet = quiet_period_s
        self._clock = clock
        self._sleep = sleep
        self._states: dict[Key, _State] = {}
        self._held: dict[Origin, float] = {}
        """Until when every lane of an origin waits (a ``Retry-After``, a reset)."""
        self._closed: dict[Origin, float] = {}
        """Until when an origin asked for a pause too long to wait out (``closed_for``)."""
        self._order = itertools.count()

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> Pacer:
        """The documented intervals (``intervals_for``), widened by ``SAFETY_MARGIN``."""
        return cls(intervals_for(settings), margin=SAFETY_MARGIN, clock=clock, sleep=sleep)

    def _state(self, origin: Origin, lane: str = terms.ALL) -> _State:
        key = (origin, lane)
        state = self._states.get(key)
        if state is None:
            base = self._intervals.get(key, self._intervals.get(origin, self._default))
            state = self._states[key] = _State(base)
        return state

    def interval(self, origin: Origin, lane: str = terms.ALL) -> float:
        """The spacing in force now: documented × slowdown, or what the origin announced;
        never more than ``MAX_HOLD_S``."""
        state = self._state(origin, lane)
        self._restore(state)
        return min(max(state.base * state.slowdown, state.announced), MAX_HOLD_S)

    def _spacing(self, origin: Origin, lane: str) -> float:
        """The interval with the safety margin, within ``MAX_HOLD_S``."""
        return min(self.interval(origin, lane) * self._margin, MAX_HOLD_S)

    async def wait(self, origin: Origin, *, urgent: bool = False,
                   lane: str = terms.ALL) -> None:
        """Return when a request to ``origin`` in ``lane`` may be sent, and reserve that slot.
        Slots go to ``urgent`` callers first (a batch request answers many references at
        once), then by the rank of the reference asking (``RANK``), then in the order callers
        came."""
        state = self._state(origin, lane)
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(state.queue, (0 if urgent else 1, RANK.get(), next(self._order), future))
        if state.dispatcher is None or state.dispatcher.done():
            state.dispatcher = asyncio.ensure_future(self._dispatch(origin, lane, state))
        await future

    async def _dispatch(self, origin: Origin, lane: str, state: _State) -> None:
        """Hand out the lane's slots one interval apart, to the best waiting caller at the
        moment the slot opens (a hold or an urgent caller may have come meanwhile)."""
        while state.queue:
            await self._step(origin, lane, state)

    async def _step(self, origin: Origin, lane: str, state: _State) -> None:
        """Wait until the lane's next slot, or hand it to the best caller waiting."""
        delay = max(state.next_at, self._held.get(origin, 0.0)) - self._clock()
        if delay > 0:
            await self._sleep(delay)
            return
        *_key, future = heapq.heappop(state.queue)
        if future.done():  # its caller was cancelled
            return
        state.next_at = self._clock() + self._spacing(origin, lane)
        future.set_result(None)
        await asyncio.sleep(0)  # the caller sends before the next slot is considered

    def sent(self, origin: Origin, lane: str = terms.ALL) -> None:
        """A request to ``origin`` leaves now: the next one leaves at least an interval later,
        however late this one left after its slot (a busy event loop may hold a send back,
        and the service counts arrivals, so the next request must not look early)."""
        state = self._state(origin, lane)
        state.next_at = max(state.next_at, self._clock() + self._spacing(origin, lane))

    async def departing(self, origin: Origin, lane: str = terms.ALL, *,
                        connecting: bool = False) -> None:
        """The request granted a slot in ``origin``'s ``lane`` is about to leave: its headers
        are written next (``sent``), or, ``connecting``, it opens a connection first. A pacer
        shared with other processes may hold it back here for a fresh slot
        (``redis_pacing``)."""
        if not connecting:
            self.sent(origin, lane)

    async def reserve(self, origin: Origin, lane: str = terms.ALL) -> None:
        """Take the lane's next slot as an urgent caller and mark it held (``RESERVED``) for
        the request this task sends next. A batch reserves first and takes its keys after, so
        what arrives while it waits still joins it, and paced single lookups of less urgent
        references cannot take every slot from it."""
        await self.wait(origin, urgent=True, lane=lane)
        RESERVED.set((origin, lane))

    @staticmethod
    def release() -> None:
        """Drop this task's reservation, used or not."""
        RESERVED.set(None)

    @staticmethod
    def holds(origin: Origin, lane: str = terms.ALL) -> bool:
        """Whether this task holds a reserved slot in ``origin``'s ``lane``; taking it clears
        the mark."""
        if RESERVED.get() != (origin, lane):
            return False
        RESERVED.set(None)
        return True

    def hold(self, origin: Origin, seconds: float) -> None:
        """Keep every caller away from ``origin`` for ``seconds`` from now; a pause longer
        than ``MAX_HOLD_S`` closes the origin instead (nobody waits that long)."""
        now = self._clock()
        if seconds > MAX_HOLD_S:
            self._closed[origin] = max(self._closed.get(origin, 0.0), now + seconds)
        else:
            self._held[origin] = max(self._held.get(origin, 0.0), now + seconds)

    def closed_for(self, origin: Origin) -> float:
        """Seconds the origin still asks every caller to stay away (0 when open): a request
        then is reported unreachable at once instead of being sent or held for so long."""
        return max(0.0, self._closed.get(origin, 0.0) - self._clock())

    def rate_limited(self, origin: Origin, retry_after: float | None,
                     lane: str = terms.ALL) -> None:
        """A 429: halve the lane's rate and hold the origin for ``Retry-After`` (or one
        interval)."""
        state = self._state(origin, lane)
        state.slowdown = min(state.slowdown * 2, MAX_SLOWDOWN)
        state.last_refusal = self._clock()
        self.hold(origin, retry_after if retry_after is not None else self.interval(origin, lane))

    def observe(self, origin: Origin, headers: Mapping[str, str],
                lane: str = terms.ALL) -> None:
        """Read a response's rate-limit headers (lowercase names): an announced limit sets a
        floor under the lane's interval; nothing remaining holds the origin until the reset.
        An announced interval longer than ``MAX_HOLD_S`` (one request an hour) closes the
        origin for that long, as a long ``Retry-After`` does: nobody waits an hour for a
        slot."""
        state = self._state(origin, lane)
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
