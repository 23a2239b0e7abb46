"""Where a verification is shown: each finding on its field in the bibliography, the
checklist item on every citation of the reference (P3 stays in the bibliography)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from citelsp.documents.crossref import parent_key
from citelsp.documents.model import Citation, Location, Problem, Reference
from citelsp.spans import Span
from citelsp.verdict.checklist import Judgement
from citelsp.verdict.reasons import PRIORITY_ORDER, REASONS, priority_severity

FIELD_NAMES = {
    "venue": ("journal", "journaltitle", "booktitle", "container-title", "howpublished"),
    "author": ("author", "editor"),
    "issue": ("number", "issue"),
    "pages": ("pages", "page"),
    "year": ("year", "date", "issued"),
}
"""Logical field → the names it is written under in BibTeX and CSL."""


def field_of(ref: Reference, logical: str | None) -> str | None:
    """The reference field a finding about ``logical`` goes on (None: the entry key)."""
    if logical is None:
        return None
    names = FIELD_NAMES.get(logical, (logical,))
    lowered = {name.casefold(): name for name in ref.fields}
    return next((lowered[n.casefold()] for n in names if n.casefold() in lowered), None)


def inherited_field(ref: Reference, logical: str | None) -> Location | None:
    """Where the value a finding about ``logical`` is about is written, when the entry takes
    it from its crossref parent (the finding itself stays on the entry's key)."""
    if logical is None or not ref.inherited:
        return None
    for name in FIELD_NAMES.get(logical, (logical,)):
        if (f := ref.inherited.get(name)) is not None:
            return Location(ref.uri, f.span, f"{name}, which '{ref.key}' takes from its "
                                             f"crossref '{parent_key(ref)}'")
    return None


def shown(priority: str | None, min_priority: str) -> bool:
    if priority is None:
        return True
    return PRIORITY_ORDER.index(priority) <= PRIORITY_ORDER.index(min_priority)


def verification_problems(
    ref: Reference,
    judgement: Judgement,
    citations: Iterable[Citation],
    *,
    min_priority: str = "P3",
) -> list[tuple[str, Problem]]:
    """(uri, problem) pairs for one verified reference, filtered by the lowest priority shown.

    One problem per place: findings that land on the same field are merged into the most
    urgent one, which names the others; the checklist item goes on every citation.
    """
    placed: dict[Span, Problem] = {}
    for finding in judgement.findings:
        if finding.priority is None or not shown(finding.priority, min_priority):
            continue
        if REASONS[finding.reason_code].local:
            continue  # the local checks already show it on its field
        name = field_of(ref, finding.field)
        span = ref.span_of(name)
        first = placed.get(span)
        if first is None:
            inherited = inherited_field(ref, finding.field) if name is None else None
            taken = "" if inherited is None else (
                f" The {finding.field} cited is the one its crossref '{parent_key(ref)}' gives.")
            placed[span] = Problem(
                code=finding.reason_code,
                span=span,
                message=f"{ref.key}: {finding.message}{taken}",
                severity=priority_severity(finding.priority),
                key=ref.key,
                priority=finding.priority,
                related=() if inherited is None else (inherited,),
            )
        elif finding.reason_code not in first.message:
            placed[span] = replace(first, message=_also(first.message, finding.reason_code))
    found = [(ref.uri, p) for p in placed.values()]
    item = judgement.item
    if item is None or item.priority == "P3" or not shown(item.priority, min_priority):
        return found
    message = f"{ref.key}: {item.message}"
    for code in item.other_reasons:
        message = _also(message, code)
    for citation in citations:
        found.append((citation.uri, Problem(
            code=item.reason_code,
            span=citation.span,
            message=message,
            severity=priority_severity(item.priority),
            key=ref.key,
            priority=item.priority,
            on_citation=True,
        )))
    return found


def _also(message: str, code: str) -> str:
    """``message`` naming one more reason found at the same place."""
    if message.endswith(")") and " (also " in message:
        return message[:-1] + f", {code})"
    return f"{message} (also {code})"
