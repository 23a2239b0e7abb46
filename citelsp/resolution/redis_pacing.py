"""One pace and one daily budget for every process, kept in Redis (``CITELSP_PACING_URL``).

Many ``citelsp check`` processes, or a lab's language servers, on one or several machines ask
the same services; each paced alone, four processes send four times the rate a service allows.
With a pacing URL every lane of every origin (``pacing.Pacer``) has one slot schedule in Redis:
a process takes the lane's next free slot atomically (a Lua script, on Redis's own clock, so
machines need not agree on the time) and sleeps until it, so N processes interleave at the
service's rate instead of each going at it. A 429 halves the lane's rate for everyone; a
``Retry-After`` (or an announced reset) holds the origin for every process until the time
given, and a pause longer than ``pacing.MAX_HOLD_S`` closes it for all of them. Within a
process, callers still queue as ``Pacer`` orders them (batches first, then by rank). The daily
budgets (``budget.DailyBudget``) become one counter per service and day in Redis.

When Redis cannot be reached, at the start or mid-run, the process says so once and paces
itself alone at ``1 / FALLBACK_FACTOR`` of each documented rate (four processes that all lose
Redis together still stay within the rate), and counts budgets on this machine (the SQLite
file beside the cache); it tries Redis again every ``RETRY_S``. Never a crash, never a verdict.

Hand-written Lua rather than ``limits`` or ``pyrate-limiter``: both answer "may I, now?" for a
window of requests (whole seconds in ``limits``), so a process that may not must poll, and N
processes woken together race for each slot; neither reserves a future slot, spaces requests
evenly inside a window, holds an origin for a server-announced time, halves a rate on refusal,
or takes a floor from response headers, which is the policy ``Pacer`` keeps in one process.
The same holds for the budget, a counter that must refuse without counting what it refused
(``limits`` counts a refused hit), reset at the turn of the UTC day.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import heapq
import logging
import time
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citelsp.config import Settings
from citelsp.resolution import terms
from citelsp.resolution.budget import Allowance, DailyBudget
from citelsp.resolution.pacing import (
    MAX_HOLD_S,
    MAX_SLOWDOWN,
    QUIET_PERIOD_S,
    SAFETY_MARGIN,
    Key,
    Origin,
    Pacer,
    _State,
    intervals_for,
)
from citelsp.uris import shown_url

log = logging.getLogger("citelsp.pacing")

FALLBACK_FACTOR = 4.0
"""Without Redis a process goes at a quarter of each documented rate."""
RETRY_S = 30.0
"""How long a process that lost Redis paces itself before it tries Redis again."""
TIMEOUT_S = 5.0
"""A Redis that does not answer within this long is taken for gone."""
CONNECTIONS = 16
"""Connections to Redis a process keeps at most; a command waits for a free one (thousands
of questions may be claimed at once, each command takes well under a millisecond)."""
KEY_TTL_S = 2 * 86_400
"""Every key expires two days after its last write: a lane's schedule, a day's budget."""
PREFIX = "citelsp:"
LATE = (SAFETY_MARGIN - 1) / 2
"""A request leaving more than this fraction of an interval after its slot takes another:
half the margin every spacing has, the other half left for the way to the service (at 8
processes on 2 cores, the whole margin let 6 requests in 1,055 be refused)."""
_GRANTED: ContextVar[tuple[Key, float] | None] = ContextVar("citelsp_granted_slot",
                                                           default=None)
"""The lane and time of the slot this task was last granted (``SharedPacer.departing``)."""

_NOW = "local t = redis.call('TIME') local now = tonumber(t[1]) + tonumber(t[2]) / 1e6 "
_RESERVE = _NOW + """
local held = tonumber(redis.call('HGET', KEYS[2], 'held') or '0')
local closed = tonumber(redis.call('HGET', KEYS[2], 'closed') or '0')
if closed > now then return {'closed', tostring(closed - now)} end
local base, margin, max_hold = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local lane = redis.call('HMGET', KEYS[1], 'next', 'slowdown', 'refused', 'announced')
local next_at = tonumber(lane[1] or '0')
local slowdown = tonumber(lane[2] or '1')
local refused = tonumber(lane[3] or '0')
local announced = tonumber(lane[4] or '0')
if slowdown > 1 and refused > 0 and now - refused >= tonumber(ARGV[4]) then
  slowdown = math.max(1, slowdown / 2)
  if slowdown > 1 then refused = now else refused = 0 end
