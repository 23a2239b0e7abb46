"""What editor queries read: the workspace as the last notification left it.

The language server changes the workspace only on notifications (an edit, a save, new
settings), and reads the files find-references and rename reach after them, in the
background (``CitationGraph.read_workspace``); hover, completion, code actions, definition,
references and symbols are functions of a ``View``. A view is taken per request in constant
time (nothing is copied) and offers only questions: none of them reads the disk, parses,
links a manuscript to its bibliographies or waits for verification (a reference not yet
checked has no result). The memos the graph keeps are filled as answers are asked for; they
change no answer.
"""

from __future__ import annotations

from dataclasses import dataclass

from citelsp.documents.model import Citation, Manuscript, Reference
from citelsp.documents.parse import Document
from citelsp.workspace.graph import CitationGraph, citation_at, reference_at
from citelsp.workspace.snapshot import ReferenceResult
from citelsp.workspace.workspace import Workspace


@dataclass(frozen=True, slots=True)
class View:
    _workspace: Workspace

    @property
    def graph(self) -> CitationGraph:
        return self._workspace.graph

    def document(self, uri: str) -> Document | None:
        return self._workspace.corpus.get(uri)

    def citation_at(self, doc: Document, offset: int) -> Citation | None:
        return citation_at(doc, offset) if isinstance(doc, Manuscript) else None

    def references_at(self, doc: Document, offset: int) -> list[Reference]:
        """The references a citation under the cursor names, or the entry under it."""
        if isinstance(doc, Manuscript) and (citation := citation_at(doc, offset)) is not None:
            return [] if citation.wildcard else list(
                self.graph.references_of(doc, citation).references)
        bib = doc.inline if isinstance(doc, Manuscript) else doc
        ref = reference_at(bib, offset) if bib is not None else None
        return [ref] if ref is not None else []

    def keys(self, manuscript: Manuscript) -> dict[str, Reference]:
        """Key → first reference of the manuscript's bibliographies."""
        return self.graph.keys(manuscript)

    def result(self, ref: Reference) -> ReferenceResult | None:
        """The verdict as verification left it; None while it has not been checked."""
        return self._workspace.result(ref)

    def pending(self, ref: Reference) -> bool:
        return self._workspace.pending(ref)

    def decision_identity(self, ref: Reference) -> str:
        return self._workspace.decision_identity(ref)
