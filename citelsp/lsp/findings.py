"""Verification results as they show on one document: judged from stored resolutions,
with human decisions applied (DESIGN.md §6–§7)."""

from __future__ import annotations

import weakref
from pathlib import Path

from citelsp.check import Checked, Verified, decided_problems
from citelsp.documents.model import Bibliography, Citation, Manuscript, Problem, Reference, Severity
from citelsp.documents.project import Corpus, Document
from citelsp.lsp.verification import Scheduler
from citelsp.resolution.asking import Resolution
from citelsp.verdict.decisions import DecisionStore
from citelsp.verdict.judge import judge


class Findings:
    def __init__(self, scheduler: Scheduler, root: Path | None) -> None:
        self.scheduler = scheduler
        self.decisions = DecisionStore(root or Path.cwd())
        self.decisions.load()
        self._judged: weakref.WeakKeyDictionary[Reference, tuple[Resolution, Verified]] = (
            weakref.WeakKeyDictionary()
        )

    def set_root(self, root: Path) -> None:
        self.decisions = DecisionStore(root)
        self.decisions.load()

    def verified(self, ref: Reference) -> Verified | None:
        """The verdict for ``ref`` from its stored resolution; None while it is being checked."""
        resolution = self.scheduler.result_for(ref)
        if resolution is None:
            return None
        memo = self._judged.get(ref)
        if memo is not None and memo[0] is resolution:
            return memo[1]
        verified = Verified(ref, resolution, judge(ref, resolution))
        self._judged[ref] = (resolution, verified)
        return verified

    def checked(self, ref: Reference, citations: list[Citation]) -> Checked | None:
        verified = self.verified(ref)
        if verified is None:
            return None
        decision, stale = self.decisions.get(ref.key, self.scheduler.identity(ref))
        return Checked(verified, citations, decision, stale)

    def problems_for(self, corpus: Corpus, doc: Document, min_priority: str) -> list[Problem]:
        found: list[Problem] = []
        if isinstance(doc, Manuscript):
            bibs = corpus.bibliographies_for(doc)
            for citation in doc.citations:
                if citation.wildcard:
                    continue
                for ref in corpus.resolve(doc, citation, bibs).references:
                    entry = self.checked(ref, [citation])
                    if entry is not None:
                        found += self._placed(entry, doc.uri, min_priority)
            refs = doc.inline.references if doc.inline is not None else []
        else:
            refs = doc.references if isinstance(doc, Bibliography) else []
        for ref in refs:
            entry = self.checked(ref, [])
            if entry is not None:
                found += self._placed(entry, doc.uri, min_priority)
        return found

    def _placed(self, entry: Checked, uri: str, min_priority: str) -> list[Problem]:
        placed = [p for u, p in decided_problems(entry, min_priority) if u == uri]
        decision = entry.decision
        if decision is not None and not entry.decision_stale and decision.decision == "rejected":
            placed += [
                Problem("HUMAN_REJECTED", c.span, f"{entry.reference.key}: a human rejected "
                        "this reference", Severity.ERROR, key=entry.reference.key, priority="P0")
                for c in entry.citations if c.uri == uri
            ]
        return placed
