"""The answer cache in PostgreSQL (``cacheUrl``): the same answers, versions, lifetimes and
staleness as the local cache; concurrent writers, killed writers, a restarted server; and
``citelsp check`` and ``citelsp cache`` against it. Real PostgreSQL only (tests/services.py)."""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from citelsp.resolution import cache_postgres
from citelsp.resolution.cache import CACHE_VERSION, AnswerCache
from citelsp.resolution.outcome import Found, Handle, Malformed, NotFound, Record, Unreachable
from tests.apiserver import ApiServer
from tests.services import PostgresServer
from tests.test_cache import RECORD, Clock
from tests.test_check_e2e import BIB, ROOT, by_key, start_server

TABLE = cache_postgres.TABLE


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def shared(postgres_url, tmp_path, clock):
    answers = AnswerCache(tmp_path / "unused", url=postgres_url, clock=clock)
    yield answers
    answers.close()


def rows(url: str) -> dict[str, str]:
    with psycopg.connect(url) as conn:
        return dict(conn.execute(f"SELECT key, value FROM {TABLE}").fetchall())


# --- the same answers as the local cache --------------------------------------------------------


@pytest.mark.parametrize("answer", [Found((RECORD, Record(source="crossref", title="Other"))),
                                    Found(()), NotFound("no such DOI"), Handle(False),
                                    Malformed("incorrect id format")])
def test_every_answer_round_trips(shared, answer, tmp_path):
    shared.put("crossref", "doi", "10.5555/3295222.3295349", answer)
    cached = shared.get("crossref", "doi", "10.5555/3295222.3295349")
    assert cached.answer == answer and cached.stale is False
    assert not (tmp_path / "unused").exists()  # nothing local when the cache is shared


def test_a_lone_surrogate_and_nul_are_stored_as_json_text(shared):
    odd = Found((Record(source="crossref", title="bad \ud800 text \x00 end"),))
    shared.put("crossref", "title", "bad text", odd)
    assert shared.get("crossref", "title", "bad text").answer == odd


def test_keys_versions_and_unreachable(shared, postgres_url, clock, tmp_path):
    shared.put("crossref", "doi", "10.1/X ", NotFound())
    assert shared.get("crossref", "doi", "10.1/x") is not None
    shared.put("crossref", "doi", "10.1/x", Unreachable("HTTP 503"))
    assert shared.get("crossref", "doi", "10.1/x").answer == NotFound()
    shared.put("openalex", "doi", "10.1/y", Unreachable("timed out"))
    assert shared.get("openalex", "doi", "10.1/y") is None
    other = AnswerCache(tmp_path, url=postgres_url, version=CACHE_VERSION + "-other",
                        clock=clock)
    assert other.get("crossref", "doi", "10.1/x") is None
    other.close()
    assert list(rows(postgres_url)) == [f'["{CACHE_VERSION}", "crossref", "doi", "10.1/x"]']


@pytest.mark.parametrize(("answer", "kind", "days"), [(Found((RECORD,)), None, 90),
                                                      (NotFound(), None, 7),
                                                      (Found((RECORD,)), "retraction", 30)])
def test_lifetimes_and_staleness(shared, clock, answer, kind, days):
    shared.put("crossref", "doi", "10.1/x", answer, kind=kind)
    clock.advance(days - 0.01)
    hit = shared.get("crossref", "doi", "10.1/x")
    assert hit is not None and hit.stale is (days - 0.01 > 30)
    clock.advance(0.02)
    assert shared.get("crossref", "doi", "10.1/x") is None


