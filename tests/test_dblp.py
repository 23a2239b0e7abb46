"""DBLP as a free title source: its search JSON read from bodies dblp.org really sent, asked
only when Crossref and OpenAlex found no exact title, and reported like the other extra
resolvers (the seed-000 summary keeps its four keys)."""

from __future__ import annotations

import json

from citelsp.config import DEFAULT_ENDPOINTS, Settings
from citelsp.resolution.dblp import DblpClient, _hits
from citelsp.resolution.http import HttpClient
from citelsp.resolution.outcome import Found, Unreachable
from citelsp.resolution.pacing import Pacer, origin_of
from citelsp.verdict.reduce import SUMMARY_RESOLVERS, summary_outcomes
from tests.apiserver import fixture
from tests.test_engine import entry, verify

THIRTY = json.loads(fixture("dblp/search_test_30.json").read_text())
ONE = json.loads(fixture("dblp/search_test_1.json").read_text())
YOO = "Test data regeneration - generating new test data from existing test data"
"""Shin Yoo and Mark Harman, Softw. Test. Verif. Reliab. 22(3), 2012: a hit of THIRTY."""


def test_both_author_forms_single_elements_entities_and_the_final_period():
    records = _hits(THIRTY)
    assert len(records) == 30
    yoo = next(r for r in records if r.source_id == "journals/stvr/YooH12a")
    assert yoo.title == YOO, "DBLP's closing period is not part of the title"
    assert [p.family for p in yoo.authors] == ["Yoo", "Harman"]
    assert (yoo.years, yoo.volume, yoo.issue, yoo.first_page) == ((2012,), "22", "3", "171")
    assert yoo.doi == "10.1002/stvr.435" and yoo.venue == "Softw. Test., Verif. Reliab."
    assert yoo.url == "https://dblp.org/rec/journals/stvr/YooH12a"
    alone = next(r for r in records if r.source_id == "conf/date/Pomeranz14")
    assert [p.family for p in alone.authors] == ["Pomeranz"], "one author comes as a string"
    thesis = next(r for r in records if r.source_id == "phd/hal/Bessayah10")
    assert thesis.venue is None and "l'injection" in thesis.title, "&apos; is decoded"
    current = _hits(ONE)[0]
    assert [p.family for p in current.authors][:2] == ["Shinogi", "Yamada"], "{@pid, text}"
    assert current.title.endswith("Full-Scan Test Architecture")


def test_no_hit_is_an_empty_answer_and_one_hit_may_come_alone():
    empty = json.loads(json.dumps(ONE))
    empty["result"]["hits"] = {"@total": "0", "@computed": "0", "@sent": "0", "@first": "0"}
    assert _hits(empty) == []
    single = json.loads(json.dumps(ONE))
    single["result"]["hits"]["hit"] = single["result"]["hits"]["hit"][0]
    assert len(_hits(single)) == 1, "a list of one may come as the element itself"


async def test_the_search_request_and_its_answer(api_server, api_settings):
    api_server.add("dblp", "GET", "/search/publ/api", query={"q": YOO},
                   body=fixture("dblp/search_test_30.json"))
    async with HttpClient(api_settings) as http:
        found = await DblpClient(http, api_settings).search_title(YOO)
    assert isinstance(found, Found) and len(found.records) == 30
    (seen,) = [s for s in api_server.requests if s.endpoint == "dblp"]
    assert seen.query == {"q": YOO, "format": "json", "h": "5"}
    api_server.html_page("dblp")
    async with HttpClient(api_settings) as http:
        refused = await DblpClient(http, api_settings).search_title(YOO)
    assert isinstance(refused, Unreachable)


def test_dblp_is_paced_as_its_faq_asks():
    assert DEFAULT_ENDPOINTS["dblp"].min_interval_ms == 2000
    assert Pacer.from_settings(Settings()).interval(origin_of("https://dblp.org")) == 2.0


def _nothing_elsewhere(api_server) -> None:
    api_server.add("crossref", "GET", "/works",
                   body=fixture("crossref/search/title_askldjrq3rjaw938h.json"))
    api_server.add("openalex", "GET", "/works", body='{"meta": {"count": 0}, "results": []}')
    api_server.add("semantic_scholar", "GET", "/paper/search",
                   body=fixture("semantic_scholar/search/n0_r3sult_s3arch_t3rm.json"))
    api_server.add("dblp", "GET", "/search/publ/api", body=fixture("dblp/search_test_30.json"))


async def test_a_title_only_dblp_hit_verifies_the_reference(api_server, api_settings):
    """Crossref and OpenAlex have nothing; DBLP has the paper: verified by DBLP, asked once,
    with Semantic Scholar; the summary keeps four keys and carries DBLP's match."""
    _nothing_elsewhere(api_server)
    text = entry("yoo", YOO, author="Yoo, Shin and Harman, Mark", year=2012)
    text += entry("invented", "Test oracles for quantum tea brewing", author="Nobody, A.",
                  year=2012)
    verified = await verify(api_settings, text)
    yoo = verified["yoo"]
    assert yoo.judgement.verdict == "true"
    assert yoo.resolution.outcomes["dblp"].status == "matched"
    assert yoo.resolution.outcomes["dblp"].url.startswith("https://dblp.org/search?q=")
    summary = summary_outcomes(yoo.resolution.outcomes, yoo.resolution.authoritative)
    assert tuple(summary) == SUMMARY_RESOLVERS
    assert summary["crossref"]["status"] == "matched"
    assert summary["crossref"]["response_summary"].startswith("dblp:")
    invented = verified["invented"]
    assert invented.resolution.outcomes["dblp"].status == "unmatched"
    assert invented.judgement.verdict != "false", "absence from DBLP is never evidence"
    assert api_server.count("dblp") == 2


async def test_dblp_is_not_asked_when_a_broad_index_matched(api_server, api_settings):
    text = entry("real", "Augmenting large language models with chemistry tools",
                 author="Bran, Andres M.", year=2024)
    v = (await verify(api_settings, text))["real"]
    assert v.judgement.verdict == "true"
    assert v.resolution.outcomes["dblp"].status == "skipped"
    assert v.resolution.outcomes["dblp"].summary.startswith("not needed: matched by")
    assert api_server.count("dblp") == 0
