"""Seed 001 for Chinese-language literature, through the engine, the real HttpClient and the
loopback API server.

Bodies: the recorded NCBI ESearch pages (``fixtures/api/eutils``, some with one deliberate
change, marked ``derived``), the hand-written ESummary of PMID 38129175 that seed 001 quotes,
and doi.org / Handle answers in the shapes seed 001 documents (written inline). Each test is
one branch of the seed's resolution waterfall.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from citelsp.config import Endpoint, Settings
from citelsp.documents.bibtex import parse_bibtex
from citelsp.documents.model import Person, Work
from citelsp.resolution.chinese_literature import (
    Journal,
    bind_title,
    coordinates,
    default_bridge,
    is_applicable,
    structural_conflicts,
)
from citelsp.resolution.doi_registry import CSL_JSON
from citelsp.resolution.engine import Engine
from citelsp.resolution.outcome import Outcome, Record
from tests.apiserver import ApiServer, fixture
from tests.judged import Judged, judge_all
from tests.test_check_e2e import assert_valid_report, by_key, reasons, run_cli

DOI = "10.3760/cma.j.cn112137-20231008-00670"
TITLE = "宫颈腺癌中ProEXC和PRMT5的表达及其临床意义"
OTHER_TITLE = "宫颈鳞癌中p16的表达及其预后意义"
PMID = "38129175"
TA_TERM = '"Zhonghua Yi Xue Za Zhi"[ta]'
PAGE_TERM = '"Zhonghua Yi Xue Za Zhi"[ta] AND 103[vi] AND 3967[pg]'
CNKI_DOI = "10.13209/j.0479-8023.2019.001"
EMAIL = "tests@example.org"


# --- helpers ------------------------------------------------------------------------------------


def derived(name: str, change: Callable[[dict], object]) -> str:
    """A recorded JSON body with one deliberate change (for shapes nobody recorded)."""
    body = json.loads(fixture(name).read_text())
    change(body)
    return json.dumps(body)


def esearch_page(count: int, ids: list[str]) -> str:
    """The recorded one-hit ESearch page with its count and ids changed (derived)."""
    def change(body: dict) -> None:
        body["esearchresult"].update(count=str(count), retmax=str(len(ids)), idlist=ids)

    return derived("eutils/esearch_unique_term.json", change)


def esummary(change: Callable[[dict], object]) -> str:
    """The hand-written ESummary of PMID 38129175 with one change to its document."""
    return derived("eutils/esummary_pubmed_38129175.json", lambda b: change(b["result"][PMID]))


def route_search(server: ApiServer, term: str, body: str | Path) -> None:
    server.add("eutils", "GET", "/esearch.fcgi", query={"db": "pubmed", "term": term}, body=body)


def route_agency(server: ApiServer, prefix: str, agency: str) -> None:
    """doiRA as seed 001 quotes it (``[{"DOI": prefix, "RA": agency}]``)."""
    server.add_json("doi_registry", f"/doiRA/{prefix}", [{"DOI": prefix, "RA": agency}])


def route_csl(server: ApiServer, doi: str, title: str) -> None:
    """The CSL item seed 001 shows for the ISTIC DOI, with ``title`` as given."""
    server.add_json("doi_registry", f"/{doi}", {
        "DOI": doi, "title": title, "container-title": "中华医学杂志", "volume": "103",
        "issue": "48", "page": "3967", "type": "article-journal",
        "author": [{"given": "Cui Hongxia"}],
    }, content_type=CSL_JSON)


def route_handle(server: ApiServer, doi: str, exists: bool) -> None:
    code = 1 if exists else 100
    server.add_json("handle", f"/api/handles/{doi}", {"responseCode": code, "handle": doi},
                    status=200 if exists else 404)


def route_pubmed_hit(server: ApiServer) -> None:
    """Journal indexed, one record at volume 103 page 3967 (seed 001 §4c), its DOI ISTIC's."""
    route_search(server, TA_TERM, esearch_page(19347, [PMID]))
    route_search(server, PAGE_TERM, esearch_page(1, [PMID]))
    route_agency(server, "10.3760", "ISTIC")


