"""Source clients against recorded bodies, through the real HttpClient and the loopback server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from citelsp.resolution.crossref import CrossrefClient
from citelsp.resolution.doi_registry import CSL_JSON
from citelsp.resolution.http import HttpClient
from citelsp.resolution.outcome import (
    Agency,
    Found,
    Handle,
    Malformed,
    NotFound,
    Record,
    Retraction,
    Unreachable,
)
from citelsp.resolution.pubmed import PubMedClient, SearchResult, coordinate_term
from citelsp.resolution.semantic_scholar import FIELDS
from tests.apiserver import ApiServer, fixture


def derived(name: str, change: Callable[[dict], object]) -> str:
    """A recorded JSON body with one deliberate change (for shapes nobody recorded)."""
    body = json.loads(fixture(name).read_text())
    change(body)
    return json.dumps(body)


def only(answer) -> Record:
    assert isinstance(answer, Found), answer
    assert len(answer.records) == 1
    return answer.records[0]


def families(record: Record) -> list[str]:
    return [p.family for p in record.authors]


# --- Crossref ---------------------------------------------------------------------------------


async def test_crossref_work_is_parsed(sources, api_server: ApiServer):
    record = only(await sources.crossref.by_doi("10.1073/pnas.1414271111"))
    assert record.source == "crossref"
    assert record.title == (
        "Developing functional musculoskeletal tissues through hypoxia and lysyl "
        "oxidase-induced collagen cross-linking"
    )
    assert families(record) == ["Makris", "Responte", "Paschos", "Hu", "Athanasiou"]
    assert record.authors[0].given == "Eleftherios A."
    assert record.years == (2014,)
    assert record.venue == "Proceedings of the National Academy of Sciences"
    assert record.venue_aliases == ("Proc. Natl. Acad. Sci. U.S.A.",)
    assert record.issns == ("0027-8424", "1091-6490")
    assert (record.volume, record.issue) == ("111", "45")
    assert record.doi == "10.1073/pnas.1414271111"
    assert record.work_type == "journal-article" and not record.is_preprint
    assert record.retractions == (), "a correction is not a retraction"
    assert api_server.requests[-1].path == "/works/10.1073/pnas.1414271111"


async def test_crossref_title_variants_pair_titles_and_subtitles(sources):
    record = only(await sources.crossref.by_doi("10.1007/s00120-007-1345-2"))
    assert record.title == "Penisverletzung durch eine Moulinette"
    assert "Penile injury caused by a Moulinette" in record.titles
    paired = "Penile injury caused by a Moulinette: Result of autoerotic self-mutilation"
    assert paired in record.titles
    assert record.years == (2007,)
    assert (record.venue, record.venue_aliases) == ("Der Urologe", ("Urologe",))
    assert record.first_page == "776"


async def test_crossref_subtitle_variant_without_authors(sources):
    record = only(await sources.crossref.by_doi("10.1007/s40278-023-41815-2"))
    assert record.title == "Convalescent-anti-sars-cov-2-plasma/immune-globulin"
    assert record.titles[1].startswith("Convalescent-anti-sars-cov-2-plasma/immune-globulin: Fever")
    assert record.authors == ()


async def test_crossref_years_are_publication_years_never_the_deposit_year(sources):
    """A 1943 article deposited in 2019 (``created``) and 2021 (``deposited``): a citation
    giving 2019 gives the deposit year, not the work's (DESIGN.md §4)."""
    record = only(await sources.crossref.by_doi("10.5694/j.1326-5377.1943.tb44329.x"))
    assert record.years == (1943,)


async def test_crossref_organization_author_is_literal(sources):
    record = only(await sources.crossref.by_doi("10.1101/2025.04.10.647997"))
    assert record.authors[-1].family == "The MoTrPAC Study Group"
    assert record.authors[-1].literal
    assert not record.authors[0].literal
    assert record.is_preprint and record.work_type == "posted-content"


async def test_crossref_encoded_html_title_is_cleaned(sources):
    record = only(await sources.crossref.by_doi("10.20944/preprints202601.1190.v1"))
    assert record.title.startswith("Hyperbolic EM Symmetry and Metrological Closure")
    assert "<" not in record.title and "&lt;" not in record.title


@pytest.mark.parametrize("doi", ["10.1371/notarealdoi", "10.48550/arxiv.2312.07559"])
async def test_crossref_404_text_is_not_found(sources, doi):
    assert isinstance(await sources.crossref.by_doi(doi), NotFound)


