"""What the open documents want verified, kept per document and updated by what changed.

``listed`` gives every reference of the open documents, most urgent first (reports and the
command line walk it). The verifier's pass after a keystroke needs less (``Verifier.want``):
which references became wanted and which no longer are (``changes``), and the order of the
few that wait for a lookup (``ordered``). A BibTeX library's part follows the entries an edit
replaced (``EntryDelta``), so a keystroke in a 20,000-entry library changes two references
here, not 20,000; a manuscript's part is worked out again when the corpus changed (its
citations, not its library); a cursor move changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from citelsp.documents.bibtex import BibtexBibliography
from citelsp.documents.model import PRINTED, Bibliography, Manuscript, Reference
from citelsp.documents.parse import Document
from citelsp.workspace.corpus import Corpus
from citelsp.workspace.graph import CitationGraph
from citelsp.workspace.verification import Wanted

Focus = Callable[[], "tuple[str, int] | None"]


class _Part:
    """The references one open document wants verified, and the parse they are of."""

    __slots__ = ("doc", "generation", "members")

    def __init__(self, doc: Document, generation: int) -> None:
        self.doc = doc
        self.generation = generation
        """The corpus generation a manuscript's part was worked out at (its citations name
        entries of other documents)."""
        self.members: dict[int, Reference] = {}


class WantedReferences(Wanted):
    """The references of the open documents, each counted once per document that wants it,
    with the changes since the verifier last took them in."""

    def __init__(self, corpus: Corpus, graph: CitationGraph, focus: Focus) -> None:
        self.corpus = corpus
        self.graph = graph
        self.focus = focus
        """Where the writer works (uri, offset): what is cited or written nearest goes first."""
        self._parts: dict[str, _Part] = {}
        self._refs: dict[int, Reference] = {}
        self._count: dict[int, int] = {}
        """id(reference) → how many documents' parts hold it."""
        self._added: dict[int, Reference] = {}
        self._gone: dict[int, Reference] = {}

    # -- every reference, in order -------------------------------------------------------

    def listed(self) -> list[Reference]:
        """References of the open documents, most urgent first: those cited nearest the
        cursor in the focused manuscript, then the other open manuscripts', then open
        bibliographies' (the focused one's nearest the cursor first)."""
        focus_uri, offset = self.focus() or (None, None)
        ordered: list[Reference] = []
        for doc in self._documents(focus_uri):
            ordered += self._of(doc, offset if doc.uri == focus_uri else None)
        return ordered

    def _documents(self, focus_uri: str | None) -> list[Document]:
        """The open documents in the order their references come: manuscripts, then
        bibliographies, the focused document first among its kind."""
        docs = sorted(self.corpus.open_documents(), key=lambda d: d.uri != focus_uri)
        return ([d for d in docs if isinstance(d, Manuscript)]
                + [d for d in docs if isinstance(d, Bibliography)])

    def _of(self, doc: Document, offset: int | None) -> list[Reference]:
        """The references ``doc`` wants verified, most urgent first (``offset``: the cursor
        is in it): a manuscript's cited ones, its front-matter ones and the printed
        bibliographies it uses (a .bbl is printed whole); a bibliography's entries."""
        if isinstance(doc, Bibliography):
            refs = list(doc.references)
            if offset is not None:
                refs.sort(key=lambda r: abs(r.start - offset))
            return refs
        ordered: list[Reference] = []
        cited = self.graph.cited(doc)
        if offset is not None:
            cited.sort(key=lambda pair: abs(pair[0].span.start - offset))
        for _citation, refs in cited:
            ordered += refs
        if doc.inline is not None:
            ordered += doc.inline.references
        for bib in self.graph.bibliographies(doc):
            if bib.source_format in PRINTED and bib.uri != doc.uri:
                ordered += bib.references
        return ordered

    # -- what the verifier takes in ------------------------------------------------------

    def changes(self) -> tuple[Sequence[Reference], Sequence[Reference]]:
        self._sync()
        gone, added = list(self._gone.values()), list(self._added.values())
        self._gone, self._added = {}, {}
        return gone, added

    def everything(self) -> Iterable[Reference]:
        self._sync()
        return list(self._refs.values())

    def ordered(self, refs: Sequence[Reference]) -> list[Reference]:
        """``refs`` in the order ``listed`` gives them, at the cost of the open manuscripts'
        citations and of ``refs``, not of the libraries: an entry's place in a bibliography
        is where it starts (by its distance from the cursor in the focused one)."""
        focus_uri, offset = self.focus() or (None, None)
        docs = self._documents(focus_uri)
        place: dict[int, tuple[int, int, int]] = {}
        bibliographies: list[tuple[int, Document]] = []
        for rank, doc in enumerate(docs):
            focused = offset if doc.uri == focus_uri else None
            if isinstance(doc, Manuscript):
                for n, ref in enumerate(self._of(doc, focused)):
                    place.setdefault(id(ref), (rank, n, 0))
            else:
                bibliographies.append((rank, doc))

        def urgency(ref: Reference) -> tuple[int, int, int]:
            found = place.get(id(ref))
            if found is not None:
                return found
            for rank, doc in bibliographies:
                part = self._parts.get(doc.uri)
                if part is not None and id(ref) in part.members:
                    start = ref.start
                    return rank, abs(start - offset) if doc.uri == focus_uri else 0, start
            return len(docs), 0, 0

        return sorted(refs, key=urgency)

    # -- keeping the parts ---------------------------------------------------------------

    def absorb(self, doc: Document) -> bool:
        """Take in a new parse of an open library by the entries it replaced, when it was
        made from the parse held; whether it could (the workspace calls this at every parse,
        so edits parsed between two verifier passes are taken in one by one)."""
        part = self._parts.get(doc.uri)
        delta = doc.delta if isinstance(doc, BibtexBibliography) else None
        if part is None or delta is None or not isinstance(part.doc, BibtexBibliography) or (
                delta.base != part.doc.version):
            return False
        members = part.members
        for ref in delta.gone:
            if members.get(id(ref)) is ref:
                del members[id(ref)]
                self._let_go(ref)
        for ref in delta.added:
            if id(ref) not in members:
                members[id(ref)] = ref
                self._hold(ref)
        part.doc = doc
        return True

    def _sync(self) -> None:
        """Make the parts those of the open documents as they are now."""
        generation = self.corpus.generation
        docs = {d.uri: d for d in self.corpus.open_documents()}
        for uri in [u for u in self._parts if u not in docs]:
            for ref in self._parts.pop(uri).members.values():
                self._let_go(ref)
        for uri, doc in docs.items():
            part = self._parts.get(uri)
            if part is None:
                part = self._parts[uri] = _Part(doc, generation)
            elif part.doc is doc and (isinstance(doc, Bibliography)
                                      or part.generation == generation) or self.absorb(doc):
                continue  # unchanged, or changed by the entries an edit replaced
            members = {id(r): r for r in self._of(doc, None)}
            held = part.members
            for key in held.keys() - members.keys():
                self._let_go(held[key])
            for key in members.keys() - held.keys():
                self._hold(members[key])
            part.doc, part.generation, part.members = doc, generation, members

    def _hold(self, ref: Reference) -> None:
        key = id(ref)
        count = self._count.get(key, 0)
        self._count[key] = count + 1
        if not count:
            self._refs[key] = ref
            if self._gone.pop(key, None) is None:
                self._added[key] = ref

    def _let_go(self, ref: Reference) -> None:
        key = id(ref)
        count = self._count[key] - 1
        if count:
            self._count[key] = count
            return
        del self._count[key], self._refs[key]
        if self._added.pop(key, None) is None:
            self._gone[key] = ref
