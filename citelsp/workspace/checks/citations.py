"""Checks on citations and on what manuscripts cite: citations of keys no entry has
(DANGLING_CITATION), of keys two entries define (DUPLICATE_KEY at the citation), named
bibliographies that cannot be read, and entries no open manuscript cites (ORPHAN_REFERENCE).
They follow the citation graph, not single entries.
"""

from __future__ import annotations

import bisect
import operator
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from citelsp.documents.bibtex import BibtexBibliography
from citelsp.documents.crossref import named_keys
from citelsp.documents.manuscript import language_for_path
from citelsp.documents.model import (
    PRINTED,
    Bibliography,
    Location,
    Manuscript,
    Problem,
    Reference,
    Severity,
    key_list,
)
from citelsp.documents.pandoc import is_cross_reference
from citelsp.spans import Span
from citelsp.uris import uri_to_path
from citelsp.workspace.graph import CitationGraph

NO_ORPHANS: list[Problem] = []
"""What a bibliography without open users shows (one object, compared by identity; never
changed)."""


class _Orphans(NamedTuple):
    """A bibliography's orphan hints, with what they were worked out from."""

    bib: Bibliography
    co_used: list[Bibliography]
    cited: set[str]
    named: set[str]
    refs: list[Reference]
    """The entries the hints are on, in the same order."""
    problems: list[Problem]


def same_objects(held: Sequence[object], now: Sequence[object]) -> bool:
    """The same objects in the same order."""
    return len(held) == len(now) and all(map(operator.is_, held, now))