end
local interval = math.min(math.max(base * slowdown, announced), max_hold)
local slot = math.max(now, next_at, held)
redis.call('HSET', KEYS[1], 'next', tostring(slot + math.min(interval * margin, max_hold)),
           'slowdown', tostring(slowdown), 'refused', tostring(refused))
redis.call('EXPIRE', KEYS[1], ARGV[5])
return {'wait', tostring(slot - now)}
"""
"""The lane's next free slot, taken: ``wait`` seconds from now, or ``closed`` for that long
(nothing taken). KEYS: lane, origin; ARGV: base interval, margin, longest hold, quiet period,
time to live."""
_HOLD = _NOW + """
local seconds = tonumber(ARGV[1])
local field = 'held'
if seconds > tonumber(ARGV[2]) then field = 'closed' end
local current = tonumber(redis.call('HGET', KEYS[1], field) or '0')
if now + seconds > current then redis.call('HSET', KEYS[1], field, tostring(now + seconds)) end
redis.call('EXPIRE', KEYS[1], math.max(tonumber(ARGV[3]), math.ceil(seconds)))
return 1
"""
"""Hold (or, past the longest hold, close) the origin ``KEYS[1]`` for ``ARGV[1]`` seconds."""
_REFUSED = _NOW + """
local slowdown = tonumber(redis.call('HGET', KEYS[1], 'slowdown') or '1')
redis.call('HSET', KEYS[1], 'slowdown', tostring(math.min(slowdown * 2, tonumber(ARGV[1]))),
           'refused', tostring(now))
