"""The answer cache seen through the engine and the CLI (DESIGN.md §8): hits make no request,
another ``CACHE_VERSION`` forces live lookups, old answers are flagged stale, a corrupt cache
is rebuilt, re-verify bypasses it, and only answers (never decisions) are stored.
"""

from __future__ import annotations

import json
import time

from citelsp.resolution import cache as cache_module
from citelsp.resolution.cache import DAY_S, AnswerCache
from citelsp.resolution.crossref import parse_work
from citelsp.resolution.engine import Engine
from citelsp.resolution.outcome import Found
from citelsp.resolution.resolve import resolve_reference
from tests.apiserver import fixture
from tests.judged import judge_all
from tests.test_cache import flip_index_page
from tests.test_check_e2e import REAL_ONLY, by_key, check_json, start_server
from tests.test_engine import bib_refs, entry
from tests.test_engine_faults import REFS

REAL_DOI = "10.1038/s42256-024-00832-8"


async def verify(settings, text: str, **kwargs):
    engine = Engine(settings, arxiv_recheck_delay=0.05)
    try:
        return {v.reference.key: v for v in await judge_all(engine, bib_refs(text), **kwargs)}
    finally:
        await engine.aclose()


def verdicts(verified) -> dict[str, str]:
    return {k: v.judgement.verdict for k, v in verified.items()}


def asked_again(server, since: int) -> list[tuple]:
    """Requests after ``since`` other than outages (unrouted title searches, never cached).

    The invented DOI's title has no recorded search, so those searches are outages each run.
    """
    outages = {(s.endpoint, s.decoded_path, tuple(sorted(s.query.items())))
               for s in server.unmatched if s.decoded_path in ("/works", "/paper/search")}
    again = [(s.endpoint, s.decoded_path, tuple(sorted(s.query.items())))
             for s in server.requests[since:]]
    return [r for r in again if r not in outages]


async def test_a_cache_hit_makes_no_request(api_server, api_settings):
    first = await verify(api_settings, REFS)
    asked = len(api_server.requests)
    assert asked > 0
    second = await verify(api_settings, REFS)
    assert asked_again(api_server, asked) == []
    assert verdicts(second) == verdicts(first)
    assert second["nodoi"].judgement.verdict == "false"
    real = second["real"].resolution
    assert real.outcomes["crossref"].from_cache
    assert real.cache_age_days is not None and real.cache_age_days < 1
    assert not real.cache_stale_advisory


async def test_the_cached_resolution_is_the_live_one(api_server, api_settings):
    """Offline, a resolution runs on cached answers alone (in order, without a task per step)
    and reaches every outcome the live run reached, near matches included; outages were
    never stored, so those resolvers are the only ones that differ."""
    text = REFS + entry("near", "Effect of native oxide layers on copper thin-film tensile "
                              "properties: A study", author="Skarlinski, Michael D.", year=2015)
    live = await verify(api_settings, text)
    asked = len(api_server.requests)
    engine = Engine(api_settings, arxiv_recheck_delay=0.05)
    try:
        for ref in bib_refs(text):
            context = engine.context()
            context.offline = True
            cached = await resolve_reference(ref, context)
            before = live[ref.key].resolution.outcomes
            reached = {n for n, o in before.items() if o.status != "unreachable"}
            assert {n: _judged(cached.outcomes[n]) for n in reached} == {
                n: _judged(before[n]) for n in reached}, ref.key
    finally:
        await engine.aclose()
    assert len(api_server.requests) == asked
    assert live["near"].resolution.outcomes["crossref"].near_matches
    assert all(o.from_cache for o in cached.outcomes.values() if o.status != "skipped")


def _judged(outcome) -> tuple:
    return (outcome.status, outcome.queried_by, outcome.summary, outcome.reason,
            outcome.refutes_identifier, outcome.record, outcome.near_matches, outcome.conflicts)


async def test_another_cache_version_forces_live_lookups(api_server, api_settings, monkeypatch):
    await verify(api_settings, REFS)
    asked = len(api_server.requests)
    monkeypatch.setattr(cache_module, "CACHE_VERSION", "next-decision-version")
    again = await verify(api_settings, REFS)
    assert len(api_server.requests) == 2 * asked
    assert not again["real"].resolution.outcomes["crossref"].from_cache
    await verify(api_settings, REFS)
    assert asked_again(api_server, 2 * asked) == [], "the new version's answers are cached"


