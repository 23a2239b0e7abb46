"""Print how every human-facing escaper scales on hostile text of 10k, 100k and 1M characters.

Run: ``python bench/escaping_bench.py``. Each row is one input shape (a long word, runs of
URL scheme characters, schemes without a body, markup characters, ...) and one escaper (the
hover's and the Markdown report's ``markdown_text``, the terminal's ``printable``, the plain
text hover, SARIF's message text); CPU time (``time.process_time``), best of three. The last
column is the ratio of 1M to 100k: linear is near 10, quadratic near 100. Before
``safe.url_spans`` replaced a URL pattern that rescanned from every letter, ``markdown_text``
took 65 ms for 10,000 letters and 0.92 s for 40,000 (10 s for 60,000 on the probe's machine).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from citelsp.reports.safe import markdown_text, printable  # noqa: E402
from citelsp.reports.sarif import plain_text  # noqa: E402
from tests.test_escaping import HOSTILE_SHAPES  # noqa: E402

SIZES = (10_000, 100_000, 1_000_000)
ESCAPERS: dict[str, Callable[[str], str]] = {
    "markdown_text": markdown_text,
    "printable": printable,
    "plain hover": lambda text: " ".join(printable(text).split()),
    "sarif message": plain_text,
}


def cpu(escape: Callable[[str], str], text: str) -> float:
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        escape(text)
        best = min(best, time.process_time() - started)
    return best


def main() -> None:
    print(f"{'shape':<24}{'escaper':<15}" + "".join(f"{n:>12,}" for n in SIZES) + "   1M/100k")
    for shape, make in HOSTILE_SHAPES.items():
        for name, escape in ESCAPERS.items():
            times = [cpu(escape, make(n)) for n in SIZES]
            ratio = times[2] / max(times[1], 1e-6)
            print(f"{shape:<24}{name:<15}" + "".join(f"{t * 1000:>10.1f}ms" for t in times)
                  + f"{ratio:>10.1f}")


if __name__ == "__main__":
    main()
