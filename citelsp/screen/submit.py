"""``citelsp screen submit``: record each submission's references and queue each work once.

Works are queued after the references are committed, and marked queued after the messages
are sent: a submit interrupted in between is completed by running it again (at worst a
work is queued twice, and its second job finds the results stored).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

from citelsp.config import Settings
from citelsp.screen import queue, store
from citelsp.screen.submissions import open_submission, submissions_in, wanted
from citelsp.screen.works import portable, work_key


@dataclass
class Submitted:
    submissions: int = 0
    references: int = 0
    new_references: int = 0
    queued_works: int = 0
    errors: list[str] = field(default_factory=list)


def submit(folder: Path, settings: Settings, conn: psycopg.Connection,
           queue_broker: queue.RedisBroker,
           progress: Callable[[int, int], None] | None = None) -> Submitted:
    """Read every submission in ``folder`` and record it; queue the works not yet queued."""
    done = Submitted()
    paths = submissions_in(folder)
    for n, path in enumerate(paths):
        workspace, errors = open_submission(path, settings)
        done.errors += errors
        if workspace is not None:
            cited = [store.Cited(identity, work_key(ref), portable(ref))
                     for identity, ref in wanted(workspace).items()]
            done.new_references += store.record_submission(conn, str(path), cited)
            done.references += len(cited)
            done.submissions += 1
        if progress is not None:
            progress(n + 1, len(paths))
    done.queued_works = queue_pending(conn, queue_broker)
    return done


def queue_pending(conn: psycopg.Connection, queue_broker: queue.RedisBroker) -> int:
    """Queue every work with a reference that has neither a result nor a job; how many."""
    works = store.unqueued_works(conn)
    queue.enqueue(queue_broker, works)
    store.mark_queued(conn, works)
    return len(works)