redis.call('EXPIRE', KEYS[1], ARGV[2])
return 1
"""
"""A 429 in lane ``KEYS[1]``: its rate halved for every process (at most ``ARGV[1]``×)."""
_HELD = _NOW + """
local h = redis.call('HMGET', KEYS[1], 'held', 'closed')
return {tostring(tonumber(h[1] or '0') - now), tostring(tonumber(h[2] or '0') - now)}
"""
"""Seconds the origin ``KEYS[1]`` is still held and closed (negative when not)."""
_ANNOUNCE = """
redis.call('HSET', KEYS[1], 'announced', ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[2])
return 1
"""
"""The interval lane ``KEYS[1]``'s origin announced (its rate-limit headers)."""
_CHARGE = """
local spent = tonumber(redis.call('GET', KEYS[1]) or '0')
if spent + tonumber(ARGV[1]) > tonumber(ARGV[2]) then return 0 end
redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[3])
return 1
"""
"""Add ``ARGV[1]`` to the day's spending ``KEYS[1]`` only when it stays within ``ARGV[2]``."""
_EXHAUST = """
local spent = tonumber(redis.call('GET', KEYS[1]) or '0')
if spent < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2]) end
return 1
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
"""
"""Drop the claim ``KEYS[1]`` if it is still this process's (``ARGV[1]``)."""
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1
"""
_SCRIPTS = {"reserve": _RESERVE, "hold": _HOLD, "refused": _REFUSED, "held": _HELD,
            "announce": _ANNOUNCE, "charge": _CHARGE, "exhaust": _EXHAUST,
            "release": _RELEASE, "renew": _RENEW}


class Link:
    """A process's connection to the shared Redis, and what it does when Redis is gone: one
    notice, local pacing at a conservative rate, another try after ``RETRY_S``."""

    def __init__(self, url: str, notice: Callable[[str], None], *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.url = url
        self._notice = notice
        self._clock = clock
        self._down_until: float | None = None
        self._told = False
        self._client: Any = None
        self._scripts: dict[str, Any] = {}
        self._tasks: set[asyncio.Task] = set()
        try:
            import redis.asyncio as aioredis
            from redis.asyncio.retry import Retry
            from redis.backoff import NoBackoff
        except ImportError:
            self._problem = "the redis package is not installed (pip install 'citelsp[team]')"
            return
        self._problem = None
        try:
            pool = aioredis.BlockingConnectionPool.from_url(
                url, max_connections=CONNECTIONS, timeout=TIMEOUT_S,
                socket_timeout=TIMEOUT_S, socket_connect_timeout=TIMEOUT_S)
            self._client = aioredis.Redis(connection_pool=pool, retry=Retry(NoBackoff(), 0))
        except ValueError as exc:
            self._problem = f"not a Redis URL ({exc})"
            return
        for name, source in _SCRIPTS.items():
            self._scripts[name] = self._client.register_script(source)

    @property
    def up(self) -> bool:
        """Whether to ask Redis now: it was never found gone, or it is time to try again."""
        if self._client is None:
            if not self._told:
                self._told = True
                self._notice(self._fallback_message(self._problem or "unusable"))
            return False
        return self._down_until is None or self._clock() >= self._down_until

    async def run(self, script: str, keys: list[str], args: list[Any]) -> Any:
        """Run one of the scripts; a Redis error marks the link down and raises
        ``SharedUnavailable``."""
        try:
            result = await self._scripts[script](keys=keys, args=args)
        except Exception as exc:  # redis-py's errors, OSError, a timeout: Redis is gone
            self.failed(exc)
            raise SharedUnavailable(str(exc)) from exc
        if self._down_until is not None:
            self._down_until = None
            self._notice(f"citelsp: shared pacing at {shown_url(self.url)} is back: every "
                         "process paces together again")
            self._told = False
        return result

    async def get(self, key: str) -> bytes | None:
        return await self.command("get", key)

    async def command(self, name: str, *args: Any, **kwargs: Any) -> Any:
        try:
            return await getattr(self._client, name)(*args, **kwargs)
        except Exception as exc:
            self.failed(exc)
            raise SharedUnavailable(str(exc)) from exc

    def push(self, script: str, keys: list[str], args: list[Any]) -> None:
        """Run a script without waiting for it (a hold, a refusal): kept referenced until done;
        a failure marks the link down like any other."""
        if not self.up:
            return
        task = asyncio.get_running_loop().create_task(self._pushed(script, keys, args))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _pushed(self, script: str, keys: list[str], args: list[Any]) -> None:
        with contextlib.suppress(SharedUnavailable):
            await self.run(script, keys, args)

    def failed(self, exc: BaseException) -> None:
        first = self._down_until is None
        self._down_until = self._clock() + RETRY_S
        log.debug("shared pacing at %s failed: %r", shown_url(self.url), exc)
        if first and not self._told:
            self._told = True
            reason = str(exc).strip() or type(exc).__name__
            self._notice(self._fallback_message(reason[:200]))

    def _fallback_message(self, reason: str) -> str:
        return (f"citelsp: shared pacing unavailable ({shown_url(self.url)}: {reason}) — "
                f"this process paces itself alone at 1/{FALLBACK_FACTOR:g} of each service's "
                "rate and counts daily budgets on this machine")

    async def aclose(self) -> None:
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task
        if self._client is not None:
            with contextlib.suppress(Exception):
                await self._client.aclose()


class SharedUnavailable(Exception):
    """Redis could not be asked (the link is now down)."""


def _origin_key(origin: Origin) -> str:
    scheme, host, port = origin
    return f"{PREFIX}origin:{scheme}://{host}:{port}"


def _lane_key(key: Key) -> str:
    return f"{_origin_key(key[0])}:lane:{key[1] or 'all'}"


class SharedPacer(Pacer):
    """``Pacer`` with its slots, holds and slowdowns in Redis (``Link``); the in-process
    ``Pacer``, slowed by ``FALLBACK_FACTOR``, while Redis is gone."""

    def __init__(self, link: Link, intervals: Mapping[Origin | Key, float],
                 **kwargs: Any) -> None:
        super().__init__(intervals, **kwargs)
        self._link = link
        self._shared_margin = self._margin

    def _shared(self) -> bool:
        """Whether to pace through Redis now; the local spacing follows the answer."""
        up = self._link.up
        self._margin = self._shared_margin * (1.0 if up else FALLBACK_FACTOR)
        return up

    async def _dispatch(self, origin: Origin, lane: str, state: _State) -> None:
        """Hand out the lane's slots as Redis schedules them, to the best caller waiting when
        the slot comes; a slot at a time locally (``Pacer._step``) while Redis is gone, so
        that its return is seen mid-queue. This process's own spacing and holds come first,
        so a slot taken in Redis is used when it comes."""
        while state.queue:
            if not self._shared():
                await self._step(origin, lane, state)
                continue
            while state.queue and state.queue[0][-1].done():  # cancelled callers
                heapq.heappop(state.queue)
            if not state.queue:
                return
            local = max(state.next_at, self._held.get(origin, 0.0)) - self._clock()
            if local > 0:
                await self._sleep(local)
                continue
            try:
                wait = await self._reserve(origin, lane, state)
            except SharedUnavailable:
                continue
            if wait is None:  # closed for everyone: let the callers see it and give up
                for *_order, future in state.queue:
                    if not future.done():
                        future.set_result(None)
                state.queue.clear()
                return
            if wait > 0:
                await self._sleep(wait)
                if await self._held_meanwhile(origin):
                    continue  # the slot fell inside a hold: take a new one after it
            *_order, future = heapq.heappop(state.queue)
            if future.done():
                continue
            state.next_at = self._clock() + self._spacing(origin, lane)
            future.set_result(None)
            await asyncio.sleep(0)  # the caller sends before the next slot is considered

    async def wait(self, origin: Origin, *, urgent: bool = False,
                   lane: str = terms.ALL) -> None:
        """``Pacer.wait``; the slot's time is kept for ``departing``."""
        await super().wait(origin, urgent=urgent, lane=lane)
        _GRANTED.set(((origin, lane), self._clock()))

    async def departing(self, origin: Origin, lane: str = terms.ALL, *,
                        connecting: bool = False) -> None:
        """A request that leaves later than ``LATE`` of an interval after its slot (its
        process was starting, a connection or TLS handshake, a busy event loop) takes a fresh
        slot first: the slots after its old one belong to other processes, which the service
        would see arrive together with it."""
        granted = _GRANTED.get()
        late = granted is not None and granted[0] == (origin, lane) and \
            self._clock() - granted[1] > LATE * self.interval(origin, lane)
        if late and self._shared():
            await self._retake(origin, lane)
        if granted is not None and granted[0] == (origin, lane):
            # A request that connects first departs twice (``HttpClient._departure``): its
            # headers are late if the connection took long (a TLS handshake) since now.
            _GRANTED.set(((origin, lane), self._clock()))
        await super().departing(origin, lane, connecting=connecting)

    async def _retake(self, origin: Origin, lane: str) -> None:
        state = self._state(origin, lane)
        while True:
            try:
                wait = await self._reserve(origin, lane, state)
            except SharedUnavailable:
                return
            if not wait:  # now, or closed meanwhile (the answer will say so)
                return
            await self._sleep(wait)
            if not await self._held_meanwhile(origin):
                return

    async def _reserve(self, origin: Origin, lane: str, state: _State) -> float | None:
        """Take the lane's next slot in Redis: seconds until it, or None when the origin is
        closed (and for how long is now known here)."""
        kind, seconds = await self._link.run(
            "reserve", [_lane_key((origin, lane)), _origin_key(origin)],
            [repr(state.base), repr(self._margin), repr(MAX_HOLD_S), repr(self._quiet),
             KEY_TTL_S])
        seconds = max(0.0, float(seconds))
        if kind == b"closed":
            self._closed[origin] = max(self._closed.get(origin, 0.0), self._clock() + seconds)
            return None
        return seconds

    async def _held_meanwhile(self, origin: Origin) -> bool:
        """After sleeping until a slot: whether another process held or closed the origin
        meanwhile (its hold then covers the slot). Redis gone: no."""
        try:
            held, closed = await self._link.run("held", [_origin_key(origin)], [])
        except SharedUnavailable:
            return False
        if float(closed) > 0:
            self._closed[origin] = max(self._closed.get(origin, 0.0),
                                       self._clock() + float(closed))
        return float(held) > 0 or float(closed) > 0

    def hold(self, origin: Origin, seconds: float) -> None:
        """Held here at once, and for every process as soon as Redis has it."""
        super().hold(origin, seconds)
        self._link.push("hold", [_origin_key(origin)], [repr(max(0.0, seconds)),
                                                         repr(MAX_HOLD_S), KEY_TTL_S])

    def rate_limited(self, origin: Origin, retry_after: float | None,
                     lane: str = terms.ALL) -> None:
        """The lane's rate halved for every process, and the origin held for all of them."""
        super().rate_limited(origin, retry_after, lane)
        self._link.push("refused", [_lane_key((origin, lane))], [repr(MAX_SLOWDOWN),
                                                                  KEY_TTL_S])

    def observe(self, origin: Origin, headers: Mapping[str, str],
                lane: str = terms.ALL) -> None:
        """A floor the origin announced (``x-rate-limit-*``) holds for every process."""
        state = self._state(origin, lane)
        before = state.announced
        super().observe(origin, headers, lane)
        if state.announced != before:
            self._link.push("announce", [_lane_key((origin, lane))],
                            [repr(state.announced), KEY_TTL_S])