def test_delete_clear_stats_and_prune(postgres_url, tmp_path):
    """Statistics and pruning go by the database's clock (the answers' real lifetimes)."""
    shared = AnswerCache(tmp_path, url=postgres_url)
    shared.put("crossref", "doi", "10.1/a", NotFound())
    shared.put("crossref", "doi", "10.1/b", Found((RECORD,)))
    shared.put("openalex", "doi", "10.1/b", Found((RECORD,)))
    older = AnswerCache(tmp_path, url=postgres_url, version="old")
    older.put("crossref", "doi", "10.1/a", NotFound())
    older.close()
    expired = AnswerCache(tmp_path, url=postgres_url, clock=lambda: time.time() - 8 * 86400)
    expired.put("datacite", "doi", "10.1/gone", NotFound())
    expired.close()
    shared.delete("crossref", "doi", "10.1/A")
    assert shared.get("crossref", "doi", "10.1/a") is None
    assert [(r.version, r.resolver, r.live, r.expired) for r in shared.stats()] == [
        (CACHE_VERSION, "crossref", 1, 0), (CACHE_VERSION, "datacite", 0, 1),
        (CACHE_VERSION, "openalex", 1, 0), ("old", "crossref", 1, 0)]
    assert shared.prune() == 2
    assert shared.purge() == 2
    assert shared.stats() == []
    shared.put("crossref", "doi", "10.1/c", NotFound())
    shared.clear()
    assert rows(postgres_url) == {}
    shared.close()


def test_two_processes_share_answers_and_a_pass_asks_the_database(shared, postgres_url, clock,
                                                                  tmp_path):
    other = AnswerCache(tmp_path, url=postgres_url, clock=clock)
    with shared.pass_over():
        other.put("crossref", "doi", "10.1/x", Found((RECORD,)))
        assert shared.get("crossref", "doi", "10.1/x").answer == Found((RECORD,))
    other.close()


# --- the schema ---------------------------------------------------------------------------------


def _open_and_write(url: str, worker: int) -> None:
    answers = AnswerCache(Path("/nonexistent"), url=url)
    answers.put("crossref", "doi", f"10.{worker}/schema", Handle(True))
    answers.close()


def test_processes_racing_to_create_the_schema_all_succeed(postgres_url):
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_open_and_write, args=(postgres_url, w)) for w in range(6)]
    for process in workers:
        process.start()
    for process in workers:
        process.join(60)
    assert [p.exitcode for p in workers] == [0] * 6
    assert len(rows(postgres_url)) == 6
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute(f"SELECT version FROM {cache_postgres.META}").fetchall() == [
            (cache_postgres.SCHEMA_VERSION,)]


def test_a_schema_from_a_newer_citelsp_leaves_the_cache_off(postgres_url, tmp_path, caplog):
    AnswerCache(tmp_path, url=postgres_url).close()
    with psycopg.connect(postgres_url) as conn:
        conn.execute(f"UPDATE {cache_postgres.META} SET version = version + 1")
    caplog.set_level(logging.WARNING, "citelsp.cache")
    answers = AnswerCache(tmp_path / "local", url=postgres_url)
    answers.put("crossref", "doi", "10.1/x", NotFound())
    assert answers.get("crossref", "doi", "10.1/x") is None
    assert "upgrade citelsp" in caplog.text and "the answer cache is off" in caplog.text
    assert rows(postgres_url) == {}


# --- concurrent and killed writers --------------------------------------------------------------

WRITERS = 6
SHARED_KEYS = 150
OWN_KEYS = 100


def _answer(worker: int, i: int) -> Found:
    """An answer long enough that a torn write would show, naming its writer."""
    return Found((Record(source="crossref", title=f"writer {worker} work {i} " + "x" * 3000,
                         doi=f"10.{worker}/{i}", years=(2000 + i % 20,)),))


def _write_overlapping(url: str, worker: int, start, ready) -> None:
    answers = AnswerCache(Path("/nonexistent"), url=url)
    ready.put(worker)
    start.wait(60)
    for i in range(SHARED_KEYS):
        answers.put("crossref", "title", f"shared {i}", _answer(worker, i))
        answers.get("crossref", "title", f"shared {(i * 7) % SHARED_KEYS}")
    for i in range(OWN_KEYS):
        answers.put("crossref", "doi", f"10.{worker}/{i}", _answer(worker, i))
    answers.close()


