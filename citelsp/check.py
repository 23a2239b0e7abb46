"""The ``citelsp check`` pipeline: documents → local problems → verification → one result.

Reports render the result; the command line only parses arguments and picks an exit code.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import httpx

from citelsp.checks import problems_for
from citelsp.config import Settings
from citelsp.documents.model import Citation, Manuscript, Problem, Reference, Severity
from citelsp.documents.project import Corpus, Document, path_to_uri
from citelsp.resolution.asking import Resolution
from citelsp.resolution.engine import DEFAULT_CONCURRENCY, Engine
from citelsp.resolution.identity import identity_of
from citelsp.verdict.checklist import Judgement
from citelsp.verdict.decisions import Decision, DecisionStore
from citelsp.verdict.judge import judge
from citelsp.verdict.placement import verification_problems
from citelsp.verdict.reduce import summary_outcomes


@dataclass
class Verified:
    """A reference with its resolution and what was judged from it."""

    reference: Reference
    resolution: Resolution
    verification: Judgement


async def verify_all(engine: Engine, refs: Iterable[Reference], *, refresh: bool = False,
                     on_done: Callable[[int, int], None] | None = None,
                     concurrency: int = DEFAULT_CONCURRENCY) -> list[Verified]:
    """Resolve every reference through ``engine`` and judge each resolution."""
    refs = list(refs)
    resolutions = await engine.resolve_all(refs, refresh=refresh, on_done=on_done,
                                           concurrency=concurrency)
    return [Verified(r, res, judge(r, res)) for r, res in zip(refs, resolutions, strict=True)]


@dataclass
class Checked:
    """One verified reference with what a human decided about it, and where it is cited."""

    verified: Verified
    citations: list[Citation]
    decision: Decision | None = None
    decision_stale: bool = False

    @property
    def reference(self) -> Reference:
        return self.verified.reference


@dataclass
class CheckResult:
    documents: dict[str, Document]
    problems: list[tuple[str, Problem]]
    checked: list[Checked]
    errors: list[str] = field(default_factory=list)
    generated_at: datetime = field(default_factory=lambda: datetime.now(UTC))

    def summaries(self) -> list[dict]:
        """Seed-000 summaries: one per (citation_key, ref_slug) pair (DESIGN.md §10)."""
        rows = []
        for c in self.checked:
            v = c.verified
            times = [o.checked_at for o in v.resolution.outcomes.values() if o.checked_at]
            stamp = max(times) if times else self.generated_at
            slugs: dict[str, bool] = {}
            for citation in c.citations:
                if citation.syntax == "marker":
                    slugs[citation.key] = slugs.get(citation.key, False) or \
                        citation.anchor_present
            for slug, anchored in (slugs or {c.reference.key: False}).items():
                rows.append({
                    "citation_key": c.reference.key,
                    "ref_slug": slug,
                    "lookup_verified": v.verification.verdict,
                    "anchor_present": anchored,
                    "verification_timestamp": stamp.astimezone(UTC).isoformat().replace(
                        "+00:00", "Z"),
                    "resolver_outcomes": summary_outcomes(v.resolution.outcomes,
                                                          v.resolution.authoritative),
                })
        return rows


def _root(paths: Sequence[Path]) -> Path:
    try:
        return Path(os.path.commonpath([p.resolve().parent for p in paths]))
    except ValueError:
        return Path.cwd()


async def run_check(
    paths: Sequence[Path],
    settings: Settings,
    *,
    verify: bool = True,
    refresh: bool = False,
    progress: Callable[[int, int], None] | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    decisions_root: Path | None = None,
) -> CheckResult:
    root = _root(paths) if paths else Path.cwd()
    corpus = Corpus(settings, roots=[root])
    errors: list[str] = []
    given: list[Document] = []
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            errors.append(f"{path}: cannot read ({exc.strerror or exc})")
            continue
        doc = corpus.update(path_to_uri(path), text)
        if doc is None:
            errors.append(f"{path}: not a manuscript or a CSL/BibTeX bibliography")
        else:
            given.append(doc)

    documents: dict[str, Document] = {d.uri: d for d in given}
    references: dict[int, Reference] = {}
    citations: dict[int, list[Citation]] = {}
    for doc in given:
        if isinstance(doc, Manuscript):
            bibs = corpus.bibliographies_for(doc)
            for b in bibs:
                documents.setdefault(b.uri, b)
            wildcard = any(c.wildcard for c in doc.citations)
            for c in doc.citations:
                for r in corpus.resolve(doc, c, bibs).references:
                    references.setdefault(id(r), r)
                    citations.setdefault(id(r), []).append(c)
            if wildcard:
                for b in bibs:
                    for r in b.references:
                        references.setdefault(id(r), r)
        else:
            for r in doc.references:
                references.setdefault(id(r), r)

    problems = [(uri, p) for uri in documents for p in problems_for(corpus, uri)]
    checked: list[Checked] = []
    if verify and references:
        engine = Engine(settings, transport=transport)
        try:
            verified = await verify_all(engine, references.values(), refresh=refresh,
                                        on_done=progress)
        finally:
            await engine.aclose()
        store = DecisionStore(decisions_root or root)
        store.load()
        for v in verified:
            ref = v.reference
            decision, stale = store.get(ref.key, identity_of(v.resolution.ids, ref.work))
            entry = Checked(v, citations.get(id(ref), []), decision, stale)
            checked.append(entry)
            problems += decided_problems(entry, settings.min_priority)
    return CheckResult(documents, problems, checked, errors)


def decided_problems(entry: Checked, min_priority: str) -> list[tuple[str, Problem]]:
    """Verification problems, with a human decision applied (DESIGN.md §7)."""
    ref = entry.reference
    decision = None if entry.decision_stale else entry.decision
    if decision is not None and decision.decision == "verified":
        return []
    placed = verification_problems(ref, entry.verified.verification, entry.citations,
                                   min_priority=min_priority)
    if decision is not None and decision.decision == "rejected":
        note = f" ({decision.note})" if decision.note else ""
        placed.append((ref.uri, Problem(
            code="HUMAN_REJECTED",
            span=ref.key_span,
            message=f"{ref.key}: a human rejected this reference{note}",
            severity=Severity.ERROR,
            key=ref.key,
            priority="P0",
        )))
    return placed