class CitationChecks:
    """The findings that follow the citation graph; orphan hints are kept per bibliography."""

    def __init__(self, graph: CitationGraph) -> None:
        self.graph = graph
        self._held: dict[str, _Orphans] = {}
        """Bibliography URI → its orphan hints, with what they were worked out from."""
        self._folded: dict[str, tuple[Bibliography, set[str]]] = {}
        """Bibliography URI → its entries' keys casefolded, with the parse they are of."""

    def unreadable_bibliographies(self, manuscript: Manuscript) -> list[Problem]:
        """A named bibliography that cannot be read, where its name is written."""
        problems = []
        for written, why in self.graph.unreadable_bibliographies(manuscript):
            shown = written
            at = manuscript.text.find(written) if written else -1
            if at < 0 and written.endswith(".bib"):  # \bibliography{refs}: ".bib" was added
                shown = written[:-4]
                at = manuscript.text.find(shown) if shown else -1
            span = Span(at, at + len(shown)) if at >= 0 else Span(0, 0)
            problems.append(Problem(
                code="UNREADABLE_BIBLIOGRAPHY", span=span, severity=Severity.ERROR,
                message=f"bibliography '{written}' cannot be read: {why}"))
        return problems

    def dangling_citations(self, manuscript: Manuscript) -> list[Problem]:
        """Citations of keys no entry has; where an entry with the key cannot be read, the
        message says so and points at it (the key is there, the entry is broken)."""
        problems = []
        unreadable: dict[str, tuple[Bibliography, Problem]] | None = None
        for c, resolved in self.graph.resolved(manuscript):
            if c.wildcard or resolved.references or is_cross_reference(c):
                continue
            if unreadable is None:
                bibliographies = self.graph.bibliographies(manuscript)
                unreadable = _unreadable_entries(bibliographies)
                none = "" if bibliographies or self.graph.unreadable_bibliographies(
                    manuscript) else _no_bibliography(manuscript)
            what = "ref marker slug" if c.syntax == "marker" else "citation key"
            message = f"{what} '{c.key}' is not in any bibliography of this manuscript{none}"
            related: tuple[Location, ...] = ()
            if (broken := unreadable.get(c.key)) is not None:
                bib, problem = broken
                line = bib.text.count("\n", 0, problem.span.start) + 1
                message = (f"{what} '{c.key}': its entry in {uri_to_path(bib.uri).name} "
                           f"cannot be read (the {problem.code} error at line {line})")
                related = (Location(bib.uri, problem.span, f"the entry '{c.key}', which "
                                    f"cannot be read: {problem.message}"),)
            elif (primary := self.graph.alias_of(manuscript, c.key)) is not None:
                message = (f"{what} '{c.key}' is an alias of '{primary.key}' (its ids field), "
                           f"which only biber reads: cite '{primary.key}'")
                related = (Location(primary.uri, primary.fields["ids"].span,
                                    f"'{primary.key}' lists '{c.key}' in ids"),)
            problems.append(Problem(
                code="DANGLING_CITATION",
                span=c.span,
                message=message,
                severity=Severity.ERROR,
                key=c.key,
                related=related,
            ))
        return problems

    def ambiguous_citations(self, manuscript: Manuscript) -> list[Problem]:
        """Citations of a key two entries define: said where it is cited too, so a writer
        with only the manuscript open sees the duplicate (the bibliography says it on each
        entry)."""
        problems = []
        for c, resolved in self.graph.resolved(manuscript):
            same = [r for r in resolved.references if r.key == c.key]
            if c.wildcard or len(same) < 2:
                continue
            places = ", ".join(self._line_of(r) for r in same)
            problems.append(Problem(
                code="DUPLICATE_KEY",
                span=c.span,
                message=f"key '{c.key}' is defined {len(same)} times ({places}): which entry "
                        "this cites is ambiguous",
                severity=Severity.ERROR,
                key=c.key,
                related=tuple(Location(r.uri, r.key_span, f"'{r.key}' defined here")
                              for r in same),
            ))
        return problems

    def _line_of(self, ref: Reference) -> str:
        """"refs.bib:125", where an entry's key is."""
        doc = self.graph.corpus.get(ref.uri)
        line = doc.text.count("\n", 0, ref.key_span.start) + 1 if doc is not None else 0
        return f"{uri_to_path(ref.uri).name}:{line}"

    def orphans(self, bib: Bibliography) -> list[Problem]:
        """Entries no open manuscript cites; silent until a manuscript using ``bib`` is open,
        for the references of a manuscript's own front matter or ``thebibliography`` and of a
        ``.bbl``, and while a user is a chapter whose main file is not open (the other
        chapters' citations are not known).

        The same list while ``bib``, the bibliographies used with it and the keys cited
        stay the same, or when its findings come out the same (a key typed in a manuscript
        that names no entry): a keystroke in a manuscript neither rebuilds nor re-sends the
        hints of a 20,000-entry library."""
        open_users = self.graph.users(bib.uri)
        if not open_users or bib.source_format in PRINTED or isinstance(
                self.graph.corpus.get(bib.uri), Manuscript) or any(
                self.graph.partly_open(m) for m in open_users):
            return NO_ORPHANS  # a thebibliography or .bbl is printed whole: nothing unused
        cited: set[str] = set()
        for m in open_users:
            keys = self.graph.cited_keys(m)
            if keys is None:
                return NO_ORPHANS
            cited |= keys
        co_used = self.graph.co_used(bib)
        held = self._held.get(bib.uri)
        if held is not None and held.cited != cited and held.bib is bib and same_objects(
                held.co_used, co_used) and not self._name_entries(held.cited ^ cited, co_used):
            held = self._held[bib.uri] = held._replace(cited=cited)  # "@smi", "@smit", …
        if held is not None and same_objects(held.co_used[1:], co_used[1:]) and (
                held.cited == cited):
            if held.bib is bib:
                return held.problems
            if (moved := self._after_edit(held, bib, cited)) is not None:
                self._held[bib.uri] = moved._replace(co_used=co_used)
                return moved.problems
        named = _parents_named(co_used, cited)
        prior = {} if held is None else dict(zip(map(id, held.refs), held.problems,
                                                 strict=True))
        refs, problems = [], []
        for r in bib.references:
            if r.key in cited or (named and r.key.casefold() in named) or _cited_by_alias(
                    r, cited):
                continue
            span = r.key_span
            known = prior.get(id(r))
            refs.append(r)
            problems.append(known if known is not None and known.span == span
                            else self._orphan(r, span))
        if held is not None and same_objects(held.problems, problems):
            problems = held.problems
        self._held[bib.uri] = _Orphans(bib, co_used, cited, named, refs, problems)
        return problems

    def _after_edit(self, held: _Orphans, bib: Bibliography, cited: set[str]
                    ) -> _Orphans | None:
        """The hints of ``bib``, re-parsed from ``held.bib`` by an edit that replaced a few
        entries (``EntryDelta``), from those held: the entries before the edit keep theirs,
        those after it have theirs moved, and only the replaced entries are looked at;
        None when the edit may change which entries are used (a ``crossref`` parent)."""
        delta = bib.delta if isinstance(bib, BibtexBibliography) else None
        if delta is None or not isinstance(held.bib, BibtexBibliography) or (
                delta.base != held.bib.version):
            return None
        named = held.named
        if named or any(named_keys(r) for r in delta.added + delta.gone):
            return None  # a cited entry's parent may have come or gone
        gone = {id(r) for r in delta.gone}
        kept = [(r, p) for r, p in zip(held.refs, held.problems, strict=True) if id(r) not in gone]
        lo, hi = 0, len(kept)  # entries after the edit moved, those before it did not
        while lo < hi:
            mid = (lo + hi) // 2
            r, p = kept[mid]
            if p.span == r.key_span:
                lo = mid + 1
            else:
                hi = mid
        shift = len(bib.text) - len(held.bib.text)
        moved = kept[lo:]
        if moved and any(p.span.shifted(shift) != r.key_span for r, p in (moved[0], moved[-1])):
            return None  # not one edit that moved every entry after it alike: look at all
        refs = [r for r, _ in kept]
        problems = [p for _, p in kept[:lo]] + [
            self._orphan(r, p.span.shifted(shift), p.message) for r, p in moved]
        for r in delta.added:
            if r.key not in cited and not _cited_by_alias(r, cited):
                at = bisect.bisect(problems, r.key_span.start, key=lambda p: p.span.start)
                refs.insert(at, r)
                problems.insert(at, self._orphan(r, r.key_span))
        return _Orphans(bib, held.co_used, cited, named, refs, problems)

    def _name_entries(self, keys: set[str], bibliographies: list[Bibliography]) -> bool:
        """Whether one of ``keys`` is a key, a key in another letter case (a ``crossref``
        names its parent so) or an ``ids`` alias of an entry of ``bibliographies``."""
        folded = {k.casefold() for k in keys}
        for b in bibliographies:
            if any(k in self.graph.key_index(b) or k in self.graph.alias_index(b)
                   for k in keys) or not folded.isdisjoint(self._folded_keys(b)):
                return True
        return False

    def _folded_keys(self, bib: Bibliography) -> set[str]:
        held = self._folded.get(bib.uri)
        if held is None or held[0] is not bib:
            held = self._folded[bib.uri] = (bib, {r.key.casefold() for r in bib.references})
        return held[1]

    def forget(self, uri: str) -> None:
        """``uri`` closed: its orphan hints are worked out afresh if it is opened again."""
        self._held.pop(uri, None)
        self._folded.pop(uri, None)

    def _orphan(self, ref: Reference, span: Span, message: str | None = None) -> Problem:
        """The orphan hint of one entry, whose key is at ``span``."""
        return Problem(
            code="ORPHAN_REFERENCE",
            span=span,
            message=message or f"'{ref.key}' is not cited by any "
                    f"{'open manuscript' if self.graph.corpus.scan else 'manuscript checked'}",
            severity=Severity.HINT,
            key=ref.key,
        )