@pytest.mark.slow
def test_concurrent_writers_lose_and_tear_nothing(postgres_url, tmp_path):
    AnswerCache(tmp_path, url=postgres_url).close()  # the schema, so the race is the writes'
    context = multiprocessing.get_context("spawn")
    start, ready = context.Event(), context.Queue()
    workers = [context.Process(target=_write_overlapping, args=(postgres_url, w, start, ready))
               for w in range(WRITERS)]
    for process in workers:
        process.start()
    for _ in workers:
        ready.get(timeout=60)
    start.set()
    for process in workers:
        process.join(120)
    assert [p.exitcode for p in workers] == [0] * WRITERS
    assert len(rows(postgres_url)) == SHARED_KEYS + WRITERS * OWN_KEYS
    reader = AnswerCache(tmp_path, url=postgres_url)
    for i in range(SHARED_KEYS):
        answer = reader.get("crossref", "title", f"shared {i}").answer
        assert answer in [_answer(w, i) for w in range(WRITERS)]
    for worker in range(WRITERS):
        for i in range(OWN_KEYS):
            assert reader.get("crossref", "doi", f"10.{worker}/{i}").answer == _answer(worker, i)
    reader.close()


BATCH = 300


def _write_a_batch(url: str, blocked_key: str) -> None:
    """Store ``BATCH`` waiting answers in one transaction whose last row waits for a lock."""
    store = cache_postgres.PostgresStore(url)
    for i in range(BATCH):
        store._pending[f'["{CACHE_VERSION}", "crossref", "doi", "10.9/{i}"]'] = (
            "{}", 86400.0, time.time())
    store._pending[blocked_key] = ('{"blocked": true}', 86400.0, time.time())
    with store._lock:
        store._flush(store._conn)


def test_a_writer_killed_mid_transaction_leaves_nothing_half_written(postgres_url, tmp_path):
    answers = AnswerCache(tmp_path, url=postgres_url)
    answers.put("crossref", "doi", "10.1/held", Found((RECORD,)))
    answers.close()
    (blocked_key, before), = rows(postgres_url).items()
    context = multiprocessing.get_context("spawn")
    with psycopg.connect(postgres_url) as holder:
        holder.execute(f"SELECT 1 FROM {TABLE} WHERE key = %s FOR UPDATE", (blocked_key,))
        writer = context.Process(target=_write_a_batch, args=(postgres_url, blocked_key))
        writer.start()
        with psycopg.connect(postgres_url, autocommit=True) as watcher:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not watcher.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE application_name = "
                    "'citelsp cache' AND wait_event_type = 'Lock'").fetchone()[0]:
                time.sleep(0.05)
        os.kill(writer.pid, signal.SIGKILL)  # 300 rows written, the last one waiting
        writer.join(10)
        holder.rollback()
    assert writer.exitcode == -signal.SIGKILL
    assert rows(postgres_url) == {blocked_key: before}


def _write_forever(url: str) -> None:
    answers = AnswerCache(Path("/nonexistent"), url=url)
    for i in range(1_000_000):
        answers.put("crossref", "doi", f"10.1/{i}", _answer(1, i))


def test_a_writer_killed_at_any_moment_leaves_only_whole_answers(postgres_url, tmp_path):
    AnswerCache(tmp_path, url=postgres_url).close()
    writer = multiprocessing.get_context("spawn").Process(target=_write_forever,
                                                          args=(postgres_url,))
    writer.start()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(rows(postgres_url)) < 50:
        time.sleep(0.02)
    os.kill(writer.pid, signal.SIGKILL)
    writer.join(10)
    written = len(rows(postgres_url))
    reader = AnswerCache(tmp_path, url=postgres_url)
    assert written >= 50
    for i in range(written):
        assert reader.get("crossref", "doi", f"10.1/{i}").answer == _answer(1, i)
    reader.close()


# --- PostgreSQL down, restarted ------------------------------------------------------------------


@pytest.fixture
def own_server():
    server = PostgresServer().start()
    try:
        yield server
    finally:
        server.destroy()


