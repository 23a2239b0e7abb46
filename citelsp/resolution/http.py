"""The one HTTP client: network policy, redirects, size cap, back-off, keys.

Only this module touches httpx. It answers with an ``HttpResponse`` for the statuses a resolver
can read (2xx, 400, 404, 410) and with ``Unreachable`` for everything else, so an outage, a refusal
or a proxy's error page can never be read as evidence about a work. It never raises.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import functools
import importlib.util
import ipaddress
import json
import logging
import os
import ssl
import sys
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from types import ModuleType
from typing import TYPE_CHECKING, Any

from citelsp import __version__, links
from citelsp.config import DEFAULT_ENDPOINTS, Settings
from citelsp.resolution import terms
from citelsp.resolution.budget import DailyBudget
from citelsp.resolution.decoding import ACCEPTED, Decoder, DecodingRefused
from citelsp.resolution.outcome import Unreachable
from citelsp.resolution.pacing import Origin, Pacer, origin_of

if TYPE_CHECKING:
    import httpx


def _loaded_on_first_use(name: str) -> ModuleType:
    """``name``, executed when an attribute is first read (``importlib.util.LazyLoader``):
    an offline check sends no request, and importing httpx took a tenth of its start-up."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.loader is not None, name
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


httpx = _loaded_on_first_use("httpx")

log = logging.getLogger("citelsp.http")

PROJECT_URL = "https://github.com/citelsp/citelsp"
MAX_REDIRECTS = 5
MAX_RETRIES = 3
"""Retries after a 429; 5xx are never retried."""
MIN_BACKOFF_S = 2.0
MAX_BACKOFF_S = 60.0
"""A service asking for a longer pause than this is reported unreachable at once."""
READABLE_ERROR_STATUSES = frozenset({400, 404, 410})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
KNOWN_HOSTS = (
    "api.crossref.org",
    "api.openalex.org",
    "api.semanticscholar.org",
    "export.arxiv.org",
    "arxiv.org",
    "doi.org",
    "hdl.handle.net",
    "api.datacite.org",
    "data.crosscite.org",
    "eutils.ncbi.nlm.nih.gov",
    "dblp.org",
)
"""The sources of §4 and the hosts doi.org's content negotiation redirects to."""
_QUERY_KEYS = {"openalex": "openalex_api_key", "eutils": "ncbi_api_key"}
_HEADER_KEYS = {"semantic_scholar": ("x-api-key", "semantic_scholar_api_key")}
_SECRET_PARAM = "api_key"
_DEFAULT_PORTS = {"https": 443, "http": 80}
_DISPLAY_LIMIT = 200


@dataclass(frozen=True)
class HttpResponse:
    """A response a resolver may read; ``url`` is the final URL without any API key."""

    status: int
    url: str
    content_type: str
    body: bytes
    headers: dict[str, str]

    def json(self) -> Any:
        """The body as JSON; ``ValueError`` when it is not JSON."""
        try:
            return json.loads(self.body)
        except (ValueError, RecursionError):
            raise ValueError(f"body from {self.url} is not JSON") from None

    def text(self) -> str:
        return self.body.decode(_charset(self.content_type), errors="replace")


@dataclass(frozen=True)
class _Call:
    """How a request is to be paced: ``urgent`` (a batch) and its class (``terms``)."""

    urgent: bool = False
    kind: str = terms.SINGLE


@dataclass(frozen=True)
class _RateLimited:
    host: str
    origin: Origin
    retry_after: float | None


@dataclass(frozen=True)
class _Redirect:
    status: int
    location: str


