"""The screening's jobs on Dramatiq's Redis broker: one message per work, acknowledged only
after its resolutions are committed.

Why Dramatiq: its Redis broker moves a message being worked on to the worker's own
acknowledgement set and removes it only when the actor returns, and every worker's fetches
put back the unacknowledged messages of a worker whose heartbeat stopped (killed, machine
lost) once ``dead_after`` has passed, however long a job takes while its worker lives. RQ
loses the job of a SIGKILLed worker unless something else recovers it; arq redelivers only
after a job's timeout, which then also caps how long a slow, paced job may run.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import dramatiq
from dramatiq.brokers.redis import MAINTENANCE_SCALE, RedisBroker
from dramatiq.middleware import AsyncIO, CurrentMessage, Middleware
from dramatiq.middleware.asyncio import get_event_loop_thread

QUEUE = "citelsp-screen"
ACTOR = "verify_work"
NAMESPACE = "citelsp"
DEAD_AFTER_S = 60.0
"""A worker silent this long is taken for dead, and its jobs go to the others."""
OUTAGE_RETRIES = 3
"""Tries more for a work no source could be reached for, before its "not checked" is
stored (10 s, 20 s, 40 s later): an outage is reported, never waited for forever."""
TIME_LIMIT_MS = 3_600_000
"""A job's longest run: pacing under many workers can make one wait, never for an hour."""

log = logging.getLogger(__name__)


class SourcesUnreachable(dramatiq.Retry):
    """No source could be reached for some references of the work: try it again later (a
    ``Retry``: the worker says so in a line of its own, Dramatiq logs no traceback)."""


class StoreUnavailable(dramatiq.Retry):
    """The database could not be used: the job is tried again until it can."""


def broker(url: str, *, dead_after_s: float = DEAD_AFTER_S) -> RedisBroker:
    """Dramatiq's Redis broker at ``url``. Every fetch also looks for dead workers' messages
    (``maintenance_chance``: Dramatiq's default looks on one fetch in a thousand, which an
    idle queue reaches after many minutes; a screening's few workers can afford every one)."""
    found = RedisBroker(url=url, namespace=NAMESPACE, maintenance_chance=MAINTENANCE_SCALE,
                        heartbeat_timeout=int(dead_after_s * 1000))
    found.add_middleware(CurrentMessage())
    found.add_middleware(AsyncIO())
    return found


def enqueue(queue_broker: RedisBroker, works: list[str]) -> None:
    """One message per work (the worker looks up what it cites)."""
    queue_broker.declare_queue(QUEUE)
    for work in works:
        queue_broker.enqueue(dramatiq.Message(queue_name=QUEUE, actor_name=ACTOR, args=(work,),
                                              kwargs={}, options={}))


def queued(queue_broker: RedisBroker) -> int:
    """Messages waiting in the queue (not those a worker holds)."""
    return queue_broker.client.llen(f"{NAMESPACE}:{QUEUE}")


@dataclass
class Job:
    """What the worker's actor calls: ``verify(work, last_try)`` on the event loop."""

    verify: Callable
    close: Callable


def declare(queue_broker: RedisBroker, job: Job, *,
            outage_retries: int = OUTAGE_RETRIES) -> dramatiq.Actor:
    """The actor that runs ``job.verify`` for each message, retried while the database is
    unavailable and ``outage_retries`` times while no source answers."""

    def verify_work(work: str) -> None:
        message = CurrentMessage.get_current_message()
        retries = message.options.get("retries", 0) if message is not None else 0
        get_event_loop_thread().run_coroutine(job.verify(work, retries >= outage_retries))

    def retry_when(retries: int, exc: BaseException) -> bool:
        return isinstance(exc, StoreUnavailable) or (
            isinstance(exc, SourcesUnreachable) and retries < outage_retries)

    queue_broker.add_middleware(_Closing(job), after=AsyncIO)  # after hooks run in reverse
    return dramatiq.actor(verify_work, broker=queue_broker, actor_name=ACTOR, queue_name=QUEUE,
                          retry_when=retry_when, min_backoff=10_000, max_backoff=300_000,
                          time_limit=TIME_LIMIT_MS)


class _Closing(Middleware):
    """Closes the job's engine on the event loop after the last job, before the loop stops."""

    def __init__(self, job: Job) -> None:
        self.job = job

    def after_worker_shutdown(self, broker: RedisBroker, worker: dramatiq.Worker) -> None:
        try:
            get_event_loop_thread().run_coroutine(self.job.close())
        except Exception:  # shutting down: say it, and go on
            log.exception("closing the verification engine failed")


def run(queue_broker: RedisBroker, *, threads: int, stop: threading.Event,
        done: Callable[[], bool] | None = None, poll_s: float = 1.0) -> None:
    """Work until ``stop`` is set, or ``done()`` says nothing is left; then stop gracefully:
    jobs in progress finish and are acknowledged, messages fetched ahead go back."""
    worker = dramatiq.Worker(queue_broker, worker_threads=threads, worker_timeout=1000)
    worker.start()
    log.info("ready: %d thread%s taking works from the queue", threads, "" if threads == 1 else "s")
    try:
        while not stop.wait(poll_s):
            if done is not None and done():
                break
    finally:
        started = time.monotonic()
        worker.stop()
        log.info("worker stopped in %.1f s", time.monotonic() - started)