@pytest.mark.parametrize(
    "body",
    [
        '{"status":"ok","message-type":"work-list","message":{"items":[]}}',
        '{"status":"ok","message-type":"work","message":{"title":["no DOI"]}}',
        '{"status":"ok","message-type":"work","message":{"DOI":"10.1/x","author":"Smith"}}',
        "Resource not found.",
    ],
)
async def test_crossref_malformed_work_is_unreachable(sources, api_server, body):
    api_server.add("crossref", "GET", "/works/10.1/x", body=body)
    assert isinstance(await sources.crossref.by_doi("10.1/x"), Unreachable)


async def test_crossref_400_is_unreachable(sources, api_server):
    recorded = fixture("crossref/10.1371_journal.pone.0033693_query.author.400.json")
    api_server.add("crossref", "GET", "/works/10.1/bad", status=400, body=recorded)
    assert isinstance(await sources.crossref.by_doi("10.1/bad"), Unreachable)


async def test_crossref_title_search(sources, api_server):
    title = "Augmenting large language models with chemistry tools"
    found = await sources.crossref.search_title(title)
    assert isinstance(found, Found)
    assert found.records[0].title == title
    assert api_server.requests[-1].query == {"query.title": title, "rows": "5"}


async def test_crossref_title_search_without_hits(sources):
    assert await sources.crossref.search_title("askldjrq3rjaw938h") == Found(())


async def test_crossref_batch_by_dois(sources, api_server):
    present = ["10.1093/obo/9780199830060-0238", "10.1093/OBO/9780199830060-0023"]
    api_server.add(
        "crossref",
        "GET",
        "/works",
        query={"filter": ",".join(f"doi:{d}" for d in [*present, "10.1/absent"])},
        body=fixture("crossref/search/query_ecology_rows_2.json"),
    )
    answers = await sources.crossref.by_dois([*present, "10.1/absent"])
    assert only(answers[present[0]]).doi == present[0]
    assert only(answers[present[1]]).doi == present[1].lower()
    assert isinstance(answers["10.1/absent"], NotFound)


async def test_crossref_retraction_from_updated_by(sources, api_server):
    """No recorded body carries a retraction: the recorded correction, retyped."""

    def retract(body):
        body["message"]["updated-by"][0]["type"] = "retraction"

    api_server.add(
        "crossref",
        "GET",
        "/works/10.1073/pnas.1414271111",
        body=derived("crossref/10.1073_pnas.1414271111.json", retract),
    )
    record = only(await sources.crossref.by_doi("10.1073/pnas.1414271111"))
    assert record.retractions == (
        Retraction("crossref", "10.1073/pnas.1507001112", "2015-05-04", "retraction"),
    )


async def test_crossref_retraction_notice_from_update_to(sources, api_server):
    def notice(body):
        body["message"]["update-to"][0]["type"] = "retraction"

    api_server.add(
        "crossref",
        "GET",
        "/works/10.12688/f1000research.161261.2",
        body=derived("crossref/10.12688_f1000research.161261.2.json", notice),
    )
    record = only(await sources.crossref.by_doi("10.12688/f1000research.161261.2"))
    assert record.retractions == (
        Retraction(
            "crossref", "10.12688/f1000research.161261.2", "2025-04-24", "retraction_notice"
        ),
    )


async def test_crossref_new_version_is_not_a_retraction(sources):
    assert only(await sources.crossref.by_doi("10.1371/journal.ppat.1008184")).retractions == ()


async def test_doi_with_reserved_characters_is_percent_encoded(sources, api_server):
    doi = "10.1002/(sici)1097-4636(199706)35:4<453::aid-jbm6>3.0.co;2-l"
    api_server.add(
        "crossref",
        "GET",
        f"/works/{doi}",
        body=fixture("crossref/10.1371_journal.pone.0033693.json"),
    )
    assert isinstance(await sources.crossref.by_doi(doi), Found)
    seen = api_server.requests[-1].path
    assert seen == (
        "/works/10.1002/%28sici%291097-4636%28199706%2935%3A4%3C453%3A%3Aaid-jbm6%3E3.0.co%3B2-l"
    )


# --- OpenAlex ---------------------------------------------------------------------------------


async def test_openalex_work_is_parsed(sources, api_server):
    record = only(await sources.openalex.by_doi("10.1073/pnas.1414271111"))
    assert record.source == "openalex"
    assert record.title.startswith("Developing functional musculoskeletal tissues")
    assert families(record)[:2] == ["Makris", "Responte"]
    assert record.years == (2014,)
    assert record.venue == "Proceedings of the National Academy of Sciences"
    assert record.issns == ("0027-8424", "1091-6490")
    assert record.doi == "10.1073/pnas.1414271111"
    assert record.source_id == "W2109415576"
    assert record.retractions == ()
    assert api_server.requests[-1].path == "/works/doi:10.1073/pnas.1414271111"


