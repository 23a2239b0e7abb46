"""Gathering concurrent lookups into batch requests, in the order they were asked.

Callers ask for one key each (a DOI, an arXiv id, a prefix) and wait for its answer. The
``Batcher`` collects the keys asked within a short window, or until a batch is full, reserves
the origin's next paced slot (keys keep joining while it waits; the request sent after holds
the reservation), and sends them in one request. Keys leave in the order they were asked, so
the references the scheduler asks for first (those nearest the cursor) are in the first
batch. One key alone goes to the single-lookup endpoint; a key a batch cannot carry
(``batchable``) goes alone too; a failed batch (anything but a mapping with every key: an
outage, a refusal, an answer that is not one per key) falls back to single lookups, so a
batch never makes an answer worse than asking one by one would.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Hashable, Mapping
from typing import Generic, TypeVar

log = logging.getLogger(__name__)

K = TypeVar("K", bound=Hashable)
A = TypeVar("A")

WINDOW_S = 0.02
"""How long the first key of a batch waits for others; short enough not to be felt."""


class Batcher(Generic[K, A]):
    """One source's batched lookup of one kind of key."""

    def __init__(
        self,
        *,
        size: int,
        ask_many: Callable[[list[K]], Awaitable[Mapping[K, A] | object]],
        ask_one: Callable[[K], Awaitable[A]],
        reserve: Callable[[bool], Awaitable[None]] | None = None,
        batchable: Callable[[K], bool] = lambda _key: True,
        window_s: float = WINDOW_S,
        conflicts: Callable[[K], Hashable] | None = None,
    ) -> None:
        """``reserve(several)`` returns once the origin's next paced slot is held for the
        request this task sends next: a list request's slot when several keys wait, a single
        record's when one does (a lone key is asked with ``ask_one``, in its own lane);
        ``conflicts`` names keys that may not share a batch (two versions of one arXiv id)."""
        self.size = max(1, size)
        self._ask_many = ask_many
        self._ask_one = ask_one
        self._reserve = reserve
        self._batchable = batchable
        self._window = window_s
        self._conflicts = conflicts
        self._pending: dict[K, asyncio.Future[A]] = {}
        self._full = asyncio.Event()
        self._flusher: asyncio.Task | None = None
        self._tasks: set[asyncio.Task] = set()
        self.batches_sent = 0

    async def ask(self, key: K) -> A:
        """The answer for ``key``; concurrent callers of one key share one lookup."""
        future = self._pending.get(key)
        if future is None:
            future = asyncio.get_running_loop().create_future()
            if not self._batchable(key):
                self._spawn(self._one(key, future))
                return await asyncio.shield(future)
            self._pending[key] = future
            if len(self._pending) >= self.size:
                self._full.set()
            if self._flusher is None or self._flusher.done():
                self._flusher = self._spawn(self._flush())
        return await asyncio.shield(future)

    def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        for future in self._pending.values():
            future.cancel()
        self._pending.clear()

    def _spawn(self, coroutine: Awaitable[None]) -> asyncio.Task:
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _flush(self) -> None:
        """Send batches while keys wait: each after the window (or once full) and once the
        origin is free, carrying the oldest keys."""
        while self._pending:
            if len(self._pending) < self.size:
                self._full.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._full.wait(), self._window)
            if self._reserve is not None:
                await self._reserve(len(self._pending) > 1)
            batch = self._take()
            if batch:
                self._spawn(self._send(batch))
                await asyncio.sleep(0)  # let the send reserve its pacing slot first

    def _take(self) -> dict[K, asyncio.Future[A]]:
        batch: dict[K, asyncio.Future[A]] = {}
        seen: set[Hashable] = set()
        for key in list(self._pending):
            if len(batch) == self.size:
                break
            group = self._conflicts(key) if self._conflicts is not None else key
            if group in seen:
                continue
            seen.add(group)
            batch[key] = self._pending.pop(key)
        return batch

    async def _send(self, batch: dict[K, asyncio.Future[A]]) -> None:
        keys = list(batch)
        try:
            if len(keys) == 1:
                _settle(batch[keys[0]], await self._ask_one(keys[0]))
                return
            self.batches_sent += 1
            answers = await self._ask_many(keys)
            if not isinstance(answers, Mapping) or any(k not in answers for k in keys):
                why = getattr(answers, "reason", None) or getattr(answers, "detail", "incomplete")
                log.debug("batch of %d failed (%s): asking one by one", len(keys), why)
                await asyncio.gather(*(self._one(k, batch[k]) for k in keys))
                return
            for key in keys:
                _settle(batch[key], answers[key])
        except asyncio.CancelledError:
            for future in batch.values():
                future.cancel()
            raise
        except Exception as exc:  # a client bug must not leave callers waiting forever
            for future in batch.values():
                if not future.done():
                    future.set_exception(exc)

    async def _one(self, key: K, future: asyncio.Future[A]) -> None:
        try:
            _settle(future, await self._ask_one(key))
        except asyncio.CancelledError:
            future.cancel()
            raise
        except Exception as exc:
            if not future.done():
                future.set_exception(exc)


def _settle(future: asyncio.Future, answer: object) -> None:
    if not future.done():
        future.set_result(answer)
