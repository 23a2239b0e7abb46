"""Go to definition, find references and rename between citations and entries, as
protocol-free answers (locations as spans) the server converts."""

from __future__ import annotations

import difflib
import re

from citelsp.documents.model import Location, Manuscript
from citelsp.documents.parse import Document
from citelsp.spans import Span
from citelsp.workspace.graph import citation_at, reference_at
from citelsp.workspace.workspace import Workspace

VALID_KEY = re.compile(r"^[^\s,{}()\"'#%~\\]+$")
"""What a rename may call a key: no spaces or characters BibTeX and the citation syntaxes
give a meaning."""


def key_at(workspace: Workspace, doc: Document, offset: int) -> str | None:
    """The citation key under the cursor: a citation's resolved key, or the entry's key."""
    if isinstance(doc, Manuscript):
        citation = citation_at(doc, offset)
        if citation is not None and not citation.wildcard:
            return workspace.graph.references_of(doc, citation).key
    refs = workspace.references_at(doc, offset)
    return refs[0].key if refs else None


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
    return ref.key_span if ref is not None and ref.key_span.contains(offset) else None


def definitions(workspace: Workspace, doc: Document, offset: int) -> list[Location]:
    """The entries a citation names; on an entry, every entry with its key (duplicates)."""
    graph = workspace.graph
    if isinstance(doc, Manuscript) and (citation := citation_at(doc, offset)) is not None:
        refs = () if citation.wildcard else graph.references_of(doc, citation).references
        return [Location(r.uri, r.key_span) for r in refs]
    key = key_at(workspace, doc, offset)
    if key is None:
        return []
    bibs = graph.bibliographies(doc) if isinstance(doc, Manuscript) else [doc]
    return [Location(r.uri, r.key_span) for b in bibs for r in graph.key_index(b).get(key, ())]


def references(workspace: Workspace, key: str, *, include_declaration: bool) -> list[Location]:
    found = [Location(c.uri, c.span) for c in workspace.graph.citations_with_key(key)]
    if include_declaration:
        found += [Location(r.uri, r.key_span) for r in workspace.graph.entries(key)]
    return found


def rename_locations(workspace: Workspace, key: str) -> list[Location]:
    """Every place the key is written: entries and citations (slug-mapped markers excluded)."""
    seen: set[tuple[str, int]] = set()
    found = []
    graph = workspace.graph
    for loc in [Location(r.uri, r.key_span) for r in graph.entries(key)] + [
        Location(c.uri, c.span) for c in graph.citations_with_key(key) if c.key == key
    ]:
        if (loc.uri, loc.span.start) not in seen:
            seen.add((loc.uri, loc.span.start))
            found.append(loc)
    return found


def similar_keys(workspace: Workspace, manuscript: Manuscript, key: str) -> list[str]:
    """Keys of the manuscript's bibliographies a mistyped ``key`` probably meant."""
    keys = list(workspace.graph.keys(manuscript))
    folded = {k.casefold(): k for k in keys}
    close = difflib.get_close_matches(key.casefold(), list(folded), n=3, cutoff=0.75)
    return [folded[k] for k in close]
