"""Identifiers never leave the API route they are put under (issue 13, item 7).

``doi = {10.1234/../../admin}`` used to send ``GET /admin`` to Crossref, DataCite and OpenAlex
(with the API key) and ``/graph/v1/admin`` to Semantic Scholar. Every request the loopback
server receives is checked the way the most lenient server would read it: percent-decoded until
stable, ``\\`` as ``/``, dot segments resolved.
"""

from __future__ import annotations

import posixpath
import re
from urllib.parse import unquote

import pytest

from citelsp.resolution.outcome import Unreachable
from tests.apiserver import PREFIXES, ApiServer
from tests.test_engine import all_codes, entry, verify

CLIMBING = [
    "10.1234/../../admin",
    "10.1234/../../../../../admin",
    "10.1234/%2e%2e/%2e%2e/admin",
    "10.1234/%252e%252e/%252e%252e/admin",
    "10.1234/..%2f..%2fadmin",
    "10.1234/..\\..\\admin",
    "10.1234/..;/..;/admin",
    "10.1234/./admin",
]
CALLS = {
    ("crossref", "/works/"): lambda s, doi: s.crossref.by_doi(doi),
    ("openalex", "/works/doi:"): lambda s, doi: s.openalex.by_doi(doi),
    ("datacite", "/dois/"): lambda s, doi: s.datacite.by_doi(doi),
    ("semantic_scholar", "/paper/DOI:"): lambda s, doi: s.s2.by_doi(doi),
    ("semantic_scholar", "/paper/arXiv:"): lambda s, doi: s.s2.by_arxiv_id(doi),
    ("handle", "/api/handles/"): lambda s, doi: s.registry.handle(doi),
    ("doi_registry", "/"): lambda s, doi: s.registry.csl(doi),
    ("doi_registry", "/doiRA/"): lambda s, doi: s.registry.agency(doi),
}


def as_read_by_a_lenient_server(raw_path: str) -> str:
    path = raw_path
    for _ in range(8):
        path, before = unquote(path), path
        if path == before:
            break
    path = re.sub(r";[^/\\]*", "", path.replace("\\", "/"))
    return posixpath.normpath(path)


def assert_stayed_in_routes(server: ApiServer, routes: dict[str, str]) -> None:
    """Every request reached an endpoint, and under the route named for it."""
    for seen in server.requests:
        assert seen.endpoint is not None, seen.path
        prefix = PREFIXES[seen.endpoint]
        read = as_read_by_a_lenient_server(prefix + seen.path)
        route = routes.get(seen.endpoint, "/")
        assert read.startswith(prefix + route.rstrip("/")), (seen.path, read)


@pytest.mark.parametrize("identifier", CLIMBING)
@pytest.mark.parametrize(("endpoint", "route"), list(CALLS))
async def test_no_client_request_leaves_its_route(sources, api_server, endpoint, route,
                                                  identifier):
    answer = await CALLS[endpoint, route](sources, identifier)
    assert_stayed_in_routes(api_server, {endpoint: route})
    assert isinstance(answer, Unreachable), answer
    assert "dot segment" in answer.reason


async def test_climbing_dois_in_a_bibliography_are_invalid_and_never_sent(api_server,
                                                                          api_settings):
    text = "".join(entry(f"k{i}", "A title nobody has", doi=doi)
                   for i, doi in enumerate(["10.1234/../../admin", "10.1234/%2e%2e/%2e%2e/admin",
                                            r"10.1234/..\%2f..\%2fadmin"]))
    verified = await verify(api_settings, text)
    for v in verified.values():
        ids = v.resolution.ids
        assert ids.doi is None and [p.code for p in ids.problems] == ["INVALID_IDENTIFIER"]
        assert v.judgement.verdict != "false" and not {"DOI_REFUTED"} & all_codes(v)
    assert_stayed_in_routes(api_server, {})
    assert not any("admin" in as_read_by_a_lenient_server(s.path) for s in api_server.requests)
