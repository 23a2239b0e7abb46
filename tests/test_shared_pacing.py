"""One pace and one budget across processes, in the real Redis (``citelsp.pacingUrl``).

Several ``citelsp check`` processes against a loopback service that answers 429 beyond its
limit get none; a ``Retry-After`` one process sees holds the others; two processes spend one
daily budget; without Redis (at the start or mid-run) each process paces itself at a fraction
of the rate and says so once.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from citelsp.config import Settings
from citelsp.resolution.engine import Engine
from citelsp.resolution.http import HttpClient
from citelsp.resolution.pacing import MAX_HOLD_S, origin_of
from citelsp.resolution.redis_pacing import (
    FALLBACK_FACTOR,
    RETRY_S,
    Claims,
    Link,
    SharedPacer,
    SharedPacing,
    SharedUnavailable,
)
from citelsp.uris import shown_url
from tests.apiserver import ApiServer, add_empty_searches, load_default_routes
from tests.services import RedisServer, free_port
from tests.test_engine import bib_refs, entry

ROOT = Path(__file__).resolve().parent.parent
PROCESSES = 4
CROSSREF_MS = 30
"""Crossref's ``minIntervalMs`` in these tests: its public pool spaces searches 10× that,
330 ms with the margin, so five requests take 1.65 s and a limit of 5 a second is never
reached by one pace; four processes pacing alone would send 12 a second."""


def titles(prefix: str, n: int) -> str:
    return "".join(entry(f"{prefix}{i}", f"An invented study of {prefix} number {i}")
                   for i in range(n))


def settings(api: ApiServer, crossref: ApiServer, tmp: Path, **changes) -> Settings:
    environ = {**api.env(), "CITELSP_CROSSREF_BASE_URL": crossref.url_for("crossref"),
               "CITELSP_CROSSREF_MIN_INTERVAL_MS": str(CROSSREF_MS)}
    return Settings.from_options({}, environ).with_changes(cache_dir=tmp, **changes)


@pytest.fixture
def services():
    """Every API unpaced on 127.0.0.1, and Crossref on 127.0.0.2 with a limit of 5 requests
    a second (its own origin, as the benches serve each API)."""
    api = add_empty_searches(ApiServer().start())
    load_default_routes(api)
    crossref = add_empty_searches(ApiServer("127.0.0.2").start()).limit(5, 1.0)
    try:
        yield api, crossref
    finally:
        api.stop()
        crossref.stop()


def check(api: ApiServer, crossref: ApiServer, bib: Path, cache: Path,
          env: dict[str, str]) -> subprocess.Popen[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("CITELSP_")}
    full.update(api.env())
    full.update({"CITELSP_CROSSREF_BASE_URL": crossref.url_for("crossref"),
                 "CITELSP_CROSSREF_MIN_INTERVAL_MS": str(CROSSREF_MS),
                 "CITELSP_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT), **env})
    return subprocess.Popen(
        [sys.executable, "-m", "citelsp", "check", str(bib), "--format", "json",
         "--fail-on", "never"],
        env=full, cwd=bib.parent, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finished(process: subprocess.Popen[str]) -> tuple[dict, str]:
    out, err = process.communicate(timeout=240)
    assert process.returncode == 0, err
    return json.loads(out), err


def crossref_status(report: dict) -> list[str]:
    return [o["resolvers"]["crossref"]["status"] for o in report["outcomes"]]


def test_four_check_processes_share_one_pace_and_get_no_429(services, redis_url, tmp_path):
    api, crossref = services
    runs = []
    for n in range(PROCESSES):
        bib = tmp_path / f"p{n}" / "refs.bib"
        bib.parent.mkdir()
        bib.write_text(titles(f"p{n}x", 6), encoding="utf-8")
        runs.append(check(api, crossref, bib, tmp_path / f"cache{n}",
                          {"CITELSP_PACING_URL": redis_url}))
    reports = [finished(run) for run in runs]
    assert crossref.refused == [], f"{len(crossref.refused)} requests answered 429"
    assert crossref.count("crossref") == PROCESSES * 6, "one search per reference"
    for report, err in reports:
        assert set(crossref_status(report)) == {"unmatched"}, err
        assert "shared pacing" not in err


async def test_a_retry_after_seen_by_one_process_holds_the_others(redis_url, tmp_path):
    """Two clients with their own link to Redis (two processes): the first gets a 429 with
    ``Retry-After: 2``; the second, asking meanwhile, arrives only once the pause is over."""
    with ApiServer() as server:
        add_empty_searches(server)
        refusal = server.add("crossref", "GET", None, status=429, headers={"Retry-After": "2"})
        config = server.settings(cache_dir=tmp_path, pacing_url=redis_url)
        one, two = (SharedPacing.open(config, None, {}, notice=print) for _ in range(2))
        first = HttpClient(config, pacer=one.pacer)
        second = HttpClient(config, pacer=two.pacer)
        asking = asyncio.ensure_future(first.get("crossref", "/works", kind="search",
                                                 params={"query.title": "a"}))
        while not server.count("crossref"):
            await asyncio.sleep(0.01)
        refused_at = server.requests[0].at
        server.routes.remove(refusal)
        await asyncio.sleep(0.2)  # the refusal is read and the hold is in Redis
        answer = await second.get("crossref", "/works", kind="search",
                                  params={"query.title": "b"})
        assert getattr(answer, "status", answer) == 200
        assert (await asking).status == 200, "the first retries after the pause"
        arrivals = [s.at - refused_at for s in server.requests[1:]]
        assert len(arrivals) == 2 and min(arrivals) >= 1.9, arrivals
        for client, shared in ((first, one), (second, two)):
            await client.aclose()
            await shared.aclose()


async def test_a_pause_too_long_to_wait_closes_the_origin_for_every_process(redis_url):
    config = Settings(pacing_url=redis_url)
    one, two = (SharedPacing.open(config, None, {}, notice=print) for _ in range(2))
    crossref = origin_of("https://api.crossref.org")
    one.pacer.hold(crossref, MAX_HOLD_S * 10)
    await asyncio.sleep(0.1)
    await two.pacer.wait(crossref, lane="list")  # released at once, to be told it is closed
    assert two.pacer.closed_for(crossref) > MAX_HOLD_S * 9
    assert two.pacer.closed_for(origin_of("https://api.openalex.org")) == 0
    await one.aclose()
    await two.aclose()


def test_two_processes_spend_one_daily_budget(services, redis_url, tmp_path):
    """Two processes with their own cache folders (two machines) and OpenAlex's budget set to
    two searches a day: two searches in all, and each says which references wait."""
    api, crossref = services
    env = {"CITELSP_PACING_URL": redis_url, "CITELSP_OPENALEX_DAILY_BUDGET_USD": "0.002"}
    runs = []
    for n in range(2):
        bib = tmp_path / f"m{n}" / "refs.bib"
        bib.parent.mkdir()
        bib.write_text(titles(f"m{n}x", 3), encoding="utf-8")
        runs.append(check(api, crossref, bib, tmp_path / f"cache{n}", env))
    reports = [finished(run) for run in runs]
    assert api.count("openalex") == 2, "one budget of two searches for both"
    waiting = sum(o["resolvers"]["openalex"]["status"] == "unreachable"
                  for report, _ in reports for o in report["outcomes"])
    assert waiting == 4
    assert all("budget for today spent" in err for report, err in reports
               if any(o["resolvers"]["openalex"]["status"] == "unreachable"
                      for o in report["outcomes"]))


def test_without_redis_a_check_paces_itself_and_says_so_once(services, tmp_path):
    api, crossref = services
    bib = tmp_path / "refs.bib"
    bib.write_text(titles("alone", 4), encoding="utf-8")
    nowhere = f"redis://:secret@127.0.0.1:{free_port()}/0"
    report, err = finished(check(api, crossref, bib, tmp_path / "cache",
                                 {"CITELSP_PACING_URL": nowhere}))
    assert err.count("shared pacing unavailable") == 1, err
    assert f"1/{FALLBACK_FACTOR:g}" in err and "secret" not in err
    assert set(crossref_status(report)) == {"unmatched"}, "checked all the same"
    assert crossref.refused == []


async def test_redis_stopped_mid_run_falls_back_without_a_verdict(services, tmp_path):
    api, crossref = services
    redis = RedisServer().start()
    told: list[str] = []
    engine = Engine(settings(api, crossref, tmp_path, pacing_url=redis.url), notice=told.append)
    refs = bib_refs(titles("mid", 8))
    try:
        running = asyncio.ensure_future(engine.resolve_all(refs))
        while crossref.count("crossref") < 2:
            await asyncio.sleep(0.02)
        await asyncio.to_thread(redis.stop)
        resolutions = await running
    finally:
        redis.stop()
        await engine.aclose()
    assert [m for m in told if "shared pacing unavailable" in m] == told and len(told) == 1
    assert shown_url(redis.url) in told[0]
    assert {r.outcomes["crossref"].status for r in resolutions} == {"unmatched"}
    assert crossref.refused == []


async def test_a_reverify_asks_afresh_though_a_claim_would_find_the_answer_cached(
        redis_url, tmp_path):
    """Processes pacing together take each other's answers from the cache; a re-verify
    (``refresh``) asks the service all the same."""
    with ApiServer() as server:
        add_empty_searches(server)
        engine = Engine(server.settings(cache_dir=tmp_path, pacing_url=redis_url))
        refs = bib_refs(titles("again", 1))
        try:
            await engine.resolve_all(refs)
            first = server.count("crossref")
            await engine.resolve_all(refs)
            assert server.count("crossref") == first, "answered from the cache"
            await engine.resolve_all(refs, refresh=True)
        finally:
            await engine.aclose()
        assert server.count("crossref") == 2 * first


async def test_redis_back_is_tried_after_a_while_and_said():
    """Gone: said once, not asked again for ``RETRY_S``; then asked, and its return said."""
    redis = RedisServer().start()
    now = [0.0]
    told: list[str] = []
    link = Link(redis.url, told.append, clock=lambda: now[0])
    budget = ["citelsp:test"]
    try:
        assert await link.run("charge", budget, [1, 10, 60]) == 1
        redis.stop()
        with pytest.raises(SharedUnavailable):
            await link.run("charge", budget, [1, 10, 60])
        assert not link.up and len(told) == 1 and "unavailable" in told[0]
        redis.start()
        now[0] += RETRY_S - 1
        assert not link.up, "not before RETRY_S"
        now[0] += 2
        assert link.up
        assert await link.run("charge", budget, [1, 10, 60]) == 1
        assert len(told) == 2 and "back" in told[1]
    finally:
        await link.aclose()
        redis.stop()


async def test_thousands_of_questions_claimed_at_once_wait_for_a_connection(redis_url):
    """A large library starts thousands of lookups at once: their claims queue for the
    process's few connections instead of being taken for Redis gone."""
    told: list[str] = []
    link = Link(redis_url, told.append)
    claims = Claims(link)
    try:
        mine = await asyncio.gather(*(claims.claim(f"q{n}") for n in range(2000)))
    finally:
        await link.aclose()
    assert told == [] and all(mine)


async def test_a_lane_paced_alone_goes_back_to_redis_mid_queue():
    """A long queue that began while Redis was gone is paced through Redis again once it is
    back, not only after the queue is empty."""
    redis = RedisServer().start()
    now = [0.0]
    told: list[str] = []
    link = Link(redis.url, told.append, clock=lambda: now[0])
    origin = origin_of("http://127.0.0.1:9")
    pacer = SharedPacer(link, {origin: 0.02})
    released: list[int] = []

    async def caller(n: int) -> None:
        await pacer.wait(origin)
        released.append(n)
        if len(released) == 3:  # paced alone by now: Redis comes back
            redis.start()
            now[0] += RETRY_S + 1

    redis.stop()
    try:
        await asyncio.gather(*(caller(n) for n in range(12)))
    finally:
        await link.aclose()
        redis.stop()
    assert "unavailable" in told[0] and len(told) == 2 and "back" in told[1]