def entry(key: str = "cn", *, title: str = TITLE, doi: str | None = None,
          journal: str | None = "中华医学杂志", author: str = "Cui, Hongxia",
          year: int | None = 2023, volume: str | None = "103",
          pages: str | None = "3967--3971", **more: str) -> str:
    values = {"title": title, "author": author, "year": year, "journal": journal,
              "volume": volume, "pages": pages, "doi": doi, **more}
    body = "".join(f"  {k} = {{{v}}},\n" for k, v in values.items() if v is not None)
    return f"@article{{{key},\n{body}}}\n"


async def verify(settings: Settings, text: str) -> tuple[dict[str, Judged], Engine]:
    engine = Engine(settings, arxiv_recheck_delay=0.01)
    try:
        done = await judge_all(engine, list(parse_bibtex("file:///w/refs.bib", text).references))
    finally:
        await engine.aclose()
    return {v.reference.key: v for v in done}, engine


async def one(settings: Settings, text: str) -> Judged:
    return next(iter((await verify(settings, text))[0].values()))


def chinese(v: Judged) -> Outcome:
    return v.resolution.outcomes["chinese_literature"]


def item_codes(v: Judged) -> set[str]:
    item = v.judgement.item
    return set() if item is None else {item.reason_code, *item.other_reasons}


def row(v: Judged, code: str) -> str:
    """The priority of ``code``'s checklist row, which must be on the reference's item (first
    or among ``other_reasons``: the general indexes may add a more urgent reason of their own)."""
    assert code in item_codes(v), (code, v.judgement.item)
    return next(f.priority for f in v.judgement.findings if f.reason_code == code)


def eutils_terms(server: ApiServer) -> list[str]:
    return [s.query["term"] for s in server.requests
            if s.endpoint == "eutils" and s.path == "/esearch.fcgi"]


# --- Stage 0 ------------------------------------------------------------------------------------


async def test_english_reference_is_skipped_without_a_request(api_server, api_settings):
    text = entry(title="A study of cervical adenocarcinoma", journal="Journal of Things",
                 author="Smith, John")
    v = await one(api_settings, text)
    assert chinese(v).status == "skipped"
    assert chinese(v).reason is None
    assert "not Chinese" in chinese(v).summary
    assert api_server.count("eutils") == 0
    assert not item_codes(v) & {"NO_ISSN_MAPPING", "NCBI_EMAIL_MISSING"}


def test_applicability_reads_local_signals_and_a_known_agency():
    assert is_applicable(Work(title=TITLE))
    assert is_applicable(Work(title="Expression", venue="中华医学杂志"))
    assert is_applicable(Work(title="Gongjing xianai", language="zh-CN"))
    assert is_applicable(Work(title="Gongjing xianai", language="chi"))
    assert not is_applicable(Work(title="Gongjing xianai", venue="Zhonghua Yi Xue Za Zhi"))
    assert is_applicable(Work(title="Gongjing xianai"), agency="ISTIC")


# --- Stage 1: a cited DOI -----------------------------------------------------------------------


@pytest.mark.parametrize("cited", [
    TITLE,
    "宫颈腺癌中ＰｒｏＥＸＣ和ＰＲＭＴ５的表达及其临床意义",
    "宫颈腺癌中 ProEXC 和 PRMT5 的表达及其临床意义。",
    "《宫颈腺癌中ProEXC和PRMT5的表达及其临床意义》",
])
async def test_istic_csl_with_the_cited_title_is_true(api_server, api_settings, cited):
    route_agency(api_server, "10.3760", "ISTIC")
    route_csl(api_server, DOI, TITLE)
    v = await one(api_settings, entry(title=cited, doi=DOI))
    assert (chinese(v).status, chinese(v).queried_by) == ("matched", "id")
    assert v.judgement.verdict == "true"
    assert v.judgement.item is None, "CSL author names are display-only, never conflicts"


