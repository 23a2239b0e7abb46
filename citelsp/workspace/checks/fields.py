"""Fields: a value too long to be real (FIELD_TOO_LONG, not read), and a ``crossref`` that
names no entry (UNDEFINED_CROSSREF: the venue and year it would give are missing)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from citelsp.documents.crossref import parent_key
from citelsp.documents.model import Problem, Reference, Severity
from citelsp.documents.works import oversized


def too_long(ref: Reference) -> list[str]:
    return [name for name, f in ref.fields.items() if oversized(name, f.value)]


def field_size_problems(ref: Reference) -> list[Problem]:
    return [
        Problem(code="FIELD_TOO_LONG", span=ref.span_of(name), severity=Severity.WARNING,
                key=ref.key, message=f"{name} is {len(ref.value(name) or ''):,} characters "
                                     "long: too long to be a real value, so it is not read")
        for name in too_long(ref)
    ]


def undefined_crossrefs(children: Iterable[Reference], defines: Callable[[str], bool]
                        ) -> list[Problem]:
    """A ``crossref`` of one of ``children`` (in text order) that names no entry (BibTeX: "a
    bad cross reference"); ``defines`` says whether a key names one."""
    problems = []
    for r in children:
        key = parent_key(r)
        if key is not None and not defines(key):
            problems.append(Problem(
                code="UNDEFINED_CROSSREF",
                span=r.fields["crossref"].span,
                message=f"{r.key}: crossref '{key}' names no entry of this bibliography "
                        "or those used with it, so the fields it would give (venue, "
                        "year) are missing",
                severity=Severity.WARNING,
                key=r.key,
            ))
    return problems