def _parents_named(co_used: list[Bibliography], cited: set[str]) -> set[str]:
    """Casefolded keys that cited entries name in ``crossref`` or ``xref`` (and those the
    parents name in turn): BibTeX and biber print such a parent, so it is used."""
    entries: dict[str, Reference] = {}
    for b in co_used:
        for r in b.references:
            entries.setdefault(r.key.casefold(), r)
    todo = [r for key in cited if (r := entries.get(key.casefold())) is not None]
    named: set[str] = set()
    while todo:
        for key in named_keys(todo.pop()):
            if (folded := key.casefold()) not in named:
                named.add(folded)
                if (parent := entries.get(folded)) is not None:
                    todo.append(parent)
    return named


def _cited_by_alias(ref: Reference, cited: set[str]) -> bool:
    """Whether a key the entry's biblatex ``ids`` field lists is cited (in a LaTeX file a
    citation of it was resolved to the entry's key already; this catches the files a main
    file inputs, read from disk as keys)."""
    ids = ref.fields.get("ids")
    return ids is not None and any(a in cited for a in key_list(ids.value))


def _no_bibliography(manuscript: Manuscript) -> str:
    return f" (it has none: {how_to_name_a_bibliography(manuscript)})"


def how_to_name_a_bibliography(manuscript: Manuscript) -> str:
    """How a manuscript that has no bibliography at all can name one, by its language."""
    if language_for_path(uri_to_path(manuscript.uri).name) == "latex":
        return ("name one with \\bibliography{} or \\addbibresource{}, or its main file with "
                "% !TeX root = main.tex")
    return "name one with bibliography: in its front matter"


def _unreadable_entries(bibliographies: Iterable[Bibliography]
                        ) -> dict[str, tuple[Bibliography, Problem]]:
    """Key → the first entry with that key the parser could not read, and why."""
    found: dict[str, tuple[Bibliography, Problem]] = {}
    for bib in bibliographies:
        for p in bib.problems:
            if p.code == "MALFORMED_ENTRY" and p.severity == Severity.ERROR and p.key:
                found.setdefault(p.key, (bib, p))
    return found
