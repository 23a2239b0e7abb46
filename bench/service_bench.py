"""Many checkers at once against services that limit per origin: one pace shared in Redis.

Run: ``python bench/service_bench.py [--workers 1,2,4,8] [--refs 2000] [--overlap 0.1]
[--redis URL] [--cache postgresql|folder|per-worker] [--postgres-admin URL] [--latency 0.1]
[--seed 1]``.

The generated bibliography of ``bench/verify_bench.py`` (70 % DOI, 15 % arXiv, 15 % title
only, 10 % fabricated) is split among N concurrent ``citelsp check`` processes (the workers),
each on its own bibliography: worker i gets every N-th entry, and an ``--overlap`` share of
the entries is in every bibliography (works that several manuscripts cite). The simulated
index of ``verify_bench`` serves each API on its own loopback address (127.0.0.2 …) at the
public limits and answers 429 beyond them. Every worker paces through one Redis
(``CITELSP_PACING_URL``: ``--redis``, else a private ``redis-server`` started here) and
shares one answer cache: in PostgreSQL (``CITELSP_CACHE_URL``, a fresh database per run on
``--postgres-admin`` or a private server; the default), or one cache folder (``--cache
folder``, one machine); ``--cache per-worker`` gives each worker its own folder (machines
that share no cache: the works several bibliographies cite are asked once per worker).

For each N it prints the wall time (the first worker started to the last one done) beside the
floor (per host, its requests at its allowed rate; the largest) and beside one worker's wall
time, the requests per distinct work, 429s, the machine's load average, and whether every
worker graded its entries as one process does (fabricated DOIs P0, fabricated titles P1 or
worse, no correct entry P0 or P1, an entry in several bibliographies graded the same in each).

Targets (issue 28): 0 429s; wall time at the floor (not N times one worker's); requests per
distinct work near one worker's (about 0.5: batches answer many; N workers split the batches
N ways, so a few more) — with a shared cache; without one the overlapping entries are asked
once per worker that cites them.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):  # run as a script: ``citelsp``, ``bench``, ``tests`` importable
    sys.path.insert(0, str(ROOT))

from bench.verify_bench import (  # noqa: E402
    Entry,
    IndexProcess,
    Run,
    counted,
    generate,
    problems,
    render_bibtex,
)

CACHES = {"postgresql": "shared in PostgreSQL", "folder": "one folder for all workers",
          "per-worker": "a folder per worker"}
DEFAULT_MAILTO = "service-bench@citelsp.invalid"
"""Crossref's polite pool (3 searches a second, not 1), as a team that sets one gets it."""


def bibliographies(entries: Sequence[Entry], workers: int, overlap: float) -> list[list[Entry]]:
    """Worker i's entries: every ``workers``-th entry from i, plus the first ``overlap`` share
    of all entries in every bibliography (each entry once per bibliography)."""
    shared = entries[: round(len(entries) * overlap)] if workers > 1 else []
    shared_keys = {e.key for e in shared}
    return [list(shared) + [e for e in entries[i::workers] if e.key not in shared_keys]
            for i in range(workers)]


@dataclass
class Result:
    workers: int
    seconds: float
    run: Run
    references: int
    """References checked over all workers (an overlapping entry once per bibliography)."""
    load: float
    disagreements: int
    """Entries graded differently by two workers."""
    notices: Counter
    """What the workers said on stderr (shared pacing or cache gone, …), with how many said it."""


