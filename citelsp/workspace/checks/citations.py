"""Checks on citations and on what manuscripts cite: citations of keys no entry has
(DANGLING_CITATION), of keys two entries define (DUPLICATE_KEY at the citation), named
bibliographies that cannot be read, and entries no open manuscript cites (ORPHAN_REFERENCE).
They follow the citation graph, not single entries.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable

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


class CitationChecks:
    """The findings that follow the citation graph; orphan hints are kept per entry."""

    def __init__(self, graph: CitationGraph) -> None:
        self.graph = graph
        self._orphans: weakref.WeakKeyDictionary[Reference, Problem] = weakref.WeakKeyDictionary()

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
        chapters' citations are not known)."""
        open_users = self.graph.users(bib.uri)
        if not open_users or bib.source_format in PRINTED or isinstance(
                self.graph.corpus.get(bib.uri), Manuscript) or any(
                self.graph.partly_open(m) for m in open_users):
            return []  # a thebibliography or .bbl is printed whole: nothing in it is unused
        cited: set[str] = set()
        for m in open_users:
            keys = self.graph.cited_keys(m)
            if keys is None:
                return []
            cited |= keys
        named = self._parents_named(bib, cited)
        return [self._orphan(r) for r in bib.references
                if r.key not in cited and (not named or r.key.casefold() not in named)
                and not _cited_by_alias(r, cited)]

    def _parents_named(self, bib: Bibliography, cited: set[str]) -> set[str]:
        """Casefolded keys that cited entries name in ``crossref`` or ``xref`` (and those the
        parents name in turn): BibTeX and biber print such a parent, so it is used."""
        entries: dict[str, Reference] = {}
        for b in self.graph.co_used(bib):
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

    def _orphan(self, ref: Reference) -> Problem:
        """The orphan hint of one entry; the same object while the entry stays where it is."""
        span = ref.key_span
        known = self._orphans.get(ref)
        if known is not None and known.span == span:
            return known
        problem = self._orphans[ref] = Problem(
            code="ORPHAN_REFERENCE",
            span=span,
            message=f"'{ref.key}' is not cited by any "
                    f"{'open manuscript' if self.graph.corpus.scan else 'manuscript checked'}",
            severity=Severity.HINT,
            key=ref.key,
        )
        return problem


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
