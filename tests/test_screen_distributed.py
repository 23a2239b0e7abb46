"""``citelsp screen``: submissions recorded in a real PostgreSQL, one job per distinct work on a
real Redis (Dramatiq), workers in subprocesses against the loopback API server.

Each distinct work is asked for once across all submissions; the report is the summary a
one-process ``citelsp check --summary-csv`` writes; a worker killed with SIGKILL mid-batch
loses nothing and duplicates nothing once a worker runs again; nor does a PostgreSQL that
stops mid-run and comes back.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import psycopg
import pytest

from citelsp.screen import queue
from tests.apiserver import PREFIXES, ApiServer
from tests.test_check_e2e import BIB, ROOT, run_cli, start_server

ENTRIES = {e.split("{", 1)[1].split(",", 1)[0]: "@" + e for e in BIB.split("@")[1:]}
VARIANT = ENTRIES["real"].replace("{real,", "{bran,").replace("{2024}", "{2023}")
"""The work of ``real`` cited with another year: another reference identity, the same work
(one job resolves both, the DOI asked once)."""
PAPERS = {
    "paper0": ["real", "nodoi", "otherwork"],
    "paper1": ["real", "zenodo", "retracted", "bran"],
    "paper2": ["real", "nodoi", "titleonly", "conflict"],
    "paper3": ["otherwork", "zenodo", "invented", "arxivdoi"],
    "paper4": ["real", "retracted", "invented", "generic", "manual"],
}
DOIS = ("10.1038/s42256-024-00832-8", "10.1371/notarealdoi", "10.1016/j.addr.2015.01.008",
        "10.5281/zenodo.1001813", "10.1063/1.4938384")


def make_submissions(root: Path) -> Path:
    folder = root / "submissions"
    for name, keys in PAPERS.items():
        paper = folder / name
        paper.mkdir(parents=True)
        (paper / "refs.bib").write_text("".join(VARIANT if k == "bran" else ENTRIES[k]
                                                for k in keys))
        cites = "; ".join(f"@{k}" for k in keys)
        (paper / "paper.md").write_text(f"---\nbibliography: refs.bib\n---\nAs shown [{cites}].\n")
    return folder


def screen(server: ApiServer, *args: str, db: str, queue: str, cwd: Path,
           cache_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {"CITELSP_SCREEN_DB": db, "CITELSP_QUEUE_URL": queue}
    return run_cli(server, "screen", *args, cache_dir=cache_dir, cwd=cwd, env=env)


def start_worker(server: ApiServer, *args: str, db: str, queue: str, cwd: Path,
                 cache_dir: Path) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CITELSP_")}
    env.update(server.env(), CITELSP_CACHE_DIR=str(cache_dir), PYTHONPATH=str(ROOT),
               CITELSP_SCREEN_DB=db, CITELSP_QUEUE_URL=queue)
    return subprocess.Popen([sys.executable, "-m", "citelsp", "screen", "worker", *args],
                            env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def finished(worker: subprocess.Popen[str], timeout: float = 240) -> str:
    _out, err = worker.communicate(timeout=timeout)
    assert worker.returncode == 0, err
    assert "Traceback" not in err, err  # its engine closed on its event loop, say
    return err


def one_process(folder: Path, tmp_path: Path) -> tuple[str, Counter, dict[str, int]]:
    """What ``citelsp check FOLDER --summary-csv`` writes, on a server of its own; the
    lookups it asked, and how often each DOI was asked."""
    server = start_server()
    try:
        done = run_cli(server, "check", folder.name, "--format", "json", "--fail-on", "never",
                       "--summary-csv", "expected.csv", cache_dir=tmp_path / "check-cache",
                       cwd=folder.parent)
        assert done.returncode == 0, done.stderr
        asked = Counter(server.questions())
        per_doi = {doi: server.asked(None, doi) for doi in DOIS}
    finally:
        server.stop()
    return (folder.parent / "expected.csv").read_text(), asked, per_doi


def report(server: ApiServer, db: str, queue: str, folder: Path, tmp_path: Path) -> str:
    done = screen(server, "report", "--csv", "screened.csv", db=db, queue=queue,
                  cwd=folder.parent, cache_dir=tmp_path / "report-cache")
    assert done.returncode == 0, done.stderr
    return (folder.parent / "screened.csv").read_text()


def stored(db: str, sql: str) -> list[tuple]:
    with psycopg.connect(db) as conn:
        return conn.execute(sql).fetchall()


def test_each_work_is_verified_once_and_the_report_is_a_one_process_check(
        tmp_path, postgres_url, redis_url):
    folder = make_submissions(tmp_path)
    expected, expected_asked, expected_per_doi = one_process(folder, tmp_path)
    server = start_server()
    try:
        done = screen(server, "submit", "submissions", db=postgres_url, queue=redis_url,
                      cwd=tmp_path, cache_dir=tmp_path / "submit-cache")
        assert done.returncode == 0, done.stderr
        works = stored(postgres_url, "SELECT count(*) FROM screen_work")[0][0]
        assert "5 submissions, 20 references" in done.stdout
        assert f"{works} works queued" in done.stdout and works == 10  # 12 references, 2 pairs
        assert server.count() == 0  # submitting asks nothing
        again = screen(server, "submit", "submissions", db=postgres_url, queue=redis_url,
                       cwd=tmp_path, cache_dir=tmp_path / "submit-cache")
        assert "(0 new), 0 works queued" in again.stdout, again.stdout  # idempotent

        finished(start_worker(server, "--until-done", db=postgres_url, queue=redis_url,
                              cwd=tmp_path, cache_dir=tmp_path / "worker-cache"))
        # nothing asked more often than one process asks it (batches may gather differently)
        assert not Counter(server.questions()) - expected_asked
        assert server.asked("crossref", DOIS[0]) == 1  # cited by four submissions
        status = screen(server, "status", db=postgres_url, queue=redis_url, cwd=tmp_path,
                        cache_dir=tmp_path / "submit-cache")
        assert f"works: {works} verified, 0 pending" in status.stdout, status.stdout
        assert "submissions/paper3" in status.stdout
        screened = report(server, postgres_url, redis_url, folder, tmp_path)

        # every job delivered once more: each finds its results stored and asks nothing
        asked = server.count()
        queue.enqueue(queue.broker(redis_url), [w for (w,) in stored(postgres_url, DONE_WORKS)])
        worker = start_worker(server, db=postgres_url, queue=redis_url, cwd=tmp_path,
                              cache_dir=tmp_path / "worker-cache")
        log = ""
        while log.count("already verified") < works:
            log += worker.stderr.readline()
            assert worker.poll() is None, log
        worker.send_signal(signal.SIGTERM)  # stops after its jobs, and says nothing is wrong
        assert "already verified" in finished(worker, timeout=60) + log
        assert server.count() == asked
        assert stored(postgres_url, "SELECT count(*) FROM screen_result")[0][0] == 12
    finally:
        server.stop()
    assert screened == expected
    assert screened.count("\n") == 6 and ",nodoi" in screened  # header and five manuscripts


def test_a_report_before_the_workers_are_done_says_so(tmp_path, postgres_url, redis_url):
    folder = make_submissions(tmp_path)
    server = start_server()
    try:
        assert screen(server, "submit", "submissions", db=postgres_url, queue=redis_url,
                      cwd=tmp_path, cache_dir=tmp_path / "cache").returncode == 0
        done = screen(server, "report", db=postgres_url, queue=redis_url, cwd=folder.parent,
                      cache_dir=tmp_path / "cache")
    finally:
        server.stop()
    assert done.returncode == 3
    assert "20 references not verified yet" in done.stderr
    # 3 cited, 0 checked, 3 not checked: each a P2 "not checked", as check says of them
    assert done.stdout.splitlines()[1] == "submissions/paper0/paper.md,3,0,3,0,0,3,0,"


def test_a_worker_killed_mid_batch_loses_and_duplicates_nothing(tmp_path, postgres_url,
                                                                 redis_url):
    folder = make_submissions(tmp_path)
    expected, _asked, _per_doi = one_process(folder, tmp_path)
    server = start_server()
    for route in server.routes:
        route.delay = 0.3  # a batch of works that takes a while, one job at a time
    try:
        assert screen(server, "submit", "submissions", db=postgres_url, queue=redis_url,
                      cwd=tmp_path, cache_dir=tmp_path / "cache").returncode == 0
        first = start_worker(server, "--threads", "1", db=postgres_url, queue=redis_url,
                             cwd=tmp_path, cache_dir=tmp_path / "worker-cache")
        deadline = time.monotonic() + 120
        while not stored(postgres_url, "SELECT 1 FROM screen_result LIMIT 1"):
            assert first.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
        first.send_signal(signal.SIGKILL)
        first.communicate(timeout=30)
        done_before = {w for (w,) in stored(postgres_url, DONE_WORKS)}
        total = stored(postgres_url, "SELECT count(*) FROM screen_reference")[0][0]
        assert 0 < len(done_before) < 10, "the kill came before the end of the batch"
        asked_before = {doi: server.asked(None, doi) for doi in DOIS}

        second = start_worker(server, "--until-done", "--dead-after", "2", db=postgres_url,
                              queue=redis_url, cwd=tmp_path, cache_dir=tmp_path / "worker-cache")
        finished(second)
        rows = stored(postgres_url, "SELECT identity FROM screen_result")
        assert len(rows) == len({r[0] for r in rows}) == total  # all there, each once
        for doi in DOIS:  # a work stored before the kill is not asked for again
            if f"doi:{doi}" in done_before:
                assert server.asked(None, doi) == asked_before[doi], doi
        screened = report(server, postgres_url, redis_url, folder, tmp_path)
    finally:
        server.stop()
    assert screened == expected


DONE_WORKS = """SELECT w.work FROM screen_work w WHERE NOT EXISTS (SELECT 1 FROM screen_reference r
LEFT JOIN screen_result s USING (identity) WHERE r.work = w.work AND s.identity IS NULL)"""


def test_two_workers_at_once_share_the_works(tmp_path, postgres_url, redis_url):
    folder = make_submissions(tmp_path)
    expected, _asked, expected_per_doi = one_process(folder, tmp_path)
    server = start_server()
    for route in server.routes:
        route.delay = 0.2  # jobs that take a while: both workers find some
    try:
        workers = [start_worker(server, "--threads", "2", db=postgres_url, queue=redis_url,
                                cwd=tmp_path, cache_dir=tmp_path / f"worker{n}-cache")
                   for n in range(2)]
        for worker in workers:  # both taking jobs before there are any (not merely booted:
            # under load one worker took all twelve before the other's consumer started)
            while "ready: 2 threads" not in worker.stderr.readline():
                assert worker.poll() is None
        assert screen(server, "submit", "submissions", db=postgres_url, queue=redis_url,
                      cwd=tmp_path, cache_dir=tmp_path / "cache").returncode == 0
        deadline = time.monotonic() + 120
        while stored(postgres_url, "SELECT count(*) FROM screen_result")[0][0] < 12:
            assert time.monotonic() < deadline and all(w.poll() is None for w in workers)
            time.sleep(0.2)
        for worker in workers:
            worker.send_signal(signal.SIGTERM)
        for worker in workers:
            finished(worker, timeout=60)
        assert {doi: server.asked(None, doi) for doi in DOIS} == expected_per_doi
        by_worker = stored(postgres_url, "SELECT worker, count(*) FROM screen_result "
                                         "GROUP BY worker")
        assert sum(n for _, n in by_worker) == 12 and len(by_worker) == 2
        screened = report(server, postgres_url, redis_url, folder, tmp_path)
    finally:
        server.stop()
    assert screened == expected


def test_a_worker_without_its_queue_says_so(tmp_path, postgres_url):
    server = ApiServer().start()
    try:
        done = screen(server, "worker", db=postgres_url, queue="redis://127.0.0.1:1/0",
                      cwd=tmp_path, cache_dir=tmp_path)
    finally:
        server.stop()
    assert done.returncode == 2 and "the queue at redis://127.0.0.1:1/0 cannot" in done.stderr


@pytest.mark.parametrize("args", [["status"], ["submit", "x"]])
def test_without_a_database_or_queue_it_says_what_to_give(tmp_path, args):
    server = ApiServer().start()
    try:
        done = run_cli(server, "screen", *args, cache_dir=tmp_path, cwd=tmp_path)
    finally:
        server.stop()
    assert done.returncode == 2 and "--db postgresql://" in done.stderr


@pytest.mark.slow  # about 40 s: a job that failed waits Dramatiq's backoff (10 s or more)
def test_postgresql_restarted_mid_run_loses_nothing(tmp_path, redis_url):
    from tests.services import PostgresServer

    folder = make_submissions(tmp_path)
    expected, _asked, _per_doi = one_process(folder, tmp_path)
    database = PostgresServer().start()
    server = start_server()
    for route in server.routes:
        route.delay = 0.3
    try:
        db = database.url
        assert screen(server, "submit", "submissions", db=db, queue=redis_url, cwd=tmp_path,
                      cache_dir=tmp_path / "cache").returncode == 0
        worker = start_worker(server, "--until-done", "--threads", "1", db=db, queue=redis_url,
                              cwd=tmp_path, cache_dir=tmp_path / "worker-cache")
        deadline = time.monotonic() + 120
        while not stored(db, "SELECT 1 FROM screen_result LIMIT 1"):
            assert worker.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
        database.stop()  # jobs meanwhile cannot read or store: each is tried again later
        time.sleep(2)
        database.start()
        log = finished(worker)
        assert stored(db, "SELECT count(*) FROM screen_result")[0][0] == 12
        screened = report(server, db, redis_url, folder, tmp_path)
    finally:
        server.stop()
        database.destroy()
    assert screened == expected
    assert "the screening database failed" in log and "tried again later" in log


def test_a_submit_that_cannot_reach_the_queue_says_so_and_the_next_one_queues(
        tmp_path, postgres_url, redis_url):
    make_submissions(tmp_path)
    server = ApiServer().start()
    try:
        done = screen(server, "submit", "submissions", db=postgres_url,
                      queue="redis://127.0.0.1:1/0", cwd=tmp_path, cache_dir=tmp_path)
        assert done.returncode == 2 and "the queue at redis://127.0.0.1:1/0" in done.stderr
        again = screen(server, "submit", "submissions", db=postgres_url, queue=redis_url,
                       cwd=tmp_path, cache_dir=tmp_path)
    finally:
        server.stop()
    assert "(0 new), 10 works queued" in again.stdout, again.stdout
    assert queue.queued(queue.broker(redis_url)) == 10


def test_what_no_source_answered_for_is_said_and_asked_again_on_retry(
        tmp_path, postgres_url, redis_url):
    folder = make_submissions(tmp_path)
    expected, _asked, _per_doi = one_process(folder, tmp_path)
    server = start_server()
    every = dict(db=postgres_url, queue=redis_url, cwd=tmp_path, cache_dir=tmp_path / "cache")
    try:
        up = list(server.routes)
        for endpoint in PREFIXES:
            server.fail(endpoint, 503)
        assert screen(server, "submit", "submissions", **every).returncode == 0
        finished(start_worker(server, "--until-done", "--outage-retries", "0", **every))
        status = screen(server, "status", **every)
        assert "not checked: 11 reference(s) no source answered for (11 outage)" in status.stdout
        outage = screen(server, "report", **every)
        assert outage.returncode == 0 and outage.stdout != expected  # said, as check says it

        server.routes = up  # the services are back
        retry = screen(server, "retry", **every)
        assert "retry: 11 references not checked, 9 works queued" in retry.stdout, retry.stdout
        finished(start_worker(server, "--until-done", **every))
        assert "not checked" not in screen(server, "status", **every).stdout
        screened = report(server, postgres_url, redis_url, folder, tmp_path)
    finally:
        server.stop()
    assert screened == expected