class HttpClient:
    """Async client for the configured endpoints; one per settings, closed with ``aclose``."""

    def __init__(
        self,
        settings: Settings,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        pacer: Pacer | None = None,
        budget: DailyBudget | None = None,
    ) -> None:
        """``budget`` charges metered requests (OpenAlex) before they go; without one nothing
        is metered here."""
        self._settings = settings
        self._budget = budget
        self._secrets = settings.secrets()
        self._pacer = pacer or Pacer.from_settings(settings)
        self._user_agent = _user_agent(settings.mailto)
        self._transport = transport
        self._opened: httpx.AsyncClient | None = None
        self._closed = False
        self._open_slots: dict[tuple[str, str], asyncio.Semaphore] = {}
        self.requests_sent = 0
        """Requests handed to the transport, counting every retry and redirect hop."""

    @functools.cached_property
    def _allowed_ports(self) -> dict[str, set[int | None]]:
        return _allowed_ports(self._settings)

    @functools.cached_property
    def _key_origins(self) -> dict[str, frozenset[Origin]]:
        return _key_origins(self._settings)

    async def __aenter__(self) -> HttpClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    @property
    def _client(self) -> httpx.AsyncClient:
        """Made at the first request: an offline run sends none, and making one (its TLS
        context, httpcore) cost a quarter of a second."""
        if self._closed:
            raise RuntimeError("the HTTP client is closed")
        if self._opened is None:
            self._opened = self._make_client(httpx.AsyncClient)
        return self._opened

    def _make_client(self, client_class: type[httpx.AsyncClient]) -> httpx.AsyncClient:
        return client_class(
            transport=self._transport,
            verify=_tls_context(),
            timeout=httpx.Timeout(self._settings.timeout_s),
            follow_redirects=False,
        )

    async def prepare(self) -> None:
        """Make the client in a worker thread, ahead of the first request: a long-lived
        process (the language server) would otherwise stall its event loop for a quarter of
        a second (the TLS context) while the writer waits for a hover."""
        if self._opened is not None or self._closed:
            return
        # httpx is loaded here, on the loop's thread: a lazily loaded module is not safe to
        # load from two threads at once (Python 3.11).
        made = await asyncio.to_thread(self._make_client, httpx.AsyncClient)
        if self._opened is None and not self._closed:  # only the loop's thread assigns
            self._opened = made
        else:  # a request made its own meanwhile, or the client was closed
            await made.aclose()

    async def aclose(self) -> None:
        self._closed = True
        if self._opened is not None:
            await self._opened.aclose()

    async def reserve(self, endpoint: str, kind: str = terms.LIST) -> None:
        """Take the next paced slot of ``endpoint``'s ``kind`` lane for the request this task
        sends next (a batch: a list request)."""
        if endpoint in self._settings.endpoints:
            await self._pacer.reserve(origin_of(self._settings.endpoints[endpoint].base_url),
                                      self._lane(endpoint, kind).name)

    def _lane(self, endpoint: str, kind: str) -> terms.Lane:
        return terms.lane(endpoint, kind, identified=bool(self._settings.mailto))

    def _slots(self, endpoint: str, lane: terms.Lane) -> asyncio.Semaphore | None:
        """The semaphore that keeps at most ``lane.concurrency`` of ``endpoint``'s requests
        in that lane open at once (Crossref's concurrency limit), or None."""
        if lane.concurrency is None:
            return None
        key = (endpoint, lane.name)
        if key not in self._open_slots:
            self._open_slots[key] = asyncio.Semaphore(lane.concurrency)
        return self._open_slots[key]

    async def get(
        self,
        endpoint: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        accept: str | None = None,
        headers: Mapping[str, str] | None = None,
        urgent: bool = False,
        kind: str = terms.SINGLE,
    ) -> HttpResponse | Unreachable:
        """GET ``endpoint``'s base URL + ``path`` (identifiers encoded by ``links.quote_path``).

        ``urgent`` requests (batches, which answer many references) get the origin's next
        pacing slot before the others waiting for it; ``kind`` is the request's class
        (``terms``: a single record, a list or a search), which picks its pacing lane."""
        return await self._request("GET", endpoint, path, params, accept, headers, None,
                                   _Call(urgent, kind))

    async def reachable(self, endpoint: str, timeout_s: float) -> str | None:
        """None when a connection to ``endpoint``'s host opens (no request is sent); else why
        not. Behind a proxy (``HTTPS_PROXY``) the answer is always None: only a request
        through it could tell."""
        try:
            url = httpx.URL(self._settings.endpoint(endpoint).base_url)
        except (KeyError, httpx.InvalidURL):
            return None
        proxied = any(os.environ.get(v) for v in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY",
                                                   "all_proxy"))
        if proxied or self._refusal(url):
            return None
        port = url.port or (443 if url.scheme == "https" else 80)
        try:
            async with asyncio.timeout(timeout_s):
                _reader, writer = await asyncio.open_connection(url.host, port)
        except TimeoutError:
            return f"no connection to {url.host} within {timeout_s:g} s"
        except OSError as exc:
            return f"cannot connect to {url.host}: {exc.strerror or type(exc).__name__}"
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
        return None

    async def post_json(
        self,
        endpoint: str,
        path: str,
        payload: Any,
        *,
        params: Mapping[str, str] | None = None,
        accept: str | None = "application/json",
        headers: Mapping[str, str] | None = None,
        urgent: bool = False,
        kind: str = terms.SINGLE,
    ) -> HttpResponse | Unreachable:
        """POST ``payload`` as JSON (Semantic Scholar's ``/paper/batch``)."""
        try:
            body = json.dumps(payload).encode()
        except (TypeError, ValueError):
            return Unreachable(f"payload for {endpoint} is not JSON-serializable")
        return await self._request("POST", endpoint, path, params, accept, headers, body,
                                   _Call(urgent, kind))

    async def _request(
        self,
        method: str,
        endpoint: str,
        path: str,
        params: Mapping[str, str] | None,
        accept: str | None,
        headers: Mapping[str, str] | None,
        body: bytes | None,
        call: _Call,
    ) -> HttpResponse | Unreachable:
        try:
            result = await self._with_retries(method, endpoint, path, params, accept, headers, body,
                                              call)
        except Exception as exc:  # the last guard: callers must never see an exception
            result = Unreachable(f"internal error in the HTTP client ({type(exc).__name__})")
        finally:
            # A reserved slot is for one request: one refused before it was sent must not
            # leave it to the single lookups a failed batch falls back to (they copy this
            # task's context, and each would skip the pacer).
            self._pacer.release()
        if isinstance(result, Unreachable):
            result = Unreachable(self._scrub(result.reason), result.kind)
            log.debug("%s %s: unreachable: %s", method, endpoint, result.reason)
        return result

    async def _with_retries(
        self,
        method: str,
        endpoint: str,
        path: str,
        params: Mapping[str, str] | None,
        accept: str | None,
        headers: Mapping[str, str] | None,
        body: bytes | None,
        call: _Call,
    ) -> HttpResponse | Unreachable:
        if endpoint not in self._settings.endpoints:
            return Unreachable(f"unknown endpoint {endpoint!r}")
        if links.has_dot_segment(path.split("?", 1)[0]):
            return Unreachable(f"refused request to {endpoint}: a dot segment in the path "
                               "would leave the API's route")
        try:
            url = httpx.URL(_join(self._settings.endpoints[endpoint].base_url, path))
        except httpx.InvalidURL:
            return Unreachable(f"invalid URL for {endpoint}")
        url = url.copy_merge_params(params or {})
        if self._budget is not None and (spent := await self._budget.charge(endpoint, call.kind)):
            return Unreachable(spent, kind="budget")
        for attempt in range(MAX_RETRIES + 1):
            result = await self._follow(method, url, endpoint, accept, headers, body, call)
            if not isinstance(result, _RateLimited) or attempt == MAX_RETRIES:
                break
            delay = max(MIN_BACKOFF_S * 2**attempt, result.retry_after or 0.0)
            if delay > MAX_BACKOFF_S:
                return Unreachable(
                    f"rate limited by {result.host} (HTTP 429, asked to wait {delay:.0f} s)"
                )
            log.debug("429 from %s: retrying in %.1f s", result.host, delay)
            self._pacer.hold(result.origin, delay)
        if isinstance(result, _RateLimited):
            host, retries = result.host, MAX_RETRIES
            return Unreachable(f"rate limited by {host} (HTTP 429) after {retries} retries")
        return result

    async def _follow(
        self,
        method: str,
        url: httpx.URL,
        endpoint: str,
        accept: str | None,
        headers: Mapping[str, str] | None,
        body: bytes | None,
        call: _Call,
    ) -> HttpResponse | Unreachable | _RateLimited:
        """Send, following redirects by hand so that every hop passes the policy first. The
        hops to the endpoint's own origin ride in the lane of the request's class; a hop to
        another origin in that origin's common lane."""
        home = url.host
        lane = self._lane(endpoint, call.kind)
        own = _origin(url)
        for hop in range(MAX_REDIRECTS + 1):
            origin = _origin(url)
            hop_lane = lane if origin == own else terms.Lane()
            held = self._pacer.holds(origin, hop_lane.name)  # taken now, even if it does not go
            refusal = self._refusal(url)
            if refusal:
                what = "request" if hop == 0 else "redirect"
                return Unreachable(f"refused {what} to {self._display(url)}: {refusal}")
            if not held and not self._pacer.closed_for(origin):
                await self._pacer.wait(origin, urgent=call.urgent, lane=hop_lane.name)
            # Checked after the wait too: the answer to a request sent meanwhile may have
            # closed the origin (a long Retry-After, an hour-long announced interval).
            if (closed := self._pacer.closed_for(origin)) > 0:
                return Unreachable(f"rate limited by {url.host} (asked to wait {closed:.0f} s "
                                   "more)")
            keyed = self._may_send_key(endpoint, url)
            request = self._client.build_request(
                method,
                self._with_query_key(url, endpoint) if keyed else url,
                headers=self._headers(endpoint, keyed, accept, headers, body is not None),
                content=body,
                extensions={"trace": self._departure(origin, hop_lane.name)},
            )
            slots = self._slots(endpoint, hop_lane) if origin == own else None
            if slots is None:
                result = await self._send(request, accept, hop_lane.name)
            else:
                async with slots:
                    result = await self._send(request, accept, hop_lane.name)
            if not isinstance(result, _Redirect):
                if isinstance(result, HttpResponse) and origin == own:
                    await self._metered(endpoint, result.headers)
                return result
            try:
                url = url.join(result.location)
            except httpx.InvalidURL:
                return Unreachable(f"redirect from {home} with an invalid Location")
            if result.status == 303 or (result.status in (301, 302) and method == "POST"):
                method, body = "GET", None
        return Unreachable(f"more than {MAX_REDIRECTS} redirects from {home}")

    async def _metered(self, endpoint: str, headers: Mapping[str, str]) -> None:
        """A metered service that says nothing of the day's budget is left (OpenAlex's
        ``x-ratelimit-remaining-usd``, or ``x-ratelimit-remaining`` in credits as its earlier
        documentation had it) spends the rest of ours: no request today."""
        if self._budget is None:
            return
        for name in ("x-ratelimit-remaining-usd", "x-ratelimit-remaining"):
            try:
                remaining = float(headers.get(name, "nan"))
            except ValueError:
                continue
            if remaining <= 0:
                await self._budget.exhaust(endpoint)

    def _departure(self, origin: Origin, lane: str) -> Callable[[str, dict], Awaitable[None]]:
        """httpcore's trace hook: the interval to the next request counts from the moment
        this one's headers are written, not from its slot (a connect or a busy event loop may
        hold it back, and the service counts arrivals); a request on a new connection departs
        when it connects too (a server may count connections)."""
        async def trace(event: str, _info: dict) -> None:
            if event.endswith("send_request_headers.started"):
                await self._pacer.departing(origin, lane)
            elif event.endswith("connect_tcp.started"):
                await self._pacer.departing(origin, lane, connecting=True)
        return trace

    async def _send(
        self, request: httpx.Request, accept: str | None, lane: str
    ) -> HttpResponse | Unreachable | _RateLimited | _Redirect:
        host = request.url.host
        self.requests_sent += 1
        if log.isEnabledFor(logging.DEBUG):  # the display URL costs a parse of the URL
            log.debug("%s %s", request.method, self._display(request.url))
        try:
            async with asyncio.timeout(self._settings.timeout_s):
                response = await self._client.send(request, stream=True)
                try:
                    return await self._read(request.url, response, accept, lane)
                finally:
                    await response.aclose()
        except (TimeoutError, httpx.TimeoutException):
            return Unreachable(f"timed out after {self._settings.timeout_s:g} s waiting for {host}")
        except httpx.RemoteProtocolError:
            return Unreachable(f"truncated or malformed response from {host}")
        except httpx.DecodingError:
            return Unreachable(f"undecodable response body from {host}")
        except httpx.TransportError as exc:
            return Unreachable(f"network error reaching {host} ({type(exc).__name__})")
        except httpx.HTTPError as exc:
            return Unreachable(f"HTTP error from {host} ({type(exc).__name__})")

    async def _read(
        self, url: httpx.URL, response: httpx.Response, accept: str | None, lane: str
    ) -> HttpResponse | Unreachable | _RateLimited | _Redirect:
        """Judge the status first; read a body only when a resolver may use it, and boundedly."""
        status, host, limit = response.status_code, url.host, self._settings.max_body_bytes
        if status in REDIRECT_STATUSES:
            location = response.headers.get("location")
            if not location:
                return Unreachable(f"redirect without a Location from {host}")
            return _Redirect(status, location)
        origin = _origin(url)
        self._pacer.observe(origin, {k.lower(): v for k, v in response.headers.items()
                                     if "rate" in k.lower()}, lane)
        if status == 429:
            retry_after = retry_after_seconds(response.headers.get("retry-after"))
            self._pacer.rate_limited(origin, retry_after, lane)
            return _RateLimited(host, origin, retry_after)
        if status == 503 and (pause := retry_after_seconds(response.headers.get("retry-after"))):
            self._pacer.hold(origin, pause)  # unavailable, and it says for how long: held
        if not (200 <= status < 300 or status in READABLE_ERROR_STATUSES):
            return Unreachable(f"HTTP {status} from {host}")
        declared = response.headers.get("content-length")
        if declared is not None:
            declared = declared.strip()
            if not (declared.isascii() and declared.isdigit()):
                return Unreachable(f"malformed Content-Length from {host}")
            if int(declared) > limit:
                return Unreachable(f"response from {host} over {limit} bytes refused")
        body = await _bounded_body(response, host, limit)
        if isinstance(body, Unreachable):
            return body
        content_type = response.headers.get("content-type", "")
        if 200 <= status < 300 and _is_html(content_type, body) and "html" not in (accept or ""):
            return Unreachable(f"an HTML page instead of data from {host}")
        return HttpResponse(
            status=status,
            url=self._public_url(url),
            content_type=content_type,
            body=bytes(body),
            headers={k.lower(): v for k, v in response.headers.items()},
        )

    def _refusal(self, url: httpx.URL) -> str | None:
        """Why the policy refuses ``url``, or ``None``: checked before every request and hop."""
        host = url.host.lower()
        loopback = _is_loopback(host)
        if url.userinfo:
            return "credentials in the URL"
        if url.scheme != "https" and not (url.scheme == "http" and loopback):
            return "not HTTPS"
        if _is_ip(host) and not loopback:
            return "bare IP address"
        if host not in self._allowed_ports:
            return "host not allowed"
        if not loopback and url.port not in self._allowed_ports[host]:
            return f"unexpected port {url.port}"
        return None

    def _may_send_key(self, endpoint: str, url: httpx.URL) -> bool:
        """Whether a hop to ``url`` may carry ``endpoint``'s API key: only to the exact origin
        (scheme, host, port) of its default or user-level base URL (config.Endpoint)."""
        return _origin(url) in self._key_origins.get(endpoint, ())

    def _with_query_key(self, url: httpx.URL, endpoint: str) -> httpx.URL:
        key = getattr(self._settings, _QUERY_KEYS.get(endpoint, ""), None)
        return url.copy_set_param(_SECRET_PARAM, key) if key else url

    def _headers(
        self,
        endpoint: str,
        keyed: bool,
        accept: str | None,
        extra: Mapping[str, str] | None,
        json_body: bool,
    ) -> dict[str, str]:
        """Polite identity on every hop; a header API key only where ``keyed``."""
        headers = {"User-Agent": self._user_agent, "Accept-Encoding": ACCEPTED}
        if accept:
            headers["Accept"] = accept
        if json_body:
            headers["Content-Type"] = "application/json"
        headers.update(extra or {})
        name, setting = _HEADER_KEYS.get(endpoint, ("", ""))
        key = getattr(self._settings, setting, None) if setting and keyed else None
        if key:
            headers[name] = key
        return headers

    def _public_url(self, url: httpx.URL) -> str:
        """``url`` without credentials or API key."""
        if url.userinfo or _SECRET_PARAM.encode() in url.query:  # else nothing to remove:
            url = url.copy_with(userinfo=b"").copy_remove_param(_SECRET_PARAM)  # no re-parse
        return self._scrub(str(url))

    def _display(self, url: httpx.URL) -> str:
        """``url`` fit for a reason or a log: public and of bounded length."""
        shown = self._public_url(url)
        return shown if len(shown) <= _DISPLAY_LIMIT else shown[: _DISPLAY_LIMIT - 1] + "…"

    def _scrub(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "[secret]")
        return text


