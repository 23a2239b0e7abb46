"""A verified reference's problems with the human decision applied.

A "verified" decision hides the verification problems; a "rejected" one replaces them with an
Error on the entry key and on every citation, with the human's note (one finding per
reference and place: the human's word settles what the sources could not). A stale
decision (the entry changed since) applies nothing: the verdict shows again.
"""

from __future__ import annotations

from citelsp.documents.model import Problem, Severity
from citelsp.verdict.placement import verification_problems
from citelsp.workspace.snapshot import ReferenceResult


def decided_problems(result: ReferenceResult, min_priority: str) -> list[tuple[str, Problem]]:
    """(uri, problem) pairs of one reference: its findings on their fields, its checklist item
    on every citation, and a human rejection on the key and every citation."""
    ref = result.reference
    decision = result.current_decision
    if decision is not None and decision.decision == "verified":
        return []
    if decision is None or decision.decision != "rejected":
        return verification_problems(ref, result.judgement, result.citations,
                                     min_priority=min_priority)
    note = f" ({decision.note})" if decision.note else ""
    message = f"{ref.key}: a human rejected this reference{note}"
    places = [(ref.uri, ref.key_span, False)] + [(c.uri, c.span, True)
                                                 for c in result.citations]
    return [(uri, Problem(code="HUMAN_REJECTED", span=span, message=message,
                          severity=Severity.ERROR, key=ref.key, priority="P0",
                          on_citation=cited)) for uri, span, cited in places]
