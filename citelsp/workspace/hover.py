"""Hover: what the cursor names (a citation's references, or the entry under it), each with
its verdict as verification left it. Domain values; ``reports.cards`` writes the text."""

from __future__ import annotations

from dataclasses import dataclass

from citelsp.documents.model import Reference
from citelsp.documents.parse import Document
from citelsp.spans import Span
from citelsp.workspace.snapshot import ReferenceResult
from citelsp.workspace.view import View


@dataclass(frozen=True)
class HoverEntry:
    reference: Reference
    result: ReferenceResult | None
    """None while not checked."""
    pending: bool
    """Queued or being looked up now."""


@dataclass(frozen=True)
class Hover:
    key: str
    """The key under the cursor (a dangling citation names no entry)."""
    span: Span
    """What the hover is about: the citation, or the entry's key."""
    entries: tuple[HoverEntry, ...]
    """Empty for a citation of a key in no bibliography."""


def hover(view: View, doc: Document, offset: int) -> Hover | None:
    """On a citation: every reference it names (two under a duplicated key); on an entry:
    that entry. None elsewhere and on ``\\nocite{*}``."""
    citation = view.citation_at(doc, offset)
    if citation is not None:
        if citation.wildcard:
            return None
        refs = view.references_at(doc, offset)
        return Hover(citation.key, citation.span, tuple(_entry(view, r) for r in refs))
    refs = view.references_at(doc, offset)
    if not refs:
        return None
    return Hover(refs[0].key, refs[0].key_span, (_entry(view, refs[0]),))


def _entry(view: View, ref: Reference) -> HoverEntry:
    result = view.result(ref)
    return HoverEntry(ref, result, result is None and view.pending(ref))
