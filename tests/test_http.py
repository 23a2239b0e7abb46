"""The network policy of resolution/http.py, driven through httpx.MockTransport."""

from __future__ import annotations

import asyncio
import gzip
import json
import logging
import zlib
from dataclasses import replace
from datetime import UTC, datetime

import httpx
import pytest

from citelsp.config import DEFAULT_ENDPOINTS, Endpoint, Settings
from citelsp.links import quote_path
from citelsp.resolution.http import HttpClient, HttpResponse, retry_after_seconds
from citelsp.resolution.outcome import Unreachable
from citelsp.resolution.pacing import MAX_HOLD_S, Pacer

S2_KEY = "s2-key-5d1e9a"
OPENALEX_KEY = "oa-key-77c0b2"
NCBI_KEY = "ncbi-key-a0f3e4"
MAILTO = "someone@example.org"


class FakeTime:
    """A monotonic clock that only moves when the pacer sleeps; records every sleep."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


class Recorder:
    """A MockTransport handler that records requests and answers with a function."""

    def __init__(self, answer) -> None:
        self.answer = answer
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request):
        self.requests.append(request)
        return self.answer(request)

    @property
    def hosts(self) -> list[str]:
        return [r.url.host for r in self.requests]


class Stream(httpx.AsyncByteStream):
    """A body delivered in chunks, optionally failing midway; notes whether it was read."""

    def __init__(self, chunks: list[bytes], fail: Exception | None = None) -> None:
        self.chunks = chunks
        self.fail = fail
        self.read = False

    async def __aiter__(self):
        self.read = True
        for chunk in self.chunks:
            yield chunk
        if self.fail:
            raise self.fail


def settings(**changes) -> Settings:
    endpoints = {name: replace(e, min_interval_ms=0) for name, e in DEFAULT_ENDPOINTS.items()}
    base = Settings(
        mailto=MAILTO,
        semantic_scholar_api_key=S2_KEY,
        openalex_api_key=OPENALEX_KEY,
        ncbi_api_key=NCBI_KEY,
        endpoints=endpoints,
    )
    return base.with_changes(**changes)


@pytest.fixture
def fake_time() -> FakeTime:
    return FakeTime()


def client_for(answer, fake_time: FakeTime, **changes) -> tuple[HttpClient, Recorder]:
    recorder = Recorder(answer)
    config = settings(**changes)
    pacer = Pacer.from_settings(config, clock=fake_time.clock, sleep=fake_time.sleep)
    client = HttpClient(config, transport=httpx.MockTransport(recorder), pacer=pacer)
    return client, recorder


def json_ok(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, json={"message": {"title": ["A title"]}})


async def test_the_httpx_client_is_made_at_the_first_request_only(fake_time, monkeypatch):
    """An offline run sends nothing, so it never pays for a client (its TLS context); a
    closed client sends nothing more."""
    made = []
    original = httpx.AsyncClient
    monkeypatch.setattr(httpx, "AsyncClient", lambda **kw: made.append(kw) or original(**kw))
    idle, _ = client_for(json_ok, fake_time)
    await idle.aclose()
    assert made == []
    client, recorder = client_for(json_ok, fake_time)
    for _ in range(2):
        assert isinstance(await client.get("crossref", "/works/10.1000/xyz"), HttpResponse)
    assert len(made) == 1 and len(recorder.requests) == 2
    await client.aclose()
    assert isinstance(await client.get("crossref", "/works/10.1000/xyz"), Unreachable)
    assert len(made) == 1 and len(recorder.requests) == 2


async def test_prepare_makes_the_client_off_the_loop_once(fake_time, monkeypatch):
    """The language server makes its client ahead of the first request, in a worker thread;
    requests then use it, and a client closed meanwhile keeps nothing open."""
    made = []
    original = httpx.AsyncClient
    monkeypatch.setattr(httpx, "AsyncClient", lambda **kw: made.append(original(**kw)) or made[-1])
    client, recorder = client_for(json_ok, fake_time)
    await client.prepare()
    assert len(made) == 1
    await client.prepare()
    assert isinstance(await client.get("crossref", "/works/10.1000/xyz"), HttpResponse)
    assert len(made) == 1 and len(recorder.requests) == 1
    await client.aclose()
    assert made[0].is_closed

    late, _ = client_for(json_ok, fake_time)
    preparing = asyncio.ensure_future(late.prepare())
    await asyncio.sleep(0)  # the thread is making it
    await late.aclose()
    await preparing
    assert len(made) == 2 and made[1].is_closed


async def test_json_200_is_a_response(fake_time):
    client, recorder = client_for(json_ok, fake_time)
    response = await client.get("crossref", "/works/" + quote_path("10.1000/xyz"))
    assert isinstance(response, HttpResponse)
    assert response.status == 200
    assert response.json() == {"message": {"title": ["A title"]}}
    assert response.content_type == "application/json"
    assert response.url == "https://api.crossref.org/works/10.1000/xyz"
    assert response.headers["content-type"] == "application/json"
    assert client.requests_sent == 1 == len(recorder.requests)


async def test_json_raises_value_error_on_other_bodies(fake_time):
    client, _ = client_for(lambda r: httpx.Response(200, text="not json"), fake_time)
    response = await client.get("crossref", "/works")
    assert isinstance(response, HttpResponse)
    assert response.text() == "not json"
    with pytest.raises(ValueError):
        response.json()


@pytest.mark.parametrize("status", [400, 404, 410])
async def test_readable_error_statuses_are_responses(fake_time, status):
    client, _ = client_for(lambda r: httpx.Response(status, json={"status": "x"}), fake_time)
    response = await client.get("crossref", "/works/10.1/x")
    assert isinstance(response, HttpResponse)
    assert response.status == status


async def test_html_404_page_is_still_a_404(fake_time):
    page = httpx.Response(404, headers={"content-type": "text/html"}, text="<html>gone</html>")
    client, _ = client_for(lambda r: page, fake_time)
    response = await client.get("doi_registry", "/10.1/x")
    assert isinstance(response, HttpResponse) and response.status == 404


@pytest.mark.parametrize("status", [500, 502, 503, 504])
async def test_5xx_fails_at_once(fake_time, status):
    client, recorder = client_for(lambda r: httpx.Response(status), fake_time)
    result = await client.get("crossref", "/works/10.1/x")
    assert isinstance(result, Unreachable)
    assert str(status) in result.reason
    assert len(recorder.requests) == 1
    assert fake_time.sleeps == []


@pytest.mark.parametrize("status", [401, 403, 405, 406, 418, 304])
async def test_other_statuses_are_unreachable(fake_time, status):
    client, recorder = client_for(lambda r: httpx.Response(status), fake_time)
    result = await client.get("openalex", "/works/doi:10.1/x")
    assert isinstance(result, Unreachable)
    assert f"HTTP {status}" in result.reason
    assert len(recorder.requests) == 1


async def test_429_storm_backs_off_honouring_retry_after_then_gives_up(fake_time):
    storm = httpx.Response(429, headers={"retry-after": "3"})
    client, recorder = client_for(lambda r: storm, fake_time)
    result = await client.get("crossref", "/works/10.1/x")
    assert isinstance(result, Unreachable)
    assert "429" in result.reason and "3 retries" in result.reason
    assert len(recorder.requests) == 4
    assert fake_time.sleeps == [3, 4, 8]
    assert all(delay >= 2 for delay in fake_time.sleeps)
    assert fake_time.sleeps == sorted(fake_time.sleeps)


async def test_429_without_retry_after_grows_from_two_seconds(fake_time):
    client, recorder = client_for(lambda r: httpx.Response(429), fake_time)
    result = await client.get("crossref", "/works/10.1/x")
    assert isinstance(result, Unreachable)
    assert fake_time.sleeps == [2, 4, 8]


async def test_429_then_success(fake_time):
    answers = iter([httpx.Response(429, headers={"retry-after": "1"}), json_ok(None)])
    client, recorder = client_for(lambda r: next(answers), fake_time)
    result = await client.get("crossref", "/works/10.1/x")
    assert isinstance(result, HttpResponse) and result.status == 200
    assert fake_time.sleeps == [2]
    assert len(recorder.requests) == 2


async def test_429_asking_for_a_long_pause_gives_up_without_waiting(fake_time):
    refusal = httpx.Response(429, headers={"retry-after": "3600"})
    client, recorder = client_for(lambda r: refusal, fake_time)
    result = await client.get("openalex", "/works")
    assert isinstance(result, Unreachable)
    assert len(recorder.requests) == 1
    assert fake_time.sleeps == []


async def test_an_hour_long_announced_interval_closes_the_origin_instead_of_stalling_it(
        fake_time):
    """``x-rate-limit-limit: 1`` per ``3600s``, even on a 404, once made the next request wait
    3,960 s: it is reported unreachable at once, and nothing waits beyond MAX_HOLD_S."""
    slow = httpx.Response(404, headers={"x-rate-limit-limit": "1",
                                        "x-rate-limit-interval": "3600s"},
                          text="Resource not found.")
    client, recorder = client_for(lambda r: slow, fake_time)
    first = await client.get("crossref", "/works/10.1/x")
    assert isinstance(first, HttpResponse) and first.status == 404
    second = await client.get("crossref", "/works/10.1/y")
    assert isinstance(second, Unreachable)
    assert "rate limited" in second.reason and "3600 s" in second.reason
    assert len(recorder.requests) == 1
    assert all(pause <= MAX_HOLD_S for pause in fake_time.sleeps)
    other = await client.get("openalex", "/works/doi:10.1/x")
    assert not isinstance(other, Unreachable), "other origins are not closed"
    fake_time.now += 3600
    assert isinstance(await client.get("crossref", "/works/10.1/z"), HttpResponse)


async def test_a_request_waiting_when_its_origin_closes_is_not_sent(fake_time):
    """Callers already queued for a slot when an answer closes the origin do not go."""
    answers = iter([httpx.Response(200, json={}, headers={"retry-after": "3600"}),
                    httpx.Response(429, headers={"retry-after": "3600"})])
    client, recorder = client_for(lambda r: next(answers), fake_time)
    results = await asyncio.gather(*(client.get("crossref", f"/works/10.1/{n}")
                                     for n in range(3)))
    assert sum(isinstance(r, Unreachable) for r in results) == 2
    assert len(recorder.requests) == 2


@pytest.mark.parametrize(("mailto", "most"), [(MAILTO, 3), (None, 1)])
async def test_crossref_lists_keep_to_its_concurrency_limit(mailto, most):
    """Crossref's concurrency limit since 2025-12-01: three list or query requests at a time
    in the polite pool, one in the public pool; another lane or service is not held."""
    open_now, seen = 0, []

    async def slow(request: httpx.Request) -> httpx.Response:
        nonlocal open_now
        open_now += 1
        seen.append(open_now)
        await asyncio.sleep(0.01)
        open_now -= 1
        return httpx.Response(200, json={})

    client = HttpClient(settings(mailto=mailto), transport=httpx.MockTransport(slow))
    await asyncio.gather(*(client.get("crossref", "/works", params={"query.title": str(n)},
                                      kind="search") for n in range(6)))
    assert max(seen) == most
    seen.clear()
    await asyncio.gather(*(client.get("openalex", "/works", params={"search": str(n)},
                                      kind="search") for n in range(6)))
    assert max(seen) > 1, "OpenAlex documents no concurrency limit"
    await client.aclose()


def test_retry_after_parses_seconds_and_http_dates():
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert retry_after_seconds("7") == 7.0
    assert retry_after_seconds("Thu, 01 Jan 2026 12:00:10 GMT", now) == 10.0
    assert retry_after_seconds("Thu, 01 Jan 2026 11:00:00 GMT", now) == 0.0
    assert retry_after_seconds("soon") is None
    assert retry_after_seconds(None) is None


async def test_transport_timeout_is_unreachable(fake_time):
    def stall(request):
        raise httpx.ReadTimeout("read timed out", request=request)

    client, _ = client_for(stall, fake_time)
    result = await client.get("crossref", "/works/10.1/x")
    assert isinstance(result, Unreachable) and "timed out" in result.reason


async def test_overall_timeout_is_unreachable(fake_time):
    async def slow(request):
        await asyncio.sleep(5)
        return httpx.Response(200, json={})

    client, _ = client_for(slow, fake_time, timeout_s=0.05)
    result = await client.get("crossref", "/works/10.1/x")
    assert isinstance(result, Unreachable) and "timed out after 0.05 s" in result.reason


async def test_network_error_is_unreachable(fake_time):
    def refuse(request):
        raise httpx.ConnectError("connection refused", request=request)

    client, _ = client_for(refuse, fake_time)
    result = await client.get("crossref", "/works/10.1/x")
    assert isinstance(result, Unreachable) and "network error" in result.reason


async def test_truncated_stream_is_unreachable(fake_time):
    def cut(request):
        failure = httpx.RemoteProtocolError("peer closed connection", request=request)
        return httpx.Response(200, stream=Stream([b'{"message": {"ti'], fail=failure))

    client, _ = client_for(cut, fake_time)
    result = await client.get("crossref", "/works/10.1/x")
    assert isinstance(result, Unreachable) and "truncated" in result.reason


async def test_body_shorter_than_content_length_is_unreachable(fake_time):
    def short(request):
        stream = Stream([b'{"a": 1'])
        return httpx.Response(200, headers={"content-length": "100"}, stream=stream)

    client, _ = client_for(short, fake_time)
    result = await client.get("crossref", "/works/10.1/x")
    assert isinstance(result, Unreachable) and "truncated" in result.reason


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("text/html; charset=utf-8", b"<p>Service busy</p>"),
        ("application/json", b"\n  <!DOCTYPE html><html><body>Cloudflare</body></html>"),
        ("application/atom+xml", b"<HTML><head></head></HTML>"),
    ],
)
async def test_html_page_with_200_is_unreachable(fake_time, content_type, body):
    page = httpx.Response(200, headers={"content-type": content_type}, content=body)
    client, _ = client_for(lambda r: page, fake_time)
    result = await client.get("crossref", "/works/10.1/x", accept="application/json")
    assert isinstance(result, Unreachable) and "HTML" in result.reason


async def test_oversized_content_length_is_refused_before_reading(fake_time):
    stream = Stream([b"x" * 10])
    size = str(2 * 1024 * 1024 + 1)
    big = httpx.Response(200, headers={"content-length": size}, stream=stream)
    client, _ = client_for(lambda r: big, fake_time)
    result = await client.get("crossref", "/works/10.1/x")
    assert isinstance(result, Unreachable) and "over 2097152 bytes" in result.reason
    assert stream.read is False


async def test_oversized_streamed_body_is_refused(fake_time):
    chunks = [b"x" * (1024 * 1024)] * 3
    client, _ = client_for(lambda r: httpx.Response(200, stream=Stream(chunks)), fake_time)
    result = await client.get("crossref", "/works/10.1/x")
    assert isinstance(result, Unreachable) and "over 2097152 bytes" in result.reason


async def test_body_at_the_limit_is_accepted(fake_time):
    body = b"x" * 1000
    client, _ = client_for(
        lambda r: httpx.Response(200, content=body), fake_time, max_body_bytes=1000
    )
    result = await client.get("crossref", "/works")
    assert isinstance(result, HttpResponse) and result.body == body


def encoded(coding: str, body: bytes) -> bytes:
    if coding == "gzip":
        return gzip.compress(body)
    wbits = zlib.MAX_WBITS if coding == "deflate" else -zlib.MAX_WBITS  # "raw": some servers
    packer = zlib.compressobj(wbits=wbits)
    return packer.compress(body) + packer.flush()


@pytest.mark.parametrize("coding", ["gzip", "deflate", "raw"])
async def test_compressed_bodies_are_decoded_in_small_chunks(fake_time, coding):
    body = json.dumps({"message": {"title": ["A title"] * 500}}).encode()
    packed = encoded(coding, body)
    chunks = [packed[i:i + 7] for i in range(0, len(packed), 7)]
    header = "deflate" if coding == "raw" else coding
    answer = httpx.Response(200, headers={"content-encoding": header}, stream=Stream(chunks))
    client, recorder = client_for(lambda r: answer, fake_time)
    result = await client.get("crossref", "/works")
    assert isinstance(result, HttpResponse) and result.body == body
    assert recorder.requests[0].headers["accept-encoding"] == "gzip, deflate"


async def test_two_gzip_members_are_one_body(fake_time):
    members = [gzip.compress(b'{"a": ') + gzip.compress(b"1}")]
    answer = httpx.Response(200, headers={"content-encoding": "gzip"}, stream=Stream(members))
    client, _ = client_for(lambda r: answer, fake_time)
    result = await client.get("crossref", "/works")
    assert isinstance(result, HttpResponse) and result.json() == {"a": 1}


@pytest.mark.parametrize(("coding", "content", "why"), [
    ("gzip", gzip.compress(b"x" * 1001), "over 1000 bytes once decoded"),
    ("gzip", gzip.compress(b"x" * 500)[:-9], "truncated gzip body"),
    ("gzip", b"not gzip at all", "malformed gzip body"),
    ("br", b"\x0b\x02\x80{}\x03", "unsupported content encoding 'br'"),
    ("zstd", b"(\xb5/\xfd\x00X\x11\x00\x00{}", "unsupported content encoding 'zstd'"),
    ("gzip, deflate", gzip.compress(b"{}"), "stacked content encodings (gzip, deflate)"),
])
async def test_bodies_that_cannot_be_decoded_within_the_cap_are_refused(fake_time, coding,
                                                                       content, why):
    answer = httpx.Response(200, headers={"content-encoding": coding}, stream=Stream([content]))
    client, _ = client_for(lambda r: answer, fake_time, max_body_bytes=1000)
    result = await client.get("crossref", "/works")
    assert result == Unreachable(f"response from api.crossref.org refused: {why}")


@pytest.mark.parametrize("length", ["１２".encode(), b"0x2", b"-2", b"2, 2"])
async def test_malformed_content_length_is_unreachable(fake_time, length):
    odd = httpx.Response(200, headers={"content-length": length}, stream=Stream([b"12"]))
    client, _ = client_for(lambda r: odd, fake_time)
    result = await client.get("crossref", "/works")
    assert isinstance(result, Unreachable) and "Content-Length" in result.reason


def redirecting(location: str):
    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.host == "doi.org":
            return httpx.Response(302, headers={"location": location})
        return httpx.Response(200, json={"title": "Found"})

    return answer


@pytest.mark.parametrize(
    "location",
    [
        "https://93.184.216.34/10.1/x",
        "https://[2606:2800:220:1::]/10.1/x",
        "http://api.crossref.org/works/10.1/x",
        "https://evil.example.com/10.1/x",
        "https://user:pw@api.crossref.org/works/10.1/x",
        "https://api.crossref.org:8443/works/10.1/x",
        "ftp://api.crossref.org/works/10.1/x",
        "https://api.crossref.org.evil.example.com/x",
    ],
)
async def test_redirect_breaking_policy_is_refused_unsent(fake_time, location):
    client, recorder = client_for(redirecting(location), fake_time)
    result = await client.get("doi_registry", "/10.1/x", accept="application/json")
    assert isinstance(result, Unreachable)
    assert result.reason.startswith("refused redirect to ")
    assert "pw" not in result.reason
    assert recorder.hosts == ["doi.org"]


async def test_redirect_within_allowlist_is_followed_with_its_accept_header(fake_time):
    csl = "application/vnd.citationstyles.csl+json"
    client, recorder = client_for(
        redirecting("https://api.crossref.org/v1/works/10.1/x/transform"), fake_time
    )
    result = await client.get("doi_registry", "/" + quote_path("10.1/x"), accept=csl)
    assert isinstance(result, HttpResponse)
    assert result.json() == {"title": "Found"}
    assert result.url == "https://api.crossref.org/v1/works/10.1/x/transform"
    assert recorder.hosts == ["doi.org", "api.crossref.org"]
    assert all(r.headers["accept"] == csl for r in recorder.requests)


async def test_relative_redirect_is_resolved_against_the_hop(fake_time):
    def answer(request):
        if request.url.path == "/old":
            return httpx.Response(301, headers={"location": "/new"})
        return httpx.Response(200, json={"ok": True})

    client, recorder = client_for(answer, fake_time)
    result = await client.get("datacite", "/old")
    assert isinstance(result, HttpResponse)
    assert [str(r.url) for r in recorder.requests] == [
        "https://api.datacite.org/old",
        "https://api.datacite.org/new",
    ]


async def test_redirect_bodies_are_not_read(fake_time):
    body = Stream([b"<html>moved</html>"])

    def answer(request):
        if request.url.host == "doi.org":
            return httpx.Response(
                302, headers={"location": "https://data.crosscite.org/x"}, stream=body
            )
        return httpx.Response(200, json={})

    client, _ = client_for(answer, fake_time)
    assert isinstance(await client.get("doi_registry", "/10.1/x"), HttpResponse)
    assert body.read is False


async def test_redirect_loop_stops_after_five_hops(fake_time):
    client, recorder = client_for(redirecting("https://doi.org/again"), fake_time)
    result = await client.get("doi_registry", "/10.1/x")
    assert isinstance(result, Unreachable) and "redirects" in result.reason
    assert len(recorder.requests) == 6


async def test_redirect_without_location_is_unreachable(fake_time):
    client, _ = client_for(lambda r: httpx.Response(302), fake_time)
    result = await client.get("doi_registry", "/10.1/x")
    assert isinstance(result, Unreachable) and "Location" in result.reason


async def test_every_hop_is_paced(fake_time):
    waited: list[str] = []

    class SpyPacer(Pacer):
        async def wait(self, origin, *, urgent: bool = False, lane: str = "") -> None:
            waited.append(origin[1])

    config = settings()
    recorder = Recorder(redirecting("https://data.crosscite.org/x"))
    client = HttpClient(config, transport=httpx.MockTransport(recorder), pacer=SpyPacer({}))
    await client.get("doi_registry", "/10.1/x")
    assert waited == ["doi.org", "data.crosscite.org"]


async def test_insecure_base_url_is_refused_before_sending(fake_time):
    endpoints = dict(settings().endpoints)
    endpoints["crossref"] = Endpoint("http://api.crossref.org", 0)
    client, recorder = client_for(json_ok, fake_time, endpoints=endpoints)
    result = await client.get("crossref", "/works")
    assert isinstance(result, Unreachable)
    assert result.reason.startswith("refused request to http://api.crossref.org/works")
    assert recorder.requests == []


@pytest.mark.parametrize(
    "base", ["http://127.0.0.1:8765", "http://localhost:9000/api", "http://[::1]:8080"]
)
async def test_loopback_base_url_may_use_http_and_any_port(fake_time, base):
    endpoints = {name: Endpoint(base, 0) for name in DEFAULT_ENDPOINTS}
    client, recorder = client_for(json_ok, fake_time, endpoints=endpoints)
    result = await client.get("crossref", "/works/10.1/x")
    assert isinstance(result, HttpResponse)
    assert str(recorder.requests[0].url) == base + "/works/10.1/x"


async def test_configured_host_and_port_are_allowed(fake_time):
    endpoints = dict(settings().endpoints)
    endpoints["crossref"] = Endpoint("https://mirror.example.net:8443/crossref", 0)
    client, recorder = client_for(json_ok, fake_time, endpoints=endpoints)
    assert isinstance(await client.get("crossref", "/works"), HttpResponse)
    assert str(recorder.requests[0].url) == "https://mirror.example.net:8443/crossref/works"


async def test_unknown_endpoint_is_unreachable(fake_time):
    client, recorder = client_for(json_ok, fake_time)
    result = await client.get("scholar_google", "/x")
    assert isinstance(result, Unreachable) and recorder.requests == []


async def test_user_agent_names_the_tool_and_the_mailto(fake_time):
    client, recorder = client_for(json_ok, fake_time)
    await client.get("crossref", "/works")
    agent = recorder.requests[0].headers["user-agent"]
    assert agent.startswith("citelsp/")
    assert "+https://github.com/citelsp/citelsp" in agent
    assert f"mailto:{MAILTO}" in agent

    anonymous, recorder = client_for(json_ok, fake_time, mailto=None)
    await anonymous.get("crossref", "/works")
    assert "mailto" not in recorder.requests[0].headers["user-agent"]


async def test_api_keys_go_only_to_their_own_endpoint(fake_time):
    client, recorder = client_for(json_ok, fake_time)
    for endpoint in ("semantic_scholar", "openalex", "eutils", "crossref", "arxiv", "datacite"):
        await client.get(endpoint, "/x", params={"q": "a b"})
    by_host = {r.url.host: r for r in recorder.requests}
    s2 = by_host["api.semanticscholar.org"]
    assert s2.headers["x-api-key"] == S2_KEY and "api_key" not in s2.url.params
    assert by_host["api.openalex.org"].url.params["api_key"] == OPENALEX_KEY
    assert by_host["eutils.ncbi.nlm.nih.gov"].url.params["api_key"] == NCBI_KEY
    for host in ("api.crossref.org", "export.arxiv.org", "api.datacite.org"):
        request = by_host[host]
        assert "x-api-key" not in request.headers
        assert "api_key" not in request.url.params
        assert request.url.params["q"] == "a b"


async def test_a_response_names_its_url_without_the_key(fake_time):
    """What a resolver keeps (and a report may show) never carries the API key."""
    client, recorder = client_for(json_ok, fake_time)
    keyed = await client.get("openalex", "/works", params={"search": "a b"})
    plain = await client.get("crossref", "/works", params={"query": "a b"})
    assert recorder.requests[0].url.params["api_key"] == OPENALEX_KEY
    assert OPENALEX_KEY not in keyed.url and "api_key" not in keyed.url
    assert keyed.url == "https://api.openalex.org/works?search=a+b"
    assert plain.url == "https://api.crossref.org/works?query=a+b"


async def test_api_key_header_is_not_carried_to_another_host(fake_time):
    def answer(request):
        if request.url.host == "api.semanticscholar.org":
            return httpx.Response(307, headers={"location": "https://api.crossref.org/x"})
        return httpx.Response(200, json={})

    client, recorder = client_for(answer, fake_time)
    await client.get("semantic_scholar", "/paper/DOI:10.1/x")
    assert recorder.requests[0].headers["x-api-key"] == S2_KEY
    assert "x-api-key" not in recorder.requests[1].headers


async def test_secrets_never_appear_in_reasons_logs_or_urls(fake_time, caplog):
    def answer(request):
        if request.url.path == "/leak":
            location = f"https://evil.example.com/?api_key={OPENALEX_KEY}&k={S2_KEY}"
            return httpx.Response(302, headers={"location": location})
        if request.url.path == "/ok":
            return httpx.Response(200, json={})
        raise httpx.ConnectError(f"failed with {OPENALEX_KEY}", request=request)

    client, _ = client_for(answer, fake_time)
    caplog.set_level(logging.DEBUG, logger="citelsp.http")
    results = [
        await client.get("openalex", "/leak"),
        await client.get("openalex", "/boom"),
        await client.get("eutils", "/boom"),
        await client.get("semantic_scholar", "/boom"),
        await client.get("openalex", "/ok"),
    ]
    texts = [r.reason for r in results[:4]] + [results[4].url] + caplog.messages
    assert all(isinstance(r, Unreachable) for r in results[:4])
    assert caplog.messages
    for text in texts:
        for secret in (S2_KEY, OPENALEX_KEY, NCBI_KEY):
            assert secret not in text


async def test_post_json_sends_json_and_303_turns_into_get(fake_time):
    def answer(request):
        if request.method == "POST":
            return httpx.Response(303, headers={"location": "/graph/v1/paper/result"})
        return httpx.Response(200, json=[{"paperId": "1"}])

    client, recorder = client_for(answer, fake_time)
    result = await client.post_json(
        "semantic_scholar", "/paper/batch", {"ids": ["DOI:10.1/x"]}, params={"fields": "title"}
    )
    assert isinstance(result, HttpResponse) and result.json() == [{"paperId": "1"}]
    post, get = recorder.requests
    assert post.method == "POST" and get.method == "GET"
    assert post.headers["content-type"] == "application/json"
    assert post.content == b'{"ids": ["DOI:10.1/x"]}'
    assert post.url.params["fields"] == "title"
    assert get.content == b""


async def test_invalid_base_url_is_unreachable(fake_time):
    endpoints = dict(settings().endpoints)
    endpoints["crossref"] = Endpoint("https://api.crossref.org:port", 0)
    client, recorder = client_for(json_ok, fake_time, endpoints=endpoints)
    result = await client.get("crossref", "/works")
    assert isinstance(result, Unreachable) and recorder.requests == []


async def test_an_origin_that_asked_for_a_long_pause_is_not_asked_again(fake_time):
    refusal = httpx.Response(429, headers={"retry-after": "3600"})
    client, recorder = client_for(lambda r: refusal, fake_time)
    first = await client.get("openalex", "/works")
    second = await client.get("openalex", "/works/doi:10.1/x")
    assert isinstance(first, Unreachable) and isinstance(second, Unreachable)
    assert "asked to wait" in second.reason
    assert len(recorder.requests) == 1
    assert fake_time.sleeps == []


async def test_a_503_with_retry_after_holds_the_origin_and_still_fails_at_once(fake_time):
    """Unavailable for a stated while: the request is unreachable at once (5xx are never
    retried), and nobody else asks the origin before then (with shared pacing, no process)."""
    client, recorder = client_for(
        lambda r: httpx.Response(503, headers={"Retry-After": "120"}), fake_time)
    first = await client.get("crossref", "/works/10.1000/a")
    second = await client.get("crossref", "/works/10.1000/b")
    await client.aclose()
    assert "HTTP 503" in first.reason and len(recorder.requests) == 1
    assert "asked to wait" in second.reason, "closed for two minutes: not asked again"
