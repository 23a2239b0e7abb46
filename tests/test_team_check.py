"""Issue 28's "done when": four ``citelsp check`` processes at once on four bibliographies that
share works, with the shared cache (PostgreSQL) and the shared pace (Redis), against services
that answer 429 beyond a per-origin limit: no 429, each distinct work asked once, grades
exactly as one process gives them, and a second run asks nothing."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.apibatch import questions
from tests.test_check_e2e import BIB, ROOT, check_json, start_server

PROCESSES = 4
LIMIT = (60, 1.0)
"""Requests a second the loopback origin admits. Every API is on it, so its lanes run side by
side: at ``minIntervalMs`` 50 their documented proportions add up to about 34 a second with
the margin (single records and every other service 20, Crossref's lists and queries 4)."""
INTERVAL_MS = "50"


def entries() -> list[str]:
    return [m.group(0) for m in re.finditer(r"@\w+\{[^@]*", BIB)]


def bibliographies() -> list[str]:
    """Bibliography i holds every entry but the i-th of each four: each work is in three."""
    every = entries()
    return ["\n".join(e for j, e in enumerate(every) if j % PROCESSES != i)
            for i in range(PROCESSES)]


def asked(server) -> Counter:
    """Every question the server answered: a batch counts once per key it carries, any other
    request by its path and query (a title search by its title). Requests no route answers
    get a 404 not in the service's words, which citelsp reads as an outage: never cached, so
    asked again by every process that needs it, as by every run."""
    counted: Counter = Counter()
    unrouted = {id(seen) for seen in server.unmatched}
    for seen in server.requests:
        if id(seen) in unrouted:
            continue
        keys = questions(seen)
        if len(keys) == 1 and seen.query:
            keys = [(*keys[0], tuple(sorted(seen.query.items())))]
        counted.update(keys)
    return counted


def grades(report: dict) -> dict[str, tuple]:
    items = {i["citation_key"]: i for i in report["checklist"]}
    return {s["citation_key"]: (s["lookup_verified"], items[k]["priority"] if (
        k := s["citation_key"]) in items else None, items[k]["reason_code"] if k in items
        else None) for s in report["summaries"]}


def run_all(server, root: Path, cache: Path, env: dict[str, str]) -> list[dict]:
    procs = []
    for i, text in enumerate(bibliographies()):
        folder = root / f"w{i}"
        folder.mkdir(parents=True)
        (folder / "refs.bib").write_text(text, encoding="utf-8")
        full = {k: v for k, v in os.environ.items() if not k.startswith("CITELSP_")}
        full.update(server.env())
        full.update({f"CITELSP_{name.upper()}_MIN_INTERVAL_MS": INTERVAL_MS
                     for name in ("crossref", "openalex", "semantic_scholar", "arxiv",
                                  "doi_registry", "handle", "datacite", "eutils", "dblp")})
        full.update({"CITELSP_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT),
                     **env})
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "citelsp", "check", "refs.bib", "--format", "json",
             "--fail-on", "never"], env=full, cwd=folder, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True))
    reports = []
    for proc in procs:
        out, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, err
        assert "unavailable" not in err, err
        reports.append(json.loads(out))
    return reports


@pytest.mark.parametrize("cache", ["postgresql", "folder"])
def test_four_processes_share_cache_and_pace(cache, redis_url, tmp_path, request):
    """The shared cache in PostgreSQL (machines), or one cache folder (one machine)."""
    alone = start_server()
    try:
        whole = tmp_path / "alone"
        whole.mkdir()
        (whole / "refs.bib").write_text(BIB, encoding="utf-8")
        expected = grades(check_json(alone, whole / "refs.bib", whole / "cache"))
        once = asked(alone)
    finally:
        alone.stop()
    server = start_server().limit(*LIMIT)
    env = {"CITELSP_PACING_URL": redis_url}
    if cache == "postgresql":
        env["CITELSP_CACHE_URL"] = request.getfixturevalue("postgres_url")
    try:
        reports = run_all(server, tmp_path / "first", tmp_path / "cache", env)
        assert server.refused == [], f"{len(server.refused)} requests answered 429"
        extra = asked(server) - once
        assert not extra, f"asked more often than one process asks: {extra}"
        for report in reports:
            for key, grade in grades(report).items():
                assert grade == expected[key], key
        answered = asked(server)
        again = run_all(server, tmp_path / "second", tmp_path / "cache", env)
        assert asked(server) == answered, "the second run asks nothing the first was told"
        assert [grades(r) for r in again] == [grades(r) for r in reports]
    finally:
        server.stop()
