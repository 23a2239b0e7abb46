"""Server state outside the workspace: debounce and throttle timers and background tasks.

Handlers mutate the workspace quickly; diagnostics are computed after a debounce that fires
at once for an isolated edit and coalesces bursts (leading and trailing edge). Verification
runs in the background and never blocks a handler.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine

log = logging.getLogger(__name__)


class Timers:
    def __init__(self, debounce_ms: Callable[[], int]) -> None:
        """``debounce_ms`` reads the current setting (it can change at any time)."""
        self._debounce_ms = debounce_ms
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._last_run: dict[str, float] = {}
        self._tasks: set[asyncio.Task] = set()

    def debounce(self, key: str, action: Callable[[], None], delay_ms: int | None = None) -> None:
        """Run ``action`` now if nothing ran for ``key`` within the interval, else once later."""
        loop = asyncio.get_running_loop()
        delay = (self._debounce_ms() if delay_ms is None else delay_ms) / 1000
        now = time.monotonic()
        pending = self._timers.pop(key, None)
        if pending is not None:
            pending.cancel()
        if pending is None and now - self._last_run.get(key, -1e9) >= delay:
            self._last_run[key] = now
            action()
            return

        def fire() -> None:
            self._timers.pop(key, None)
            self._last_run[key] = time.monotonic()
            action()

        self._timers[key] = loop.call_later(delay, fire)

    def throttle(self, key: str, action: Callable[[], None], interval_ms: int) -> None:
        """Run ``action`` now if it last ran at least ``interval_ms`` ago, else once when that
        interval is over; a wait already scheduled is never pushed back."""
        if key in self._timers:
            return
        wait = self._last_run.get(key, -1e9) + interval_ms / 1000 - time.monotonic()
        if wait <= 0:
            self._last_run[key] = time.monotonic()
            action()
            return

        def fire() -> None:
            self._timers.pop(key, None)
            self._last_run[key] = time.monotonic()
            action()

        self._timers[key] = asyncio.get_running_loop().call_later(wait, fire)

    def run_task(self, coro: Coroutine, name: str) -> asyncio.Task:
        """Keep every background task referenced and log its failure (never lose an error)."""
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._tasks.add(task)

        def done(t: asyncio.Task) -> None:
            self._tasks.discard(t)
            if not t.cancelled() and t.exception() is not None:
                log.error("task %s failed", name, exc_info=t.exception())

        task.add_done_callback(done)
        return task
