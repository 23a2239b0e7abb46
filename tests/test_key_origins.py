"""API keys go only to the exact origin of a default or user-level base URL (issue 13, item 10).

User level: the environment and ``initializationOptions``. Workspace level: the merged section
the client answers ``workspace/configuration`` with, which a cloned repository may have written.
"""

from __future__ import annotations

import httpx
import pytest
from lsprotocol import types

from citelsp.config import DEFAULT_ENDPOINTS, Endpoint, Settings
from citelsp.resolution.http import HttpResponse
from tests.apiserver import ApiServer, fixture, load_default_routes
from tests.lsp_session import lsp_session, open_file, wait_until
from tests.test_http import NCBI_KEY, OPENALEX_KEY, S2_KEY, FakeTime, client_for, json_ok

MIRROR = "https://mirror.example.net"
WORKSPACE_S2 = {"resolvers": {"semanticScholar": {"baseUrl": "https://evil.example.com/s2"},
                              "openalex": {"baseUrl": "https://evil.example.com/oa"}}}


def keys_of(request: httpx.Request) -> set[str]:
    found = set()
    if request.headers.get("x-api-key"):
        found.add(request.headers["x-api-key"])
    if request.url.params.get("api_key"):
        found.add(request.url.params["api_key"])
    return found


# --- which base URLs are user-level (config.py) -------------------------------------------------


def test_environment_and_initialization_options_are_user_level():
    env = {"CITELSP_CROSSREF_BASE_URL": f"{MIRROR}/crossref"}
    user = {"resolvers": {"openalex": {"baseUrl": f"{MIRROR}/oa"}}}
    settings = Settings.from_options(user, env)
    assert settings.endpoints["crossref"] == Endpoint(f"{MIRROR}/crossref", 100)
    assert settings.endpoints["openalex"] == Endpoint(f"{MIRROR}/oa", 100)
    assert all(e.user_level for e in settings.endpoints.values())


def test_a_base_url_only_the_merged_section_names_is_workspace_level():
    user = {"resolvers": {"openalex": {"baseUrl": f"{MIRROR}/oa/"}}}
    merged = {"resolvers": {"openalex": {"baseUrl": f"{MIRROR}/oa"},
                            "semanticScholar": {"baseUrl": "https://evil.example.com/s2"},
                            "crossref": {"minIntervalMs": 50}}}
    settings = Settings.from_options(merged, {}, user_options=user)
    assert settings.endpoints["openalex"].user_level
    s2 = settings.endpoints["semantic_scholar"]
    assert s2.base_url == "https://evil.example.com/s2" and not s2.user_level
    assert settings.endpoints["crossref"] == Endpoint(DEFAULT_ENDPOINTS["crossref"].base_url, 50)


# --- the HTTP client (MockTransport) -----------------------------------------------------------


@pytest.fixture
def fake_time() -> FakeTime:
    return FakeTime()



async def test_a_workspace_base_url_on_a_foreign_host_receives_no_key(fake_time):
    settings = Settings.from_options(WORKSPACE_S2, {}, user_options={})
    client, recorder = client_for(json_ok, fake_time, endpoints=settings.endpoints)
    assert isinstance(await client.get("semantic_scholar", "/paper/DOI:10.1/x"), HttpResponse)
    assert isinstance(await client.get("openalex", "/works/doi:10.1/x"), HttpResponse)
    assert [r.url.host for r in recorder.requests] == ["evil.example.com"] * 2
    assert [keys_of(r) for r in recorder.requests] == [set(), set()]


async def test_the_same_base_url_set_by_the_user_receives_the_key(fake_time):
    settings = Settings.from_options(WORKSPACE_S2, {})
    client, recorder = client_for(json_ok, fake_time, endpoints=settings.endpoints)
    await client.get("semantic_scholar", "/paper/DOI:10.1/x")
    await client.get("openalex", "/works/doi:10.1/x")
    assert [keys_of(r) for r in recorder.requests] == [{S2_KEY}, {OPENALEX_KEY}]


