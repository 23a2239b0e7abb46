"""How fast citelsp verifies a bibliography at the public rate limits, cold and warm.

Run: ``python bench/verify_bench.py [--sizes 200,1000,5000] [--latency 0.1] [--seed 1]``.

A generated bibliography (70 % DOI, 15 % arXiv, 15 % title only; 10 % of all entries
fabricated: invented DOIs under real prefixes with invented titles, and invented titles without
an identifier, in proportion to the DOI and title-only shares) is verified by the engine exactly
as ``citelsp check`` does it (``Engine.resolve_all``, then ``judge``), with the documented
pacing (no ``MIN_INTERVAL_MS`` override). The simulated index (``bench/simindex.py``) knows
every correct entry's work plus as many unrelated works, and serves each API on its own
loopback address (127.0.0.2 …) in a child process, so its threads never compete with the
client for the GIL. Every host waits ``--latency`` seconds before answering and enforces its
documented limit (``LIMITS``): a request over the limit is answered 429 with ``Retry-After``.
The limit counts the requests that arrived in the last window, less ``GRACE_S``; a request
arrives when its connection is accepted (each request has its own connection), before the
server's thread for it starts, so that the server's own scheduling is not counted against
the client.

For each size it prints wall time, requests per host and per reference, 429s, and the floor
(for each host its requests divided by its allowed rate; the largest), then a warm rerun on
the same cache (a new engine), and the grades: every fabricated DOI must be P0, every
fabricated title P1 or worse, no correct entry P0 or P1.

Targets (issue 9): 200 references cold in at most 15 s, at most 1.5 requests per reference,
wall time at most 1.3 × the floor, no 429, a warm rerun with no request. Since Crossref's
limits of December 2025 the 15 s hold with ``--mailto`` (its polite pool: 3 lists or queries
a second); its public pool allows one a second, so 30 title searches alone take 30 s.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import multiprocessing
import random
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from multiprocessing.connection import Connection
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):  # run as a script: make ``citelsp`` and ``bench`` importable
    sys.path.insert(0, str(ROOT))

from bench.simindex import (  # noqa: E402
    PREFIXES,
    IndexedWork,
    Router,
    SimIndex,
    route_request,
    write_reply,
)
from citelsp.config import Settings  # noqa: E402
from citelsp.documents.bibtex import parse_bibtex  # noqa: E402
from citelsp.resolution.engine import Engine  # noqa: E402
from citelsp.verdict.judge import judge  # noqa: E402

LIMITS = {
    "crossref": (10, 1.0),
    "openalex": (10, 1.0),
    "semantic_scholar": (1, 1.0),
    "arxiv": (1, 3.0),
    "doi_registry": (5, 1.0),
    "handle": (5, 1.0),
    "datacite": (10, 1.0),
    "eutils": (3, 1.0),
    "dblp": (1, 1.0),
}
"""Requests allowed per window of seconds, per host: the issue's figures for the first five;
DataCite's 3,000 per 5 minutes; NCBI's 3 per second without a key; Handle as doi.org; DBLP
"one or two seconds between two consecutive requests", its lenient end."""
CROSSREF_LIST_RATE = {True: 3.0, False: 1.0}
CROSSREF_SINGLE_RATE = {True: 10.0, False: 5.0}
"""Crossref's rates since 2025-12-01 for lists and queries and for single records, per second,
with a ``mailto`` (polite pool) and without: the floor counts its two lanes apart (the
simulated host admits the older 10 a second for both)."""
GRACE_S = 0.02
TARGET_COLD_S = 15.0
TARGET_PER_REFERENCE = 1.5
TARGET_FLOOR_RATIO = 1.3
REAL_PREFIXES = ("10.1038", "10.1016", "10.1109", "10.1145", "10.1007", "10.1103", "10.1371",
                 "10.1093", "10.1126", "10.1021", "10.1002", "10.1111", "10.1177", "10.3390")
_WORDS = (
    "adaptive", "analysis", "attention", "bayesian", "boundary", "catalytic", "cellular",
    "channel", "climate", "coherent", "compressed", "convex", "coupled", "dense", "diffusion",
    "discrete", "dynamic", "efficient", "elastic", "emergent", "entropy", "estimation",
    "evolution", "fast", "field", "flow", "fractional", "gaussian", "genomic", "gradient",
    "graph", "hierarchical", "hybrid", "inference", "inverse", "kernel", "kinetic", "lattice",
    "learning", "linear", "local", "magnetic", "manifold", "markov", "memory", "metabolic",
    "model", "molecular", "multiscale", "network", "neural", "nonlinear", "optimal",
    "oscillator", "particle", "phase", "photonic", "plasma", "polymer", "protein", "quantum",
    "random", "recurrent", "regression", "robust", "sampling", "scalable", "signal", "sparse",
    "spectral", "stochastic", "structure", "surface", "symmetry", "synthesis", "thermal",
    "topology", "transfer", "transport", "turbulent", "uncertainty", "variational", "wave",
)
_FAMILIES = ("Smith", "Garcia", "Chen", "Müller", "Kowalski", "Nakamura", "Okafor", "Rossi",
             "Silva", "Novak", "Haddad", "Larsen", "Dubois", "Ivanova", "Park", "Singh",
             "O'Brien", "Andersson", "Costa", "Yilmaz", "Fischer", "Moreau", "Tanaka", "Kim")
_GIVEN = ("Anna", "Ben", "Chloé", "David", "Eva", "Farid", "Grace", "Hiro", "Ines", "Jonas",
          "Kira", "Luis", "Mei", "Nora", "Omar", "Priya", "Quentin", "Rosa", "Sven", "Tariq")


# --- the bibliography -------------------------------------------------------------------------


@dataclass(frozen=True)
class Entry:
    key: str
    kind: str
    """``doi``, ``arxiv`` or ``title``: what the entry cites the work by."""
    fabricated: bool
    work: IndexedWork


def generate(n: int, seed: int) -> tuple[list[Entry], list[IndexedWork]]:
    """``n`` entries and the index's works (every correct entry's work plus ``n`` others)."""
    rng = random.Random(seed)
    titles: set[str] = set()
    dois: set[str] = set()

    def title() -> str:
        while True:
            words = rng.sample(_WORDS, rng.randint(6, 10))
            text = " ".join(words).capitalize()
            if text not in titles:
                titles.add(text)
                return text

    def doi() -> str:
        while True:
            value = f"{rng.choice(REAL_PREFIXES)}/j.{rng.randint(10**6, 10**7 - 1)}"
            if value not in dois:
                dois.add(value)
                return value

    def work(i: int, kind: str) -> IndexedWork:
        year = rng.randint(2015, 2024)
        authors = tuple((rng.choice(_GIVEN), rng.choice(_FAMILIES))
                        for _ in range(rng.randint(1, 4)))
        arxiv = f"{year % 100:02d}{rng.randint(1, 12):02d}.{i % 90000 + 10000:05d}" \
            if kind == "arxiv" else None
        venue = "arXiv" if kind == "arxiv" else f"Journal of {rng.choice(_WORDS).title()} Studies"
        return IndexedWork(i, title(), authors, year, venue, True,
                           None if kind == "arxiv" else doi(), arxiv)

    kinds = ["doi"] * round(n * 0.70) + ["arxiv"] * round(n * 0.15)
    kinds += ["title"] * (n - len(kinds))
    fake_total = round(n * 0.10)
    fake_doi = round(fake_total * kinds.count("doi") / (kinds.count("doi") + kinds.count("title")))
    fakes = {"doi": fake_doi, "title": fake_total - fake_doi, "arxiv": 0}
    rng.shuffle(kinds)
    entries, works = [], []
    for i, kind in enumerate(kinds):
        fabricated = fakes[kind] > 0
        fakes[kind] -= fabricated
        w = work(i, kind)
        if not fabricated:
            works.append(w)
        entries.append(Entry(f"ref{i:05d}", kind, fabricated, w))
    works += [work(n + i, rng.choice(("doi", "doi", "arxiv"))) for i in range(n)]
    return entries, works


def render_bibtex(entries: Sequence[Entry]) -> str:
    parts = []
    for e in entries:
        w = e.work
        fields = {"title": w.title,
                  "author": " and ".join(f"{family}, {given}" for given, family in w.authors),
                  "year": str(w.year), "journal": w.venue}
        if e.kind == "doi":
            fields["doi"] = w.doi
        elif e.kind == "arxiv":
            fields |= {"eprint": w.arxiv_id, "archiveprefix": "arXiv"}
        body = "".join(f"  {k} = {{{v}}},\n" for k, v in fields.items())
        parts.append(f"@article{{{e.key},\n{body}}}\n")
    return "\n".join(parts)


# --- the rate-limited index, one loopback address per API, in a child process ------------------


class _Limited(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 512

    def __init__(self, host: str, endpoint: str, router: Router, latency: float) -> None:
        super().__init__((host, 0), _Handler)
        self.endpoint, self.router, self.latency = endpoint, router, latency
        self.limit, self.window = LIMITS[endpoint]
        self.arrivals: collections.deque[float] = collections.deque()
        self.served = 0
        self.refused = 0
        self.lists = 0
        """Admitted requests for a list of records (a query string): Crossref's other lane."""
        self.lock = threading.Lock()
        self.verdicts: dict[object, float | None] = {}
        self.times: list[float] = []
        """Arrival of every admitted request (``time.monotonic``, shared with the client)."""

    def process_request(self, request, client_address) -> None:  # noqa: ANN001 - stdlib
        """Judge the request against the limit when its connection is accepted."""
        self.verdicts[request] = self.admit()
        super().process_request(request, client_address)

    def admit(self) -> float | None:
        """None when the request is within the limit, else the seconds until it would be."""
        now = time.monotonic()
        with self.lock:
            while self.arrivals and self.arrivals[0] <= now - self.window + GRACE_S:
                self.arrivals.popleft()
            if len(self.arrivals) >= self.limit:
                self.refused += 1
                return self.arrivals[0] + self.window - GRACE_S - now
            self.arrivals.append(now)
            self.served += 1
            self.times.append(now)
            return None