async def test_openalex_accepts_a_doi_url(sources, api_server):
    record = only(await sources.openalex.by_doi("https://doi.org/10.1073/pnas.1414271111"))
    assert record.doi == "10.1073/pnas.1414271111"
    assert api_server.requests[-1].path == "/works/doi:10.1073/pnas.1414271111"


async def test_openalex_sici_doi_is_encoded_and_found(sources, api_server):
    record = only(await sources.openalex.by_doi("10.1890/0012-9658(2006)87[2832:tiopma]2.0.co;2"))
    assert record.doi == "10.1890/0012-9658(2006)87[2832:tiopma]2.0.co;2"
    assert "%3B2" in api_server.requests[-1].path


async def test_openalex_arxiv_work_is_a_preprint(sources):
    record = only(await sources.openalex.by_doi("10.48550/arxiv.2201.06719"))
    assert record.arxiv_id == "2201.06719"
    assert record.is_preprint
    assert families(record)[0] == "Han"


async def test_openalex_retracted_flag(sources, api_server):
    def retracted(body):
        body["is_retracted"] = True

    api_server.add(
        "openalex",
        "GET",
        "/works/doi:10.1073/pnas.1414271111",
        body=derived("openalex/10.1073_pnas.1414271111.json", retracted),
    )
    record = only(await sources.openalex.by_doi("10.1073/pnas.1414271111"))
    assert record.retractions == (Retraction("openalex"),)


async def test_openalex_404_html_is_not_found(sources):
    answer = await sources.openalex.by_doi("10.1046/j.1365-2699.2003.00795")
    assert isinstance(answer, NotFound)


async def test_openalex_refusal_without_key_is_unreachable(sources, api_server):
    api_server.fail("openalex", 403)
    assert isinstance(await sources.openalex.by_doi("10.1073/pnas.1414271111"), Unreachable)


async def test_openalex_title_search(sources, api_server):
    title = "PaperQA: Retrieval-Augmented Generative Agent for Scientific Research"
    found = await sources.openalex.search_title(title)
    assert isinstance(found, Found) and found.records
    assert any(r.title == title for r in found.records)
    assert api_server.requests[-1].query == {"search": title, "per-page": "5"}


@pytest.mark.parametrize("body", ['{"meta": {}}', '{"results": [{"title": "no id"}]}', "[]"])
async def test_openalex_malformed_search_is_unreachable(sources, api_server, body):
    api_server.add("openalex", "GET", "/works", query={"search": "x"}, body=body)
    assert isinstance(await sources.openalex.search_title("x"), Unreachable)


# --- Semantic Scholar -------------------------------------------------------------------------


async def test_semantic_scholar_paper_is_parsed(sources, api_server):
    record = only(await sources.s2.by_doi("10.1073/pnas.1414271111"))
    assert record.source == "semantic_scholar"
    assert record.title.startswith("Developing functional musculoskeletal tissues")
    assert families(record)[:4] == ["Makris", "Responte", "Paschos", "Hu"]
    assert record.years == (2014,)
    assert record.venue.startswith("Proceedings of the National Academy of Sciences of the")
    assert "Proceedings of the National Academy of Sciences" in record.venue_aliases
    assert (record.volume, record.first_page) == ("111", "E4832")
    assert record.doi == "10.1073/pnas.1414271111"
    seen = api_server.requests[-1]
    assert seen.path == "/paper/DOI:10.1073/pnas.1414271111"
    assert seen.query == {"fields": FIELDS}


async def test_semantic_scholar_arxiv_paper_is_a_preprint(sources):
    record = only(await sources.s2.by_doi("10.48550/arxiv.2312.07559"))
    assert record.arxiv_id == "2312.07559"
    assert record.is_preprint
    assert record.volume is None, "CoRR's 'abs/…' is not a volume"
    assert record.years == (2023,)


async def test_semantic_scholar_by_arxiv_id_asks_the_arxiv_form(sources, api_server):
    api_server.add(
        "semantic_scholar",
        "GET",
        "/paper/arXiv:2312.07559",
        body=fixture("semantic_scholar/DOI_10.48550_arxiv.2312.07559.json"),
    )
    record = only(await sources.s2.by_arxiv_id("2312.07559"))
    assert record.title == "PaperQA: Retrieval-Augmented Generative Agent for Scientific Research"


async def test_semantic_scholar_404_is_not_found_with_its_message(sources):
    answer = await sources.s2.by_doi("10.1101/2024.04.01.587366")
    assert isinstance(answer, NotFound)
    assert "not found" in answer.detail


