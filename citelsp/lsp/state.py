"""Server state: the corpus, settings, debounced work, background tasks and verification.

Handlers mutate the corpus quickly; diagnostics are computed after a debounce that fires at
once for an isolated edit and coalesces bursts (leading and trailing edge). Verification runs
in the background and never blocks a handler.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine
from pathlib import Path

from citelsp.checks import problems_for
from citelsp.config import Settings
from citelsp.documents.model import Problem
from citelsp.documents.project import Corpus
from citelsp.lsp.findings import Findings
from citelsp.lsp.verification import Progress, Scheduler

log = logging.getLogger(__name__)


class ServerState:
    def __init__(self, on_results: Callable[..., None], progress: Progress | None = None,
                 settings: Settings | None = None) -> None:
        self.settings = settings or Settings()
        self.corpus = Corpus(self.settings)
        self.scheduler = Scheduler(on_results, progress)
        self.findings = Findings(self.scheduler, None)
        self.focus: tuple[str, int] | None = None
        """Where the writer last worked (uri, offset): references cited nearby go first."""
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._last_run: dict[str, float] = {}
        self._tasks: set[asyncio.Task] = set()
        self._local: dict[str, tuple[int, list[Problem]]] = {}

    def local_problems(self, uri: str) -> list[Problem]:
        """Local findings of one document, recomputed only when the corpus changed."""
        memo = self._local.get(uri)
        if memo is not None and memo[0] == self.corpus.generation:
            return memo[1]
        problems = problems_for(self.corpus, uri)
        self._local[uri] = (self.corpus.generation, problems)
        return problems

    @property
    def root(self) -> Path:
        return self.corpus.roots[0] if self.corpus.roots else Path.cwd()

    def set_roots(self, roots: list[Path]) -> None:
        self.corpus.roots = roots
        self.corpus.invalidate_disk()
        self.findings.set_root(self.root)

    def apply_settings(self, settings: Settings) -> None:
        self.settings = settings
        self.corpus.settings = settings
        self.corpus.invalidate_disk()

    def debounce(self, key: str, action: Callable[[], None], delay_ms: int | None = None) -> None:
        """Run ``action`` now if nothing ran for ``key`` within the interval, else once later."""
        loop = asyncio.get_running_loop()
        delay = (self.settings.debounce_ms if delay_ms is None else delay_ms) / 1000
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