async def test_istic_csl_with_another_chinese_title_is_false_p0(api_server, api_settings):
    route_agency(api_server, "10.3760", "ISTIC")
    route_csl(api_server, DOI, OTHER_TITLE)
    v = await one(api_settings, entry(doi=DOI))
    assert (chinese(v).status, chinese(v).queried_by) == ("unmatched", "id")
    assert v.judgement.verdict == "false"
    item = v.judgement.item
    assert (item.priority, item.reason_code) == ("P0", "DOI_TITLE_MISMATCH")
    assert OTHER_TITLE in chinese(v).summary


async def test_istic_csl_in_another_script_is_p2_unverifiable(api_server, api_settings):
    route_agency(api_server, "10.3760", "ISTIC")
    route_csl(api_server, DOI, "Expression of ProEXC and PRMT5 in cervical adenocarcinoma")
    v = await one(api_settings, entry(doi=DOI))
    assert (chinese(v).status, chinese(v).queried_by) == ("unmatched", "title")
    assert chinese(v).reason == "DOI_EXISTS_TITLE_UNVERIFIABLE"
    assert v.judgement.verdict == "unresolvable"
    assert row(v, "DOI_EXISTS_TITLE_UNVERIFIABLE") == "P2"


async def test_istic_redirect_to_a_bare_ip_is_refused_and_unreachable(api_server, api_settings):
    """Seed 001 §2, rechecked 2026-08-01: doi.org redirects this DOI to plain HTTP on a bare IP."""
    route_agency(api_server, "10.3760", "ISTIC")
    api_server.redirect("doi_registry", f"/{DOI}", f"http://122.115.55.36:8000/doi/{DOI}")
    route_handle(api_server, DOI, exists=False)
    found, engine = await verify(api_settings, entry(doi=DOI))
    v = found["cn"]
    assert chinese(v).status == "unreachable"
    assert "refused redirect" in chinese(v).summary
    assert v.judgement.verdict == "unresolvable", "an unsafe hop is never a verdict"
    assert engine.http.requests_sent == len(api_server.requests), "no request left loopback"
    assert api_server.count("handle") == 0


async def test_istic_csl_404_and_handle_100_is_refuted(api_server, api_settings):
    route_agency(api_server, "10.3760", "ISTIC")
    route_handle(api_server, DOI, exists=False)
    v = await one(api_settings, entry(doi=DOI))
    assert chinese(v).reason == "DOI_REFUTED"
    assert v.judgement.verdict == "false"


async def test_istic_csl_404_and_handle_1_is_p2(api_server, api_settings):
    route_agency(api_server, "10.3760", "ISTIC")
    route_handle(api_server, DOI, exists=True)
    v = await one(api_settings, entry(doi=DOI))
    assert (chinese(v).status, chinese(v).reason) == ("unmatched", "DOI_EXISTS_TITLE_UNVERIFIABLE")
    assert v.judgement.verdict == "unresolvable"


async def test_cnki_handle_100_is_refuted_p0(api_server, api_settings):
    route_agency(api_server, "10.13209", "CNKI")
    route_handle(api_server, CNKI_DOI, exists=False)
    v = await one(api_settings, entry(doi=CNKI_DOI))
    assert (chinese(v).status, chinese(v).queried_by) == ("unmatched", "id")
    assert v.judgement.verdict == "false"
    item = v.judgement.item
    assert (item.priority, item.reason_code) == ("P0", "DOI_REFUTED")
    assert api_server.count("doi_registry", CNKI_DOI) == 0, "CNKI serves HTML: never fetched"


async def test_cnki_handle_1_is_p2_and_never_matched(api_server, api_settings):
    route_agency(api_server, "10.13209", "CNKI")
    route_handle(api_server, CNKI_DOI, exists=True)
    v = await one(api_settings, entry(doi=CNKI_DOI))
    assert (chinese(v).status, chinese(v).queried_by) == ("unmatched", "title")
    assert v.judgement.verdict == "unresolvable"
    assert row(v, "DOI_EXISTS_TITLE_UNVERIFIABLE") == "P2"
    assert all("pending human check" in f.message for f in v.judgement.findings
               if f.priority != "P0")


