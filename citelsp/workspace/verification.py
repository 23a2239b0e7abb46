"""Verification state: resolutions by reference identity, the queue of lookups, and whether
the network is worth asking.

The editor asks for references most urgent first (``want``): cached verdicts come at once,
live lookups are queued by how close their citations are to where the writer works, one
resolution per identity. The command line asks for all of them and waits (``verify_now``).
The engine decides everything; this module only schedules it and remembers the answers, so
handlers read ``result_for`` and never await the network.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
import time
import weakref
from collections.abc import Callable, Iterable

from citelsp.config import Settings
from citelsp.documents.model import Reference
from citelsp.resolution.asking import Resolution
from citelsp.resolution.budget import notice as budget_notice
from citelsp.resolution.budget import waits_for
from citelsp.resolution.engine import Engine
from citelsp.resolution.identity import reference_identity
from citelsp.resolution.sources import OPENALEX_KEY_ADVICE, refused_for_want_of_key

log = logging.getLogger(__name__)

WORKERS = 16
SHOW_CACHED_EVERY_S = 1.0
"""How often a pass over cached answers shows the verdicts it has so far."""
TURN_S = 0.015
"""How long a pass over references runs before it lets handlers in (``_Turns``)."""
NEAR_CURSOR = 8
"""Results for the references this close to the front of the queue (the citations nearest
the cursor, an edited entry) are shown at once; the rest at the throttled pace."""
UNREACHABLE_STREAK = 5
"""All-unreachable resolutions in a row after which verification stops going to the network."""
PROBE_FIRST_S = 2.0
PROBE_MAX_S = 60.0
"""While the network is down, whether it is back is tried after ``PROBE_FIRST_S``, then at
twice the interval each time, at most every ``PROBE_MAX_S``: one connection, no request."""
STATUS_DELAY_S = 0.25
"""The status is worked out at most this often (it counts every wanted reference)."""
STATUS_WORDS = {"budget": "budget spent", "outage": "sources unreachable",
                "offline": "offline", "pending": "offline"}
OFFLINE_MESSAGE = "citelsp: offline — showing local checks and cached verdicts only"
NETWORK_DOWN_MESSAGE = ("citelsp: no bibliographic source could be reached — showing local "
                        "checks and cached verdicts only; what was not checked is checked "
                        "when the network is back")
RESULT_LOG_MAX = 100_000
"""Changes the result log keeps (``Results``); a reader further behind than that is told
that anything may have changed."""


class Results(dict[str, Resolution]):
    """Resolutions by identity, with a log of the identities written or removed since any
    ``position``: what is built from them (a document's findings) is built again for those
    alone (``changed_since``). Every way of changing the mapping is logged, so a writer
    outside the verifier (the screening report, a test) cannot leave a stale finding."""

    def __init__(self) -> None:
        super().__init__()
        self._log: list[str] = []
        self._start = 0
        """The position of ``_log[0]``."""
        self._epoch = 0
        """Counts clears: a position from before one says nothing."""

    @property
    def position(self) -> tuple[int, int]:
        """Where the log is now; ``changed_since`` it tells what changes after."""
        return self._epoch, self._start + len(self._log)

    def changed_since(self, position: tuple[int, int] | None) -> list[str] | None:
        """The identities whose resolution changed since ``position`` (repeats possible);
        None when that cannot be told (no position, cleared since, or too far behind)."""
        if position is None or position[0] != self._epoch or position[1] < self._start:
            return None
        return self._log[position[1] - self._start:]

    def _changed(self, identity: str) -> None:
        log = self._log
        log.append(identity)
        if len(log) > RESULT_LOG_MAX:
            half = len(log) // 2
            del log[:half]
            self._start += half

    def __setitem__(self, identity: str, resolution: Resolution) -> None:
        super().__setitem__(identity, resolution)
        self._changed(identity)

    def __delitem__(self, identity: str) -> None:
        super().__delitem__(identity)
        self._changed(identity)

    def pop(self, identity: str, *default):  # type: ignore[override]
        found = super().pop(identity, *default)
        self._changed(identity)
        return found

    def popitem(self) -> tuple[str, Resolution]:
        identity, resolution = super().popitem()
        self._changed(identity)
        return identity, resolution

    def setdefault(self, identity: str, default: Resolution) -> Resolution:  # type: ignore[override]
        if identity not in self:
            self[identity] = default
        return self[identity]

    def update(self, *args, **kwargs) -> None:  # type: ignore[override]
        for identity, resolution in dict(*args, **kwargs).items():
            self[identity] = resolution

    def __ior__(self, other):  # type: ignore[override]
        self.update(other)
        return self

    def clear(self) -> None:
        super().clear()
        self._log = []
        self._start = 0
        self._epoch += 1


class Listener:
    """What verification tells its front end as it goes; every hook may stay a no-op."""

    def results_arrived(self, urgent: bool = False) -> None:
        """New results; ``urgent`` when a pass over cached verdicts is complete and should be
        shown without waiting."""

    def begin(self, total: int) -> None: ...
    def report(self, done: int, total: int) -> None: ...
    def end(self, message: str) -> None: ...

    def notice(self, message: str) -> None:
        """Something the writer should be told once (network down, a key is missing)."""

    def status(self, message: str) -> None:
        """The state of verification in a few words ("offline — 7 references not checked");
        an empty message when there is nothing to say."""


class Verifier:
    def __init__(self, listener: Listener | None = None, *,
                 resolved: Callable[[Reference, Resolution], object] | None = None) -> None:
        """``resolved`` is called with each reference a worker resolved, in that worker's
        turn of the event loop, before the listener hears of it."""
        self.engine: Engine | None = None
        self._results = Results()
        self.listener = listener or Listener()
        self._resolved = resolved
        self._identities: weakref.WeakKeyDictionary[Reference, str] = weakref.WeakKeyDictionary()
        self.named = 0
        """How many references have been given an identity: when it moves, a reference
        shown without a result may have one now (``identity_if_known``)."""
        self._queue: list[tuple[int, int, str, bool]] = []
        self._queued: dict[str, Reference] = {}
        self._refresh: set[str] = set()
        self._running: dict[str, asyncio.Task] = {}
        self._workers: list[asyncio.Task] = []
        self._seq = itertools.count()
        self._done = 0
        self._total = 0
        self.offline = False
        self._want_lock = asyncio.Lock()
        self._passes: set[asyncio.Task] = set()
        self._status = ""
        self._wanted: list[Reference] = []
        self._unreachable_streak = 0
        self._told: set[str] = set()
        self._wanted_ids: dict[str, Reference] = {}
        """The identities of the last ``want``, with one reference each."""
        self._entries: dict[str, int] = {}
        """How many entries share each wanted identity (two copies of one entry)."""
        self._probing: asyncio.Task | None = None
        self._probe_delay = PROBE_FIRST_S
        self._status_timer: asyncio.TimerHandle | None = None
        self._preparing: asyncio.Task | None = None
        """``Engine.prepare`` of the current engine (kept referenced until it is done)."""

    # -- configuration ---------------------------------------------------------------------

    async def configure(self, settings: Settings) -> None:
        """(Re)create the engine for new settings; answers already known stay."""
        if self.engine is not None and self.engine.settings == settings:
            return
        await self.close()
        self._drop_incomplete()
        self._unreachable_streak = 0
        self._probe_delay = PROBE_FIRST_S
        self.offline = settings.offline
        self.engine = Engine(settings, notice=self._tell) if settings.verify else None
        if self.engine is not None:  # a task of its own: configuring does not wait for it
            self._preparing = asyncio.get_running_loop().create_task(self.engine.prepare())
            for note in self.engine.index_notes:
                self._tell(note)
        if settings.offline:
            self._tell(OFFLINE_MESSAGE)

    async def close(self) -> None:
        self.cancel_all()
        if self._probing is not None:
            self._probing.cancel()
            self._probing = None
        if self.engine is not None:
            await self.engine.aclose()
            self.engine = None

    # -- queries ---------------------------------------------------------------------------

    @property
    def results(self) -> Results:
        """Resolutions by identity; changed in place only, so its log stays true."""
        return self._results

    def identity(self, ref: Reference) -> str:
        identity = self._identities.get(ref)
        if identity is None:
            identity = reference_identity(ref)
            self._identities[ref] = identity
            self.named += 1
        return identity

    def identity_if_known(self, ref: Reference) -> str | None:
        """The identity of ``ref`` if one was worked out (never decodes the entry)."""
        return self._identities.get(ref)

    def result_for(self, ref: Reference) -> Resolution | None:
        """The resolution of ``ref``, if ``want`` has seen this reference object.

        Never computes an identity itself (that decodes the entry): publishing a 10,000-entry
        library must not decode it. An edited entry is a new object, so its old verdict is
        gone at once and comes back when the background pass has looked at it.
        """
        identity = self._identities.get(ref)
        return self.results.get(identity) if identity is not None else None

    def pending(self, ref: Reference) -> bool:
        identity = self._identities.get(ref)
        return identity is not None and (identity in self._queued or identity in self._running)

    # -- scheduling ------------------------------------------------------------------------

    async def want(self, refs: Iterable[Reference]) -> None:
        """Make sure every reference (most urgent first) has or gets a resolution.

        Work for identities no longer wanted (a deleted or edited entry) is cancelled.
        """
        self._wanted = refs = list(refs)
        async with self._want_lock:  # one pass at a time; a newer request supersedes
            if refs is self._wanted:
                await self._want(refs)

    async def _want(self, refs: list[Reference]) -> None:
        engine = self.engine
        if engine is None:
            return
        ordered: dict[str, Reference] = {}
        entries: dict[str, set[int]] = {}
        turns = _Turns()
        for ref in refs:
            if turns.due():  # identities decode titles: stay responsive
                await turns.give()
                if self.engine is not engine:
                    return
            identity = self.identity(ref)
            ordered.setdefault(identity, ref)
            entries.setdefault(identity, set()).add(id(ref))
        self._wanted_ids = ordered
        self._entries = {i: len(found) for i, found in entries.items()}
        for identity in [i for i in self._queued if i not in ordered]:
            self._queued.pop(identity, None)
        for identity, task in list(self._running.items()):
            if identity not in ordered:
                task.cancel()
        with engine.cached_pass():  # a library opened for the first time: misses cost nothing
            fresh_cached = await self._cached_pass(engine, ordered)
        if fresh_cached is None:
            return  # reconfigured or shut down meanwhile
        # Most urgent first: the queue follows the order of this request.
        self._queue = [(rank, next(self._seq), identity, identity in self._refresh)
                       for rank, identity in enumerate(i for i in ordered if i in self._queued)]
        self._queue += [(-1, next(self._seq), i, True) for i in self._refresh
                        if i in self._queued and i not in ordered]
        heapq.heapify(self._queue)
        if fresh_cached:
            self.listener.results_arrived(True)  # the cached pass is over: show it now
        self._say_status()
        self._start()

    async def _cached_pass(self, engine: Engine, ordered: dict[str, Reference]) -> bool | None:
        """Answer from the cache what it can, queue the rest; whether cached verdicts came
        in since they were last shown (None when the engine changed meanwhile)."""
        fresh_cached = False
        turns = _Turns()
        started = shown = time.monotonic()
        for n, (identity, ref) in enumerate(ordered.items()):
            if identity in self.results or identity in self._running or identity in self._queued:
                continue  # known: answered (offline: not checked), running or queued
            if turns.due():  # keep handlers and the first lookups moving
                await turns.give()
                if self.engine is not engine:
                    return None
            cached = await engine.from_cache(ref)
            if cached.complete or self.offline:  # offline, an incomplete one says "not checked"
                self.results[identity] = cached
                fresh_cached = True
                now = time.monotonic()
                if _worth_showing(now - shown, now - started, n + 1, len(ordered)):
                    self.listener.results_arrived()  # show cached verdicts as they come
                    shown = now
                    fresh_cached = False
                continue
            self._total += 1
            self._queued[identity] = ref
            if n < NEAR_CURSOR:  # don't keep the nearest ones waiting for the whole pass
                heapq.heappush(self._queue, (n, next(self._seq), identity, False))
                self._start()
        return fresh_cached

    def _status_soon(self) -> None:
        if self._status_timer is None:
            self._status_timer = asyncio.get_running_loop().call_later(
                STATUS_DELAY_S, self._say_status)

    def _say_status(self) -> None:
        """Say how many wanted references are not checked, and why (once per change):
        "offline — 18 references not checked"; nothing when every one was checked."""
        if self._status_timer is not None:
            self._status_timer.cancel()
            self._status_timer = None
        kinds: dict[str, int] = {}
        for identity in self._wanted_ids:
            result = self.results.get(identity)
            if result is not None and (unchecked := self.unchecked(result)) is not None:
                kinds[unchecked] = kinds.get(unchecked, 0) + self._entries.get(identity, 1)
        unchecked = sum(kinds.values())
        if not unchecked:
            status = ""
        else:
            words = STATUS_WORDS[max(kinds, key=kinds.__getitem__)]
            if self._probing is not None and not self._probing.done():
                words += ", retrying"
            status = f"{words} — {unchecked} reference{'s' if unchecked != 1 else ''} not checked"
        if status != self._status:
            self._status = status
            self.listener.status(status)

    @staticmethod
    def unchecked(resolution: Resolution) -> str | None:
        """Why ``resolution`` leaves its reference not checked (offline, outage, budget), if
        it does."""
        found = resolution.unchecked
        if found is not None:
            return found.kind
        return None if resolution.complete else "offline"

    async def verify_now(self, refs: Iterable[Reference], *, refresh: bool = False) -> None:
        """Resolve every reference and wait (the command line): offline, from cached answers
        alone; progress reported as each finishes."""
        engine = self.engine
        if engine is None:
            return
        ordered: dict[str, Reference] = {}
        for ref in refs:
            ordered.setdefault(self.identity(ref), ref)
        todo = [(i, r) for i, r in ordered.items() if refresh or i not in self.results]
        if not todo:
            return
        if not self.offline and (why := await engine.probe()) is not None:
            self.offline = True
            self._tell(f"citelsp: the network is down ({why}) — offline: local checks and "
                       "cached answers only")
        if self.offline:
            with engine.cached_pass():
                resolutions = [await engine.from_cache(r) for _, r in todo]
        else:
            self.listener.begin(len(todo))
            resolutions = await engine.resolve_all([r for _, r in todo], refresh=refresh,
                                                   on_done=self.listener.report)
        for (identity, _), resolution in zip(todo, resolutions, strict=True):
            self.results[identity] = resolution
            self._watch_key(resolution)
        self.listener.end(f"Verified {len(todo)} references")

    def reverify(self, refs: Iterable[Reference]) -> bool:
        """Resolve these again now, bypassing the cache (not while offline); each shows its
        verdict until the new one comes, and keeps it if no source can be reached. Whether
        they were queued: offline mode says why not, every time it is asked."""
        if self.engine is None or self.offline:
            if self.engine is not None and self.engine.settings.offline:
                self.listener.notice("citelsp: offline mode is on (citelsp.offline): nothing "
                                     "is looked up until it is off")
            return False
        for ref in refs:
            identity = self.identity(ref)
            if identity in self._running:
                self._running[identity].cancel()
            if identity not in self._queued:
                self._total += 1
            self._queued[identity] = ref
            self._refresh.add(identity)
            heapq.heappush(self._queue, (0, next(self._seq), identity, True))
        self.listener.results_arrived()
        self._start()
        return True

    def cancel_all(self, why: str = "Cancelled") -> None:
        self._queue.clear()
        self._queued.clear()
        for task in self._running.values():
            task.cancel()
        self._running.clear()  # not left for the workers to do: a pass may follow at once
        for worker in self._workers:
            worker.cancel()
        self._workers.clear()
        if self._total:
            self.listener.end(f"{why} after {self._done}/{self._total}")
        self._done = self._total = 0

    def go_offline(self) -> None:
        """Stop going to the network (it is down): what was queued is answered from the cache
        and shown as not checked where the cache has nothing, and whether the network is
        back is tried now and then (``PROBE_FIRST_S``)."""
        self.offline = True
        self.cancel_all("Offline: no source reachable")
        if self._wanted:
            task = asyncio.get_running_loop().create_task(self.want(self._wanted))
            self._passes.add(task)
            task.add_done_callback(self._passes.discard)
        self._probe_soon()
        self._status_soon()

    def _probe_soon(self) -> None:
        """Find out, backing off, when the network is back (``_probe``), unless offline by
        choice or already at it."""
        if self.engine is None or self.engine.settings.offline:
            return
        if self._probing is None or self._probing.done():
            self._probing = asyncio.get_running_loop().create_task(self._probe(self.engine))

    async def _probe(self, engine: Engine) -> None:
        """Try to connect after ``_probe_delay``, twice as long each time; once a connection
        opens, check again what could not be checked (``back_online``)."""
        while self.engine is engine:
            await asyncio.sleep(self._probe_delay)
            self._probe_delay = min(self._probe_delay * 2, PROBE_MAX_S)
            if self.engine is engine and await engine.probe() is None:
                log.info("the network is back: checking again what was not checked")
                self._probing = None
                self.back_online()
                return

    def back_online(self) -> None:
        """Go to the network again (it is back, or a re-verify asks): the wanted references
        that could not be checked are looked up, and show what they showed until their new
        verdict comes."""
        if self.engine is None or self.engine.settings.offline:
            return
        self.offline = False
        self._unreachable_streak = 0
        again = [(i, ref) for i, ref in self._wanted_ids.items()
                 if (r := self.results.get(i)) is not None and r.wants_network
                 and i not in self._queued and i not in self._running]
        for rank, (identity, ref) in enumerate(again):
            self._total += 1
            self._queued[identity] = ref
            heapq.heappush(self._queue, (rank, next(self._seq), identity, False))
        self._start()
        self._say_status()

    def _drop_incomplete(self) -> None:
        for identity in [i for i, r in self.results.items() if r.wants_network]:
            del self.results[identity]

    def _watch(self, resolution: Resolution) -> None:
        """After a live result: say once when OpenAlex wants a key, and stop going to the
        network after ``UNREACHABLE_STREAK`` resolutions in a row that reached no source."""
        if self.engine is None or self.offline:
            return
        outcomes = resolution.outcomes.values()
        self._watch_key(resolution)
        if all(o.status in ("unreachable", "skipped") for o in outcomes) and any(
                o.status == "unreachable" for o in outcomes):
            self._unreachable_streak += 1
            self._status_soon()
            if self.unchecked(resolution) == "outage":  # not a spent budget: retry later
                self._probe_soon()
        else:
            self._unreachable_streak = 0
            self._probe_delay = PROBE_FIRST_S  # a source answered: the network works
        if self._unreachable_streak >= UNREACHABLE_STREAK:
            self.go_offline()
            self._tell(NETWORK_DOWN_MESSAGE)

    def _watch_key(self, resolution: Resolution) -> None:
        if self.engine is not None and refused_for_want_of_key(resolution.outcomes,
                                                               self.engine.settings):
            self._tell(f"citelsp: {OPENALEX_KEY_ADVICE}")
        spent = waits_for(resolution.outcomes.values())
        if spent is not None:
            self._tell(budget_notice(spent))

    def _tell(self, message: str) -> None:
        if message not in self._told:
            self._told.add(message)
            self.listener.notice(message)

    def forget(self) -> None:
        """Drop every remembered answer (after the cache is cleared)."""
        self.results.clear()

    # -- workers ---------------------------------------------------------------------------

    def _start(self) -> None:
        self._workers = [w for w in self._workers if not w.done()]
        if not self._queued:
            return
        if not self._workers and self._total:
            self.listener.begin(self._total)
        while len(self._workers) < min(WORKERS, len(self._queued)):
            self._workers.append(asyncio.get_running_loop().create_task(self._work()))

    def _next(self) -> tuple[str, Reference, bool, bool] | None:
        """The most urgent queued reference: (identity, reference, refresh, near the
        cursor)."""
        while self._queue:
            rank, _seq, identity, refresh = heapq.heappop(self._queue)
            ref = self._queued.pop(identity, None)
            if ref is not None:
                return identity, ref, refresh or identity in self._refresh, rank < NEAR_CURSOR
        return None

    async def _work(self) -> None:
        while (job := self._next()) is not None:
            identity, ref, refresh, near = job
            self._refresh.discard(identity)
            engine = self.engine
            if engine is None:
                return
            task = asyncio.ensure_future(engine.resolve(ref, refresh=refresh))
            self._running[identity] = task
            try:
                live = resolution = await task
                known = self.results.get(identity)
                if live.wants_network and known is not None and not known.wants_network:
                    resolution = known  # a re-verify that reached no source: the verdict stays
                self.results[identity] = resolution
            except asyncio.CancelledError:
                if asyncio.current_task().cancelling():
                    raise
                continue
            except Exception:
                log.exception("verification of %s failed", ref.key)
                continue
            finally:
                if self._running.get(identity) is task:
                    del self._running[identity]
            self._done += 1
            if self._resolved is not None:
                try:
                    self._resolved(ref, resolution)
                except Exception:  # shown (or its failure) when the reference is published
                    log.exception("after verifying %s", ref.key)
            self.listener.report(self._done, self._total)
            self.listener.results_arrived(urgent=near)  # where the writer looks: show it now
            self._watch(live)
            if self._status:  # a reference not checked before may be now
                self._status_soon()
        if not self._running and not self._queued and self._total:
            self.listener.end(f"Verified {self._done} references")
            self._done = self._total = 0


class _Turns:
    """Lets the event loop in after every ``TURN_S`` of a long pass over references, so a
    hover never waits longer behind it (however long each reference takes)."""

    def __init__(self) -> None:
        self._until = time.monotonic() + TURN_S

    def due(self) -> bool:
        return time.monotonic() >= self._until

    async def give(self) -> None:
        await asyncio.sleep(0)
        self._until = time.monotonic() + TURN_S


def _worth_showing(since_shown: float, elapsed: float, done: int, total: int) -> bool:
    """Whether a long pass over cached answers should show its verdicts so far: at most
    every ``SHOW_CACHED_EVERY_S``, and not when the rest should take less than half that.
    Each showing re-judges and re-sends the documents, and the server holds back a showing
    that follows another too closely, so one just before the end would delay the last."""
    if since_shown < SHOW_CACHED_EVERY_S:
        return False
    return elapsed / done * (total - done) >= SHOW_CACHED_EVERY_S / 2