async def test_semantic_scholar_search(sources, api_server):
    api_server.add(
        "semantic_scholar",
        "GET",
        "/paper/search",
        query={"query": "megatron"},
        body=fixture("semantic_scholar/search/turing.json"),
    )
    found = await sources.s2.search_title("megatron")
    assert isinstance(found, Found) and len(found.records) == 100
    assert found.records[0].title.startswith("Using DeepSpeed and Megatron")
    assert found.records[0].is_preprint
    assert "ArXiv" in found.records[0].venue_aliases
    assert api_server.requests[-1].query == {"query": "megatron", "limit": "5", "fields": FIELDS}


async def test_semantic_scholar_search_without_hits(sources):
    assert await sources.s2.search_title("n0 r3sult s3arch t3rm") == Found(())


async def test_semantic_scholar_malformed_paper_is_unreachable(sources, api_server):
    api_server.add("semantic_scholar", "GET", "/paper/DOI:10.1/x", body='{"title": "no id"}')
    assert isinstance(await sources.s2.by_doi("10.1/x"), Unreachable)


async def test_semantic_scholar_batch_aligns_answers(sources, api_server):
    ids = ["DOI:10.2139/ssrn.288970", "DOI:10.2139/ssrn.2250500", "DOI:10.1257/rct.1355"]
    answers = await sources.s2.batch(ids)
    assert [only(a).doi for a in answers] == [i[4:] for i in ids]
    assert json.loads(api_server.requests[-1].body) == {"ids": ids}


# --- arXiv ------------------------------------------------------------------------------------


async def test_arxiv_entry_is_parsed(sources, api_server):
    record = only(await sources.arxiv.by_arxiv_id("1605.08386"))
    assert record.source == "arxiv"
    assert record.title == "Heat-bath random walks with Markov bases"
    assert families(record) == ["Stanley", "Windisch"]
    assert record.years == (2016,)
    assert (record.arxiv_id, record.source_id) == ("1605.08386", "1605.08386v1")
    assert record.is_preprint and record.venue == "arXiv"
    assert api_server.requests[-1].query == {"id_list": "1605.08386"}


async def test_arxiv_old_feed_with_versions_and_journal_ref(sources):
    record = only(await sources.arxiv.by_arxiv_id("1111.2011v2"))
    assert record.arxiv_id == "1111.2011"
    assert record.years == (2011,), "the first version's date"
    assert record.doi == "10.1103/physrevb.85.115117"
    assert record.venue_aliases == ("Phys. Rev. B 85, 115117 (2012)",)
    assert families(record) == ["Murray", "Del Maestro", "Tesanovic"]


async def test_arxiv_old_style_id(sources):
    assert only(await sources.arxiv.by_arxiv_id("astro-ph/0601001")).arxiv_id == "astro-ph/0601001"


async def test_arxiv_empty_feed_is_not_found(sources):
    assert isinstance(await sources.arxiv.by_arxiv_id("0000.0000"), NotFound)


async def test_arxiv_error_feed_is_malformed(sources):
    answer = await sources.arxiv.by_arxiv_id("abc")
    assert answer == Malformed("arXiv: incorrect id format for abc")


async def test_arxiv_page_that_promises_results_but_has_none_is_unreachable(sources, api_server):
    body = (
        fixture("arxiv/id_0000.0000.xml")
        .read_text()
        .replace("<opensearch:totalResults>0<", "<opensearch:totalResults>1<")
    )
    api_server.add("arxiv", "GET", "", query={"id_list": "2401.00001"}, body=body)
    assert isinstance(await sources.arxiv.by_arxiv_id("2401.00001"), Unreachable)


@pytest.mark.parametrize(
    "body",
    [
        '<?xml version="1.0"?><!DOCTYPE feed [<!ENTITY x "y">]>'
        '<feed xmlns="http://www.w3.org/2005/Atom">&x;</feed>',
        "not xml at all",
        '<?xml version="1.0"?><rss/>',
    ],
)
async def test_arxiv_unsafe_or_foreign_body_is_unreachable(sources, api_server, body):
    api_server.add(
        "arxiv",
        "GET",
        "",
        query={"id_list": "2401.00001"},
        body=body,
        content_type="application/atom+xml",
    )
    assert isinstance(await sources.arxiv.by_arxiv_id("2401.00001"), Unreachable)


async def test_arxiv_title_search(sources, api_server):
    title = "Heat-bath random walks with Markov bases"
    api_server.add(
        "arxiv",
        "GET",
        "",
        query={"search_query": f'ti:"{title}"'},
        body=fixture("arxiv/id_1605.08386.xml"),
    )
    found = await sources.arxiv.search_title(title)
    assert [r.title for r in found.records] == [title]
    assert api_server.requests[-1].query == {"search_query": f'ti:"{title}"', "max_results": "5"}


