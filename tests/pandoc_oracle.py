"""pandoc itself as the reference reader for the differential tests (issue 24).

The binary comes with the test extra ``pypandoc-binary``; tests that need it are skipped where
it is missing. pandoc 3's Markdown reader has no ``sourcepos``, so a document's citations are
compared as pandoc orders them: the body's keys in document order, and the metadata's keys as
a multiset (pandoc stores metadata fields by name).
"""

from __future__ import annotations

import json
import re
import subprocess
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from citelsp.documents.manuscript import front_matter, parse_manuscript
from citelsp.documents.markdown import scan_blocks


def pandoc_path() -> str:
    """The pandoc binary that pypandoc-binary ships; skips the test without it."""
    pypandoc = pytest.importorskip("pypandoc")
    try:
        return pypandoc.get_pandoc_path()
    except OSError:
        pytest.skip("pandoc is not installed (pip install pypandoc-binary)")


def run_pandoc(args: list[str], text: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([pandoc_path(), *args], input=text, capture_output=True,
                          text=True, encoding="utf-8", timeout=120, check=False)


@dataclass(frozen=True)
class Cited:
    """A document's citation keys: the body's in order, the metadata's as a multiset."""

    body: list[str]
    metadata: Counter[str]


def _cites(node: object, out: list[str]) -> None:
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if item.get("t") == "Cite":
                out += [citation["citationId"] for citation in item["c"][0]]
            stack += reversed(list(item.values()))
        elif isinstance(item, list):
            stack += reversed(item)


def pandoc_cited(text: str) -> Cited:
    """The Cite elements of pandoc's JSON AST for ``text`` read as pandoc Markdown
    (the metadata's ``references``, which citeproc reads as data, left out)."""
    done = run_pandoc(["-f", "markdown", "-t", "json"], text)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    body: list[str] = []
    _cites(document["blocks"], body)
    metadata: list[str] = []
    for name, value in document["meta"].items():
        if name not in ("references", "bibliography"):
            _cites(value, metadata)
    return Cited(body, Counter(metadata))


def citelsp_cited(text: str) -> Cited:
    """citelsp's pandoc citations of ``text``, split the same way; each span must cut its key
    out of the text."""
    manuscript = parse_manuscript("file:///doc.md", text, "markdown")
    yaml = scan_blocks(text, front=front_matter(text)).yaml
    body: list[str] = []
    metadata: list[str] = []
    for citation in manuscript.citations:
        if citation.syntax != "pandoc":
            continue
        assert text[citation.span.start:citation.span.end] == citation.key, citation
        inside = any(block.span.start <= citation.span.start < block.span.end for block in yaml)
        (metadata if inside else body).append(citation.key)
    return Cited(body, Counter(metadata))


_WARNING = re.compile(r"\[WARNING\] Citeproc: citation (?P<key>\S+) not found")


def pandoc_missing(path: str, cwd: str, bibliographies: list[str] = ()) -> set[str]:
    """The keys ``pandoc --citeproc`` reports as not found for the document at ``path``,
    formatted with a small style of ours (which keys are found does not depend on it)."""
    options = [f"--bibliography={bib}" for bib in bibliographies]
    options += ["-M", f"csl={Path(__file__).parent.parent / 'fixtures/pandoc/minimal.csl'}"]
    done = subprocess.run([pandoc_path(), "--citeproc", "-f", "markdown", "-t", "plain",
                           *options, "-o", "/dev/null", path], capture_output=True, text=True,
                          encoding="utf-8", cwd=cwd, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return {m.group("key") for m in _WARNING.finditer(done.stderr)}
