"""Document symbols: a bibliography's entries (a manuscript's front-matter references) and
their fields as an outline."""

from __future__ import annotations

from dataclasses import dataclass

from citelsp.documents.model import Bibliography, Manuscript
from citelsp.documents.parse import Document
from citelsp.spans import Span


@dataclass(frozen=True)
class Symbol:
    name: str
    detail: str
    kind: str
    """"entry" or "field"."""
    span: Span
    """All of it: the entry, or the field from its name to the end of its value."""
    selection: Span
    """Its name: the entry's key, the field's name."""
    children: tuple[Symbol, ...] = ()


def symbols(doc: Document) -> list[Symbol]:
    bib = doc.inline if isinstance(doc, Manuscript) else doc
    if not isinstance(bib, Bibliography):
        return []
    found = []
    for ref in bib.references:
        fields = tuple(
            Symbol(f.name, _short(f.value), "field", Span(f.name_span.start, f.span.end),
                   f.name_span)
            for f in ref.fields.values()
            if f.name_span.end > f.name_span.start
        )
        title = ref.value("title")
        found.append(Symbol(ref.key, f"@{ref.entry_type}" + (f" {_short(title)}" if title else ""),
                            "entry", ref.span, ref.key_span, fields))
    return found


def _short(value: str | None, limit: int = 80) -> str:
    text = " ".join((value or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