def worker(bib: Path, bases: dict[str, str], env: dict[str, str], cache: Path
           ) -> subprocess.Popen[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("CITELSP_")}
    full.update({f"CITELSP_{name.upper()}_BASE_URL": url for name, url in bases.items()})
    full.update({"CITELSP_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT), **env})
    return subprocess.Popen(
        [sys.executable, "-m", "citelsp", "check", str(bib), "--format", "json",
         "--fail-on", "never"],
        env=full, cwd=bib.parent, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def grades_of(report: dict) -> dict[str, str]:
    """Citation key → its checklist priority ("clean" without an item)."""
    graded = {s["citation_key"]: "clean" for s in report["summaries"]}
    for item in report["checklist"]:
        graded[item["citation_key"]] = item["priority"]
    return graded


def one(n: int, entries: list[Entry], overlap: float, bases: dict[str, str],
        index: IndexProcess, env: dict[str, str], root: Path, shared_folder: bool) -> Result:
    parts = bibliographies(entries, n, overlap)
    procs = []
    before = index.counts()
    load = os.getloadavg()[0]
    started, started_mono = time.perf_counter(), time.monotonic()
    for i, part in enumerate(parts):
        folder = root / f"n{n}" / f"w{i}"
        folder.mkdir(parents=True)
        bib = folder / "refs.bib"
        bib.write_text(render_bibtex(part), encoding="utf-8")
        procs.append(worker(bib, bases, env, root / f"n{n}" / "cache" if shared_folder
                            else folder / "cache"))
    reports = []
    notices: Counter = Counter()
    for proc in procs:
        out, err = proc.communicate(timeout=7200)
        if proc.returncode != 0:
            raise RuntimeError(f"a worker failed ({proc.returncode}): {err[-2000:]}")
        reports.append(json.loads(out))
        notices.update(line for line in err.splitlines() if line.startswith("citelsp:"))
    seconds = time.perf_counter() - started
    after = index.counts()
    served, refused, spans, lists = counted(before, after, started_mono)
    by_key = {e.key: e for e in entries}
    seen: dict[str, str] = {}
    disagreements = 0
    grades: Counter = Counter()
    for report in reports:
        for key, grade in grades_of(report).items():
            if key in seen:
                disagreements += seen[key] != grade
                continue
            seen[key] = grade
            e = by_key[key]
            grades[("correct" if not e.fabricated else f"fake-{e.kind}", grade)] += 1
    run = Run(seconds, served, refused, grades, spans, lists, polite=bool(env.get(
        "CITELSP_MAILTO")))
    return Result(n, seconds, run, sum(len(p) for p in parts), load, disagreements, notices)


def describe(result: Result, single: Result | None, distinct: int) -> list[str]:
    run = result.run
    floor, host = run.floor()
    wrong = problems(run)
    per_work = run.requests / distinct
    vs_one = (f", {result.seconds / single.seconds:.2f} × one worker's" if single else "")
    per_one = (f" ({per_work / (single.run.requests / distinct):.2f} × one worker's)"
               if single and single.run.requests else "")
    return [
        f"{result.workers} worker{'s' if result.workers > 1 else ''} ({result.references} "
        f"references, {distinct} distinct works; load {result.load:.1f}): wall "
        f"{result.seconds:.1f} s = {result.seconds / floor if floor else float('nan'):.2f} × "
        f"the floor {floor:.1f} s ({host}){vs_one}",
        f"    requests {run.requests} = {per_work:.2f} per distinct work{per_one}   "
        f"429s {sum(run.refused.values())}"
        + (f" ({', '.join(f'{h} {c}' for h, c in run.refused.items())})" if run.refused
           else ""),
        "    per host: " + ", ".join(f"{h} {c}" for h, c in run.served.most_common()),
        *(f"    {count} × {notice}" for notice, count in result.notices.items()),
        "    grading: " + ("as one process grades" if not wrong and not result.disagreements
                          else "; ".join(wrong + [f"{result.disagreements} entries graded "
                                                  "differently by two workers"]
                                         if result.disagreements else wrong)),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=lambda s: [int(x) for x in s.split(",")],
                        default=[1, 2, 4, 8])
    parser.add_argument("--refs", type=int, default=2000)
    parser.add_argument("--overlap", type=float, default=0.1,
                        help="share of the entries cited in every bibliography")
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--mailto", default=DEFAULT_MAILTO)
    parser.add_argument("--redis", default=None, help="a Redis URL (else a private one)")
    parser.add_argument("--cache", choices=("postgresql", "folder", "per-worker"),
                        default="postgresql", help="where the workers' answer cache is")
    parser.add_argument("--postgres-admin", default=None,
                        help="a superuser URL of the PostgreSQL for --cache postgresql")
    args = parser.parse_args(argv)
    entries, works = generate(args.refs, args.seed)
    redis = None
    if args.redis is None:
        from tests.services import RedisServer

        redis = RedisServer().start()
    env = {"CITELSP_PACING_URL": args.redis or redis.url}
    if args.mailto:
        env["CITELSP_MAILTO"] = args.mailto
    postgres = None
    if args.cache == "postgresql" and args.postgres_admin is None:
        from tests.services import PostgresServer

        postgres = PostgresServer().start()
    admin = (args.postgres_admin or postgres.url) if args.cache == "postgresql" else None
    print(f"citelsp service bench: {args.refs} references split among concurrent check "
          f"processes ({args.overlap:.0%} cited by every one), each API on its own loopback "
          f"address at the public limits, latency {args.latency * 1000:.0f} ms; pacing "
          f"{'Redis ' + env['CITELSP_PACING_URL']}; cache "
          f"{CACHES[args.cache]}; "
          f"{os.cpu_count()} cores", flush=True)
    single: Result | None = None
    try:
        for n in args.workers:
            index = IndexProcess(works, args.latency)  # a fresh index: nothing counted before
            bases = index.start()
            if redis is not None:  # nothing of the last run's pace
                import redis as redis_py

                redis_py.Redis.from_url(redis.url).flushall()
            database = None
            if admin:
                from tests.services import fresh_database

                database = env["CITELSP_CACHE_URL"] = fresh_database(admin)
            try:
                with tempfile.TemporaryDirectory(prefix="citelsp-service-bench-") as tmp:
                    result = one(n, entries, args.overlap, bases, index, env, Path(tmp),
                                 args.cache == "folder")
            finally:
                index.stop()
                if database:
                    from tests.services import drop_database

                    drop_database(admin, database)
            single = single or (result if n == 1 else None)
            print("\n".join(describe(result, single, len(entries))), flush=True)
    finally:
        if redis is not None:
            redis.stop()
        if postgres is not None:
            postgres.destroy()
    return 0


if __name__ == "__main__":
    sys.exit(main())
