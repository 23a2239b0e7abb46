"""pandoc as the oracle on Quarto and R Markdown documents (issue 24): the journal templates of
quarto-journals, rticles' skeletons and bookdown's demo (``fixtures/rmarkdown``, MANIFEST).

knitr and Quarto turn an executable chunk (```` ```{r label, echo=FALSE} ````) into a plain
fence (```` ```r ````) before pandoc reads the document, so pandoc is given that form; citelsp
reads the document as written. Quarto's cross-references (``@fig-plot``) are resolved by
Quarto, not by citeproc: pandoc alone reports them missing, citelsp does not.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from citelsp.config import Settings
from citelsp.documents.model import Citation
from citelsp.documents.pandoc import is_cross_reference
from citelsp.spans import Span
from citelsp.workspace import Workspace
from tests.pandoc_oracle import citelsp_cited, pandoc_cited, pandoc_missing

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "rmarkdown"
DOCUMENTS = sorted(json.loads((CORPUS / "index.json").read_text(encoding="utf-8")))
_CHUNK = re.compile(r"^([ \t]*`{3,})[ \t]*\{([A-Za-z]\w*)[^}\n]*\}", re.M)
_NAMED_BIBLIOGRAPHY = re.compile(r"^bibliography:[ \t]*[\"']?[^\s\"'#]+\.(?:bib|json|yaml)\b",
                                 re.M)


def knitted(text: str) -> str:
    """``text`` with its chunk headers as knitr and Quarto hand them to pandoc."""
    return _CHUNK.sub(r"\1\2", text)


def test_the_corpus_is_whole():
    assert len(DOCUMENTS) == 56
    assert all((CORPUS / "documents" / name).is_file() for name in DOCUMENTS)


@pytest.mark.parametrize("name", DOCUMENTS)
def test_a_quarto_or_r_markdown_document_cites_what_pandoc_cites(name):
    text = (CORPUS / "documents" / name).read_text(encoding="utf-8")
    ours, theirs = citelsp_cited(text), pandoc_cited(knitted(text))
    assert Counter(ours.body) == Counter(theirs.body)
    assert ours.metadata == theirs.metadata


WITH_BIBLIOGRAPHY = [name for name in DOCUMENTS if _NAMED_BIBLIOGRAPHY.search(
    (CORPUS / "documents" / name).read_text(encoding="utf-8"))]


def test_most_documents_name_a_bibliography_file():
    assert len(WITH_BIBLIOGRAPHY) >= 40


def _cross_reference(key: str) -> bool:
    return is_cross_reference(Citation(key=key, span=Span(0, 0), uri="", syntax="pandoc",
                                       full_span=Span(0, 0)))


@pytest.mark.parametrize("name", WITH_BIBLIOGRAPHY)
def test_dangling_citations_are_the_keys_pandoc_citeproc_misses(name):
    paper = CORPUS / "documents" / name
    missing = {key for key in pandoc_missing(paper.name, str(paper.parent))
               if not _cross_reference(key)}
    workspace, _ = Workspace.for_paths([paper], Settings())
    dangling = {p.key for p in workspace.local_problems(paper.as_uri())
                if p.code == "DANGLING_CITATION"}
    assert dangling == missing
