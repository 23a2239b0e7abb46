"""pandoc as the oracle on real documents (issue 24): pandoc's manual, documentation and test
documents, and the Markdown inputs of its command tests (``fixtures/pandoc``, MANIFEST).

citelsp must find every citation pandoc's reader finds, key for key and as often (pandoc moves
a footnote's text to where the note is called, so the order is compared on generated documents
in ``test_pandoc_oracle``), and on documents with a bibliography its DANGLING_CITATIONs must
name exactly the keys ``pandoc --citeproc`` reports as not found.
"""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from citelsp.config import Settings
from citelsp.documents.manuscript import parse_manuscript
from citelsp.documents.text import fold_name, normalize_title
from citelsp.documents.works import work_of
from citelsp.workspace import Workspace
from tests.pandoc_oracle import citelsp_cited, pandoc_cited, pandoc_missing, run_pandoc

_TAG = re.compile(r"</?[a-z][^>]*>")

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


WITH_REFERENCES = sorted(name for name in INDEX if "\nreferences:" in (
    CORPUS / "documents" / name).read_text(encoding="utf-8"))


def test_some_documents_carry_their_references():
    assert len(WITH_REFERENCES) >= 40


@pytest.mark.parametrize("name", WITH_REFERENCES)
def test_inline_references_read_as_pandoc_reads_them(name):
    """A document's CSL-YAML ``references:``: the same ids, and for each the same title,
    family names, year and DOI as ``pandoc -t csljson`` gives (titles and names compared as
    the checks compare them)."""
    text = (CORPUS / "documents" / name).read_text(encoding="utf-8")
    done = run_pandoc(["-f", "markdown", "-t", "csljson"], text)
    assert done.returncode == 0, done.stderr
    theirs = {item["id"]: item for item in json.loads(done.stdout or "[]")}
    inline = parse_manuscript("file:///doc.md", text, "markdown").inline
    ours = {r.key: r for r in inline.references} if inline is not None else {}
    assert set(ours) == set(theirs)
    for key, item in theirs.items():
        work = work_of(ours[key])
        if "title" in item:
            assert normalize_title(_TAG.sub("", item["title"])) == normalize_title(
                work.title or ""), key
        families = [fold_name(" ".join(p for p in (person.get("non-dropping-particle"),
                                                   person.get("family") or person.get("literal"))
                                       if p).replace("\u2019", "'"))
                    for person in item.get("author", []) if person.get("literal") != "others"]
        assert [fold_name(p.family.replace("\u2019", "'")) for p in work.authors] == families, key
        parts = (item.get("issued") or {}).get("date-parts") or [[None]]
        if parts[0] and isinstance(parts[0][0], int):
            assert work.year == parts[0][0], key
        if "DOI" in item:
            csl = {name.lower(): value for name, value in ours[key].csl.items()}
            assert str(csl.get("doi", "")).lower() == item["DOI"].lower(), key
