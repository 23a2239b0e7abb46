"""The TeX Live ``.bib`` corpus: what citelsp reads in each file, and ``citelsp check
--offline`` over all of it at once.

The corpus is every ``.bib`` under /usr/share after ``apt-get install
--no-install-recommends texlive-bibtex-extra biber texlive-publishers texlive-science``
(Debian 12: 120 files, 9.7 MB; ``.ci/run`` installs them).

Run: ``python bench/texlive_corpus.py`` prints entries read and Warning/Error diagnostics
per code over the files one by one, then time and peak memory of ``citelsp check --offline``
over their concatenation (target: ≤ 5 s, ≤ 400 MB), three runs, with the time a fixed
pure-Python loop takes on the host at that moment: this host's speed varies by half between
hours, so a time means little without it. ``--record`` rewrites
``fixtures/texlive/expected.json``, the per-file figures ``tests/test_texlive_corpus.py``
holds the reader to.
"""

from __future__ import annotations

import collections
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from citelsp.config import Settings
from citelsp.documents.model import Severity
from citelsp.uris import path_to_uri
from citelsp.workspace import Workspace

ROOT = Path("/usr/share")
FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "texlive" / "expected.json"
PACKAGES = ["texlive-bibtex-extra", "biber", "texlive-publishers", "texlive-science"]


def corpus_files() -> list[Path]:
    return sorted(p for p in ROOT.rglob("*.bib") if p.is_file())


def read_one(path: Path) -> dict:
    """Entries and Warning/Error diagnostics of one file checked on its own."""
    workspace, _ = Workspace.for_paths([path], Settings())
    uri = path_to_uri(path)
    doc = workspace.document(uri)
    problems = workspace.local_problems(uri) if doc is not None else []
    loud = [p for p in problems if p.severity <= Severity.WARNING]
    return {
        "entries": len(doc.references) if doc is not None else 0,
        "errors": sum(p.severity == Severity.ERROR for p in loud),
        "warnings": sum(p.severity == Severity.WARNING for p in loud),
        "codes": dict(sorted(collections.Counter(p.code for p in loud).items())),
    }


def host_loop_s() -> float:
    """Seconds a fixed pure-Python loop takes now: the host's speed, to read a time by."""
    start = time.perf_counter()
    total = 0
    for i in range(10_000_000):
        total += i
    return time.perf_counter() - start


def check_concatenation(files: list[Path], runs: int = 3) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        joined = Path(tmp) / "corpus.bib"
        joined.write_bytes(b"".join(p.read_bytes() for p in files))
        env = {**os.environ, "CITELSP_CACHE_DIR": str(Path(tmp) / "cache")}
        times, loops = [], []
        for _ in range(runs):
            loops.append(host_loop_s())
            start = time.perf_counter()
            run = subprocess.run(
                [sys.executable, "-m", "citelsp", "check", "--offline", "--format", "json",
                 "--fail-on", "never", str(joined)],
                capture_output=True, env=env, check=False,
            )  # fmt: skip
            times.append(time.perf_counter() - start)
            if run.returncode != 0:
                print(run.stderr.decode(errors="replace")[-2000:])
                return
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        size = joined.stat().st_size
    report = json.loads(run.stdout)
    codes = collections.Counter((d["code"], d["severity"]) for d in report["diagnostics"])
    print(f"\ncitelsp check --offline over the concatenation ({size / 1e6:.1f} MB, "
          f"{len(report['summaries'])} references): "
          f"{', '.join(f'{t:.2f}' for t in times)} s (median {statistics.median(times):.2f} s), "
          f"peak {peak:.0f} MB")
    print(f"host: a 10-million-step Python loop took "
          f"{', '.join(f'{t:.2f}' for t in loops)} s before each run")
    for (code, severity), count in sorted(codes.items()):
        print(f"  {code:<24} {severity:<12} {count:6}")


def main() -> None:
    files = corpus_files()
    if not files:
        sys.exit(f"no .bib files under {ROOT}: apt-get install {' '.join(PACKAGES)}")
    figures = {str(p.relative_to(ROOT)): read_one(p) for p in files}
    total = collections.Counter()
    for f in figures.values():
        total.update(f["codes"])
    entries = sum(f["entries"] for f in figures.values())
    print(f"{len(files)} files, {entries} entries read; Warning/Error diagnostics, "
          "each file checked alone:")
    for code, count in sorted(total.items()):
        print(f"  {code:<24} {count:6}")
    if "--record" in sys.argv:
        FIXTURE.parent.mkdir(parents=True, exist_ok=True)
        FIXTURE.write_text(json.dumps({"root": str(ROOT), "packages": PACKAGES,
                                       "files": figures}, indent=1) + "\n")  # fmt: skip
        print(f"recorded {FIXTURE}")
    check_concatenation(files)


if __name__ == "__main__":
    main()