# --- DataCite ---------------------------------------------------------------------------------


async def test_datacite_arxiv_doi_is_parsed(sources, api_server):
    record = only(await sources.datacite.by_doi("10.48550/arXiv.2311.16162"))
    assert record.source == "datacite"
    assert record.title.startswith("Leveraging Artificial Intelligence Technology")
    assert record.short_titles == (
        "Leveraging Artificial Intelligence Technology for Mapping Research to Sustainable "
        "Development Goals",
    )
    assert families(record)[:3] == ["Yin", "Aryani", "Lambert"]
    assert record.years == (2023,)
    assert (record.doi, record.arxiv_id) == ("10.48550/arxiv.2311.16162", "2311.16162")
    assert record.is_preprint
    assert api_server.requests[-1].path == "/dois/10.48550/arXiv.2311.16162"


async def test_datacite_subtitle_and_organization(sources):
    record = only(await sources.datacite.by_doi("10.4232/1.2745"))
    assert record.title == "Flash Eurobarometer 54 (Madrid Summit)"
    assert "Flash Eurobarometer 54 (Madrid Summit): The Common European Currency" in record.titles
    assert "The Common European Currency" not in record.titles
    assert record.authors[0].literal and record.authors[0].family == "Europäische Kommission"
    assert record.years == (1996,)


async def test_datacite_translated_title_is_a_variant(sources):
    record = only(await sources.datacite.by_doi("10.3205/zma001102"))
    assert record.title.startswith("Visions and reality")
    assert any(t.startswith("Vision und Wirklichkeit") for t in record.titles)


async def test_datacite_404_is_not_found(sources):
    answer = await sources.datacite.by_doi("10.4124/05f6c379-dd68-4cdb-880d-33d3e9576d52/1")
    assert isinstance(answer, NotFound)


async def test_datacite_malformed_is_unreachable(sources, api_server):
    api_server.add("datacite", "GET", "/dois/10.1/x", body='{"data": []}')
    assert isinstance(await sources.datacite.by_doi("10.1/x"), Unreachable)


# --- doi.org: registration agency, Handle, content negotiation --------------------------------


@pytest.mark.parametrize(
    ("prefix", "agency"),
    [("10.1016", "Crossref"), ("10.48550", "DataCite"), ("10.11367", "JaLC"), ("10.0137", None)],
)
async def test_doi_agency(sources, api_server, prefix, agency):
    assert await sources.registry.agency(prefix) == Agency(agency)
    assert api_server.requests[-1].path == f"/doiRA/{prefix}"


@pytest.mark.parametrize(
    "rows",
    [
        [],
        [{"DOI": "10.5555", "RA": "Crossref"}, {"DOI": "10.5555", "RA": "DataCite"}],
        [{"DOI": "10.1016", "RA": "Crossref"}],
        [{"DOI": "10.5555", "RA": 7}],
        [{"DOI": "10.5555", "RA": "Cross\nref"}],
        [{"DOI": "10.5555", "RA": " "}],
        [{"DOI": "10.5555", "status": "something else"}],
        {"DOI": "10.5555", "RA": "Crossref"},
    ],
)
async def test_doi_agency_malformed_is_unreachable(sources, api_server, rows):
    api_server.add_json("doi_registry", "/doiRA/10.5555", rows)
    assert isinstance(await sources.registry.agency("10.5555"), Unreachable)


async def test_handle_exists_and_missing(sources, api_server):
    assert await sources.registry.handle("10.1073/pnas.1414271111") == Handle(True)
    assert api_server.requests[-1].endpoint == "handle"
    assert api_server.requests[-1].path == "/api/handles/10.1073/pnas.1414271111"
    assert await sources.registry.handle("10.1371/notarealdoi") == Handle(False)


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (200, {"responseCode": 2, "handle": "10.1/x"}),
        (200, {"responseCode": True, "handle": "10.1/x"}),
        (200, {"responseCode": 1.0, "handle": "10.1/x"}),
        (200, {"responseCode": "1", "handle": "10.1/x"}),
        (200, {"responseCode": 1, "handle": "10.1/other"}),
        (404, {"responseCode": 1, "handle": "10.1/x"}),
        (200, ["responseCode", 1]),
    ],
)
async def test_handle_anything_else_is_unreachable(sources, api_server, status, body):
    api_server.add_json("handle", "/api/handles/10.1/x", body, status=status)
    assert isinstance(await sources.registry.handle("10.1/x"), Unreachable)