async def test_a_workspace_base_url_still_lets_the_key_reach_the_default_origin(fake_time):
    def to_the_real_api(request):
        if request.url.host == "evil.example.com":
            return httpx.Response(307, headers={"location": "https://api.openalex.org/works/W1"})
        return httpx.Response(200, json={})

    settings = Settings.from_options(WORKSPACE_S2, {}, user_options={})
    client, recorder = client_for(to_the_real_api, fake_time, endpoints=settings.endpoints)
    await client.get("openalex", "/works/doi:10.1/x")
    assert [(r.url.host, keys_of(r)) for r in recorder.requests] == [
        ("evil.example.com", set()), ("api.openalex.org", {OPENALEX_KEY})]


@pytest.mark.parametrize("base", ["http://127.0.0.1:8000", f"{MIRROR}:8443"])
async def test_a_redirect_to_another_port_of_the_same_host_keeps_no_key(fake_time, base):
    host_port = base.split("//")[1]
    other = base.rsplit(":", 1)[0] + ":9000"

    def elsewhere(request):
        if request.url.port in (8000, 8443):
            return httpx.Response(307, headers={"location": f"{other}/moved"})
        return httpx.Response(200, json={})

    endpoints = {name: Endpoint(base + "/" + name, 0) for name in DEFAULT_ENDPOINTS}
    endpoints["arxiv"] = Endpoint(other + "/arxiv", 0)
    for endpoint in ("semantic_scholar", "openalex", "eutils"):
        client, recorder = client_for(elsewhere, fake_time, endpoints=endpoints)
        assert isinstance(await client.get(endpoint, "/x"), HttpResponse)
        first, second = recorder.requests
        assert first.url.netloc.decode() == host_port and keys_of(first)
        assert second.url.port == 9000 and keys_of(second) == set()


async def test_a_same_origin_redirect_keeps_the_key_on_every_hop(fake_time):
    def moved(request):
        if request.url.path.endswith("/old"):
            return httpx.Response(301, headers={"location": "/new"})
        return httpx.Response(200, json={})

    for endpoint, key in (("openalex", OPENALEX_KEY), ("eutils", NCBI_KEY)):
        client, recorder = client_for(moved, fake_time)
        await client.get(endpoint, "/old")
        assert [keys_of(r) for r in recorder.requests] == [{key}, {key}]


# --- the language server -----------------------------------------------------------------------


BIB = """@article{unknown,
  title = {A Survey of Entirely Unknown Results in Imaginary Chemistry},
  author = {Nobody, Ann},
  journal = {Annals of Things},
  year = {2021},
}
"""


def answering_searches(server: ApiServer) -> ApiServer:
    """Recorded answers with no hits for every title search, then the recorded routes."""
    server.add("crossref", "GET", "/works",
               body=fixture("crossref/search/title_askldjrq3rjaw938h.json"))
    server.add("semantic_scholar", "GET", "/paper/search",
               body=fixture("semantic_scholar/search/n0_r3sult_s3arch_t3rm.json"))
    return load_default_routes(server)


@pytest.fixture
def foreign():
    """A second loopback host standing for a host a workspace names."""
    server = answering_searches(ApiServer(host="127.0.0.2")).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.mark.parametrize("level", ["workspace", "user"])
async def test_the_server_sends_the_key_to_a_workspace_base_url_never(api_server, foreign,
                                                                      tmp_path, level):
    answering_searches(api_server)
    root = tmp_path / "ws"
    root.mkdir()
    (root / "refs.bib").write_text(BIB, encoding="utf-8")
    env = {**api_server.env(), "CITELSP_CACHE_DIR": str(tmp_path / "cache"),
           "CITELSP_SEMANTIC_SCHOLAR_API_KEY": S2_KEY}
    section = {"resolvers": {"semanticScholar": {
        "baseUrl": foreign.url_for("semantic_scholar"), "minIntervalMs": 0}}}
    async with lsp_session(root, env, options=section if level == "user" else None) as lsp:
        if level == "workspace":
            lsp.set_configuration(section, section="citelsp")
            lsp.workspace_did_change_configuration(
                types.DidChangeConfigurationParams(settings=None))
        uri = open_file(lsp, root / "refs.bib", "bibtex")
        await wait_until(lsp, lambda c: any(d.code == "NOT_FOUND_IN_INDEXES"
                                            for d in c.diagnostics.get(uri, [])))
    asked = [s for s in foreign.requests if s.endpoint == "semantic_scholar"]
    assert asked, foreign.requests
    sent = {s.headers.get("x-api-key") for s in asked}
    assert sent == ({None} if level == "workspace" else {S2_KEY})
    assert api_server.count("semantic_scholar") == 0
