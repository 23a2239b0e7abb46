"""A loopback stand-in for every bibliographic API, serving recorded bodies (DESIGN.md §11).

One ``ApiServer`` serves all endpoints on 127.0.0.1 under distinct path prefixes, so unit tests
(``settings()``), CLI and language-server subprocesses (``env()``) can all be pointed at it.
Routes match on endpoint, method, path (compared percent-decoded and case-insensitively, as
DOIs are) and a subset of the query; the latest added matching route wins, so a test's own
routes and faults override the defaults.
A batch request no route answers (Crossref ``filter=doi:``, OpenAlex ``filter=doi:a|b``,
Semantic Scholar ``POST /paper/batch``, arXiv ``id_list=a,b``, ``/doiRA/a,b``) is answered by
assembling the single lookups' routes the way the real API does (``tests/apibatch.py``).
Anything else unrouted answers 404 with a body that names the request, and is kept in
``unmatched``.

    server = ApiServer().start()
    load_default_routes(server)            # every recorded body at its real request path
    server.fail("crossref", 503)           # fault injection overrides the defaults
    ...
    server.stop()
"""

from __future__ import annotations

import collections
import contextlib
import json
import math
import socket
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import parse_qsl, unquote, urlsplit

from citelsp.config import DEFAULT_ENDPOINTS, Settings
from tests.apibatch import BATCH_KEYS, batch_route, is_batch, questions

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "api"
PREFIXES = {
    "crossref": "/crossref",
    "openalex": "/openalex",
    "semantic_scholar": "/semantic_scholar/graph/v1",
    "arxiv": "/arxiv/api/query",
    "doi_registry": "/doi",
    "handle": "/handle",
    "datacite": "/datacite",
    "eutils": "/eutils",
    "dblp": "/dblp",
}
assert PREFIXES.keys() == DEFAULT_ENDPOINTS.keys(), "every configured endpoint needs a prefix"
_MEDIA_TYPES = {
    ".json": "application/json",
    ".xml": "application/atom+xml",
    ".txt": "text/plain",
    ".html": "text/html; charset=utf-8",
}
NOT_FOUND = {
    "crossref": ("text/plain", "crossref/10.1371_notarealdoi.404.txt"),
    "datacite": ("application/json; charset=utf-8",
                 "datacite/10.4124_05f6c379-dd68-4cdb-880d-33d3e9576d52_1.404.json"),
    "openalex": ("text/html; charset=utf-8", "openalex/10.1046_j.1365-2699.2003.00795.404.html"),
    "semantic_scholar": ("application/json", "semantic_scholar/0.404.json"),
    "doi_registry": ("text/html;charset=utf-8", "doi/doi_10.1126_foo.404.html"),
}
"""Each service's own "no such record" (media type, recorded body): what an unrouted request and
``fail(endpoint, 404)`` answer, so that a work no route knows reads as missing, as it would
live; a 404 in other words is a proxy's page, which citelsp reports as unreachable."""
HTML_PAGE = b"<!DOCTYPE html><html><head><title>Just a moment...</title></head><body></body></html>"


def fixture(name: str) -> Path:
    """A recorded body under ``fixtures/api`` (see its README for where each came from)."""
    path = FIXTURES / name
    if not path.is_file():
        raise FileNotFoundError(f"no fixture {name!r} under {FIXTURES}")
    return path


class Seen(NamedTuple):
    """One request as the server received it; ``path`` is still percent-encoded."""

    endpoint: str | None
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes
    at: float = 0.0
    """``time.monotonic()`` when the request arrived (pacing tests compare these)."""

    @property
    def decoded_path(self) -> str:
        return unquote(self.path)


@dataclass
class Route:
    endpoint: str
    method: str
    path: str | None
    """``None`` matches every path of the endpoint (fault helpers use it)."""
    query: dict[str, str]
    status: int
    body: bytes
    content_type: str
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    fault: str | None = None
    """``truncate`` (Content-Length larger than the body, then close) or ``unsized`` (no length)."""
    json_body: Any = None
    """When set, the request body must be this JSON value (a recorded POST's request)."""

    def names_batches(self) -> bool:
        """Whether this route was meant for batch requests: every path of its endpoint (a
        fault), a batch query key, or a recorded request body."""
        return self.path is None or self.json_body is not None or any(
            k in self.query for k in BATCH_KEYS)

    def matches(self, seen: Seen) -> bool:
        if (self.endpoint, self.method) != (seen.endpoint, seen.method):
            return False
        if self.path is not None and self.path.lower() != seen.decoded_path.lower():
            return False
        if self.json_body is not None and _json_or_none(seen.body) != self.json_body:
            return False
        return all(seen.query.get(k) == v for k, v in self.query.items())


