"""Every network failure of DESIGN.md §9, through the engine: never a verdict, never a P0,
nothing cached, and no request to a host outside the allowlist.

Each fault is put on every endpoint of the loopback server, and a bibliography with a real DOI,
a DOI that does not exist, a DataCite DOI, an arXiv id and a title-only work is verified.
A recording transport under the real HTTP client sees every request actually sent.
"""

from __future__ import annotations

import httpx
import pytest

from citelsp.resolution import http as http_module
from citelsp.resolution.engine import Engine
from tests.apiserver import PREFIXES, ApiServer
from tests.judged import judge_all
from tests.test_check_e2e import cache_entries
from tests.test_engine import bib_refs, entry

REFS = "".join([
    entry("real", "Augmenting large language models with chemistry tools",
          doi="10.1038/s42256-024-00832-8"),
    entry("nodoi", "A study of things that never were", doi="10.1371/notarealdoi"),
    entry("zenodo", "Signal Integration At Spherical Bushy Cells Enhances Representation Of "
          "Temporal Structure But Limits Its Range", author="Keine, Christian", year=2017,
          kind="misc", doi="10.5281/zenodo.1001813"),
    entry("arxiv", "Heat-bath random walks with Markov bases", author="Stanley, Caprice",
          year=2016, eprint="1605.08386", archiveprefix="arXiv"),
    entry("titleonly", "Augmenting large language models with chemistry tools"),
])


class RecordingTransport(httpx.AsyncBaseTransport):
    """The default transport, keeping the URL of every request the client hands it."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.urls: list[httpx.URL] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.urls.append(request.url)
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def storm(server: ApiServer, endpoint: str) -> None:
    server.fail(endpoint, 429)


def storm_long_retry_after(server: ApiServer, endpoint: str) -> None:
    server.fail(endpoint, 429, headers={"Retry-After": "3600"})


def hang(server: ApiServer, endpoint: str) -> None:
    server.hang(endpoint, seconds=5)


FAULTS = {
    "429_storm": storm,
    "429_retry_after_too_long": storm_long_retry_after,
    "500": lambda s, e: s.fail(e, 500),
    "502": lambda s, e: s.fail(e, 502),
    "503": lambda s, e: s.fail(e, 503),
    "timeout": hang,
    "truncated_body": lambda s, e: s.truncate(e),
    "html_with_200": lambda s, e: s.html_page(e),
    "html_with_404": lambda s, e: s.html_page(e, status=404),
    "oversized_declared": lambda s, e: s.oversized(e),
    "oversized_unsized": lambda s, e: s.oversized(e, declare_length=False),
    "redirect_to_bare_ip": lambda s, e: s.redirect(e, None, "http://192.0.2.7/works"),
    "redirect_to_https_bare_ip": lambda s, e: s.redirect(e, None, "https://192.0.2.7/works"),
    "redirect_to_other_host": lambda s, e: s.redirect(e, None, "https://evil.example.com/x"),
    "redirect_with_userinfo": lambda s, e: s.redirect(
        e, None, "https://user:pw@api.crossref.org/works"),
}


@pytest.mark.parametrize("fault", list(FAULTS))
async def test_fault_gives_no_verdict_and_no_stray_request(
        fault, api_server, api_settings, monkeypatch, tmp_path):
    monkeypatch.setattr(http_module, "MIN_BACKOFF_S", 0.01)
    for endpoint in PREFIXES:
        FAULTS[fault](api_server, endpoint)
    settings = api_settings.with_changes(timeout_s=0.3)
    transport = RecordingTransport()
    engine = Engine(settings, transport=transport, arxiv_recheck_delay=0.05)
    try:
        verified = await judge_all(engine, bib_refs(REFS))
    finally:
        await engine.aclose()

    for v in verified:
        assert v.judgement.verdict == "unresolvable", (v.reference.key, fault)
        assert not [f for f in v.judgement.findings if f.priority == "P0"]
        said = {name: (o.status, o.summary) for name, o in v.resolution.outcomes.items()}
        statuses = {status for status, _ in said.values()}
        assert statuses <= {"unreachable", "skipped"}, (v.reference.key, said)
        assert "UNREACHABLE" in {f.reason_code for f in v.judgement.findings}
    assert transport.urls, "the engine asked nothing"
    assert {url.host for url in transport.urls} == {"127.0.0.1"}
    assert cache_entries(settings.cache_dir) == 0


async def test_a_429_storm_is_retried_a_limited_number_of_times(
        api_server, api_settings, monkeypatch):
    monkeypatch.setattr(http_module, "MIN_BACKOFF_S", 0.01)
    storm(api_server, "crossref")
    api_server.fail("openalex", 503)
    api_server.fail("semantic_scholar", 503)
    engine = Engine(api_settings)
    try:
        [v] = await judge_all(engine, bib_refs(REFS.split("@article{nodoi")[0]))
    finally:
        await engine.aclose()
    assert v.judgement.verdict == "unresolvable"
    assert "429" in v.resolution.outcomes["crossref"].summary
    per_request = http_module.MAX_RETRIES + 1
    assert api_server.count("crossref") % per_request == 0
    assert api_server.count("crossref") // per_request == 2, "DOI lookup and title search"
