"""pandoc as the oracle on real documents (issue 24): pandoc's manual, documentation and test
documents, and the Markdown inputs of its command tests (``fixtures/pandoc``, MANIFEST).

citelsp must find every citation pandoc's reader finds, key for key and as often (pandoc moves
a footnote's text to where the note is called, so the order is compared on generated documents
in ``test_pandoc_oracle``), and on documents with a bibliography its DANGLING_CITATIONs must
name exactly the keys ``pandoc --citeproc`` reports as not found.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from citelsp.config import Settings
from citelsp.workspace import Workspace
from tests.pandoc_oracle import citelsp_cited, pandoc_cited, pandoc_missing

CORPUS = Path(__file__).parent.parent / "fixtures" / "pandoc"
INDEX: dict[str, dict] = json.loads((CORPUS / "index.json").read_text(encoding="utf-8"))
WITH_CITEPROC = sorted(name for name, entry in INDEX.items()
                       if {"--citeproc", "-C"} & set(entry["args"]))


def test_the_corpus_is_whole():
    assert len(INDEX) == 162 and len(WITH_CITEPROC) == 103
    assert all((CORPUS / "documents" / name).is_file() for name in INDEX)


@pytest.mark.parametrize("name", sorted(INDEX))
def test_a_real_document_cites_what_pandoc_cites(name):
    text = (CORPUS / "documents" / name).read_text(encoding="utf-8")
    ours, theirs = citelsp_cited(text), pandoc_cited(text)
    assert Counter(ours.body) == Counter(theirs.body)
    assert ours.metadata == theirs.metadata


@pytest.mark.parametrize("name", WITH_CITEPROC)
def test_dangling_citations_are_the_keys_pandoc_citeproc_misses(name, tmp_path):
    """The document and its bibliographies laid out as pandoc's tests run them (from
    ``test/``), checked by both."""
    entry = INDEX[name]
    paper = tmp_path / "paper.md"
    shutil.copyfile(CORPUS / "documents" / name, paper)
    for source in (CORPUS / "bibliographies").iterdir():
        target = tmp_path / source.name.replace("__", "/")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    bibliographies = [str(tmp_path / bib) for bib in entry.get("bibliography", [])]
    missing = pandoc_missing(paper.name, str(tmp_path), bibliographies)
    workspace, _ = Workspace.for_paths([paper], Settings(bibliography=tuple(bibliographies)))
    dangling = {p.key for p in workspace.local_problems(paper.as_uri())
                if p.code == "DANGLING_CITATION"}
    assert dangling == missing
