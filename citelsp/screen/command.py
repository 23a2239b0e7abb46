"""``citelsp screen submit|worker|status|report``: the command line of a distributed screening.

Where things live: ``--db`` (else ``CITELSP_SCREEN_DB``, else the team's ``CITELSP_CACHE_URL``)
names the PostgreSQL database; ``--queue`` (else ``CITELSP_QUEUE_URL``, else the team's
``CITELSP_PACING_URL``) the Redis of the queue.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from pathlib import Path

from citelsp.uris import shown_url

EXIT_OK, EXIT_USAGE, EXIT_INCOMPLETE = 0, 2, 3

EPILOG = """\
A conference's submissions, each a subfolder (or a manuscript directly in FOLDER), checked
by workers on any number of machines; each distinct work is verified once for all of them.

  citelsp screen submit submissions/          record them, queue each work once
  citelsp screen worker                       on every machine (Ctrl-C stops it gracefully)
  citelsp screen status                       works verified and pending, per submission
  citelsp screen report --csv summary.csv     the summary of 'check --summary-csv'
  citelsp screen retry                        ask again what no source answered for

PostgreSQL: --db, else CITELSP_SCREEN_DB, else CITELSP_CACHE_URL.
Redis (the queue): --queue, else CITELSP_QUEUE_URL, else CITELSP_PACING_URL.
A worker that is killed loses nothing: its jobs go to the other workers (or to it, restarted)
once it has been silent for --dead-after seconds. Install with: pip install 'citelsp[team]'"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    formatter = argparse.RawDescriptionHelpFormatter
    screen = sub.add_parser(
        "screen", help="screen many submissions with workers on several machines",
        formatter_class=formatter, epilog=EPILOG,
        description="Screen many submissions: references recorded in PostgreSQL, each "
                    "distinct work verified once\nby workers taking jobs from a queue in Redis.")
    actions = screen.add_subparsers(dest="action", metavar="ACTION", required=True)
    submit = actions.add_parser("submit", help="record the submissions of FOLDER, queue works",
                                description="Record every submission of FOLDER (each "
                                            "subfolder or manuscript) and queue each work not "
                                            "yet verified, once. Running it again is safe.")
    submit.add_argument("folder", type=Path, metavar="FOLDER")
    worker = actions.add_parser("worker", help="verify queued works until stopped",
                                description="Take jobs from the queue and verify them with the "
                                            "usual settings (cache, pacing, keys, index).")
    worker.add_argument("--threads", type=int, default=16, metavar="N",
                        help="jobs verified at once (default 16)")
    worker.add_argument("--dead-after", type=float, default=60.0, metavar="SECONDS",
                        help="a worker silent this long is taken for dead and its jobs are "
                             "taken over (default 60)")
    worker.add_argument("--outage-retries", type=int, default=3, metavar="N",
                        help="tries more for a work no source could be reached for, 10 s, "
                             "20 s, 40 s… apart, before it is stored as not checked "
                             "(default 3)")
    worker.add_argument("--until-done", action="store_true",
                        help="exit once every submitted reference is verified")
    worker.add_argument("-q", "--quiet", action="store_true", help="log warnings only")
    actions.add_parser("status", help="works verified and pending, per submission")
    report = actions.add_parser("report", help="write the per-manuscript summary",
                                description="The per-manuscript summary of 'citelsp check "
                                            "--summary-csv/--summary-json', from the stored "
                                            "results (exit 3 while references are pending).")
    report.add_argument("--csv", type=Path, metavar="FILE", help="write it as CSV")
    report.add_argument("--json", type=Path, metavar="FILE", help="write it as JSON")
    retry = actions.add_parser("retry", help="queue again what no source answered for",
                               description="Forget the results of references no source could "
                                           "be reached for (an outage, a spent budget) and "
                                           "queue their works again.")
    for one in (submit, worker, report, retry, actions.choices["status"]):
        one.add_argument("--db", metavar="URL", help="the PostgreSQL database (postgresql://…)")
    for one in (submit, worker, retry):
        one.add_argument("--queue", metavar="URL", help="the Redis of the queue (redis://…)")


def run(ns: argparse.Namespace) -> int:
    try:
        from citelsp.screen import queue, store  # noqa: F401 (what the team extra brings)
    except ImportError as exc:
        return _usage(f"screening needs the team extra ({exc.name} is missing): "
                      "pip install 'citelsp[team]'")
    db = ns.db or os.environ.get("CITELSP_SCREEN_DB") or os.environ.get("CITELSP_CACHE_URL")
    if not db:
        return _usage("no database: give --db postgresql://… (or CITELSP_SCREEN_DB)")
    queue_url = getattr(ns, "queue", None) or os.environ.get("CITELSP_QUEUE_URL") \
        or os.environ.get("CITELSP_PACING_URL")
    if ns.action in ("submit", "worker", "retry") and not queue_url:
        return _usage("no queue: give --queue redis://… (or CITELSP_QUEUE_URL)")
    try:
        conn = store.connect(db)
    except store.StoreError as exc:
        return _usage(str(exc))
    with conn:
        if ns.action == "submit":
            return _submit(ns, conn, queue_url)
        if ns.action == "worker":
            return _worker(ns, conn, db, queue_url)
        if ns.action == "status":
            return _status(conn, queue_url)
        if ns.action == "retry":
            return _retry(conn, queue_url)
        return _report(ns, conn)


def _settings():
    from citelsp.config import Settings

    settings = Settings.from_options({}, os.environ)
    for message in settings.refused:
        print(message, file=sys.stderr)
    return settings


