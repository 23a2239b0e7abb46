"""Local problems and verification findings → LSP diagnostics."""

from __future__ import annotations

from collections.abc import Callable

from lsprotocol import types

from citelsp.documents.model import Problem
from citelsp.verdict.reasons import doc_url

RangeFor = Callable[[str, object], types.Range | None]
"""(uri, span) → range in that document, or None when the document cannot be read."""

_TAGS = {"ORPHAN_REFERENCE": [types.DiagnosticTag.Unnecessary]}


def lsp_diagnostic(problem: Problem, range_: types.Range, range_for: RangeFor) -> types.Diagnostic:
    related = []
    for loc in problem.related:
        other = range_for(loc.uri, loc.span)
        if other is not None:
            related.append(types.DiagnosticRelatedInformation(
                location=types.Location(uri=loc.uri, range=other),
                message=f"also '{problem.key}'" if problem.key else "related",
            ))
    return types.Diagnostic(
        range=range_,
        message=problem.message,
        severity=types.DiagnosticSeverity(int(problem.severity)),
        code=problem.code,
        code_description=types.CodeDescription(href=doc_url(problem.code)),
        source="citelsp",
        related_information=related or None,
        tags=_TAGS.get(problem.code),
    )