async def test_unknown_agency_is_p2_and_never_uses_coordinates(api_server, api_settings):
    api_server.add_json("doi_registry", "/doiRA/10.99999",
                        [{"DOI": "10.99999", "status": "DOI does not exist"}])
    route_pubmed_hit(api_server)
    v = await one(api_settings, entry(doi="10.99999/abc"))
    assert (chinese(v).status, chinese(v).reason) == ("skipped", "DOI_RA_UNRESOLVED")
    assert row(v, "DOI_RA_UNRESOLVED") == "P2"
    assert api_server.count("eutils") == 0


async def test_other_agency_is_p3_out_of_scope_when_its_resolver_did_not_match(
        api_server, api_settings):
    route_agency(api_server, "10.11501", "JaLC")
    route_handle(api_server, "10.11501/abc", exists=True)
    route_pubmed_hit(api_server)
    v = await one(api_settings, entry(doi="10.11501/abc"))
    assert (chinese(v).status, chinese(v).reason) == ("skipped", "DOI_RA_OUT_OF_SCOPE")
    assert v.resolution.outcomes["doi_registry"].reason == "DOI_EXISTS_TITLE_UNVERIFIABLE"
    assert row(v, "DOI_RA_OUT_OF_SCOPE") == "P3"
    assert row(v, "DOI_EXISTS_TITLE_UNVERIFIABLE") == "P2"
    assert api_server.count("eutils") == 0


async def test_other_agency_matched_by_its_resolver_adds_no_row(api_server, api_settings):
    text = entry(title="Augmenting large language models with chemistry tools",
                 author="Bran, Andres M.", year=2024, journal="Nature Machine Intelligence",
                 volume=None, pages=None, doi="10.1038/s42256-024-00832-8", language="chinese")
    v = await one(api_settings, text)
    assert v.resolution.outcomes["crossref"].status == "matched"
    assert (chinese(v).status, chinese(v).reason) == ("skipped", None)
    assert "DOI_RA_OUT_OF_SCOPE" not in item_codes(v)


# --- Stage 2: PubMed coordinates without a DOI -------------------------------------------------


async def test_no_email_skips_pubmed_without_a_request(api_server, api_settings):
    route_pubmed_hit(api_server)
    v = await one(api_settings.with_changes(ncbi_email=None), entry())
    assert (chinese(v).status, chinese(v).reason) == ("skipped", "NCBI_EMAIL_MISSING")
    assert row(v, "NCBI_EMAIL_MISSING") == "P3"
    assert api_server.count("eutils") == 0


@pytest.mark.parametrize(("journal", "reason"), [
    ("中国科学", "NO_ISSN_MAPPING"),
    ("中国全科医学", "JOURNAL_NOT_INDEXED"),
])
async def test_journal_outside_pubmed_is_p3_without_a_request(api_server, api_settings,
                                                              journal, reason):
    v = await one(api_settings, entry(journal=journal))
    assert (chinese(v).status, chinese(v).reason) == ("skipped", reason)
    assert chinese(v).queried_by is None
    assert row(v, reason) == "P3"
    assert v.judgement.verdict == "unresolvable"
    assert api_server.count("eutils") == 0


async def test_journal_without_pubmed_records_is_not_indexed(api_server, api_settings):
    route_search(api_server, '"Zhonghua Nei Ke Za Zhi"[ta]',
                 fixture("eutils/esearch_empty_term.json"))
    v = await one(api_settings, entry(journal="中华内科杂志"))
    assert (chinese(v).status, chinese(v).reason) == ("skipped", "JOURNAL_NOT_INDEXED")
    assert eutils_terms(api_server) == ['"Zhonghua Nei Ke Za Zhi"[ta]']


async def test_insufficient_coordinates_is_p3_without_a_request(api_server, api_settings):
    v = await one(api_settings, entry(volume=None, pages=None, author="崔红霞"))
    assert (chinese(v).status, chinese(v).reason) == ("skipped", "INSUFFICIENT_PUBMED_COORDINATES")
    assert row(v, "INSUFFICIENT_PUBMED_COORDINATES") == "P3"
    assert api_server.count("eutils") == 0


