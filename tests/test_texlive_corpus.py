"""Conformance over the TeX Live ``.bib`` corpus (issue 11): every file is read without a
crash, with the recorded number of entries, and with no more Warning/Error diagnostics than
recorded in ``fixtures/texlive/expected.json`` (``python bench/texlive_corpus.py --record``).

``.ci/run`` installs the corpus (four Debian packages, about 210 MB, 80 s); elsewhere the
test is skipped. Recorded counts differ from biber's by design only where an entry is data
for another tool (bib2gls glossaries, btxdoc's ``@FAKE-ENTRY``, ``@SETUP``): see
``citelsp/documents/bibtex.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.texlive_corpus import FIXTURE, corpus_files, read_one

EXPECTED = json.loads(FIXTURE.read_text(encoding="utf-8"))
ROOT = Path(EXPECTED["root"])
RECORDED = {ROOT / name: figures for name, figures in EXPECTED["files"].items()}
PRESENT = [path for path in RECORDED if path.exists()]

pytestmark = pytest.mark.skipif(
    not PRESENT, reason=f"TeX Live .bib corpus not installed ({' '.join(EXPECTED['packages'])})"
)


def test_each_file_reads_its_recorded_entries_within_its_diagnostic_budget():
    off = []
    for path in PRESENT:
        expected, found = RECORDED[path], read_one(path)
        if found["entries"] != expected["entries"]:
            off.append(f"{path}: {found['entries']} entries, recorded {expected['entries']}")
        for level in ("errors", "warnings"):
            if found[level] > expected[level]:
                off.append(f"{path}: {found[level]} {level} {found['codes']}, "
                           f"budget {expected[level]}")  # fmt: skip
    assert not off, "\n".join(off)


def test_files_not_recorded_are_read_without_a_crash():
    for path in set(corpus_files()) - set(RECORDED):
        read_one(path)


def test_the_corpus_is_quiet():
    """The recorded budgets themselves: no MALFORMED_ENTRY anywhere (these files are all
    read by BibTeX or biber), and a few duplicate warnings, not thousands."""
    codes: dict[str, int] = {}
    for figures in EXPECTED["files"].values():
        for code, count in figures["codes"].items():
            codes[code] = codes.get(code, 0) + count
    assert codes.get("MALFORMED_ENTRY", 0) == 0
    assert sum(f["errors"] for f in EXPECTED["files"].values()) == 0
    assert codes.get("DUPLICATE_WORK", 0) < 150