class SharedBudget(DailyBudget):
    """``DailyBudget`` with the day's spending in Redis; the file beside the cache while Redis
    is gone (the processes of one machine still share it there)."""

    def __init__(self, link: Link, directory: Path | None, budgets: Mapping[str, Allowance],
                 *, clock: Callable[[], float] = time.time) -> None:
        super().__init__(directory, budgets, clock=clock)
        self._link = link

    def _key(self, endpoint: str) -> str:
        return f"{PREFIX}budget:{self._day()}:{endpoint}"

    async def charge(self, endpoint: str, kind: str) -> str | None:
        allowance = self._budgets.get(endpoint)
        cost = allowance.costs.get(kind, 0) if allowance is not None else 0
        if allowance is None or cost == 0:
            return None
        if self._link.up:
            try:
                paid = await self._link.run("charge", [self._key(endpoint)],
                                            [cost, allowance.micro_usd, KEY_TTL_S])
            except SharedUnavailable:
                pass
            else:
                return None if paid else self._spent(endpoint, kind, allowance)
        return await super().charge(endpoint, kind)

    async def exhaust(self, endpoint: str) -> None:
        allowance = self._budgets.get(endpoint)
        if allowance is None:
            return
        if self._link.up:
            with contextlib.suppress(SharedUnavailable):
                await self._link.run("exhaust", [self._key(endpoint)],
                                     [allowance.micro_usd, KEY_TTL_S])
        await super().exhaust(endpoint)

    async def spent_today(self, endpoint: str) -> int:
        if self._link.up:
            with contextlib.suppress(SharedUnavailable):
                return int(await self._link.get(self._key(endpoint)) or 0)
        return await super().spent_today(endpoint)