async def test_coordinate_miss_is_p1_and_never_false(api_server, api_settings):
    route_search(api_server, TA_TERM, esearch_page(19347, [PMID]))
    route_search(api_server, PAGE_TERM.replace("3967", "9999"),
                 fixture("eutils/esearch_empty_term.json"))
    v = await one(api_settings, entry(pages="9999"))
    assert (chinese(v).status, chinese(v).queried_by) == ("unmatched", "title")
    assert v.judgement.verdict == "unresolvable"
    assert row(v, "PUBMED_INDEXED_BUT_COORDINATE_MISS") == "P1"
    assert not any("fabricated" in f.message for f in v.judgement.findings)
    assert eutils_terms(api_server) == [TA_TERM, PAGE_TERM.replace("3967", "9999")], \
        "no author and year query after a volume/page miss"


async def test_several_records_are_ambiguous_p1_and_none_is_picked(api_server, api_settings):
    route_search(api_server, TA_TERM, esearch_page(19347, [PMID]))
    route_search(api_server, PAGE_TERM, esearch_page(2, [PMID, "38129176"]))
    v = await one(api_settings, entry())
    assert (chinese(v).status, chinese(v).reason) == ("unmatched", "PUBMED_COORDINATE_AMBIGUOUS")
    assert row(v, "PUBMED_COORDINATE_AMBIGUOUS") == "P1"
    assert chinese(v).record is None
    assert api_server.count("eutils", "esummary") == 0


async def test_a_trimmed_esearch_page_is_unreachable_not_ambiguous(api_server, api_settings):
    route_search(api_server, TA_TERM, esearch_page(19347, [PMID]))
    route_search(api_server, PAGE_TERM, fixture("eutils/esearch_nonunique_term.json"))
    v = await one(api_settings, entry())
    assert chinese(v).status == "unreachable"
    assert chinese(v).reason is None


async def test_author_and_year_only_when_volume_and_page_are_missing(api_server, api_settings):
    term = '"Zhonghua Yi Xue Za Zhi"[ta] AND "Cui H"[1au] AND 2023[dp]'
    route_search(api_server, TA_TERM, esearch_page(19347, [PMID]))
    route_search(api_server, term, fixture("eutils/esearch_empty_term.json"))
    v = await one(api_settings, entry(volume=None, pages=None))
    assert chinese(v).reason == "PUBMED_INDEXED_BUT_COORDINATE_MISS"
    assert eutils_terms(api_server) == [TA_TERM, term]


async def test_unique_hit_with_the_istic_title_is_matched_by_title(api_server, api_settings):
    route_pubmed_hit(api_server)
    route_csl(api_server, DOI, TITLE)
    v = await one(api_settings, entry())
    assert (chinese(v).status, chinese(v).queried_by) == ("matched", "title")
    assert chinese(v).url == f"https://pubmed.ncbi.nlm.nih.gov/{PMID}/"
    assert v.judgement.verdict == "true"
    assert v.judgement.item is None
    for seen in (s for s in api_server.requests if s.endpoint == "eutils"):
        assert (seen.query["tool"], seen.query["email"]) == ("citelsp", EMAIL)
    assert EMAIL not in json.dumps([o.summary for o in v.resolution.outcomes.values()])


async def test_pubmed_answers_are_cached_and_reused_offline(api_server, api_settings):
    route_pubmed_hit(api_server)
    route_csl(api_server, DOI, TITLE)
    await one(api_settings, entry())
    sent = len(api_server.requests)
    v = await one(api_settings.with_changes(offline=True), entry())
    assert (chinese(v).status, chinese(v).queried_by) == ("matched", "title")
    assert chinese(v).from_cache
    assert len(api_server.requests) == sent


