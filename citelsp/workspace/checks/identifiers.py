"""Identifiers that cannot be valid: a malformed DOI or arXiv id (INVALID_IDENTIFIER), or a
placeholder where the real one should be (PLACEHOLDER_IDENTIFIER), each on its field."""

from __future__ import annotations

from citelsp.documents.model import Problem, Reference, Severity
from citelsp.resolution.identifiers import reference_ids

CODES = ("INVALID_IDENTIFIER", "PLACEHOLDER_IDENTIFIER")


def identifier_problems(ref: Reference) -> list[Problem]:
    return [
        Problem(code=p.code, span=ref.span_of(p.field), message=p.message,
                severity=Severity.WARNING, key=ref.key)
        for p in reference_ids(ref).problems if p.code in CODES
    ]


def has_identifier_problems(ref: Reference) -> bool:
    return any(p.code in CODES for p in reference_ids(ref).problems)
