"""The verification findings a document shows, kept between its publications.

Publishing a 20,000-entry library after a keystroke, or after a few verdicts arrived, must not
visit every entry again. ``Findings`` keeps, for one document, each shown reference's findings
there (a ``Slot``, with what they were placed from), the slots by reference identity, and the
slots with findings in the order shown. An update visits only the references whose resolution
changed (the verifier's ``Results.changed_since``), that were given an identity, whose
citations changed, that an edit replaced (``EntryDelta``) or moved. What it cannot tell for
sure (results cleared or too far behind, another minimum priority, other decisions) visits
every reference, each still keeping its findings when nothing they were placed from changed.
"""

from __future__ import annotations

import bisect
import itertools
import operator
from collections.abc import Callable, Iterable, Sequence

from citelsp.documents.bibtex import BibtexBibliography
from citelsp.documents.model import Bibliography, Citation, Problem, Reference
from citelsp.documents.parse import Document
from citelsp.spans import Span
from citelsp.workspace.verification import Results

NOTHING: tuple[Problem, ...] = ()
"""The findings of a reference that shows none (one object: "still none" is no change)."""
FEW = 16
"""Up to this many slots gaining findings, or an eighth of those with findings, are put in
order one by one (a binary search each), more by sorting them all."""


class Slot:
    """One shown reference in one document: its citations there, and its findings there
    with what they were placed from (``Workspace._place`` fills these)."""

    __slots__ = ("citations", "decided", "placed", "rank", "ref", "resolution", "span")

    def __init__(self, ref: Reference, citations: Sequence[Citation], rank: int) -> None:
        self.ref = ref
        self.citations = tuple(citations)
        self.rank = rank
        """Its place among the document's shown references (manuscripts' order)."""
        self.resolution: object = None
        self.decided: object = None
        self.span: Span | None = None
        """The entry's span when its findings were placed."""
        self.placed: Sequence[Problem] = NOTHING


Shown = Iterable[tuple[Reference, Sequence[Citation]]]
IdentityOf = Callable[[Reference], "str | None"]