class _Handler(BaseHTTPRequestHandler):
    server: _Limited

    def do_GET(self) -> None:
        self._serve(None)

    def do_POST(self) -> None:
        self._serve(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

    def _serve(self, posted: bytes | None) -> None:
        wait = self.server.verdicts.pop(self.request, None)
        time.sleep(self.server.latency)
        if wait is not None:
            body = b'{"message": "rate limit exceeded"}'
            write_reply(self, (429, "application/json", body),
                        {"Retry-After": str(max(1, round(wait + 0.5)))})
            return
        if "?" in self.path:
            with self.server.lock:
                self.server.lists += 1
        _endpoint, reply = route_request(self.server.router, self.path, posted,
                                         self.headers.get("Accept", ""))
        write_reply(self, reply)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
        """Silent: a run sends thousands of requests."""


def serve(works: list[IndexedWork], latency: float, conn: Connection) -> None:
    """Serve every endpoint on its own address; answer ``"counts"``; stop on ``None``."""
    router = Router(SimIndex(works))
    servers = {name: _Limited(f"127.0.0.{i + 2}", name, router, latency)
               for i, name in enumerate(PREFIXES)}
    for server in servers.values():
        threading.Thread(target=server.serve_forever, daemon=True).start()
    conn.send({name: "http://{}:{}".format(*s.server_address[:2]) + PREFIXES[name]
               for name, s in servers.items()})
    try:
        while (message := conn.recv()) is not None:
            if message == "counts":
                conn.send({name: (s.served, s.refused, list(s.times), s.lists)
                           for name, s in servers.items()})
    except EOFError:
        pass
    finally:
        for server in servers.values():
            server.shutdown()
            server.server_close()


class IndexProcess:
    def __init__(self, works: list[IndexedWork], latency: float) -> None:
        self._conn, child = multiprocessing.Pipe()
        self._process = multiprocessing.get_context("fork").Process(
            target=serve, args=(works, latency, child), daemon=True)

    def start(self) -> dict[str, str]:
        self._process.start()
        if not self._conn.poll(60):
            raise TimeoutError("the simulated index did not start")
        return self._conn.recv()

    def counts(self) -> dict[str, tuple[int, int, list[float], int]]:
        self._conn.send("counts")
        return self._conn.recv()

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self._conn.send(None)
        self._process.join(10)
        if self._process.is_alive():
            self._process.terminate()


# --- one run ----------------------------------------------------------------------------------


@dataclass
class Run:
    seconds: float
    served: Counter
    refused: Counter
    grades: Counter
    """(class, grade) → count; class is ``correct``, ``fake-doi`` or ``fake-title``."""
    spans: dict[str, tuple[float, float]]
    """Per host, the first and last arrival, in seconds from the start of the run."""
    lists: int = 0
    """Crossref's requests for lists of records (searches and DOI batches)."""
    polite: bool = False
    """Run with a ``mailto``: Crossref's polite pool."""

    @property
    def requests(self) -> int:
        return sum(self.served.values())

    def floor(self) -> tuple[float, str]:
        """The largest ``requests / allowed rate`` over the hosts, and that host."""
        best = (0.0, "-")
        for name, count in self.served.items():
            limit, window = LIMITS[name]
            seconds = count * window / limit
            if name == "crossref":  # two lanes, each at its own published rate
                seconds = max(seconds, self.lists / CROSSREF_LIST_RATE[self.polite],
                              (count - self.lists) / CROSSREF_SINGLE_RATE[self.polite])
            best = max(best, (seconds, name))
        return best


Counts = dict[str, tuple[int, int, list[float], int]]


def counted(before: Counts, after: Counts, since: float
            ) -> tuple[Counter, Counter, dict[str, tuple[float, float]], int]:
    """What the index counted between two ``IndexProcess.counts``: requests served and
    refused per host, each host's first and last arrival in seconds from ``since``
    (``time.monotonic``), and Crossref's lists."""
    served = Counter({n: after[n][0] - before[n][0] for n in after if after[n][0] > before[n][0]})
    refused = Counter({n: after[n][1] - before[n][1] for n in after if after[n][1] > before[n][1]})
    spans = {n: (min(t) - since, max(t) - since) for n in after
             if (t := [x for x in after[n][2] if x >= since])}
    return served, refused, spans, after["crossref"][3] - before["crossref"][3]


async def verify(entries: Sequence[Entry], bases: dict[str, str], cache: Path,
                 index: IndexProcess, mailto: str | None = None) -> Run:
    """``mailto``: Crossref's polite pool (3 searches a second, not 1) and DataCite's
    identified rate, as a user who sets ``CITELSP_MAILTO`` gets them."""
    environ = {f"CITELSP_{name.upper()}_BASE_URL": url for name, url in bases.items()}
    if mailto:
        environ["CITELSP_MAILTO"] = mailto
    settings = Settings.from_options({}, environ).with_changes(cache_dir=cache)
    refs = parse_bibtex("file:///bench/refs.bib", render_bibtex(entries)).references
    assert len(refs) == len(entries), "every generated entry parses"
    before = index.counts()
    engine = Engine(settings)
    started, started_mono = time.perf_counter(), time.monotonic()
    try:
        resolutions = await engine.resolve_all(refs)
    finally:
        await engine.aclose()
    seconds = time.perf_counter() - started
    after = index.counts()
    served, refused, spans, lists = counted(before, after, started_mono)
    grades: Counter = Counter()
    for entry, ref, resolution in zip(entries, refs, resolutions, strict=True):
        item = judge(ref, resolution).item
        label = "correct" if not entry.fabricated else f"fake-{entry.kind}"
        grades[(label, item.priority if item is not None else "clean")] += 1
    return Run(seconds, served, refused, grades, spans, lists, polite=bool(mailto))


def problems(run: Run) -> list[str]:
    wrong = []
    for (label, grade), count in sorted(run.grades.items()):
        if label == "correct" and grade in ("P0", "P1"):
            wrong.append(f"{count} correct entries graded {grade}")
        if label == "fake-doi" and grade != "P0":
            wrong.append(f"{count} fabricated DOIs graded {grade}")
        if label == "fake-title" and grade not in ("P0", "P1"):
            wrong.append(f"{count} fabricated titles graded {grade}")
    return wrong


def describe(label: str, run: Run, n: int) -> list[str]:
    floor, host = run.floor()
    hosts = ", ".join(f"{name} {count} ({run.spans[name][0]:.1f}–{run.spans[name][1]:.1f} s)"
                      for name, count in run.served.most_common())
    ratio = run.seconds / floor if floor else float("nan")
    return [
        f"  {label:<5} wall {run.seconds:7.1f} s   requests {run.requests:>6} "
        f"({run.requests / n:.2f} per reference)   429s {sum(run.refused.values())}   "
        f"floor {floor:.1f} s ({host}), wall/floor {ratio:.2f}",
        f"        per host: {hosts or 'none'}"
        + (f"; 429s: {', '.join(f'{h} {c}' for h, c in run.refused.items())}"
           if run.refused else ""),
    ]


async def bench(n: int, args: argparse.Namespace) -> tuple[list[str], bool]:
    entries, works = generate(n, args.seed)
    index = IndexProcess(works, args.latency)
    bases = index.start()
    try:
        with tempfile.TemporaryDirectory(prefix="citelsp-verify-bench-") as tmp:
            cold = await verify(entries, bases, Path(tmp), index, args.mailto)
            warm = await verify(entries, bases, Path(tmp), index, args.mailto)
    finally:
        index.stop()
    kinds = Counter(e.kind for e in entries)
    fakes = Counter(e.kind for e in entries if e.fabricated)
    wrong = problems(cold)
    grades = ", ".join(f"{label} {grade} {count}" for (label, grade), count
                       in sorted(cold.grades.items()))
    lines = [
        f"{n} references ({kinds['doi']} DOI, {kinds['arxiv']} arXiv, {kinds['title']} title "
        f"only; fabricated: {fakes['doi']} DOIs, {fakes['title']} titles), "
        f"latency {args.latency * 1000:.0f} ms",
        *describe("cold", cold, n),
        *describe("warm", warm, n),
        f"  grades: {grades}",
        "  grading: " + ("as required" if not wrong else "; ".join(wrong)),
    ]
    floor = cold.floor()[0]
    ok = (not wrong and sum(cold.refused.values()) == 0 and warm.requests == 0
          and cold.requests / n <= TARGET_PER_REFERENCE
          and (floor == 0 or cold.seconds <= TARGET_FLOOR_RATIO * max(floor, 1.0)))
    if n == 200:
        ok = ok and cold.seconds <= TARGET_COLD_S
    lines.append("  targets: " + ("PASS" if ok else "FAIL"))
    return lines, ok


async def run(args: argparse.Namespace) -> int:
    for n in args.sizes:
        lines, _ok = await bench(n, args)
        print("\n".join(lines), flush=True)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",")],
                        default=[200, 1000, 5000], help="bibliography sizes, comma-separated")
    parser.add_argument("--latency", type=float, default=0.1,
                        help="seconds every host waits before answering")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--mailto", default=None,
                        help="a contact address: Crossref's polite pool instead of its public one")
    return asyncio.run(run(parser.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
