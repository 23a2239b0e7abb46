"""Go to definition, find references and rename between citations and entries, as
protocol-free answers (locations as spans) the server converts. Find-references and rename
reach files the editor has not opened once ``CitationGraph.read_workspace`` has read them."""

from __future__ import annotations

import difflib
import re

from citelsp.documents.crossref import PARENT_FIELDS
from citelsp.documents.model import Field, Location, Manuscript, Reference
from citelsp.documents.parse import Document
from citelsp.spans import Edit, Span
from citelsp.workspace.graph import citation_at, reference_at
from citelsp.workspace.view import View

VALID_KEY = re.compile(r"^[^\s,{}()\"'#%~\\]+$")
"""What a rename may call a key: no spaces or characters BibTeX and the citation syntaxes
give a meaning."""


def key_at(view: View, doc: Document, offset: int) -> str | None:
    """The citation key under the cursor: a citation's resolved key, the key an entry's
    ``crossref`` or ``xref`` names, or the entry's key."""
    if isinstance(doc, Manuscript):
        citation = citation_at(doc, offset)
        if citation is not None and not citation.wildcard:
            return view.graph.references_of(doc, citation).key
    refs = view.references_at(doc, offset)
    if not refs:
        return None
    named = _parent_field_at(refs[0], offset)
    return named.value.strip() if named is not None else refs[0].key


def naming_locations(view: View, key: str) -> list[Location]:
    """Where entries name ``key`` in ``crossref`` or ``xref`` (BibTeX matches keys in any
    letter case): the key as written in the value."""
    found = []
    folded = key.casefold()
    for b in view.graph.all_bibliographies():
        for r in b.references:
            for name in PARENT_FIELDS:
                f = r.fields.get(name)
                if f is not None and f.value.strip().casefold() == folded and (
                        span := _named_key(b.text, f)) is not None:
                    found.append(Location(r.uri, span))
    return found


def key_span_at(doc: Document, offset: int) -> Span | None:
    """The span of the key under the cursor, for prepareRename."""
    if isinstance(doc, Manuscript):
        citation = citation_at(doc, offset)
        if citation is not None and not citation.wildcard and citation.span.contains(offset):
            return citation.span
        doc = doc.inline
        if doc is None:
            return None
    ref = reference_at(doc, offset)
    if ref is None:
        return None
    if ref.key_span.contains(offset):
        return ref.key_span
    named = _parent_field_at(ref, offset)  # the parent key a crossref names
    return _named_key(doc.text, named) if named is not None else None


def _parent_field_at(ref: Reference, offset: int) -> Field | None:
    """The entry's ``crossref`` or ``xref`` field under the cursor, when it names a key."""
    for name in PARENT_FIELDS:
        f = ref.fields.get(name)
        if f is not None and f.span.contains(offset) and f.value.strip():
            return f
    return None


def _named_key(text: str, f: Field) -> Span | None:
    """The span of the key a ``crossref``/``xref`` value names, when written in place (not
    through a macro) and not empty."""
    span, value = f.span, f.value
    if not value.strip() or text[span.start : span.end] != value:
        return None
    start = span.start + len(value) - len(value.lstrip())
    return Span(start, start + len(value.strip()))


def definitions(view: View, doc: Document, offset: int) -> list[Location]:
    """The entries a citation names; on an entry, every entry with its key (duplicates)."""
    graph = view.graph
    if isinstance(doc, Manuscript) and (citation := citation_at(doc, offset)) is not None:
        refs = () if citation.wildcard else graph.references_of(doc, citation).references
        return [Location(r.uri, r.key_span) for r in refs]
    key = key_at(view, doc, offset)
    if key is None:
        return []
    bibs = graph.bibliographies(doc) if isinstance(doc, Manuscript) else [doc]
    return [Location(r.uri, r.key_span) for b in bibs for r in graph.key_index(b).get(key, ())]


def references(view: View, key: str, *, include_declaration: bool) -> list[Location]:
    found = [Location(c.uri, c.span) for c in view.graph.citations_with_key(key)]
    found += naming_locations(view, key)
    if include_declaration:
        found += [Location(r.uri, r.key_span) for r in view.graph.entries(key)]
    return found


def references_at(view: View, doc: Document, offset: int, *, include_declaration: bool
                  ) -> list[Location]:
    """Every place that names the key under the cursor (find references)."""
    key = key_at(view, doc, offset)
    if key is None:
        return []
    return references(view, key, include_declaration=include_declaration)


def rename(view: View, doc: Document, offset: int, new_name: str) -> list[Edit] | None:
    """The edits that rename the key under the cursor everywhere it is written; None when
    the cursor is on no key. ``ValueError`` when ``new_name`` cannot be a key."""
    if not VALID_KEY.match(new_name):
        raise ValueError(f"'{new_name}' is not a valid citation key")
    key = key_at(view, doc, offset)
    if key is None:
        return None
    return [Edit(loc.uri, loc.span, new_name) for loc in rename_locations(view, key)]


def rename_locations(view: View, key: str) -> list[Location]:
    """Every place the key is written: entries, citations (slug-mapped markers excluded) and
    the ``crossref``/``xref`` fields that name it."""
    seen: set[tuple[str, int]] = set()
    found = []
    graph = view.graph
    for loc in [Location(r.uri, r.key_span) for r in graph.entries(key)] + [
        Location(c.uri, c.span) for c in graph.citations_with_key(key) if c.key == key
    ] + naming_locations(view, key):
        if (loc.uri, loc.span.start) not in seen:
            seen.add((loc.uri, loc.span.start))
            found.append(loc)
    return found


def similar_keys(view: View, manuscript: Manuscript, key: str) -> list[str]:
    """Keys of the manuscript's bibliographies a mistyped ``key`` probably meant."""
    keys = list(view.keys(manuscript))
    folded = {k.casefold(): k for k in keys}
    close = difflib.get_close_matches(key.casefold(), list(folded), n=3, cutoff=0.75)
    found = [folded[k] for k in close]
    if (primary := view.graph.alias_of(manuscript, key)) is not None:  # ids = {key}
        found = [primary.key] + [k for k in found if k != primary.key][:2]
    return found