async def test_handle_non_json_is_unreachable(sources, api_server):
    api_server.add("handle", "GET", "/api/handles/10.1/x", body="ok", content_type="text/plain")
    assert isinstance(await sources.registry.handle("10.1/x"), Unreachable)


async def test_csl_content_negotiation(sources, api_server):
    record = only(await sources.registry.csl("10.1126/science.169.3946.635"))
    assert record.title == "The Structure of Ordinary Water"
    assert families(record) == ["Frank"]
    assert record.years == (1970,)
    assert (record.venue, record.volume, record.first_page) == ("Science", "169", "635")
    seen = api_server.requests[-1]
    assert seen.path == "/10.1126/science.169.3946.635"
    assert seen.headers["accept"] == CSL_JSON


async def test_csl_follows_a_redirect(sources, api_server):
    target = "/works/10.1126/science.169.3946.635/transform/application/vnd.citationstyles.csl+json"
    api_server.redirect(
        "doi_registry", "/10.1126/science.169.3946.635", api_server.url_for("crossref") + target
    )
    api_server.add(
        "crossref",
        "GET",
        target,
        content_type=CSL_JSON,
        body=fixture("doi/csl_10.1126_science.169.3946.635.json"),
    )
    assert only(await sources.registry.csl("10.1126/science.169.3946.635")).volume == "169"
    assert api_server.count("crossref", path_contains="/transform/") == 1


async def test_csl_title_may_be_a_list(sources, api_server):
    def listed(item):
        item["title"] = [item["title"]]

    api_server.add(
        "doi_registry",
        "GET",
        "/10.1126/science.169.3946.635",
        content_type=CSL_JSON,
        body=derived("doi/csl_10.1126_science.169.3946.635.json", listed),
    )
    assert only(await sources.registry.csl("10.1126/science.169.3946.635")).title == (
        "The Structure of Ordinary Water"
    )


async def test_csl_html_page_is_unreachable(sources, api_server):
    api_server.html_page("doi_registry", path="/10.1126/science.169.3946.635")
    assert isinstance(await sources.registry.csl("10.1126/science.169.3946.635"), Unreachable)


async def test_csl_non_json_is_unreachable(sources, api_server):
    bibtex = fixture("doi/csl_10.1126_science.169.3946.635.json").read_text()[:200]
    api_server.add("doi_registry", "GET", "/10.1/x", body=bibtex, content_type="text/plain")
    assert isinstance(await sources.registry.csl("10.1/x"), Unreachable)


async def test_csl_404_is_not_found(sources):
    assert isinstance(await sources.registry.csl("10.1126/foo"), NotFound)


async def test_csl_for_another_doi_is_unreachable(sources, api_server):
    api_server.add(
        "doi_registry",
        "GET",
        "/10.1126/other",
        content_type=CSL_JSON,
        body=fixture("doi/csl_10.1126_science.169.3946.635.json"),
    )
    assert isinstance(await sources.registry.csl("10.1126/other"), Unreachable)


# --- PubMed E-utilities -----------------------------------------------------------------------


async def test_esearch_unique_hit(sources, api_server):
    assert await sources.pubmed.esearch("pubmed", "29440426") == SearchResult(1, ("29440426",))
    query = api_server.requests[-1].query
    assert query["tool"] == "citelsp"
    assert query["email"] == "tests@example.org"
    assert (query["db"], query["retmode"]) == ("pubmed", "json")


async def test_esearch_zero_hits(sources):
    assert await sources.pubmed.esearch("pubmed", "''") == SearchResult(0, ())


async def test_esearch_trimmed_page_is_unreachable(sources):
    answer = await sources.pubmed.esearch("pubmed", "p53")
    assert isinstance(answer, Unreachable)
    assert "10 ids for count 97451" in answer.reason


async def test_esearch_error_body_is_unreachable(sources):
    assert isinstance(await sources.pubmed.esearch("pubmed", ""), Unreachable)


async def test_esearch_duplicate_ids_are_unreachable(sources, api_server):
    def duplicated(body):
        body["esearchresult"].update(count="2", idlist=["29440426", "29440426"])

    api_server.add(
        "eutils",
        "GET",
        "/esearch.fcgi",
        query={"term": "dup"},
        body=derived("eutils/esearch_unique_term.json", duplicated),
    )
    assert isinstance(await sources.pubmed.esearch("pubmed", "dup"), Unreachable)


async def test_coordinate_search(sources, api_server):
    term = coordinate_term("Zhonghua Yi Xue Za Zhi", "103", "3967")
    assert term == '"Zhonghua Yi Xue Za Zhi"[ta] AND 103[vi] AND 3967[pg]'
    api_server.add(
        "eutils",
        "GET",
        "/esearch.fcgi",
        query={"term": term},
        body=fixture("eutils/esearch_unique_term.json"),
    )
    answer = await sources.pubmed.coordinate_search("Zhonghua Yi Xue Za Zhi", "103", "3967")
    assert answer == SearchResult(1, ("29440426",))


