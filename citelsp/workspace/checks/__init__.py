"""Local checks: everything citelsp can say without the network, one module per concern.

``citations`` follows the citation graph (dangling and ambiguous citations, unreadable
bibliographies, orphans); the entry checks keep per-entry indexes over each set of co-used
bibliographies (``entries``: ``keys``, ``duplicates``, ``identifiers``, ``fields``), updated
by the entries an edit replaced. ``LocalChecks`` merges them per document; the workspace
tells it of every parse and drops the indexes when the documents they cover close.
"""

from __future__ import annotations

from citelsp.documents.bibtex import paused_gc
from citelsp.documents.model import Bibliography, Manuscript, Problem
from citelsp.documents.parse import Document
from citelsp.workspace.checks.citations import (
    CitationChecks,
    how_to_name_a_bibliography,
    same_objects,
)
from citelsp.workspace.checks.entries import EntryIndex
from citelsp.workspace.checks.groups import MAX_RELATED
from citelsp.workspace.graph import CitationGraph

__all__ = ["MAX_RELATED", "EntryIndex", "LocalChecks", "how_to_name_a_bibliography"]


class LocalChecks:
    """The local problems of each document, with the indexes behind them."""

    def __init__(self, graph: CitationGraph) -> None:
        self.graph = graph
        self.citations = CitationChecks(graph)
        self._indexes: dict[tuple[str, ...], EntryIndex] = {}
        """Co-used bibliography URIs → the index of their entries."""
        self._found: dict[str, tuple[tuple, list[Problem]]] = {}
        """Bibliography URI → its problems, with the parse and the lists they joined."""

    def parsed(self, doc: Document) -> None:
        """A document was parsed again: the indexes that cover it take in the entries the
        edit replaced now, while the parse they hold is the one it was made from."""
        if isinstance(doc, Bibliography):
            for uris, index in self._indexes.items():
                if doc.uri in uris:
                    index.absorb(doc)

    def forget(self, uri: str) -> None:
        """Drop the indexes that cover ``uri`` (closed); they are rebuilt if needed again."""
        for uris in [k for k in self._indexes if uri in k]:
            del self._indexes[uris]
        self.citations.forget(uri)
        self._found.pop(uri, None)

    def problems(self, doc: Document) -> list[Problem]:
        """Every local problem of one document: its parse problems plus the cross-document
        checks."""
        if isinstance(doc, Manuscript):
            citations = self.citations
            problems = (list(doc.problems) + citations.unreadable_bibliographies(doc)
                        + citations.dangling_citations(doc)
                        + citations.ambiguous_citations(doc))
            if doc.inline is not None:
                problems += list(doc.inline.problems) + self.bibliography_problems(doc.inline)
            return problems
        if doc.uri in self.graph.in_tex_trees:  # IEEEabrv.bib: TeX's file, not the writer's
            return []
        with paused_gc():  # thousands of small lists must not trigger full collections
            parts = (doc, self._entry_problems(doc), self.citations.orphans(doc))
            found = self._found.get(doc.uri)
            if found is not None and same_objects(found[0], parts):
                return found[1]  # the same list: the server does not send it again
            problems = list(doc.problems) + parts[1] + parts[2]
        self._found[doc.uri] = (parts, problems)
        return problems

    def bibliography_problems(self, bib: Bibliography) -> list[Problem]:
        with paused_gc():  # thousands of small lists must not trigger full collections
            return self._entry_problems(bib) + self.citations.orphans(bib)

    def _entry_problems(self, bib: Bibliography) -> list[Problem]:
        """Findings about ``bib``'s entries: duplicates among co-used bibliographies, invalid
        identifiers, field sizes, crossref parents."""
        bibliographies = self.graph.co_used(bib)
        uris = tuple(b.uri for b in bibliographies)
        index = self._indexes.get(uris)
        if index is None:
            index = self._indexes[uris] = EntryIndex()
        index.update(bibliographies)
        return index.problems(bib)
