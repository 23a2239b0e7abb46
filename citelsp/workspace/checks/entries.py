"""The entries of a set of co-used bibliographies, and the per-entry indexes of the checks
that look at them: keys (``keys``), works (``duplicates``), identifiers and field sizes
(``identifiers``, ``fields``), crossref parents (``fields``).

The BibTeX parser keeps an unchanged entry as the same object across edits and says which
entries an edit replaced (``EntryDelta``), so a keystroke in a 20,000-entry library updates
these indexes by the entries it touched, not by the library; a parse without a delta (the
first one, another format, macros that changed) is compared entry by entry instead.
Findings are built from the (few) colliding groups, in time linear in their size.
"""

from __future__ import annotations

from collections.abc import Iterable

from citelsp.documents.bibtex import BibtexBibliography
from citelsp.documents.model import Bibliography, Problem, Reference
from citelsp.workspace.checks.duplicates import WorkIndex
from citelsp.workspace.checks.fields import field_size_problems, too_long, undefined_crossrefs
from citelsp.workspace.checks.groups import in_order
from citelsp.workspace.checks.identifiers import has_identifier_problems, identifier_problems
from citelsp.workspace.checks.keys import KeyIndex


class EntryIndex:
    def __init__(self) -> None:
        self.keys = KeyIndex()
        self.works = WorkIndex()
        self.members: dict[str, dict[int, Reference]] = {}
        """URI → the ids of its entries, with the entries."""
        self.flagged: dict[str, dict[int, Reference]] = {}
        """URI → its entries with an identifier or field-size finding."""
        self.children: dict[str, dict[int, Reference]] = {}
        """URI → its entries with a ``crossref``, whose parent must be among the entries."""
        self._absorbed: dict[str, Bibliography] = {}
        """URI → the parse its members are of."""
        self._state = 0
        """Counts the parses taken in: a new one may move entries (and spans in findings)."""
        self._found: dict[str, tuple[int, list[Problem]]] = {}
        """URI → its findings and the state they were made in."""

    def update(self, bibliographies: Iterable[Bibliography]) -> None:
        """Make the index hold exactly these bibliographies' entries."""
        bibliographies = list(bibliographies)
        wanted = {b.uri for b in bibliographies}
        for uri in [u for u in self.members if u not in wanted]:
            for ref in self.members.pop(uri).values():
                self._remove(ref)
            self._absorbed.pop(uri, None)
            self._found.pop(uri, None)
            self._state += 1
        for bib in bibliographies:
            self.absorb(bib)

    def absorb(self, bib: Bibliography) -> None:
        """Take in the latest parse of one of the bibliographies: by its delta when it was
        made from the parse held, else entry by entry."""
        held = self._absorbed.get(bib.uri)
        if held is bib:
            return
        self._state += 1
        members = self.members.setdefault(bib.uri, {})
        delta = bib.delta if isinstance(bib, BibtexBibliography) else None
        if delta is not None and isinstance(held, BibtexBibliography) and (
                held.version == delta.base):
            for ref in delta.gone:
                if members.pop(id(ref), None) is not None:
                    self._remove(ref)
            for ref in delta.added:
                if id(ref) not in members:
                    members[id(ref)] = ref
                    self._add(ref)
        else:
            current = {id(r): r for r in bib.references}
            for gone in members.keys() - current.keys():
                self._remove(members[gone])
            for new in current.keys() - members.keys():
                self._add(current[new])
            self.members[bib.uri] = current
        self._absorbed[bib.uri] = bib

    def _add(self, ref: Reference) -> None:
        self.keys.add(ref)
        self.works.add(ref)
        if "crossref" in ref.fields:
            self.children.setdefault(ref.uri, {})[id(ref)] = ref
        if has_identifier_problems(ref) or too_long(ref):
            self.flagged.setdefault(ref.uri, {})[id(ref)] = ref

    def _remove(self, ref: Reference) -> None:
        self.keys.remove(ref)
        self.works.remove(ref)
        for by_uri in (self.children, self.flagged):
            if (found := by_uri.get(ref.uri)) is not None:
                found.pop(id(ref), None)

    def problems(self, bib: Bibliography) -> list[Problem]:
        """The findings on ``bib``'s entries (it must be one of those updated); the same list
        while no parse was taken in (an edit elsewhere re-sends none of them)."""
        found = self._found.get(bib.uri)
        if found is not None and found[0] == self._state:
            return found[1]
        own = self.members.get(bib.uri, {})
        problems = (
            self.keys.problems(own)
            + self.works.problems(own)
            + [p for r in in_order(self.flagged.get(bib.uri, {}).values())
               for p in identifier_problems(r) + field_size_problems(r)]
            + undefined_crossrefs(in_order(self.children.get(bib.uri, {}).values()),
                                  self.keys.defines)
        )
        self._found[bib.uri] = (self._state, problems)
        return problems