async def test_offline_without_cached_answers_asks_nothing(api_server, api_settings):
    v = await one(api_settings.with_changes(offline=True), entry())
    assert chinese(v).status == "skipped"
    assert "offline" in chinese(v).summary
    assert api_server.requests == []


@pytest.mark.parametrize(("change", "why"), [
    (lambda doc: doc.update(pubdate="2021 Dec 26"), "year 2023 vs 2021"),
    (lambda doc: doc.update(articleids=[]), "no DOI"),
    (lambda doc: doc["articleids"][0].update(value=CNKI_DOI), "CNKI"),
])
async def test_unique_hit_that_cannot_be_bound_is_p2_candidate(api_server, api_settings,
                                                               change, why):
    route_pubmed_hit(api_server)
    route_agency(api_server, "10.13209", "CNKI")
    route_csl(api_server, DOI, TITLE)
    api_server.add("eutils", "GET", "/esummary.fcgi", query={"db": "pubmed", "id": PMID},
                   body=esummary(change))
    v = await one(api_settings, entry())
    assert (chinese(v).status, chinese(v).queried_by) == ("unmatched", "title")
    assert chinese(v).reason == "PUBMED_COORDINATE_CANDIDATE_UNVERIFIED"
    assert why in chinese(v).summary
    assert row(v, "PUBMED_COORDINATE_CANDIDATE_UNVERIFIED") == "P2"
    assert v.judgement.verdict == "unresolvable"


async def test_unique_hit_with_another_chinese_title_is_never_false(api_server, api_settings):
    route_pubmed_hit(api_server)
    route_csl(api_server, DOI, OTHER_TITLE)
    v = await one(api_settings, entry())
    assert chinese(v).reason == "PUBMED_COORDINATE_CANDIDATE_UNVERIFIED"
    assert not chinese(v).refutes_identifier
    assert v.judgement.verdict == "unresolvable"


async def test_unique_hit_whose_doi_redirects_off_https_is_unreachable(api_server, api_settings):
    route_pubmed_hit(api_server)
    api_server.redirect("doi_registry", f"/{DOI}", f"http://122.115.55.36:8000/doi/{DOI}")
    v = await one(api_settings, entry())
    assert chinese(v).status == "unreachable"
    assert v.judgement.verdict == "unresolvable"


async def test_eutils_outage_is_unreachable(api_server, api_settings):
    api_server.fail("eutils", 503)
    v = await one(api_settings, entry())
    assert chinese(v).status == "unreachable"
    assert api_server.count("eutils") == 1, "5xx is not retried"


async def test_a_refused_eutils_url_does_not_leak_the_email(api_server, api_settings):
    endpoints = {**api_settings.endpoints, "eutils": Endpoint("http://eutils.invalid/e", 0)}
    v = await one(api_settings.with_changes(endpoints=endpoints), entry())
    assert chinese(v).status == "unreachable"
    assert "refused" in chinese(v).summary
    assert EMAIL not in chinese(v).summary
    assert EMAIL.replace("@", "%40") not in chinese(v).summary


# --- pure rules -----------------------------------------------------------------------------------


def test_bridge_rows_are_the_verified_ones():
    bridge = default_bridge()
    rows = {j.name: (j.issn, j.nlm_ta) for j in bridge.journals}
    assert rows == {
        "中华医学杂志": ("0376-2491", "Zhonghua Yi Xue Za Zhi"),
        "中华内科杂志": ("0578-1426", "Zhonghua Nei Ke Za Zhi"),
        "中华外科杂志": ("0529-5815", "Zhonghua Wai Ke Za Zhi"),
        "中华儿科杂志": ("0578-1310", "Zhonghua Er Ke Za Zhi"),
        "中华流行病学杂志": ("0254-6450", "Zhonghua Liu Xing Bing Xue Za Zhi"),
        "中国全科医学": ("1007-9572", None),
    }
    assert bridge.find("《中华医学杂志》").issn == "0376-2491"
    assert bridge.find("Zhonghua Yi Xue Za Zhi.").issn == "0376-2491"
    assert bridge.find("Some journal", ("05781426",)).name == "中华内科杂志"
    assert bridge.find("中国科学") is None


