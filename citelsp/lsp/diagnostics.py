"""Local problems and verification findings → LSP diagnostics."""

from __future__ import annotations

import weakref
from collections.abc import Callable

import cattrs
from lsprotocol import types
from pygls.protocol import default_converter

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
                message=loc.label or (f"also '{problem.key}'" if problem.key else "related"),
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


def converter_with_reused_diagnostics() -> cattrs.Converter:
    """pygls's converter, remembering the JSON form of each Diagnostic object.

    The server re-sends unchanged diagnostics as the same objects (a library edit re-sends
    thousands of orphan hints); serializing them again dominated the cost of a re-publish.
    """
    converter = default_converter()
    plain = converter.get_unstructure_hook(types.Diagnostic)
    memo: dict[int, tuple[weakref.ref, dict]] = {}

    def unstructure(diagnostic: types.Diagnostic) -> dict:
        key = id(diagnostic)
        hit = memo.get(key)
        if hit is not None and hit[0]() is diagnostic:
            return hit[1]
        value = plain(diagnostic)
        memo[key] = (weakref.ref(diagnostic, lambda _ref: memo.pop(key, None)), value)
        return value

    converter.register_unstructure_hook(types.Diagnostic, unstructure)
    return converter