async def test_eutils_without_email_sends_nothing(http_client, api_settings, api_server):
    client = PubMedClient(http_client, api_settings.with_changes(ncbi_email=None))
    assert isinstance(await client.esearch("pubmed", "29440426"), Unreachable)
    assert api_server.count("eutils") == 0


async def test_esummary_article(sources):
    record = only(await sources.pubmed.article("38129175"))
    assert record.venue == "Zhonghua Yi Xue Za Zhi"
    assert (record.volume, record.first_page) == ("103", "3967")
    assert record.doi == "10.3760/cma.j.cn112137-20231008-00670"
    assert record.years == ()


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        ({"uids": []}, NotFound),
        ({"uids": ["1"], "1": {"uid": "1", "error": "cannot get document summary"}}, NotFound),
        ({"uids": ["2"], "2": {"uid": "2", "title": "another"}}, Unreachable),
        ({"uids": ["1"], "1": {"uid": "2", "title": "another"}}, Unreachable),
        ({"uids": ["1"], "1": {"uid": "1", "pubdate": "Dec 2023"}}, Unreachable),
        ({"uids": ["1"], "1": {"uid": "1", "pubdate": "\u0662\u0660\u0662\u0663"}}, Unreachable),
    ],
)
async def test_esummary_checks_the_echo_and_the_year(sources, api_server, result, expected):
    api_server.add_json("eutils", "/esummary.fcgi", {"result": result}, query={"id": "1"})
    assert isinstance(await sources.pubmed.article("1"), expected)


# --- a 404 in someone else's words --------------------------------------------------------------

NGINX_404 = ("text/html", "<html><head><title>404 Not Found</title></head><body><center><h1>404 "
             "Not Found</h1></center><hr><center>nginx</center></body></html>")
GATEWAY_404 = ("application/json", '{"message":"no Route matched with those values"}')
CDN_404 = ("text/plain", "Not Found")


def ask_each_source(sources):
    """One identifier lookup per source that reads a 404 as "no such record"."""
    return {
        "crossref": ("/works/10.1/x", lambda: sources.crossref.by_doi("10.1/x")),
        "openalex": ("/works/doi:10.1/x", lambda: sources.openalex.by_doi("10.1/x")),
        "semantic_scholar": ("/paper/DOI:10.1/x", lambda: sources.s2.by_doi("10.1/x")),
        "datacite": ("/dois/10.1/x", lambda: sources.datacite.by_doi("10.1/x")),
        "doi_registry": ("/10.1/x", lambda: sources.registry.csl("10.1/x")),
    }


@pytest.mark.parametrize("page", [NGINX_404, GATEWAY_404, CDN_404], ids=["nginx", "gateway", "cdn"])
@pytest.mark.parametrize("source", ["crossref", "openalex", "semantic_scholar", "datacite",
                                    "doi_registry"])
async def test_a_404_that_is_not_the_services_own_answer_is_unreachable(sources, api_server,
                                                                        source, page):
    path, ask = ask_each_source(sources)[source]
    api_server.add(source, "GET", path, status=404, content_type=page[0], body=page[1])
    answer = await ask()
    assert answer == Unreachable(f"{source} answered HTTP 404 with a body it never sends (a "
                                 "proxy's or CDN's page?)")


@pytest.mark.parametrize("source", ["crossref", "openalex", "semantic_scholar", "datacite",
                                    "doi_registry"])
async def test_each_services_own_404_is_not_found(sources, api_server, source):
    path, ask = ask_each_source(sources)[source]
    api_server.fail(source, 404, path=path)
    assert isinstance(await ask(), NotFound)


# --- the loopback server itself ---------------------------------------------------------------


async def test_unrouted_request_is_a_visible_404(sources, api_server):
    assert isinstance(await sources.datacite.by_doi("10.9999/unrouted"), NotFound)
    assert api_server.unmatched[-1].decoded_path == "/dois/10.9999/unrouted"


def test_env_points_every_endpoint_at_the_server(api_server):
    env = api_server.env()
    s2_url = api_server.base_url + "/semantic_scholar/graph/v1"
    assert env["CITELSP_SEMANTIC_SCHOLAR_BASE_URL"] == s2_url
    assert env["CITELSP_DOI_REGISTRY_MIN_INTERVAL_MS"] == "0"
    settings = api_server.settings()
    assert {e.min_interval_ms for e in settings.endpoints.values()} == {0}
    assert all(e.base_url.startswith(api_server.base_url) for e in settings.endpoints.values())


