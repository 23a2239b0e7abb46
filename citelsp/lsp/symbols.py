"""Document symbols: a bibliography's entries and their fields as an outline."""

from __future__ import annotations

from lsprotocol import types

from citelsp.documents.model import Bibliography
from citelsp.spans import Span


def document_symbols(bib: Bibliography, range_of) -> list[types.DocumentSymbol]:
    symbols = []
    for ref in bib.references:
        children = [
            types.DocumentSymbol(
                name=f.name,
                detail=_short(f.value),
                kind=types.SymbolKind.Field,
                range=range_of(Span(f.name_span.start, f.span.end)),
                selection_range=range_of(f.name_span),
            )
            for f in ref.fields.values()
            if f.name_span.end > f.name_span.start
        ]
        symbols.append(types.DocumentSymbol(
            name=ref.key,
            detail=f"@{ref.entry_type}" + (f" {_short(ref.value('title'))}"
                                           if ref.value("title") else ""),
            kind=types.SymbolKind.Class,
            range=range_of(ref.span),
            selection_range=range_of(ref.key_span),
            children=children,
        ))
    return symbols


def _short(value: str | None, limit: int = 80) -> str:
    text = " ".join((value or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
