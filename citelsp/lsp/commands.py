"""Workspace commands: open a link, record a decision, re-verify, clear the cache, show the
checklist, export a report. Only presentation and bookkeeping; the engine decides."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

from citelsp.check import Checked, CheckResult
from citelsp.checks import problems_for
from citelsp.documents.model import Manuscript, Reference
from citelsp.documents.project import Corpus
from citelsp.lsp.findings import Findings
from citelsp.verdict.checklist import HUMAN_LINK_HOSTS

REPORT_SUFFIX = {"json": "json", "sarif": "sarif", "markdown": "md", "text": "txt",
                 "ars": "json", "ledger": "json"}


def allowed_url(url: object) -> str | None:
    """The URL if a human may be sent there: https on an allowlisted host, no userinfo."""
    if not isinstance(url, str):
        return None
    parts = urlsplit(url)
    if parts.scheme != "https" or parts.hostname not in HUMAN_LINK_HOSTS:
        return None
    if parts.username or parts.password or parts.port not in (None, 443):
        return None
    return url


def references_by_key(corpus: Corpus, keys: set[str] | None) -> list[Reference]:
    """Open documents' references (all, or those with the given keys)."""
    found: dict[int, Reference] = {}
    for uri in corpus.open_uris:
        doc = corpus.documents.get(uri)
        if doc is None:
            continue
        bibs = corpus.bibliographies_for(doc) if isinstance(doc, Manuscript) else [doc]
        if isinstance(doc, Manuscript) and doc.inline is not None:
            bibs = [*bibs, doc.inline]
        for bib in bibs:
            for ref in bib.references:
                if keys is None or ref.key in keys:
                    found.setdefault(id(ref), ref)
    return list(found.values())


def check_result(corpus: Corpus, findings: Findings, min_priority: str) -> CheckResult:
    """What the open documents show now, as a ``citelsp check`` result for the reports."""
    documents = {}
    problems = []
    checked: list[Checked] = []
    for uri in sorted(corpus.open_uris):
        doc = corpus.documents.get(uri)
        if doc is None:
            continue
        documents[uri] = doc
        problems += [(uri, p) for p in problems_for(corpus, uri)]
        problems += [(uri, p) for p in findings.problems_for(corpus, doc, min_priority)]
    citations: dict[int, list] = {}
    for m in corpus.open_manuscripts():
        bibs = corpus.bibliographies_for(m)
        for c in m.citations:
            for ref in corpus.resolve(m, c, bibs).references:
                citations.setdefault(id(ref), []).append(c)
    for ref in references_by_key(corpus, None):
        entry = findings.checked(ref, citations.get(id(ref), []))
        if entry is not None:
            checked.append(entry)
            documents.setdefault(ref.uri, corpus.get(ref.uri))
    return CheckResult({u: d for u, d in documents.items() if d is not None}, problems, checked)


def write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