CLAIM_TTL_S = 60.0
"""A claim lives this long unless its process renews it (every third of it while it asks):
a process that dies while asking keeps the others waiting at most this long."""
CLAIM_POLL_S = 0.2
"""How often a process waiting for another's answer looks whether it came."""


class Claims:
    """One process at a time asks a question (resolver, form, query) that the shared cache
    will hold the answer to: the others wait for that answer instead of asking too, so four
    processes checking bibliographies that share works ask each work once. Redis gone: every
    process asks for itself."""

    def __init__(self, link: Link) -> None:
        self._link = link
        self._token = uuid.uuid4().hex

    @staticmethod
    def _key(question: str) -> str:
        return f"{PREFIX}asking:{hashlib.sha1(question.encode()).hexdigest()}"

    async def claim(self, question: str) -> bool | None:
        """True when this process now asks ``question`` (``release`` it after); False once
        another process that was asking it is done (its answer is in the cache, unless it
        could not get one); None without Redis."""
        if not self._link.up:
            return None
        key = self._key(question)
        try:
            if await self._link.command("set", key, self._token, nx=True,
                                         px=int(CLAIM_TTL_S * 1000)):
                return True
            while await self._link.command("exists", key):
                await asyncio.sleep(CLAIM_POLL_S)
        except SharedUnavailable:
            return None
        return False

    @contextlib.asynccontextmanager
    async def held(self, question: str) -> AsyncIterator[None]:
        """While this process asks ``question``: its claim renewed, and dropped at the end
        (a cancelled ask too)."""
        key = self._key(question)
        renewing = asyncio.ensure_future(self._renew(key))
        try:
            yield
        finally:
            renewing.cancel()
            if self._link.up:
                with contextlib.suppress(SharedUnavailable):
                    await asyncio.shield(self._link.run("release", [key], [self._token]))

    async def _renew(self, key: str) -> None:
        with contextlib.suppress(SharedUnavailable):
            while True:
                await asyncio.sleep(CLAIM_TTL_S / 3)
                await self._link.run("renew", [key], [self._token, int(CLAIM_TTL_S * 1000)])


@dataclass
class SharedPacing:
    """The shared pacer and budget of one process, over one ``Link``."""

    link: Link
    pacer: SharedPacer
    budget: SharedBudget
    claims: Claims

    @classmethod
    def open(cls, settings: Settings, directory: Path | None,
             budgets: Mapping[str, Allowance], *, notice: Callable[[str], None],
             clock: Callable[[], float] = time.time) -> SharedPacing:
        """Nothing is sent yet: the first request finds out whether Redis answers."""
        assert settings.pacing_url
        link = Link(settings.pacing_url, notice)
        pacer = SharedPacer(link, intervals_for(settings), margin=SAFETY_MARGIN,
                            quiet_period_s=QUIET_PERIOD_S)
        return cls(link, pacer, SharedBudget(link, directory, budgets, clock=clock),
                   Claims(link))

    async def aclose(self) -> None:
        await self.link.aclose()
