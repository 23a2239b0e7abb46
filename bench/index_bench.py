"""The local index at scale: build rate, size, identifier and title lookups, serving memory, and
a 200-reference bibliography verified from the index alone.

Run: ``python bench/index_bench.py [--works 10000000] [--dir DIR] [--keep]
[--postgres URL|private]``.

A generated OpenAlex snapshot (``updated_date`` folders of gzip JSON Lines of Work objects, as
OpenAlex ships them) of N works: titles of 4 to 14 words drawn from a Zipf-distributed
vocabulary of 60,000 words, 1 to 6 authors, a year, a DOI, a venue of 20,000, volume and
pages. The build reads it with the real reader (``parse_work``, the service's parser) and
writes the real index. Then, in a fresh child process (what a server holds):

- DOI lookups per second, warm (``LocalIndexes.by_doi``);
- title questions p50/p95 as the plan asks them (``by_title`` then ``judge_title_search``),
  for titles the index holds (cited with another case and punctuation) and for absent ones
  (plausible titles of the same vocabulary);
- peak memory (RSS) of that process;
- a 200-reference bibliography (170 DOI entries, 30 title-only), cold (a new engine, no
  cache) with the index, every service pointed at a loopback server that counts requests.

With ``--postgres`` the same snapshot is also built into PostgreSQL (``URL``, or ``private``:
a throwaway server from the installed binaries, as the tests start one) and the same questions
are asked of it; a table puts both backends side by side (build works/s, DOI and title query
p50/p99). The serving memory of PostgreSQL is the server's, not the client process's.

Machine load (``os.getloadavg``) is printed beside the figures, and a bare baseline (a fixed
pure-Python loop) timed at the start and end, so figures from a loaded shared machine can be
read as a ratio; the build also beside a bare JSON parse of the same snapshot (gunzip and
``orjson`` per line) and with the CPU time of all its processes (what the build costs
whatever else runs).

Targets (issue 26): build ≥ 10,000 works/s; DOI lookup ≥ 5,000/s warm; title p95 ≤ 20 ms
found and ≤ 100 ms absent; serving memory < 2 GiB; 200 references with 0 service requests in
< 1 s.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import multiprocessing
import os
import random
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

from citelsp.index.backends import is_database_url, open_backend, open_writer  # noqa: E402

VOCABULARY = 60_000
VENUES = 20_000
PART = 400_000
"""Works per part file (OpenAlex's parts hold up to 400,000)."""
SYLLABLES = ("ka", "lo", "mi", "ne", "ru", "ta", "vi", "so", "pe", "dra", "gen", "tor", "ix",
             "qua", "bel", "fin", "ost", "ul", "cy", "zo", "hep", "mar", "lin", "ser")


def words(rng: random.Random, n: int) -> list[str]:
    out: dict[str, None] = {}
    while len(out) < n:
        out["".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))] = None
    return list(out)


