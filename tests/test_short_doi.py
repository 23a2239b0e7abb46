"""A shortDOI (``10/p54k``) is resolved to the full DOI it stands for, then checked as cited.

doi.org's Handle API answers ``GET /api/handles/10/p54k?type=HS_ALIAS`` with an ``HS_ALIAS``
value naming the full DOI (``fixtures/api/handle/10_p54k.alias.json``: the DOI Handbook's
response format with the values doi.org gave for that shortDOI; see the fixtures' README).
Only the proxy's authoritative "no such handle" (HTTP 404, ``responseCode`` 100) refutes a
shortDOI; an outage or an answer without an alias leaves the title to be checked.
"""

from __future__ import annotations

import json

import pytest

from citelsp.resolution.outcome import Alias, Handle, Unreachable
from tests.apiserver import fixture
from tests.test_engine import entry, p0_codes, verify

ALIAS_BODY = json.loads(fixture("handle/10_p54k.alias.json").read_text())
PNAS = "10.1073/pnas.1414271111"
"""A DOI with recorded Crossref, OpenAlex and Handle bodies."""
PNAS_TITLE = ("Developing functional musculoskeletal tissues through hypoxia and lysyl "
              "oxidase-induced collagen cross-linking")
SHORT = "10/f6q4bx"
"""A shortDOI name made up for these tests; its answer has the recorded body's shape."""


def route_alias(server, short: str, doi: str) -> None:
    body = json.loads(json.dumps(ALIAS_BODY))
    body["handle"] = short
    body["values"][1]["data"]["value"] = doi.upper()
    server.add_json("handle", f"/api/handles/{short}", body, query={"type": "HS_ALIAS"})


def route_missing(server, short: str, status: int = 404) -> None:
    server.add_json("handle", f"/api/handles/{short}", {"responseCode": 100, "handle": short},
                    status=status)


async def test_the_recorded_alias_names_the_full_doi_in_lowercase(api_server, sources):
    assert await sources.registry.alias("10/p54k") == Alias("10.1021/jacs.5c01100")
    assert api_server.count("handle", "/api/handles/10/p54k") == 1


@pytest.mark.parametrize(("status", "body", "why"), [
    (200, {"responseCode": 200, "handle": "10/zz9"}, "holds no DOI alias"),
    (200, {"responseCode": 100, "handle": "10/zz9"}, "without HTTP 404"),
    (200, {"responseCode": 1, "handle": "10/zz9", "values": []}, "names 0 DOIs"),
    (200, {"responseCode": 1, "handle": "10/zz9", "values": [
        {"type": "HS_ALIAS", "data": {"format": "string", "value": "not a doi"}}]}, "names 0"),
    (200, {"responseCode": 1, "handle": "10/other", "values": []}, "another handle"),
    (503, {"responseCode": 2}, "HTTP 503"),
])
async def test_anything_but_an_alias_or_the_authoritative_404_is_no_answer(
        api_server, sources, status, body, why):
    api_server.add_json("handle", "/api/handles/10/zz9", body, status=status)
    answer = await sources.registry.alias("10/zz9")
    assert isinstance(answer, Unreachable) and why in answer.reason


async def test_the_authoritative_404_says_the_short_doi_does_not_exist(api_server, sources):
    route_missing(api_server, "10/zz9")
    assert await sources.registry.alias("10/zz9") == Handle(False)


async def test_a_short_doi_is_checked_as_its_full_doi_and_shown_with_it(api_server,
                                                                       api_settings):
    route_alias(api_server, SHORT, PNAS)
    text = entry("s", PNAS_TITLE, author="Makris, Eleftherios A. and Responte, Donald J. and "
                 "Paschos, Nikolaos K. and Hu, Jerry C. and Athanasiou, Kyriacos A.",
                 year=2014, doi=SHORT.upper())
    v = (await verify(api_settings, text))["s"]
    assert v.resolution.ids.doi.value == PNAS and v.resolution.ids.doi.short == SHORT
    crossref = v.resolution.outcomes["crossref"]
    assert crossref.status == "matched" and crossref.queried_by == "id"
    assert f"{SHORT} = {PNAS}" in crossref.summary
    assert not {f.priority for f in v.judgement.findings} & {"P0", "P1"}
    assert api_server.count("crossref", PNAS) >= 1


async def test_a_short_doi_the_handle_system_does_not_know_is_refuted(api_server, api_settings):
    route_missing(api_server, "10/zz9")
    text = entry("s", "A study of things that never were", doi="10/zz9")
    v = (await verify(api_settings, text))["s"]
    assert p0_codes(v) == {"DOI_REFUTED"}
    refuting = v.resolution.outcomes["doi_registry"]
    assert refuting.refutes_identifier and "shortDOI 10/zz9 does not exist" in refuting.summary
    assert any("10/zz9" in f.message for f in v.judgement.findings if f.priority == "P0")


async def test_an_outage_leaves_a_short_doi_unresolved_and_the_title_checked(api_server,
                                                                            api_settings):
    api_server.fail("handle", 503)
    text = entry("s", PNAS_TITLE, author="Makris, Eleftherios A.", year=2014, doi=SHORT)
    v = (await verify(api_settings, text))["s"]
    assert not p0_codes(v)
    registry = v.resolution.outcomes["doi_registry"]
    assert registry.status == "unreachable" and "not resolved" in registry.summary
    assert v.resolution.ids.doi is None
