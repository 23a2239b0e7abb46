"""Go to definition, find references, rename and document symbols between citations and entries."""

from __future__ import annotations

import re

from lsprotocol import types

from citelsp.documents.model import Bibliography, Location, Manuscript
from citelsp.documents.project import Corpus, Document

VALID_KEY = re.compile(r"^[^\s,{}()\"'#%~\\]+$")


def key_at(corpus: Corpus, doc: Document, offset: int) -> str | None:
    """The citation key under the cursor: a citation's resolved key, or the entry's key."""
    if isinstance(doc, Manuscript):
        citation = corpus.citation_at(doc, offset)
        if citation is not None and not citation.wildcard:
            return corpus.resolve(doc, citation).key
        if doc.inline is not None and (ref := corpus.reference_at(doc.inline, offset)):
            return ref.key
        return None
    ref = corpus.reference_at(doc, offset)
    return ref.key if ref is not None else None


def key_span_at(corpus: Corpus, doc: Document, offset: int):
    """The span of the key under the cursor, for prepareRename."""
    if isinstance(doc, Manuscript):
        citation = corpus.citation_at(doc, offset)
        if citation is not None and not citation.wildcard and citation.span.contains(offset):
            return citation.span
        doc = doc.inline
        if doc is None:
            return None
    ref = corpus.reference_at(doc, offset)
    return ref.key_span if ref is not None and ref.key_span.contains(offset) else None


def definitions(corpus: Corpus, doc: Document, offset: int) -> list[Location]:
    key = key_at(corpus, doc, offset)
    if key is None:
        return []
    bibs = corpus.bibliographies_for(doc) if isinstance(doc, Manuscript) else [doc]
    if isinstance(doc, Manuscript) and (c := corpus.citation_at(doc, offset)) is not None:
        refs = corpus.resolve(doc, c, bibs).references
    else:
        refs = tuple(r for b in bibs for r in corpus.key_index(b).get(key, ()))
    return [Location(r.uri, r.key_span) for r in refs]


def references(corpus: Corpus, key: str, *, include_declaration: bool) -> list[Location]:
    found = [Location(m.uri, c.span) for m, c in corpus.citations_of(key)]
    if include_declaration:
        found += [Location(r.uri, r.key_span) for r in _entries(corpus, key)]
    return found


def _entries(corpus: Corpus, key: str):
    for b in corpus.all_bibliographies():
        yield from corpus.key_index(b).get(key, ())
    for m in corpus.all_manuscripts():
        if m.inline is not None:
            yield from corpus.key_index(m.inline).get(key, ())


def rename_locations(corpus: Corpus, key: str) -> list[Location]:
    """Every place the key is written: entries and citations (slug-mapped markers excluded)."""
    seen: set[tuple[str, int]] = set()
    found = []
    for loc in [Location(r.uri, r.key_span) for r in _entries(corpus, key)] + [
        Location(m.uri, c.span) for m, c in corpus.citations_of(key) if c.key == key
    ]:
        if (loc.uri, loc.span.start) not in seen:
            seen.add((loc.uri, loc.span.start))
            found.append(loc)
    return found


def document_symbols(bib: Bibliography, range_of) -> list[types.DocumentSymbol]:
    symbols = []
    for ref in bib.references:
        children = [
            types.DocumentSymbol(
                name=f.name,
                detail=_short(f.value),
                kind=types.SymbolKind.Field,
                range=range_of(f.span.__class__(f.name_span.start, f.span.end)),
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