def title_words() -> list[str]:
    """The words of the real titles in ``fixtures/hallmark`` (about 2,800), commonest first:
    titles of English words share trigrams as real ones do, which syllable words do not."""
    import re
    from collections import Counter

    counts: Counter[str] = Counter()
    for path in sorted((ROOT / "fixtures/hallmark").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            title = (orjson.loads(line).get("fields") or {}).get("title") or ""
            counts.update(w.lower() for w in re.findall(r"[A-Za-z][A-Za-z-]+", title))
    return [w for w, _ in counts.most_common()]


class Generator:
    """Deterministic works: work ``i`` is the same on every call (the bench cites some)."""

    def __init__(self, seed: int = 1, real_words: bool = False) -> None:
        rng = random.Random(seed)
        self.vocabulary = title_words() if real_words else words(rng, VOCABULARY)
        self.weights = [1 / (rank + 1) for rank in range(len(self.vocabulary))]
        self.cumulative = list(_accumulate(self.weights))
        self.families = [w.title() for w in words(rng, 20_000)]
        self.venues = [f"Journal of {' '.join(rng.sample(self.vocabulary[:3000], 2)).title()}"
                       for _ in range(VENUES)]

    def title(self, rng: random.Random) -> str:
        n = rng.randint(4, 14)
        chosen = rng.choices(self.vocabulary, cum_weights=self.cumulative, k=n)
        return " ".join(chosen).capitalize()

    def work(self, i: int) -> dict:
        rng = random.Random(i)
        authors = [{"author_position": "first" if k == 0 else "middle",
                    "author": {"id": f"https://openalex.org/A{i}{k}",
                               "display_name": f"{rng.choice('ABCDEFGHJKLMNPRSTW')}. "
                                               f"{rng.choice(self.families)}"}}
                   for k in range(rng.randint(1, 6))]
        year = rng.randint(1990, 2026)
        first = rng.randint(1, 2000)
        venue = self.venues[rng.randrange(VENUES)]
        return {
            "id": f"https://openalex.org/W{i}", "doi": f"https://doi.org/10.{5000 + i % 997}/b{i}",
            "title": self.title(rng), "display_name": None, "publication_year": year,
            "publication_date": f"{year}-01-01", "type": "article", "is_retracted": False,
            "primary_location": {"source": {"display_name": venue, "type": "journal",
                                            "issn_l": None, "issn": None}},
            "authorships": authors, "is_authors_truncated": False,
            "biblio": {"volume": str(rng.randint(1, 80)), "issue": None,
                       "first_page": str(first), "last_page": str(first + 12)},
            "updated_date": "2026-11-01T00:00:00",
        }


def _accumulate(values):
    total = 0.0
    for v in values:
        total += v
        yield total


def write_snapshot(folder: Path, n: int, gen: Generator) -> float:
    started = time.monotonic()
    for part, start in enumerate(range(0, n, PART)):
        path = folder / "works/updated_date=2026-11-01" / f"part_{part:03d}.gz"
        path.parent.mkdir(parents=True, exist_ok=True)
        with gzip.open(path, "wb", compresslevel=1) as out:
            for i in range(start, min(n, start + PART)):
                out.write(orjson.dumps(gen.work(i)) + b"\n")
    return time.monotonic() - started


def baseline_ms() -> float:
    """A fixed pure-Python loop: how fast this machine runs Python right now."""
    started = time.perf_counter()
    total = 0
    for i in range(3_000_000):
        total += i * i % 7
    return (time.perf_counter() - started) * 1000


def cpu_seconds() -> float:
    """CPU time of this process and its ended children (the build's parsing processes)."""
    return sum(resource.getrusage(who).ru_utime + resource.getrusage(who).ru_stime
               for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))


def bare_json_rate(snapshot: Path) -> float:
    """Works per second that merely gunzipping and parsing every line's JSON reaches: what
    the build rate is read against on a shared machine (both slow down alike)."""
    started, n = time.monotonic(), 0
    for part in sorted(snapshot.rglob("*.gz")):
        with gzip.open(part, "rb") as lines:
            for line in lines:
                orjson.loads(line)
                n += 1
    return n / (time.monotonic() - started)