class ApiServer:
    """The loopback API server; ``start()`` it, ``stop()`` it (or use it as a context manager)."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        """``host`` is a loopback address; two servers on 127.0.0.1 and 127.0.0.2 are two hosts
        to the client's per-host pacing."""
        self.host = host
        self.routes: list[Route] = []
        self.requests: list[Seen] = []
        self.unmatched: list[Seen] = []
        self.delay = 0.0
        """Seconds every answer waits (a slow server for timing tests)."""
        self.rate_limit: tuple[int, float] | None = None
        """At most this many requests per window of seconds, counted over every endpoint
        (the server is one origin); more are answered 429 (``limit``)."""
        self.refused: list[Seen] = []
        """The requests answered 429 for the rate limit."""
        self.retry_after: float | None = None
        self._arrivals: collections.deque[float] = collections.deque()
        self._lock = threading.Lock()
        self._connections: set[socket.socket] = set()
        self._stopping = threading.Event()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None
        self._port = 0
        """The port of the first ``start``: a server stopped and started again (a network
        that goes down and comes back) listens where its clients were pointed."""

    def start(self) -> ApiServer:
        self._stopping.clear()
        self._httpd = _Server((self.host, self._port), _Handler)
        self._port = self._httpd.server_address[1]
        self._httpd.api = self
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening and cut the connections clients keep alive (a network that goes
        down leaves none working)."""
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        with self._lock:
            open_connections, self._connections = self._connections, set()
        for connection in open_connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)

    def __enter__(self) -> ApiServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("ApiServer is not started")
        return f"http://{self.host}:{self._httpd.server_address[1]}"

    def url_for(self, endpoint: str) -> str:
        return self.base_url + PREFIXES[endpoint]

    def env(self) -> dict[str, str]:
        """``CITELSP_<NAME>_BASE_URL`` and ``_MIN_INTERVAL_MS=0`` for every endpoint."""
        env = {}
        for name in PREFIXES:
            env[f"CITELSP_{name.upper()}_BASE_URL"] = self.url_for(name)
            env[f"CITELSP_{name.upper()}_MIN_INTERVAL_MS"] = "0"
        return env

    def settings(self, **changes: Any) -> Settings:
        settings = Settings.from_options({}, environ=self.env())
        return settings.with_changes(**changes) if changes else settings

    def add(
        self,
        endpoint: str,
        method: str,
        path: str | None,
        *,
        query: dict[str, str] | None = None,
        status: int = 200,
        body: bytes | str | Path = b"",
        content_type: str | None = None,
        headers: dict[str, str] | None = None,
        delay: float = 0.0,
        fault: str | None = None,
        json_body: Any = None,
    ) -> Route:
        """Answer ``method endpoint/path`` (``path`` decoded, e.g. ``/works/10.1000/a<b>``)."""
        if endpoint not in PREFIXES:
            raise KeyError(f"unknown endpoint {endpoint!r}")
        if isinstance(body, Path):
            content_type = content_type or _MEDIA_TYPES.get(body.suffix, "application/octet-stream")
            body = body.read_bytes()
        elif isinstance(body, str):
            body = body.encode()
        route = Route(
            endpoint,
            method.upper(),
            path,
            dict(query or {}),
            status,
            body,
            content_type or "application/json",
            dict(headers or {}),
            delay,
            fault,
            json_body,
        )
        with self._lock:
            self.routes.append(route)
        return route

    def add_json(self, endpoint: str, path: str | None, data: Any, **kwargs: Any) -> Route:
        return self.add(endpoint, "GET", path, body=json.dumps(data), **kwargs)

    def fail(self, endpoint: str, status: int, *, path: str | None = None, **kwargs: Any) -> Route:
        """Every request to ``endpoint`` (or to ``path``) answers ``status``; a 404 in the
        service's own words (``NOT_FOUND``) where it has them."""
        body: bytes | str = json.dumps({"apiserver": "injected failure", "status": status})
        if status == 404 and endpoint in NOT_FOUND:
            kwargs.setdefault("content_type", NOT_FOUND[endpoint][0])
            body = fixture(NOT_FOUND[endpoint][1]).read_bytes()
        for method in ("GET", "POST"):
            route = self.add(endpoint, method, path, status=status, body=body, **kwargs)
        return route

    def hang(self, endpoint: str, *, path: str | None = None, seconds: float = 60.0) -> Route:
        """Answer only after ``seconds`` (``stop()`` cuts the wait short)."""
        return self.add(endpoint, "GET", path, body=b"{}", delay=seconds)

    def truncate(
        self, endpoint: str, *, path: str | None = None, body: bytes = b'{"status"'
    ) -> Route:
        """Declare more bytes than are sent, then close the connection."""
        return self.add(endpoint, "GET", path, body=body, fault="truncate")

    def html_page(self, endpoint: str, *, path: str | None = None, status: int = 200) -> Route:
        """A proxy's or CDN's HTML page where data was expected, to every method (a batch
        POST too, as ``fail`` does: otherwise timing decides whether a batch reaches data)."""
        for method in ("GET", "POST"):
            route = self.add(
                endpoint, method, path, status=status, body=HTML_PAGE, content_type="text/html"
            )
        return route

    def oversized(
        self,
        endpoint: str,
        *,
        path: str | None = None,
        size: int = 2 * 1024 * 1024 + 1024,
        declare_length: bool = True,
    ) -> Route:
        """A JSON body of ``size`` bytes, with or without a Content-Length."""
        body = b'{"filler": "' + b"x" * max(0, size - 14) + b'"}'
        fault = None if declare_length else "unsized"
        return self.add(endpoint, "GET", path, body=body, fault=fault)

    def redirect(
        self, endpoint: str, path: str | None, location: str, *, status: int = 302
    ) -> Route:
        return self.add(endpoint, "GET", path, status=status, headers={"Location": location})

    def limit(self, requests: int, window_s: float, *, retry_after: float | None = None
              ) -> ApiServer:
        """Answer 429 beyond ``requests`` per ``window_s`` seconds (a sliding window over the
        arrivals admitted), as the real services do per origin; the 429 carries
        ``Retry-After``: ``retry_after`` when given, else the seconds until a request would
        be admitted (rounded up)."""
        self.rate_limit, self.retry_after = (requests, window_s), retry_after
        return self

    def _admit(self, seen: Seen) -> float | None:
        """None when ``seen`` is within the rate limit; else the ``Retry-After`` it gets."""
        if self.rate_limit is None:
            return None
        requests, window = self.rate_limit
        with self._lock:
            while self._arrivals and self._arrivals[0] <= seen.at - window:
                self._arrivals.popleft()
            if len(self._arrivals) >= requests:
                self.refused.append(seen)
                wait = self._arrivals[0] + window - seen.at
                return self.retry_after if self.retry_after is not None else wait
            self._arrivals.append(seen.at)
        return None

    def count(self, endpoint: str | None = None, path_contains: str | None = None) -> int:
        """Requests received, optionally for one endpoint and a path (encoded or decoded) part."""
        with self._lock:
            seen = list(self.requests)
        part = path_contains
        return sum(
            1
            for s in seen
            if (endpoint is None or s.endpoint == endpoint)
            and (part is None or part in s.path or part in s.decoded_path)
        )

    def asked(self, endpoint: str | None = None, path_contains: str | None = None) -> int:
        """Single lookups asked, a batch counting once per key it carries (``count`` counts
        requests): how often a DOI was asked, whichever form carried it."""
        with self._lock:
            seen = list(self.requests)
        return sum(1 for s in seen for e, path in questions(s)
                   if (endpoint is None or e == endpoint)
                   and (path_contains is None or path_contains.lower() in path.lower()))

    def questions(self) -> list[tuple[str | None, str]]:
        """Every single lookup asked so far, in order (batches expanded)."""
        with self._lock:
            return [q for s in self.requests for q in questions(s)]

    def _route(self, seen: Seen) -> Route | None:
        with self._lock:
            self.requests.append(seen)
            route = self._find(seen)
            if route is not None and is_batch(seen) and not route.names_batches():
                route = None  # a search catch-all on ``/works`` does not answer a batch
            route = route or batch_route(seen, self._find, self._made(seen))
            if route is None:
                self.unmatched.append(seen)
        return route

    def _find(self, seen: Seen) -> Route | None:
        return next((r for r in reversed(self.routes) if r.matches(seen)), None)

    @staticmethod
    def _made(seen: Seen):
        def make(endpoint: str, method: str, status: int, body: bytes,
                 content_type: str = "application/json") -> Route:
            return Route(endpoint, method, seen.decoded_path, {}, status, body, content_type)
        return make

    def _wait(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)