class Findings:
    """One document's verification findings as last built, and what they were built from."""

    def __init__(self) -> None:
        self.doc: Document | None = None
        self.generation = -1
        self.basis: tuple[object, ...] = ()
        """What every finding depends on (minimum priority, decisions), compared by ``is``."""
        self.position: tuple[int, int] | None = None
        self.named = -1
        self.slots: dict[int, Slot] = {}
        """id(reference) → its slot, for every shown reference (the slot keeps it alive)."""
        self.by_identity: dict[str, list[Slot]] = {}
        self.unnamed: dict[int, Slot] = {}
        """Slots of references without an identity yet (so without a result)."""
        self.order: list[Slot] = []
        """The slots with findings, in the order shown."""
        self.dirty: dict[int, Slot] = {}
        """Slots to visit at the next update whatever else changed (new ones)."""
        self.moved = False
        """Whether an edit may have moved entries since the last update."""
        self.problems: list[Problem] = []
        self.visited = 0
        """References visited by the last update (what a publication cost)."""

    # -- the shown references -------------------------------------------------------------

    def absorb(self, doc: Document, identity_of: IdentityOf) -> bool:
        """Take in a new parse of the document by the entries it replaced, when it was made
        from the parse held; whether it could."""
        held = self.doc
        delta = doc.delta if isinstance(doc, BibtexBibliography) else None
        if delta is None or not isinstance(held, BibtexBibliography) or (
                delta.base != held.version):
            return False
        for ref in delta.gone:
            if (slot := self.slots.get(id(ref))) is not None and slot.ref is ref:
                self._drop(slot, identity_of)
        for ref in delta.added:
            self._add(Slot(ref, (), 0), identity_of(ref))
        self.doc = doc
        self.moved = True
        return True

    def reshape(self, doc: Document, shown: Shown, identity_of: IdentityOf) -> None:
        """Hold exactly the references ``shown`` (in order, with their citations), keeping
        the slot of every reference still shown with the same citations."""
        old = self.slots
        self.slots = slots = {}
        self.by_identity, self.unnamed, self.dirty = {}, {}, {}
        for rank, (ref, citations) in enumerate(shown):
            slot = old.pop(id(ref), None)
            if slot is None or slot.ref is not ref or not _same(slot.citations, citations):
                self._add(Slot(ref, citations, rank), identity_of(ref))
            else:
                slot.rank = rank
                self._index(slot, identity_of(ref))
                slots[id(ref)] = slot
        self.order = [s for s in slots.values() if s.placed]
        self.doc = doc
        self.moved = True
        self.problems = []  # built again (``update`` sees the order changed)

    def _add(self, slot: Slot, identity: str | None) -> None:
        self.slots[id(slot.ref)] = slot
        self.dirty[id(slot.ref)] = slot
        self._index(slot, identity)

    def _index(self, slot: Slot, identity: str | None) -> None:
        if identity is None:
            self.unnamed[id(slot.ref)] = slot
        else:
            self.by_identity.setdefault(identity, []).append(slot)

    def _drop(self, slot: Slot, identity_of: IdentityOf) -> None:
        key = id(slot.ref)
        del self.slots[key]
        self.dirty.pop(key, None)
        if self.unnamed.pop(key, None) is None:
            same = self.by_identity.get(identity_of(slot.ref) or "", [])
            if slot in same:
                same.remove(slot)
        if slot.placed:
            self.order.remove(slot)
            self.problems = []

    # -- updating -------------------------------------------------------------------------

    def update(self, basis: tuple[object, ...], results: Results, named: int,
               identity_of: IdentityOf, place: Callable[[Slot], None]) -> list[Problem]:
        """Visit what may have changed since the last update, place it again (``place``),
        and give the findings in the order shown."""
        changes = results.changed_since(self.position)
        everything = changes is None or len(basis) != len(self.basis) or not all(
            map(operator.is_, basis, self.basis))
        visit = self.slots if everything else self.dirty
        if named != self.named:  # references the verifier has looked at since
            for key, slot in list(self.unnamed.items()):
                if (identity := identity_of(slot.ref)) is not None:
                    del self.unnamed[key]
                    self.by_identity.setdefault(identity, []).append(slot)
                    visit[key] = slot
        if not everything:
            for identity in changes or ():
                for slot in self.by_identity.get(identity, ()):
                    visit[id(slot.ref)] = slot
            if self.moved:
                for slot in self.order:
                    if slot.span.start != slot.ref.start:
                        visit[id(slot.ref)] = slot
        self.basis, self.position, self.named, self.moved = basis, results.position, named, False
        self.visited = len(visit)
        gained: list[Slot] = []
        lost = False
        changed = not self.problems and bool(self.order)
        for slot in list(visit.values()):
            before = slot.placed
            place(slot)
            if slot.placed is not before:
                changed = True
                if slot.placed and not before:
                    gained.append(slot)
                elif before and not slot.placed:
                    lost = True
        self.dirty = {}
        if lost:
            self.order = [s for s in self.order if s.placed]
        if gained:
            self._order(gained)
        if changed:
            self.problems = list(itertools.chain.from_iterable(map(_PLACED, self.order)))
        return self.problems

    def _order(self, gained: list[Slot]) -> None:
        """Put the slots that gained findings in their place: by where the entry starts in
        a bibliography, by rank in a manuscript."""
        key = _start if isinstance(self.doc, Bibliography) else operator.attrgetter("rank")
        if len(gained) <= FEW or len(gained) * 8 <= len(self.order):
            for slot in gained:
                bisect.insort(self.order, slot, key=key)
        else:
            self.order += gained
            self.order.sort(key=key)


_PLACED = operator.attrgetter("placed")


def _start(slot: Slot) -> int:
    return slot.ref.start


def _same(held: tuple[Citation, ...], citations: Sequence[Citation]) -> bool:
    return len(held) == len(citations) and all(map(operator.is_, held, citations))