def load() -> str:
    return "load {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def peak_rss_mib() -> float:
    """This process's peak resident memory (``VmHWM``: unlike ``ru_maxrss`` it does not
    carry the parent's peak across the ``exec`` of a spawned child)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def serve(where: str, n: int, real_words: bool, conn) -> None:
    """The serving measurements, in a fresh process (what a language server holds)."""
    from citelsp.documents.model import Person, Work
    from citelsp.index.query import LocalIndexes
    from citelsp.resolution.matching import judge_title_search

    gen = Generator(real_words=real_words)
    index = LocalIndexes([open_backend(where)])
    rng = random.Random(7)
    cited = [rng.randrange(n) for _ in range(20_000)]
    works = {i: gen.work(i) for i in cited[:2000]}
    dois = [f"10.{5000 + i % 997}/b{i}" for i in cited]
    for doi in dois[:2000]:  # warm
        index.by_doi(doi)
    doi_ms, found = [], 0
    started = time.perf_counter()
    for doi in dois:
        t0 = time.perf_counter()
        found += bool(index.by_doi(doi))
        doi_ms.append((time.perf_counter() - t0) * 1000)
    doi_rate = len(dois) / (time.perf_counter() - started)

    def question(title: str, family: str | None, year: int | None) -> tuple[float, bool]:
        work = Work(title=title, year=year,
                    authors=(Person(family=family),) if family else ())
        t0 = time.perf_counter()
        hits = index.by_title(title)
        match = judge_title_search(work, [h.record for h in hits], with_near=False).match
        return (time.perf_counter() - t0) * 1000, match is not None

    found_ms, matched = [], 0
    for i in cited[:1000]:
        w = works[i]
        family = w["authorships"][0]["author"]["display_name"].split()[-1]
        ms, ok = question(w["title"].upper() + ".", family, w["publication_year"])
        found_ms.append(ms)
        matched += ok
    absent_ms, false = [], 0
    for _ in range(1000):
        ms, ok = question(gen.title(rng), "Nobody", 2020)
        absent_ms.append(ms)
        false += ok
    peak = peak_rss_mib()
    manuscript = verify_200(where, gen, rng, n)
    conn.send({"doi_rate": doi_rate, "doi_found": found / len(dois),
               **{f"{name}_p{q}": percentile(values, q / 100)
                  for name, values in (("doi", doi_ms), ("found", found_ms),
                                       ("absent", absent_ms)) for q in (50, 95, 99)},
               "found_matched": matched / len(found_ms),
               "absent_matched": false, "peak_mib": peak, **manuscript})


def verify_200(where: str, gen: Generator, rng: random.Random, n: int) -> dict:
    """200 references of indexed works (170 with a DOI, 30 title-only), cold, every service
    pointed at a loopback server that counts what it is asked."""
    from citelsp.documents.bibtex import parse_bibtex
    from citelsp.resolution.engine import Engine
    from citelsp.verdict.judge import judge
    from tests.apiserver import ApiServer

    entries = []
    for k in range(200):
        w = gen.work(rng.randrange(n))
        authors = " and ".join(a["author"]["display_name"].split(". ")[1] + ", " +
                               a["author"]["display_name"].split(".")[0] + "."
                               for a in w["authorships"])
        doi = f"  doi = {{{w['doi'].removeprefix('https://doi.org/')}}},\n" if k < 170 else ""
        entries.append(f"@article{{r{k},\n  title = {{{w['title']}}},\n  author = {{{authors}}},"
                       f"\n  year = {{{w['publication_year']}}},\n  journal = "
                       f"{{{w['primary_location']['source']['display_name']}}},\n{doi}}}\n")
    refs = list(parse_bibtex("file:///bench/refs.bib", "".join(entries)).references)
    with ApiServer() as server, tempfile.TemporaryDirectory() as cache:
        settings = server.settings(cache_dir=Path(cache), **(
            {"index_url": where} if is_database_url(where) else {"index": (Path(where),)}))

        async def run():
            engine = Engine(settings)
            try:
                started = time.perf_counter()
                resolutions = await engine.resolve_all(refs)
                verdicts = [judge(r, res).verdict for r, res in zip(refs, resolutions,
                                                                     strict=True)]
                return time.perf_counter() - started, verdicts
            finally:
                await engine.aclose()

        seconds, verdicts = asyncio.run(run())
        return {"manuscript_s": seconds, "manuscript_requests": len(server.requests),
                "manuscript_true": verdicts.count("true")}


def build(where: str, snapshot: Path) -> dict:
    """Build the index at ``where`` from the generated snapshot: rate and size."""
    cpu = cpu_seconds()
    started = time.monotonic()
    writer = open_writer(where, fresh=True)
    loaded = writer.add("openalex", snapshot)
    read = time.monotonic() - started
    writer.close()
    built = time.monotonic() - started
    cpu = cpu_seconds() - cpu
    index = open_backend(where)
    size = index.size_bytes()
    index.close()
    return {"works": loaded.kept, "built_s": built, "read_s": read, "size": size,
            "rate": loaded.kept / built, "cpu_s": cpu, "bare_rate": bare_json_rate(snapshot)}


def measure(label: str, where: str, snapshot: Path, n: int, real_words: bool) -> dict:
    """Build, then ask, one backend; print what it gave."""
    got = build(where, snapshot)
    print(f"{label} build: {got['works']:,} works in {got['built_s']:.0f} s = "
          f"{got['rate']:,.0f} works/s (reading and loading {got['read_s']:.0f} s, indexes "
          f"{got['built_s'] - got['read_s']:.0f} s)  ({load()})")
    print(f"{label} build CPU: {got['cpu_s']:.0f} s in this process and its parsing ones = "
          f"{got['cpu_s'] / got['works'] * 1e6:.0f} µs a work ({got['works'] / got['cpu_s']:,.0f}"
          " works a CPU second)")
    print(f"bare JSON parse of the same snapshot (gunzip and orjson, one process): "
          f"{got['bare_rate']:,.0f} works/s; {label} build / bare = "
          f"{got['rate'] / got['bare_rate']:.3f}  ({load()})")
    print(f"{label} size: {got['size'] / 2**30:.2f} GiB = "
          f"{got['size'] / 2**20 / (n / 1e6):,.0f} MiB per million works")
    here, there = multiprocessing.get_context("spawn").Pipe()
    child = multiprocessing.get_context("spawn").Process(target=serve, args=(where, n, real_words,
                                                                         there))
    child.start()
    got |= here.recv()
    child.join()
    print(f"{label} DOI lookups (warm): {got['doi_rate']:,.0f}/s, p50 {got['doi_p50']:.2f} ms, "
          f"p99 {got['doi_p99']:.2f} ms, {got['doi_found']:.0%} found  ({load()})")
    for kind in ("found", "absent"):
        hits = (f"{got['found_matched']:.0%} matched" if kind == "found" else
                f"{got['absent_matched']} matched")
        print(f"{label} title {kind}: p50 {got[f'{kind}_p50']:.1f} ms, p95 "
              f"{got[f'{kind}_p95']:.1f} ms, p99 {got[f'{kind}_p99']:.1f} ms, {hits}")
    print(f"{label} serving memory (peak RSS of the serving process): {got['peak_mib']:,.0f} MiB")
    print(f"{label} 200 references cold with the index: {got['manuscript_s']:.2f} s, "
          f"{got['manuscript_requests']} service requests, {got['manuscript_true']} true  "
          f"({load()})")
    return got


def side_by_side(results: dict[str, dict]) -> None:
    rows = [("build works/s", "{rate:,.0f}"), ("DOI lookups/s (warm)", "{doi_rate:,.0f}"),
            ("DOI p50 / p99 ms", "{doi_p50:.2f} / {doi_p99:.2f}"),
            ("title found p50 / p99 ms", "{found_p50:.1f} / {found_p99:.1f}"),
            ("title absent p50 / p99 ms", "{absent_p50:.1f} / {absent_p99:.1f}"),
            ("200 references cold s", "{manuscript_s:.2f}")]
    print(f"{'':28}" + "".join(f"{label:>18}" for label in results))
    for name, form in rows:
        print(f"{name:28}" + "".join(f"{form.format(**got):>18}" for got in results.values()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--works", type=int, default=10_000_000)
    parser.add_argument("--dir", type=Path, default=None, help="where to write (default: tmp)")
    parser.add_argument("--keep", action="store_true", help="keep the snapshot and index")
    parser.add_argument("--real-words", action="store_true",
                        help="titles of the words of real titles (fixtures/hallmark) instead "
                             "of generated syllable words")
    parser.add_argument("--postgres", metavar="URL",
                        help="also build and ask a PostgreSQL index there ('private': a "
                             "throwaway server from the installed binaries)")
    ns = parser.parse_args()
    base = baseline_ms()
    print(f"bare baseline: {base:.0f} ms  ({load()}, {os.cpu_count()} cores)")
    folder = Path(tempfile.mkdtemp(prefix="index-bench-", dir=ns.dir))
    server = None
    try:
        gen = Generator(real_words=ns.real_words)
        written = write_snapshot(folder / "snapshot", ns.works, gen)
        print(f"generated {ns.works:,} works in {written:.0f} s  ({load()})")
        results = {"SQLite": measure("SQLite", str(folder / "works.sqlite"),
                                     folder / "snapshot", ns.works, ns.real_words)}
        if ns.postgres:
            url = ns.postgres
            if url == "private":
                from tests.services import PostgresServer
                server = PostgresServer().start()
                url = server.url
            results["PostgreSQL"] = measure("PostgreSQL", url, folder / "snapshot", ns.works,
                                            ns.real_words)
            side_by_side(results)
        end = baseline_ms()
        print(f"bare baseline again: {end:.0f} ms (ratio to the start: {end / base:.2f})")
    finally:
        if server is not None:
            server.destroy()
        if ns.keep:
            print(f"kept: {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