def _submit(ns: argparse.Namespace, conn, queue_url: str) -> int:
    import redis

    from citelsp.screen import queue
    from citelsp.screen.submit import submit

    if not ns.folder.is_dir():
        return _usage(f"{ns.folder}: not a folder")
    bar = None
    if sys.stderr.isatty():  # thousands of submissions take a while to read
        from tqdm import tqdm

        bar = tqdm(desc="Reading submissions", unit=" submissions", file=sys.stderr)

    def progress(done: int, total: int) -> None:
        if bar is not None:
            bar.total = total
            bar.update(done - bar.n)

    try:
        done = submit(ns.folder, _settings(), conn, queue.broker(queue_url), progress)
    except redis.RedisError as exc:
        return _usage(f"the queue at {shown_url(queue_url)} cannot be used: {exc}")
    finally:
        if bar is not None:
            bar.close()
    for error in done.errors:
        print(f"citelsp: {error}", file=sys.stderr)
    print(f"submitted: {done.submissions} submission{_s(done.submissions)}, {done.references} "
          f"reference{_s(done.references)} ({done.new_references} new), {done.queued_works} "
          f"work{_s(done.queued_works)} queued")
    return EXIT_USAGE if done.errors else EXIT_OK


def _worker(ns: argparse.Namespace, conn, db: str, queue_url: str) -> int:
    import redis

    from citelsp.screen import queue
    from citelsp.screen.worker import Verifying

    logging.basicConfig(level=logging.WARNING if ns.quiet else logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(name)s: %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # a line per request is too many
    if ns.threads < 1 or ns.dead_after <= 0 or ns.outage_retries < 0:
        return _usage("--threads and --dead-after must be positive, --outage-retries not "
                      "negative")
    job = Verifying(_settings(), db)
    queue_broker = queue.broker(queue_url, dead_after_s=ns.dead_after)
    try:
        queue_broker.client.ping()
    except redis.RedisError as exc:
        return _usage(f"the queue at {shown_url(queue_url)} cannot be used: {exc}")
    queue.declare(queue_broker, queue.Job(job.verify, job.close),
                  outage_retries=ns.outage_retries)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    queue.run(queue_broker, threads=ns.threads, stop=stop,
              done=_AllVerified(db) if ns.until_done else None)
    return EXIT_OK


class _AllVerified:
    """Whether every submitted reference has a stored resolution (``--until-done``); False
    while the database cannot say (restarting, say), which the next poll asks again."""

    def __init__(self, db: str) -> None:
        self.db = db

    def __call__(self) -> bool:
        from citelsp.screen import store

        try:
            with store.connect(self.db, schema=False) as conn:
                return store.pending_count(conn) == 0
        except store.StoreError:
            return False


def _status(conn, queue_url: str | None) -> int:
    from citelsp.screen import queue, store

    works, verified = store.work_counts(conn)
    print(f"works: {verified} verified, {works - verified} pending (of {works})")
    unchecked = store.unchecked_counts(conn)
    if unchecked:
        why = ", ".join(f"{n} {kind}" for kind, n in unchecked.items())
        print(f"not checked: {sum(unchecked.values())} reference(s) no source answered for "
              f"({why}); 'citelsp screen retry' asks again")
    if queue_url:
        try:
            print(f"queue: {queue.queued(queue.broker(queue_url))} job(s) waiting")
        except Exception as exc:  # the queue is optional here; say why it is not shown
            print(f"queue: cannot be read ({type(exc).__name__})")
    rows = store.progress(conn)
    if rows:
        width = max(len(_shown(r.path)) for r in rows)
        print(f"{'submission':<{width}}  references  verified  pending")
        for r in rows:
            print(f"{_shown(r.path):<{width}}  {r.references:>10}  {r.verified:>8}  "
                  f"{r.pending:>7}")
    return EXIT_OK


def _retry(conn, queue_url: str) -> int:
    import redis

    from citelsp.screen import queue, store
    from citelsp.screen.submit import queue_pending

    forgotten = store.forget_unchecked(conn)
    try:
        queued = queue_pending(conn, queue.broker(queue_url))
    except redis.RedisError as exc:
        return _usage(f"the queue at {shown_url(queue_url)} cannot be used: {exc} (run "
                      "'citelsp screen retry' again)")
    print(f"retry: {forgotten} reference{_s(forgotten)} not checked, {queued} "
          f"work{_s(queued)} queued")
    return EXIT_OK


def _report(ns: argparse.Namespace, conn) -> int:
    from citelsp.reports.screening import csv_text, json_text
    from citelsp.screen.report import report

    done = report(conn, _settings())
    errors = list(done.errors)
    outputs = [(ns.csv, csv_text), (ns.json, json_text)]
    if ns.csv is None and ns.json is None:
        sys.stdout.write(csv_text(done.rows))
    for path, render in outputs:
        if path is not None:
            try:
                path.write_text(render(done.rows), encoding="utf-8")
            except OSError as exc:
                errors.append(f"{path}: {exc.strerror}")
    for error in errors:
        print(f"citelsp: {error}", file=sys.stderr)
    if errors:
        return EXIT_USAGE
    if done.not_verified:
        print(f"citelsp: {done.not_verified} reference{_s(done.not_verified)} not verified "
              "yet, reported as not checked (see 'citelsp screen status')", file=sys.stderr)
        return EXIT_INCOMPLETE
    return EXIT_OK


def _usage(message: str) -> int:
    print(f"citelsp: {message}", file=sys.stderr)
    return EXIT_USAGE


def _s(n: int) -> str:
    return "" if n == 1 else "s"


def _shown(path: str) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:
        return path