def load_default_routes(server: ApiServer) -> ApiServer:
    """Wire every body under ``fixtures/api`` at the request path it was recorded for."""
    for entry in json.loads((FIXTURES / "index.json").read_text()):
        for route in entry["routes"]:
            server.add(
                entry["endpoint"],
                route["method"],
                route["path"],
                query=route["query"],
                status=entry["status"],
                body=FIXTURES / entry["file"],
                content_type=entry["content_type"],
                json_body=route.get("json_body"),
            )
    return server


def add_empty_searches(server: ApiServer) -> ApiServer:
    """Catch-all title searches answered with recorded bodies that match nothing a test
    cites (add them before ``load_default_routes``, whose recorded searches win)."""
    server.add("crossref", "GET", "/works",
               body=fixture("crossref/search/title_askldjrq3rjaw938h.json"))
    server.add("openalex", "GET", "/works", body=fixture(
        "openalex/search/title_PaperQA_Retrieval-Augmented_Generative_Agent_for_Scientific"
        "_Research.json"))
    server.add("semantic_scholar", "GET", "/paper/search",
               body=fixture("semantic_scholar/search/n0_r3sult_s3arch_t3rm.json"))
    return server


def _json_or_none(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None


def _split(raw_path: str) -> tuple[str | None, str]:
    """The endpoint a raw request path belongs to and the rest of the path (still encoded)."""
    best = None
    for name, prefix in PREFIXES.items():
        if (raw_path == prefix or raw_path.startswith(prefix + "/")) and (
            best is None or len(prefix) > len(PREFIXES[best])
        ):
            best = name
    if best is None:
        return None, raw_path
    return best, raw_path[len(PREFIXES[best]) :]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    api: ApiServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up (a refused oversized body, a timeout) is not a server error."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def setup(self) -> None:
        super().setup()
        with self.server.api._lock:
            self.server.api._connections.add(self.connection)

    def finish(self) -> None:
        with self.server.api._lock:
            self.server.api._connections.discard(self.connection)
        super().finish()

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the request log is ``ApiServer.requests``."""

    def _serve(self) -> None:
        api = self.server.api
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        parts = urlsplit(self.path)
        endpoint, path = _split(parts.path)
        seen = Seen(
            endpoint,
            self.command,
            path,
            dict(parse_qsl(parts.query, keep_blank_values=True)),
            {k.lower(): v for k, v in self.headers.items()},
            body,
            time.monotonic(),
        )
        if (retry_after := api._admit(seen)) is not None:
            body = b'{"message": "rate limit exceeded"}'
            self._write(429, "application/json", {"Retry-After": str(math.ceil(retry_after))},
                        body, len(body))
            return
        route = api._route(seen)
        api._wait(api.delay)
        try:
            if route is None:
                self._unrouted(seen)
            else:
                api._wait(route.delay)
                self._answer(route)
        except ConnectionError:
            self.close_connection = True

    def _unrouted(self, seen: Seen) -> None:
        if seen.endpoint in NOT_FOUND:
            content_type, name = NOT_FOUND[seen.endpoint]
            body = fixture(name).read_bytes()
            self._write(404, content_type, {"X-Apiserver": "no route"}, body, len(body))
            return
        body = json.dumps(
            {
                "apiserver": "no route for this request",
                "endpoint": seen.endpoint,
                "method": seen.method,
                "path": seen.decoded_path,
                "query": seen.query,
            }
        ).encode()
        self._write(404, "application/json", {}, body, len(body))

    def _answer(self, route: Route) -> None:
        if route.fault == "truncate":
            self._write(
                route.status,
                route.content_type,
                route.headers,
                route.body,
                len(route.body) + 100,
                close=True,
            )
        elif route.fault == "unsized":
            self._write(
                route.status, route.content_type, route.headers, route.body, None, close=True
            )
        else:
            self._write(
                route.status, route.content_type, route.headers, route.body, len(route.body)
            )

    def _write(
        self,
        status: int,
        content_type: str,
        headers: dict[str, str],
        body: bytes,
        length: int | None,
        *,
        close: bool = False,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        for name, value in headers.items():
            self.send_header(name, value)
        if length is not None:
            self.send_header("Content-Length", str(length))
        if close or length is None:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()