def _logged(caplog, words: str) -> int:
    return sum(words in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("mode", ["fast", "immediate"])
def test_a_restart_is_said_once_and_loses_no_answer(own_server, tmp_path, caplog, mode):
    """``immediate``: the server dies without a shutdown (recovery at the next start)."""
    caplog.set_level(logging.WARNING, "citelsp.cache")
    answers = AnswerCache(tmp_path, url=own_server.url)
    answers.put("crossref", "doi", "10.1/before", Found((RECORD,)))
    own_server.stop(mode)
    for i in range(50):  # lookups carry on: misses, and writes that wait
        assert answers.get("crossref", "doi", f"10.1/{i}") is None
        answers.put("crossref", "doi", f"10.1/{i}", Handle(True))
    assert answers.get("crossref", "doi", "10.1/7").answer == Handle(True)  # its own, waiting
    assert _logged(caplog, "is unreachable") == 1
    own_server.start()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not _logged(caplog, "reachable again"):
        time.sleep(0.1)
        answers.get("crossref", "doi", "10.1/before")  # said on the caller's thread
    assert _logged(caplog, "reachable again; 50 answers that waited stored") == 1
    assert answers.get("crossref", "doi", "10.1/before").answer == Found((RECORD,))
    answers.close()
    assert len(rows(own_server.url)) == 51
    assert _logged(caplog, "is unreachable") == 1


def test_answers_that_cannot_be_stored_by_the_end_are_reported(own_server, tmp_path, caplog,
                                                               monkeypatch):
    monkeypatch.setattr(cache_postgres, "CLOSING_WAIT_S", 1.0)
    caplog.set_level(logging.WARNING, "citelsp.cache")
    answers = AnswerCache(tmp_path, url=own_server.url)
    own_server.stop()
    for i in range(3):
        answers.put("crossref", "doi", f"10.1/{i}", Handle(True))
    answers.close()
    assert _logged(caplog, "3 answers could not be stored in the shared cache") == 1


def test_a_database_down_from_the_start_is_retried(own_server, tmp_path, caplog):
    own_server.stop()
    caplog.set_level(logging.WARNING, "citelsp.cache")
    answers = AnswerCache(tmp_path, url=own_server.url)
    answers.put("crossref", "doi", "10.1/x", NotFound())
    assert _logged(caplog, "is unreachable") == 1
    own_server.start()
    answers.close()  # stores what waits: the database is back
    assert len(rows(own_server.url)) == 1
    assert "could not be stored" not in caplog.text


# --- citelsp check and citelsp cache -------------------------------------------------------------


def run(server: ApiServer, url: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CITELSP_")}
    env.update(server.env(), CITELSP_CACHE_URL=url, CITELSP_CACHE_DIR=str(cwd / "local"),
               PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "citelsp", *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def verdicts(report: dict) -> dict[str, tuple]:
    return {key: (k["summary"]["lookup_verified"], (k["item"] or {}).get("reason_code"))
            for key, k in by_key(report).items()}


ANSWERED = "".join("\n@" + entry for entry in BIB.split("\n@")[1:]
                   if entry.split("{", 1)[1].split(",")[0] in ("real", "zenodo", "titleonly",
                                                                "manual"))
"""The references of ``BIB`` every source has a recorded answer for: the others meet an
unrouted request, an outage that is never cached and so asked again by every run."""


def asked_again(server: ApiServer, since: int) -> list:
    """Requests after the first ``since`` that a recorded answer was given to."""
    return [seen for seen in server.requests[since:] if seen not in server.unmatched]


def test_check_shares_the_cache_and_a_second_run_asks_nothing(postgres_url, tmp_path):
    import json

    (tmp_path / "refs.bib").write_text(ANSWERED, encoding="utf-8")
    server = start_server()
    try:
        args = ("check", "refs.bib", "--format", "json", "--fail-on", "never")
        first = run(server, postgres_url, *args, cwd=tmp_path)
        asked = len(server.requests)
        second = run(server, postgres_url, *args, cwd=tmp_path)
        assert first.returncode == second.returncode == 0, first.stderr + second.stderr
        assert asked > 0 and len(server.requests) == asked
        assert verdicts(json.loads(first.stdout)) == verdicts(json.loads(second.stdout))
        assert not (tmp_path / "local" / "cache.db").exists()
        stats = run(server, postgres_url, "cache", "stats", cwd=tmp_path)
        assert stats.returncode == 0
        assert "postgresql://" in stats.stdout and f"version {CACHE_VERSION} (current)" in (
            stats.stdout) and "crossref" in stats.stdout
        assert run(server, postgres_url, "cache", "prune", cwd=tmp_path).stdout.startswith(
            "pruned 0 answers")
        cleared = run(server, postgres_url, "cache", "clear", cwd=tmp_path)
        assert cleared.returncode == 0 and cleared.stdout.startswith("cleared ")
        assert rows(postgres_url) == {}
        third = run(server, postgres_url, *args, cwd=tmp_path)
        assert len(server.requests) == 2 * asked
        assert verdicts(json.loads(third.stdout)) == verdicts(json.loads(first.stdout))
    finally:
        server.stop()


def test_cache_commands_say_when_the_database_is_unreachable(own_server, tmp_path):
    own_server.stop()
    server = ApiServer().start()
    try:
        done = run(server, own_server.url, "cache", "stats", cwd=tmp_path)
    finally:
        server.stop()
    assert done.returncode == 2
    assert done.stderr.startswith("citelsp: the shared cache postgresql://postgres@127.0.0.1:")
    assert "unreachable" in done.stderr and len(done.stderr.splitlines()) == 1


@pytest.mark.slow
def test_check_carries_on_through_a_restart_and_loses_nothing(own_server, tmp_path):
    import json

    (tmp_path / "refs.bib").write_text(BIB, encoding="utf-8")
    server = start_server()
    server.delay = 0.3  # a run of several seconds, for the database to go and come back in
    env = {k: v for k, v in os.environ.items() if not k.startswith("CITELSP_")}
    env.update(server.env(), CITELSP_CACHE_URL=own_server.url, PYTHONPATH=str(ROOT))
    args = [sys.executable, "-m", "citelsp", "check", "refs.bib", "--format", "json",
            "--fail-on", "never"]
    try:
        checking = subprocess.Popen(args, env=env, cwd=tmp_path, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(server.requests) < 2:
            time.sleep(0.05)
        own_server.stop()
        asked = len(server.requests)
        while time.monotonic() < deadline and len(server.requests) < asked + 3:
            time.sleep(0.05)
        own_server.start()
        out, err = checking.communicate(timeout=120)
        assert checking.returncode == 0, err
        during = len(server.requests)
        server.delay = 0.0
        again = subprocess.run(args, env=env, cwd=tmp_path, capture_output=True, text=True,
                               timeout=120)
    finally:
        server.stop()
    assert err.count("is unreachable") == 1 and err.count("reachable again") == 1, err
    assert "could not be stored" not in err
    assert asked_again(server, during) == []  # every answer of the first run was stored
    assert verdicts(json.loads(again.stdout)) == verdicts(json.loads(out))
    print(f"first run: {during} requests, the database down from request {asked} to "
          f"{asked + 3}; second run: {len(server.requests) - during} requests, "
          f"{len(asked_again(server, during))} of them answered before")


async def test_the_engine_tells_its_writer_once(own_server, api_server, tmp_path):
    """The editor and the command line hear of the outage through the engine's notices."""
    from citelsp.resolution.engine import Engine

    said: list[str] = []
    engine = Engine(api_server.settings(cache_url=own_server.url, cache_dir=tmp_path),
                    notice=said.append)
    own_server.stop()
    for i in range(20):
        engine.cache.put("crossref", "doi", f"10.1/{i}", NotFound())
        assert engine.cache.get("crossref", "doi", "10.1/absent") is None
    own_server.start()
    await engine.aclose()
    assert [m.split(" (")[0] for m in said] == [
        f"citelsp: the shared cache {own_server.url} is unreachable",
        f"citelsp: the shared cache {own_server.url} is reachable again; 20 answers that "
        "waited stored"]
    assert len(rows(own_server.url)) == 20


@pytest.mark.parametrize("url", ["redis://127.0.0.1:6379/0", "postgresql://db:notaport/x"])
def test_a_url_that_cannot_be_a_database_is_said_never_raised(url, tmp_path, caplog,
                                                              monkeypatch):
    monkeypatch.setattr(cache_postgres, "CLOSING_WAIT_S", 0.5)
    caplog.set_level(logging.WARNING, "citelsp.cache")
    answers = AnswerCache(tmp_path, url=url)
    answers.put("crossref", "doi", "10.1/x", NotFound())
    answers.get("crossref", "doi", "10.1/x")
    answers.close()
    assert len(caplog.records) >= 1 and "citelsp:" in caplog.records[0].getMessage()


def test_maintenance_waits_longer_than_a_lookup(postgres_url, tmp_path, monkeypatch):
    """A lookup gives up after the statement timeout; pruning or clearing millions of rows
    (here: waiting for a row another session holds) may take longer, and does."""
    import threading

    monkeypatch.setattr(cache_postgres, "STATEMENT_TIMEOUT_MS", 100)
    answers = AnswerCache(tmp_path, url=postgres_url, clock=lambda: time.time() - 8 * 86400)
    answers.put("crossref", "doi", "10.1/old", NotFound())
    with psycopg.connect(postgres_url) as holder:
        holder.execute(f"SELECT 1 FROM {TABLE} FOR UPDATE")
        threading.Timer(0.5, holder.rollback).start()
        assert answers.prune() == 1
    answers.close()


async def test_the_editor_reopens_from_the_shared_cache(lsp_workspace, lsp_api, postgres_url,
                                                        tmp_path):
    """The language server with ``CITELSP_CACHE_URL``: a second session (another editor of
    the team) shows the verdicts without a request; nothing is cached locally."""
    from tests.lsp_session import lsp_session, open_file, wait_until
    from tests.test_lsp_verify import verified

    env = {**lsp_api.env(), "CITELSP_CACHE_DIR": str(tmp_path / "local"),
           "CITELSP_CACHE_URL": postgres_url}
    async with lsp_session(lsp_workspace, env) as lsp:
        bib = open_file(lsp, lsp_workspace / "refs.bib", "bibtex")
        await wait_until(lsp, verified(bib, "fake", "wrongyear", "invented"))
    first = {str(d.code) for d in lsp.diagnostics[bib]}
    before = len(lsp_api.requests)
    async with lsp_session(lsp_workspace, env) as lsp:
        bib = open_file(lsp, lsp_workspace / "refs.bib", "bibtex")
        await wait_until(lsp, lambda c: {str(d.code) for d in c.diagnostics.get(bib, [])}
                         >= first - {"UNREACHABLE"})
    assert [s for s in lsp_api.requests[before:] if "10.9999" not in s.decoded_path] == []
    assert rows(postgres_url) and not (tmp_path / "local" / "cache.db").exists()


@pytest.fixture
def lsp_api():
    from tests.test_lsp_verify import api

    yield from api.__wrapped__()


@pytest.fixture
def lsp_workspace(tmp_path):
    from tests.test_lsp_verify import workspace

    return workspace.__wrapped__(tmp_path)


def test_without_psycopg_the_cache_is_off_and_says_how_to_install_it(postgres_url, tmp_path,
                                                                     monkeypatch):
    said: list[str] = []
    monkeypatch.setitem(sys.modules, "psycopg", None)  # import psycopg raises ImportError
    monkeypatch.delitem(sys.modules, "citelsp.resolution.cache_postgres")
    monkeypatch.delattr(sys.modules["citelsp.resolution"], "cache_postgres")
    answers = AnswerCache(tmp_path, url=postgres_url, notice=said.append)
    answers.put("crossref", "doi", "10.1/x", NotFound())
    assert answers.get("crossref", "doi", "10.1/x") is None
    answers.close()
    assert len(said) == 1 and "pip install 'citelsp[team]'" in said[0]