@pytest.mark.parametrize(
    "inject",
    [
        lambda s: s.fail("crossref", 503),
        lambda s: s.truncate("crossref"),
        lambda s: s.html_page("crossref"),
        lambda s: s.oversized("crossref"),
        lambda s: s.oversized("crossref", declare_length=False),
        lambda s: s.redirect("crossref", None, "https://evil.example/works"),
    ],
)
async def test_faults_become_unreachable(sources, api_server, inject):
    inject(api_server)
    assert isinstance(await sources.crossref.by_doi("10.1073/pnas.1414271111"), Unreachable)


async def test_hang_times_out(api_server, api_settings):
    api_server.hang("crossref", seconds=30)
    async with HttpClient(api_settings.with_changes(timeout_s=0.5)) as http:
        answer = await CrossrefClient(http, api_settings).by_doi("10.1073/pnas.1414271111")
    assert isinstance(answer, Unreachable) and "timed out" in answer.reason


def test_a_subprocess_reaches_the_server_through_its_environment(api_server):
    code = (
        "import asyncio\n"
        "from citelsp.config import Settings\n"
        "from citelsp.resolution.crossref import CrossrefClient\n"
        "from citelsp.resolution.http import HttpClient\n"
        "async def main():\n"
        "    settings = Settings.from_options({})\n"
        "    async with HttpClient(settings) as http:\n"
        "        client = CrossrefClient(http, settings)\n"
        "        found = await client.by_doi('10.1371/journal.pone.0033693')\n"
        "    print(found.records[0].title)\n"
        "asyncio.run(main())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env={**os.environ, **api_server.env()},
        cwd=Path(__file__).resolve().parent.parent, capture_output=True, text=True, timeout=60,
    )
    assert done.stdout.startswith("Methylphenidate Exposure Induces Dopamine"), done.stderr
    assert api_server.count("crossref", "journal.pone.0033693") == 1


# --- what the accuracy checks need (DESIGN.md §4, bibliographic accuracy) ----------------------


async def test_openalex_truncated_author_list_is_marked(sources, api_server):
    record = only(await sources.openalex.by_doi("10.1073/pnas.1414271111"))
    assert not record.authors_truncated

    def truncated(body):
        body["is_authors_truncated"] = True

    api_server.add("openalex", "GET", "/works/doi:10.1073/pnas.1414271111",
                   body=derived("openalex/10.1073_pnas.1414271111.json", truncated))
    assert only(await sources.openalex.by_doi("10.1073/pnas.1414271111")).authors_truncated


@pytest.mark.parametrize(
    ("doi", "preprint"),
    [
        ("10.2139/ssrn.5186959", True),  # SSRN, posted content
        ("10.1101/2025.02.05.636615", True),  # bioRxiv
        ("10.20944/preprints202303.0344.v1", True),  # Preprints.org
        ("10.1101/gr.279093.124", False),  # Genome Research shares bioRxiv's prefix
        ("10.1073/pnas.1414271111", False),
    ],
)
async def test_crossref_preprint_kinds(sources, doi, preprint):
    assert only(await sources.crossref.by_doi(doi)).is_preprint is preprint


async def test_crossref_article_number_is_kept_apart_from_pages(sources):
    record = only(await sources.crossref.by_doi("10.1038/s41598-018-27044-6"))
    assert (record.first_page, record.article_number) == (None, "15544")
    record = only(await sources.crossref.by_doi("10.1101/gr.279093.124"))
    assert (record.first_page, record.article_number) == ("432", None)


async def test_crossref_title_with_encoded_markup_is_plain(sources):
    record = only(await sources.crossref.by_doi("10.20944/preprints202601.1248.v1"))
    assert record.title == ("Capability of ISSR, SCoT and CEAP Markers for Genetic Diversity "
                            "Assessment of Lavender (Lavandula angustifolia Mill.) Genotypes")


async def test_semantic_scholar_arxiv_journal_does_not_make_a_published_paper_a_preprint(
    sources, api_server
):
    api_server.add("semantic_scholar", "GET", "/paper/search", query={"query": "turing"},
                   body=fixture("semantic_scholar/search/turing.json"))
    found = await sources.s2.search_title("turing")
    assert isinstance(found, Found)
    iclr = next(r for r in found.records
                if r.title == "On the Turing Completeness of Modern Neural Network Architectures")
    assert iclr.venue == "International Conference on Learning Representations"
    assert "ArXiv" in iclr.venue_aliases and not iclr.is_preprint
    assert only(await sources.s2.by_doi("10.48550/arxiv.2312.07559")).is_preprint  # arXiv.org