async def _bounded_body(
    response: httpx.Response, host: str, limit: int
) -> bytearray | Unreachable:
    """The body, decoded under ``limit`` bytes as sent and as decoded (``decoding.py``), or
    why it was refused. A transport that read the body itself (``httpx.MockTransport`` given
    ``content``) hands it over decoded already."""
    read_already = response.is_stream_consumed
    coding = "" if read_already else response.headers.get("content-encoding", "")
    received, body = 0, bytearray()
    try:
        decoder = Decoder(coding, limit)
        async for chunk in response.aiter_bytes() if read_already else response.aiter_raw():
            received += len(chunk)
            if received > limit:
                return Unreachable(f"response from {host} over {limit} bytes refused")
            body += decoder.feed(chunk)
        decoder.end()
    except DecodingRefused as refused:
        return Unreachable(f"response from {host} refused: {refused}")
    declared = response.headers.get("content-length")
    if declared is not None and not read_already and received != int(declared):
        return Unreachable(f"truncated response from {host}")
    return body


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """One TLS context for the process, as httpx makes it (certifi's CA bundle, or
    ``SSL_CERT_FILE``/``SSL_CERT_DIR``): loading the bundle was nearly all of the 55 ms a
    client cost, and every change of settings makes a new client."""
    return httpx.create_ssl_context()


