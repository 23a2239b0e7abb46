"""Time opening the answer cache, whose integrity SQLite checks before it is used.

Run: ``python bench/cache_open.py [ENTRIES...]`` (default 1,000 10,000 50,000).
For each size it fills a private cache with answers shaped like real ones (a title search's
five records, about 4 kB of JSON each), then prints the database size, the median time to open
it (ownership from the header, ``PRAGMA quick_check``, the write probe, diskcache's own
set-up), and the median time of one ``get``. The open happens once per ``citelsp check`` and
once per language-server session.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from citelsp.documents.model import Person
from citelsp.resolution.cache import AnswerCache
from citelsp.resolution.outcome import Found, Record

RUNS = 5


def record(i: int, j: int) -> Record:
    title = f"Work number {i} variant {j}: a study of reproducible reference checking"
    return Record(
        source="crossref", title=title, titles=(title, title.split(":")[0]),
        authors=tuple(Person(f"Author{k}", "A. B.") for k in range(8)),
        years=(2020, 2021), venue="Journal of Reproducible Results", issns=("1234-5678",),
        volume="12", issue="3", first_page=str(100 + j), doi=f"10.5555/{i}.{j}",
        url=f"https://doi.org/10.5555/{i}.{j}",
    )


def fill(directory: Path, entries: int) -> None:
    answers = AnswerCache(directory)
    for i in range(entries):
        answers.put("crossref", "title", f"title {i}", Found(tuple(record(i, j) for j in range(5))))
    answers.close()


def timed_open(directory: Path) -> tuple[float, float]:
    started = time.perf_counter()
    answers = AnswerCache(directory)
    opened = time.perf_counter() - started
    started = time.perf_counter()
    assert answers.get("crossref", "title", "title 1") is not None
    got = time.perf_counter() - started
    answers.close()
    return opened, got


def main(sizes: list[int]) -> None:
    print(f"{'entries':>8} {'size MB':>8} {'open ms':>8} {'get ms':>7}")
    for entries in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            directory = Path(tmp) / "cache"
            fill(directory, entries)
            size = (directory / "cache.db").stat().st_size / 1e6
            runs = [timed_open(directory) for _ in range(RUNS)]
            opened = statistics.median(r[0] for r in runs) * 1000
            got = statistics.median(r[1] for r in runs) * 1000
            print(f"{entries:>8} {size:>8.1f} {opened:>8.1f} {got:>7.2f}")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [1_000, 10_000, 50_000])