async def test_reverify_bypasses_the_cache_and_refreshes_it(api_server, api_settings):
    await verify(api_settings, REFS)
    first = sorted(api_server.questions(), key=repr)
    fresh = await verify(api_settings, REFS, refresh=True)
    again = sorted(api_server.questions()[len(first):], key=repr)
    assert again == first, "every question asked again (batches may group them otherwise)"
    assert not fresh["real"].resolution.outcomes["crossref"].from_cache


async def test_the_cache_holds_answers_not_decisions(api_server, api_settings):
    """Two entries citing one DOI under different titles are judged separately."""
    right = entry("right", "Augmenting large language models with chemistry tools",
                  doi=REAL_DOI)
    wrong = entry("wrong", "Developing functional musculoskeletal tissues through hypoxia",
                  author="Makris, Eleftherios", year=2014, doi=REAL_DOI)
    assert verdicts(await verify(api_settings, right)) == {"right": "true"}
    lookups = api_server.count("crossref", f"/works/{REAL_DOI}")
    judged = (await verify(api_settings, wrong))["wrong"]
    assert api_server.count("crossref", f"/works/{REAL_DOI}") == lookups
    assert judged.resolution.outcomes["crossref"].from_cache
    assert judged.judgement.verdict == "false"
    assert judged.judgement.item.reason_code == "DOI_TITLE_MISMATCH"


async def test_a_damaged_cache_of_ours_is_rebuilt(api_server, api_settings):
    first = await verify(api_settings, REFS)
    assert first["real"].judgement.verdict == "true"
    flip_index_page(api_settings.cache_dir / "cache.db")
    asked = len(api_server.requests)
    second = await verify(api_settings, REFS)
    assert asked_again(api_server, asked), "the damaged cache was dropped"
    asked = len(api_server.requests)
    third = await verify(api_settings, REFS)
    assert asked_again(api_server, asked) == [], "the rebuilt cache stores answers again"
    assert verdicts(first) == verdicts(second) == verdicts(third)


async def test_a_foreign_file_named_cache_db_is_left_alone(api_server, api_settings):
    cache_dir = api_settings.cache_dir
    cache_dir.mkdir(parents=True)
    foreign = b"this is not an sqlite database" * 100
    (cache_dir / "cache.db").write_bytes(foreign)
    first = await verify(api_settings, REFS)
    assert first["real"].judgement.verdict == "true"
    assert (cache_dir / "cache.db").read_bytes() == foreign
    assert sorted(p.name for p in cache_dir.iterdir()) == ["cache.db"]


def test_an_old_answer_is_flagged_stale_in_the_json_report(tmp_path):
    server = start_server()
    try:
        bib = tmp_path / "refs.bib"
        bib.write_text(REAL_ONLY, encoding="utf-8")
        cache_dir = tmp_path / "cache"
        fresh = by_key(check_json(server, bib, cache_dir))["real"]["outcome"]
        assert fresh["cache_stale_advisory"] is False and fresh["cache_age_days"] is None

        body = json.loads(fixture("crossref/10.1038_s42256-024-00832-8.json").read_text())
        forty_days_ago = time.time() - 40 * DAY_S
        old = AnswerCache(cache_dir, clock=lambda: forty_days_ago)
        old.put("crossref", "doi", REAL_DOI, Found((parse_work(body["message"]),)))
        old.close()

        asked = len(server.requests)
        stale = by_key(check_json(server, bib, cache_dir))["real"]
        assert len(server.requests) == asked
        assert stale["outcome"]["cache_stale_advisory"] is True
        assert 39.9 < stale["outcome"]["cache_age_days"] < 40.1
        assert stale["summary"]["lookup_verified"] == "true"
    finally:
        server.stop()


async def test_records_carrying_retraction_status_live_30_days(api_server, api_settings):
    await verify(api_settings, REFS)
    in_31_days = AnswerCache(api_settings.cache_dir, clock=lambda: time.time() + 31 * DAY_S)
    in_89_days = AnswerCache(api_settings.cache_dir, clock=lambda: time.time() + 89 * DAY_S)
    try:
        assert in_31_days.get("crossref", "doi", REAL_DOI) is None
        assert in_31_days.get("datacite", "doi", "10.5281/zenodo.1001813") is not None
        assert in_89_days.get("doi_registry", "agency", "10.1038") is not None
    finally:
        in_31_days.close()
        in_89_days.close()