def retry_after_seconds(value: str | None, now: datetime | None = None) -> float | None:
    """A ``Retry-After`` header (delta seconds or HTTP-date) as seconds from ``now``."""
    if value is None:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def _user_agent(mailto: str | None) -> str:
    contact = f"; mailto:{mailto}" if mailto else ""
    return f"citelsp/{__version__} (+{PROJECT_URL}{contact})"


def _allowed_ports(settings: Settings) -> dict[str, set[int | None]]:
    """Allowed hosts, each with the explicit ports its configured base URLs name."""
    allowed: dict[str, set[int | None]] = {host: {None} for host in KNOWN_HOSTS}
    for endpoint in settings.endpoints.values():
        try:
            base = httpx.URL(endpoint.base_url)
        except httpx.InvalidURL:
            continue
        if base.host:
            allowed.setdefault(base.host.lower(), {None}).add(base.port)
    return allowed


def _key_origins(settings: Settings) -> dict[str, frozenset[Origin]]:
    """Per endpoint, the origins its API key may go to: the default base URL's, and the
    configured one's when that is user-level (``Endpoint.user_level``)."""
    found: dict[str, frozenset[Origin]] = {}
    for name, endpoint in settings.endpoints.items():
        bases = [endpoint.base_url] if endpoint.user_level else []
        if name in DEFAULT_ENDPOINTS:
            bases.append(DEFAULT_ENDPOINTS[name].base_url)
        origins = set()
        for base in bases:
            try:
                origins.add(_origin(httpx.URL(base)))
            except httpx.InvalidURL:
                continue
        found[name] = frozenset(origins)
    return found


def _origin(url: httpx.URL) -> Origin:
    port = url.port or _DEFAULT_PORTS.get(url.scheme, 0)
    return url.scheme, url.host.lower(), port


def _join(base_url: str, path: str) -> str:
    if path and not path.startswith(("/", "?")):
        path = "/" + path
    return base_url.rstrip("/") + path


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _is_html(content_type: str, body: bytes) -> bool:
    """A proxy's or CDN's error page: declared as HTML, or shaped like one."""
    media = content_type.split(";", 1)[0].strip().lower()
    if media in ("text/html", "application/xhtml+xml"):
        return True
    head = body[:512].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    return head.startswith((b"<!doctype html", b"<html"))


def _charset(content_type: str) -> str:
    for parameter in content_type.split(";")[1:]:
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "charset" and value.strip():
            charset = value.strip().strip('"')
            try:
                "".encode(charset)
            except LookupError:
                break
            return charset
    return "utf-8"