def test_title_binding_is_exact_and_script_aware():
    record = Record("doi_registry", title=TITLE, titles=(TITLE,))
    assert bind_title("宫颈腺癌中 ProEXC 和 PRMT5 的表达及其临床意义。", record)[0] == "match"
    assert bind_title(OTHER_TITLE, record) == ("mismatch", TITLE)
    assert bind_title("Expression of ProEXC", record)[0] == "unverifiable"
    assert bind_title(None, record)[0] == "unverifiable"
    assert bind_title(TITLE, Record("doi_registry"))[0] == "unverifiable"
    latin = Record("doi_registry", title="Expression of A")
    assert bind_title("Expression of B", latin)[0] == "unverifiable"


def test_coordinates_prefer_volume_and_page():
    work = Work(title=TITLE, volume="103", pages="3967–3971", year=2023,
                authors=(Person("Cui", "Hongxia"),))
    assert coordinates(work, "Zhonghua Yi Xue Za Zhi").term == PAGE_TERM
    no_page = Work(title=TITLE, volume="103", year=2023, authors=(Person("Cui", "Hongxia"),))
    assert "[1au]" in coordinates(no_page, "Zhonghua Yi Xue Za Zhi").term
    assert coordinates(Work(title=TITLE, year=2023, authors=(Person("崔红霞"),)), "T") is None
    assert coordinates(Work(title=TITLE, authors=(Person("Cui", "H"),)), "T") is None


def test_structural_conflicts_only_where_both_sides_have_the_field():
    journal = Journal("中华医学杂志", "0376-2491", "Zhonghua Yi Xue Za Zhi")
    record = Record("pubmed", issns=("0376-2491",), volume="103", first_page="3967")
    assert structural_conflicts(Work(volume="103", pages="3967-3971", year=2023), journal,
                                record) == []
    assert structural_conflicts(Work(volume="104", issn=("1007-9572",), pages="3968"), journal,
                                record) == [
        "ISSN 1007-9572 vs 0376-2491",
        "volume 104 vs 103",
        "first page 3968 vs 3967",
    ]
    assert structural_conflicts(Work(year=2021), journal,
                                Record("pubmed", years=(2023,))) == ["year 2021 vs 2023"]


# --- end to end ---------------------------------------------------------------------------------


def test_check_json_end_to_end(api_server: ApiServer, tmp_path):
    route_pubmed_hit(api_server)
    route_csl(api_server, DOI, TITLE)
    route_search(api_server, PAGE_TERM.replace("3967", "9999"),
                 fixture("eutils/esearch_empty_term.json"))
    bib = tmp_path / "refs.bib"
    bib.write_text(entry("found") + entry("miss", title=OTHER_TITLE, pages="9999")
                   + entry("other", title=OTHER_TITLE + "研究", journal="中国科学"),
                   encoding="utf-8")
    done = run_cli(api_server, "check", str(bib), "--format", "json", "--fail-on", "never",
                   cache_dir=tmp_path / "cache", cwd=tmp_path, env={"CITELSP_NCBI_EMAIL": EMAIL})
    assert done.returncode == 0, done.stderr
    assert EMAIL not in done.stdout
    report = json.loads(done.stdout)
    assert_valid_report(report)
    rows = by_key(report)
    assert rows["found"]["summary"]["lookup_verified"] == "true"
    assert rows["found"]["item"] is None
    assert rows["found"]["outcome"]["resolvers"]["chinese_literature"]["status"] == "matched"
    assert rows["miss"]["summary"]["lookup_verified"] == "unresolvable"
    assert rows["miss"]["item"]["priority"] == "P1"
    assert rows["miss"]["item"]["reason_code"] == "PUBMED_INDEXED_BUT_COORDINATE_MISS"
    assert "NO_ISSN_MAPPING" in reasons(rows["other"]["item"])
    other = rows["other"]["outcome"]["resolvers"]["chinese_literature"]
    assert (other["status"], other["reason"]) == ("skipped", "NO_ISSN_MAPPING")
