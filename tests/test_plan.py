"""The request plan (DESIGN.md §4 "Request plan"): what each reference asks of whom.

The registering source first, batched across references; the others skipped once it
matched; Semantic Scholar only when Crossref and OpenAlex both missed and nothing is
refuted; every question asked once per run; arXiv's recheck riding in a batch;
``triangulate`` asking every source.
"""

from __future__ import annotations

import pytest

from citelsp.resolution.engine import Engine
from tests.apiserver import ApiServer, fixture
from tests.judged import judge_all
from tests.test_engine import ARXIV_ID, EMPTY_FEED, bib_refs, cited_as_recorded, entry

REAL_DOI = "10.1038/s42256-024-00832-8"
REAL_TITLE = "Augmenting large language models with chemistry tools"
FAKE_DOI = "10.1371/notarealdoi"
UNKNOWN_TITLE = "Quantum Gravitational Effects in Medieval Bread Baking"
RECORDED_DOIS = (
    "10.1038/s42256-024-00832-8",
    "10.1016/j.addr.2015.01.008",
    "10.1016/j.xgen.2025.100814",
    "10.1145/3448016.3452841",
    "10.1186/1471-2148-11-4",
    "10.1007/s40278-023-41815-2",
)
"""Recorded Crossref works whose prefixes have recorded doiRA rows."""


async def verify(settings, text: str):
    engine = Engine(settings, arxiv_recheck_delay=0.3)
    try:
        return {v.reference.key: v for v in await judge_all(engine, bib_refs(text))}
    finally:
        await engine.aclose()


@pytest.fixture
def misses(api_server: ApiServer) -> ApiServer:
    """Title searches that find nothing anywhere (recorded empty answers, any query)."""
    api_server.add("crossref", "GET", "/works",
                   body=fixture("crossref/search/title_askldjrq3rjaw938h.json"))
    api_server.add("openalex", "GET", "/works", body='{"meta": {"count": 0}, "results": []}')
    api_server.add("semantic_scholar", "GET", "/paper/search",
                   body=fixture("semantic_scholar/search/n0_r3sult_s3arch_t3rm.json"))
    return api_server


async def test_dois_of_many_references_go_in_one_batch(api_server, api_settings):
    text = "".join(cited_as_recorded(doi, f"r{i}") for i, doi in enumerate(RECORDED_DOIS))
    verified = await verify(api_settings, text)
    assert {v.judgement.verdict for v in verified.values()} == {"true"}
    assert api_server.count("crossref") == 1
    assert api_server.count("doi_registry") == 1, "one doiRA request for every prefix"
    assert api_server.asked("crossref") == len(RECORDED_DOIS)
    for v in verified.values():
        for name in ("openalex", "semantic_scholar"):
            outcome = v.resolution.outcomes[name]
            assert (outcome.status, outcome.summary) == ("skipped",
                                                         "not needed: matched by Crossref")


async def test_the_same_doi_and_title_are_asked_once_per_run(api_server, api_settings):
    text = (entry("a", REAL_TITLE, doi=REAL_DOI) + entry("b", REAL_TITLE, doi=REAL_DOI.upper())
            + entry("c", REAL_TITLE) + entry("d", REAL_TITLE.upper()))
    verified = await verify(api_settings.with_changes(use_cache=False), text)
    assert {v.judgement.verdict for v in verified.values()} == {"true"}
    assert api_server.asked("crossref", f"/works/{REAL_DOI}") == 1
    titles = [s for s in api_server.requests if s.query.get("query.title")]
    assert len(titles) == 1


async def test_title_only_asks_crossref_and_openalex_and_not_semantic_scholar_on_a_match(
        api_server, api_settings):
    v = (await verify(api_settings, entry("t", REAL_TITLE)))["t"]
    outcomes = v.resolution.outcomes
    assert outcomes["crossref"].status == "matched"
    assert outcomes["openalex"].status == "matched", "asked together with Crossref"
    assert api_server.count("semantic_scholar") == 0
    assert outcomes["semantic_scholar"].summary == "not needed: matched by Crossref"


async def test_semantic_scholar_searches_only_when_neither_matched(misses, api_settings):
    v = (await verify(api_settings, entry("i", UNKNOWN_TITLE)))["i"]
    assert misses.count("semantic_scholar", "/paper/search") == 1
    assert {o.status for n, o in v.resolution.outcomes.items()
            if n in ("crossref", "openalex", "semantic_scholar")} == {"unmatched"}
    assert v.judgement.item.reason_code == "NOT_FOUND_IN_INDEXES"


async def test_a_refuted_doi_asks_no_other_index(misses, api_settings):
    v = (await verify(api_settings, entry("f", UNKNOWN_TITLE, doi=FAKE_DOI)))["f"]
    assert v.judgement.verdict == "false"
    assert v.judgement.item.reason_code == "DOI_REFUTED"
    assert misses.count("semantic_scholar") == 0
    assert misses.asked("openalex", FAKE_DOI) == 0
    assert misses.count("openalex", "/works") == 1, "the title is still searched"
    s2 = v.resolution.outcomes["semantic_scholar"]
    assert (s2.status, s2.summary) == ("skipped", "not needed: the cited identifier is refuted")


async def test_triangulate_asks_every_source(api_server, api_settings):
    settings = api_settings.with_changes(triangulate=True)
    v = (await verify(settings, entry("r", REAL_TITLE, doi=REAL_DOI)))["r"]
    assert v.judgement.verdict == "true"
    assert api_server.asked("openalex", REAL_DOI) == 1
    assert api_server.asked("semantic_scholar", REAL_DOI) == 1
    assert v.resolution.outcomes["semantic_scholar"].status == "matched"


async def test_the_arxiv_recheck_rides_in_a_batch(api_server, api_settings):
    """Two ids that arXiv does not know: two batch requests in all, not two per id."""
    other = "2101.00002"
    for arxiv_id in (ARXIV_ID, other):
        api_server.add("arxiv", "GET", "", query={"id_list": arxiv_id}, body=EMPTY_FEED)
    text = "".join(entry(k, f"A preprint numbered {k}", eprint=i, archiveprefix="arXiv")
                   for k, i in (("a", ARXIV_ID), ("b", other)))
    verified = await verify(api_settings, text)
    assert {v.judgement.item.reason_code for v in verified.values()} == {"ARXIV_ID_REFUTED"}
    assert api_server.count("arxiv") == 2
    assert api_server.asked("arxiv") == 4
    first, second = sorted(s.at for s in api_server.requests if s.endpoint == "arxiv")
    assert second - first >= 0.3


async def test_the_arxiv_doi_of_a_matched_arxiv_id_is_not_asked_again(api_server, api_settings):
    text = entry("hb", "Heat-bath random walks with Markov bases", author="Stanley, Caprice",
                 year=2016, eprint="1605.08386", archiveprefix="arXiv",
                 doi="10.48550/arXiv.1605.08386")
    v = (await verify(api_settings, text))["hb"]
    assert v.resolution.outcomes["arxiv"].status == "matched"
    assert v.resolution.outcomes["datacite"].summary == "not needed: matched by arXiv"
    assert api_server.count("datacite") == 0
