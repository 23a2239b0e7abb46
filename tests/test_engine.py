"""The engine and the per-reference plan (resolve.py) against the loopback API server.

Each test is one rule of DESIGN.md §4–§5: agency routing, the Handle System's word on existence,
arXiv's double check, coverage gaps, title search over every candidate, manual entries, and
concurrency across hosts with each host's pacing respected.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from citelsp.config import Endpoint, Settings
from citelsp.documents.bibtex import parse_bibtex
from citelsp.documents.model import Reference
from citelsp.resolution import asking
from citelsp.resolution.crossref import parse_work
from citelsp.resolution.engine import Engine
from citelsp.resolution.pacing import Pacer, origin_of
from tests.apibatch import questions
from tests.apiserver import ApiServer, fixture, load_default_routes
from tests.judged import Judged, judge_all

FAST_RECHECK = 0.3


def bib_refs(text: str) -> list[Reference]:
    return list(parse_bibtex("file:///work/refs.bib", text).references)


def entry(key: str, title: str, *, author: str = "Bran, Andres M.", year: int = 2024,
          kind: str = "article", **fields: str) -> str:
    extra = "".join(f"  {name} = {{{value}}},\n" for name, value in fields.items())
    return (f"@{kind}{{{key},\n  title = {{{title}}},\n  author = {{{author}}},\n"
            f"  year = {{{year}}},\n{extra}}}\n")


async def verify(settings: Settings, text: str, **engine_kwargs) -> dict[str, Judged]:
    engine = Engine(settings, **{"arxiv_recheck_delay": FAST_RECHECK, **engine_kwargs})
    try:
        done = await judge_all(engine, bib_refs(text))
    finally:
        await engine.aclose()
    return {v.reference.key: v for v in done}


def p0_codes(v: Judged) -> set[str]:
    return {f.reason_code for f in v.judgement.findings if f.priority == "P0"}


def all_codes(v: Judged) -> set[str]:
    return {f.reason_code for f in v.judgement.findings}


# --- routing and existence (DESIGN.md §4 routing, §5) -------------------------------------------


async def test_crossref_is_not_asked_for_a_datacite_doi(api_server, api_settings):
    text = entry("z", "Signal Integration At Spherical Bushy Cells Enhances Representation Of "
                 "Temporal Structure But Limits Its Range", author="Keine, Christian", year=2017,
                 kind="misc", doi="10.5281/zenodo.1001813")
    v = (await verify(api_settings, text))["z"]
    assert v.judgement.verdict == "true"
    outcomes = v.resolution.outcomes
    assert outcomes["crossref"].status == "skipped"
    assert "DataCite" in outcomes["crossref"].summary
    assert outcomes["datacite"].status == "matched"
    assert api_server.count("crossref") == 0
    assert api_server.count("doi_registry", "/doiRA/10.5281") == 1


async def test_handle_100_refutes_even_with_crossref_down(api_server, api_settings):
    api_server.fail("crossref", 503)
    text = entry("x", "A study of things that never were", doi="10.1371/notarealdoi")
    v = (await verify(api_settings, text))["x"]
    assert v.judgement.verdict == "false"
    assert p0_codes(v) == {"DOI_REFUTED"}
    assert v.resolution.outcomes["crossref"].status == "unreachable"
    refuting = [o for o in v.resolution.outcomes.values() if o.refutes_identifier]
    assert [o.resolver for o in refuting] == ["doi_registry"]


ARXIV_DOI = "10.48550/arxiv.2312.07559"
"""Recorded: a Handle answer (responseCode 1) and a Crossref 404; no DataCite body."""


async def test_handle_1_overrides_the_authoritative_404(api_server, api_settings):
    api_server.fail("semantic_scholar", 503)
    text = entry("a", "An unrelated cited title about nothing", doi=ARXIV_DOI)
    v = (await verify(api_settings, text))["a"]
    datacite = v.resolution.outcomes["datacite"]
    assert datacite.status == "unmatched" and datacite.queried_by == "title"
    assert datacite.reason == "DOI_EXISTS_TITLE_UNVERIFIABLE"
    assert "coverage gap" in datacite.summary
    assert v.judgement.verdict == "unresolvable"
    assert not p0_codes(v)
    assert api_server.count("crossref", f"/works/{ARXIV_DOI}") == 0


async def test_authoritative_404_counts_while_the_handle_is_unreachable(api_server, api_settings):
    api_server.fail("semantic_scholar", 503)
    api_server.fail("handle", 503)
    text = entry("a", "An unrelated cited title about nothing", doi=ARXIV_DOI)
    v = (await verify(api_settings, text))["a"]
    assert v.judgement.verdict == "false"
    assert v.resolution.outcomes["datacite"].refutes_identifier
    assert "Handle System unreachable" in v.resolution.outcomes["datacite"].summary


async def test_non_authoritative_404_never_refutes(api_server, api_settings):
    """doiRA down: no agency is known, so Crossref's and DataCite's 404s are coverage gaps."""
    api_server.fail("doi_registry", 503)
    api_server.fail("handle", 503)
    text = entry("z", "A dataset nobody registered", kind="misc",
                 doi="10.5281/zenodo.999999999")
    v = (await verify(api_settings, text))["z"]
    outcomes = v.resolution.outcomes
    assert (outcomes["crossref"].status, outcomes["crossref"].queried_by) == ("unmatched", "title")
    assert outcomes["datacite"].status == "unmatched"
    assert not outcomes["datacite"].refutes_identifier
    assert "existence unknown" in outcomes["crossref"].summary
    assert v.judgement.verdict == "unresolvable"
    assert not p0_codes(v)


async def test_doira_never_decides_existence_alone(api_server, api_settings):
    """The recorded doiRA row for 10.99999 says "DOI does not exist"; that only routes."""
    text = entry("q", "A work under an unknown prefix", doi="10.99999/abc")
    v = (await verify(api_settings, text))["q"]
    assert api_server.count("doi_registry", "/doiRA/10.99999") == 1
    assert v.resolution.agency is None
    assert v.judgement.verdict == "unresolvable"
    assert not p0_codes(v)


async def test_offline_with_a_cached_404_but_no_handle_answer_refutes_nothing(
        api_server, api_settings):
    api_server.fail("semantic_scholar", 503)
    api_server.fail("handle", 503)
    text = entry("a", "An unrelated cited title about nothing", doi=ARXIV_DOI)
    online = (await verify(api_settings, text))["a"]
    assert online.judgement.verdict == "false"
    asked = len(api_server.requests)
    offline = (await verify(api_settings.with_changes(offline=True), text))["a"]
    assert len(api_server.requests) == asked
    assert offline.resolution.outcomes["datacite"].from_cache
    assert offline.judgement.verdict == "unresolvable"
    assert "not asked offline" in offline.resolution.outcomes["datacite"].summary


async def test_non_authoritative_404_is_reported_as_a_title_query(api_server, api_settings):
    """Triangulating, so that OpenAlex is asked although Crossref matched."""
    text = entry("r", "Augmenting large language models with chemistry tools",
                 doi="10.1038/s42256-024-00832-8")
    v = (await verify(api_settings.with_changes(triangulate=True), text))["r"]
    openalex = v.resolution.outcomes["openalex"]
    assert (openalex.status, openalex.queried_by) == ("unmatched", "title")
    assert "not evidence" in openalex.summary
    assert v.judgement.verdict == "true"


# --- arXiv (DESIGN.md §5) -------------------------------------------------------------------------

ARXIV_ID = "2101.00001"
EMPTY_FEED = fixture("arxiv/id_0000.0000.xml")
"""A recorded feed with no entry; it does not depend on the id asked."""


def arxiv_ref(key: str = "ax") -> str:
    return entry(key, "A preprint that was never posted", eprint=ARXIV_ID,
                 archiveprefix="arXiv")


def arxiv_times(server: ApiServer) -> list[float]:
    return [s.at for s in server.requests if s.endpoint == "arxiv"]


async def test_arxiv_refutes_only_after_two_empty_answers_apart(api_server, api_settings):
    api_server.add("arxiv", "GET", "", query={"id_list": ARXIV_ID}, body=EMPTY_FEED)
    v = (await verify(api_settings, arxiv_ref()))["ax"]
    assert v.judgement.verdict == "false"
    assert p0_codes(v) == {"ARXIV_ID_REFUTED"}
    first, second = arxiv_times(api_server)
    assert second - first >= FAST_RECHECK
    again = (await verify(api_settings, arxiv_ref()))["ax"]
    assert len(arxiv_times(api_server)) == 2, "a cached double miss is not asked again"
    assert again.judgement.verdict == "false"


async def until(condition, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition never held"
        await asyncio.sleep(0.01)


async def test_arxiv_empty_then_found_is_a_match(api_server, api_settings):
    api_server.add("arxiv", "GET", "", query={"id_list": ARXIV_ID}, body=EMPTY_FEED)
    text = entry("hb", "Heat-bath random walks with Markov bases", author="Stanley, Caprice",
                 year=2016, eprint="1605.08386", archiveprefix="arXiv")
    api_server.add("arxiv", "GET", "", query={"id_list": "1605.08386"}, body=EMPTY_FEED)
    task = asyncio.ensure_future(verify(api_settings, text))
    await until(lambda: len(arxiv_times(api_server)) == 1)
    api_server.add("arxiv", "GET", "", query={"id_list": "1605.08386"},
                   body=fixture("arxiv/id_1605.08386.xml"))
    v = (await task)["hb"]
    assert v.resolution.outcomes["arxiv"].status == "matched"
    assert v.judgement.verdict == "true"


async def test_arxiv_empty_then_unreachable_refutes_nothing_and_caches_nothing(
        api_server, api_settings):
    api_server.add("arxiv", "GET", "", query={"id_list": ARXIV_ID}, body=EMPTY_FEED)
    task = asyncio.ensure_future(verify(api_settings, arxiv_ref()))
    await until(lambda: len(arxiv_times(api_server)) == 1)
    api_server.fail("arxiv", 503)
    v = (await task)["ax"]
    assert v.resolution.outcomes["arxiv"].status == "unreachable"
    assert v.judgement.verdict != "false" and not p0_codes(v)
    await verify(api_settings, arxiv_ref())
    assert len(arxiv_times(api_server)) == 3, "the single miss was not cached"


async def test_arxiv_error_feed_is_an_invalid_identifier_never_a_refutation(
        api_server, api_settings):
    api_server.add("arxiv", "GET", "", query={"id_list": ARXIV_ID}, status=400,
                   body=fixture("arxiv/id_abc.400.xml"))
    v = (await verify(api_settings, arxiv_ref()))["ax"]
    arxiv = v.resolution.outcomes["arxiv"]
    assert (arxiv.status, arxiv.reason) == ("unmatched", "INVALID_IDENTIFIER")
    assert not arxiv.refutes_identifier
    assert v.judgement.verdict != "false"
    assert len(arxiv_times(api_server)) == 1


def test_arxiv_recheck_waits_three_seconds_by_default(api_settings):
    assert asking.ARXIV_RECHECK_DELAY_S == 3.0
    engine = Engine(api_settings)
    assert engine.context().arxiv_recheck_delay == 3.0
    asyncio.run(engine.aclose())


# --- title search and manual entries --------------------------------------------------------------


async def test_title_search_examines_every_candidate(api_server, api_settings):
    """The recorded OpenAlex answer, reordered so the exact title comes second."""
    title = "Augmenting large language models with chemistry tools"
    body = json.loads(fixture(
        "openalex/search/title_Augmenting_large_language_models_with_chemistry_tools.json"
    ).read_text())
    body["results"].reverse()
    assert body["results"][0]["title"] != title
    api_server.add_json("openalex", "/works", body, query={"search": title})
    api_server.fail("crossref", 503)
    v = (await verify(api_settings, entry("t", title)))["t"]
    openalex = v.resolution.outcomes["openalex"]
    assert (openalex.status, openalex.queried_by) == ("matched", "title")
    assert openalex.record.doi == "10.1038/s42256-024-00832-8"


async def test_manual_entry_asks_only_for_retraction(api_server, api_settings):
    text = entry("m", "Augmenting large language models with chemistry tools",
                 doi="10.1038/s42256-024-00832-8", citelsp="manual")
    v = (await verify(api_settings, text))["m"]
    assert {o.status for o in v.resolution.outcomes.values()} == {"skipped"}
    assert [(s.endpoint, s.decoded_path) for s in api_server.requests] == [
        ("crossref", "/works/10.1038/s42256-024-00832-8")
    ]
    assert all_codes(v) == {"NO_AUTOMATED_SOURCE"}


# --- concurrency across hosts, pacing per host (DESIGN.md §9) -------------------------------------

PACED_DOIS = (
    "10.1038/s42256-024-00832-8",
    "10.1016/j.addr.2015.01.008",
    "10.1016/j.xgen.2025.100814",
    "10.1016/j.bbcan.2023.188947",
    "10.1016/j.semcdb.2016.08.024",
    "10.1038/s41598-018-27044-6",
    "10.1186/1471-2148-11-4",
    "10.1023/a:1007154515475",
)
INTERVAL_S = 0.1
SERVER_DELAY_S = 0.2


def cited_as_recorded(doi: str, key: str) -> str:
    """An entry citing the work exactly as its recorded Crossref body describes it."""
    name = doi.replace("/", "_").replace(":", "_")
    record = parse_work(json.loads(fixture(f"crossref/{name}.json").read_text())["message"])
    author = record.authors[0].family if record.authors else "Anonymous"
    return entry(key, record.title or "", author=author, year=min(record.years), doi=doi)


@pytest.fixture
def paced_server():
    """A second loopback host (127.0.0.2) serving Crossref, so pacing has its own host."""
    server = ApiServer(host="127.0.0.2").start()
    load_default_routes(server)
    try:
        yield server
    finally:
        server.stop()


async def test_dois_are_batched_and_each_host_is_paced(api_server, paced_server, tmp_path,
                                                      monkeypatch):
    """Crossref on its own host, paced at 100 ms; every other source on a slow host, unpaced.

    The references' DOIs reach Crossref in a few batch requests, each DOI once, and those
    requests keep the host's interval. One warm-up reference first, so the measured requests
    do not include the client's one-off start-up (its first connection). The gaps are those
    between the moments requests left (``Pacer.sent``): arrival times add the scheduling
    jitter of a loaded machine, which is no fault of the pacing.
    """
    sent: list[tuple[tuple, float]] = []
    record = Pacer.sent

    def recording_sent(pacer: Pacer, origin, lane: str = "") -> None:
        sent.append((origin, time.monotonic()))
        record(pacer, origin, lane)

    monkeypatch.setattr(Pacer, "sent", recording_sent)
    api_server.delay = SERVER_DELAY_S
    base = api_server.settings(cache_dir=tmp_path / "cache", use_cache=False)
    endpoints = dict(base.endpoints)
    endpoints["crossref"] = Endpoint(paced_server.url_for("crossref"), int(INTERVAL_S * 1000))
    settings = base.with_changes(endpoints=endpoints)
    text = "".join(cited_as_recorded(doi, f"r{i}") for i, doi in enumerate(PACED_DOIS))

    engine = Engine(settings)
    try:
        await judge_all(engine, bib_refs(cited_as_recorded(PACED_DOIS[0], "warm")))
        paced_before, sent_before = len(paced_server.requests), len(sent)
        verified = await judge_all(engine, bib_refs(text))
    finally:
        await engine.aclose()

    assert {v.judgement.verdict for v in verified} == {"true"}
    measured = [s for s in paced_server.requests[paced_before:] if s.endpoint == "crossref"]
    asked = sorted(path for s in measured for _e, path in questions(s))
    assert asked == sorted(f"/works/{doi}" for doi in PACED_DOIS[1:]), "each DOI once"
    assert len(measured) <= 3, "batched"
    crossref = origin_of(paced_server.url_for("crossref"))
    times = sorted(at for origin, at in sent[sent_before:] if origin == crossref)
    assert len(times) == len(measured)
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    assert all(gap >= INTERVAL_S - 1e-6 for gap in gaps), gaps
    assert paced_server.unmatched == []


def test_fixture_paths_exist():
    """The bodies this module serves by name are recorded ones."""
    for name in ("arxiv/id_0000.0000.xml", "arxiv/id_1605.08386.xml", "arxiv/id_abc.400.xml"):
        assert Path(fixture(name)).stat().st_size > 0
