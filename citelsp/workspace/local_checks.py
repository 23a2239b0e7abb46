"""Local checks: everything citelsp can say without the network.

The checks that look only at bibliographies (duplicate keys and works, invalid identifiers)
keep an index per set of co-used bibliographies, updated by the entries an edit replaced;
identifiers are remembered per reference, so an edit re-reads only the entries the parser
built again. ``LocalChecks`` owns those indexes; the workspace drops them when the documents
they cover close.
"""

from __future__ import annotations

import re
import weakref
from collections import defaultdict
from collections.abc import Iterable
from itertools import product
from typing import NamedTuple

from citelsp.documents.bibtex import paused_gc
from citelsp.documents.crossref import named_keys, parent_key
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
from citelsp.documents.parse import Document
from citelsp.documents.text import cheap_title_key, fold_name, normalize_title
from citelsp.documents.works import oversized
from citelsp.resolution.identifiers import reference_ids
from citelsp.spans import Span
from citelsp.uris import uri_to_path
from citelsp.workspace.graph import CitationGraph


class LocalChecks:
    """The local problems of each document, with the indexes behind them."""

    def __init__(self, graph: CitationGraph) -> None:
        self.graph = graph
        self._indexes: dict[tuple[str, ...], EntryIndex] = {}
        """Co-used bibliography URIs → the index of their entries."""
        self._orphans: weakref.WeakKeyDictionary[Reference, Problem] = weakref.WeakKeyDictionary()

    def forget(self, uri: str) -> None:
        """Drop the indexes that cover ``uri`` (closed); they are rebuilt if needed again."""
        for uris in [k for k in self._indexes if uri in k]:
            del self._indexes[uris]

    def problems(self, doc: Document) -> list[Problem]:
        """Every local problem of one document: its parse problems plus the cross-document
        checks."""
        if isinstance(doc, Manuscript):
            problems = (list(doc.problems) + self.unreadable_bibliographies(doc)
                        + self.dangling_citations(doc) + self.ambiguous_citations(doc))
            if doc.inline is not None:
                problems += list(doc.inline.problems) + self.bibliography_problems(doc.inline)
            return problems
        if doc.uri in self.graph.in_tex_trees:  # IEEEabrv.bib: TeX's file, not the writer's
            return []
        return list(doc.problems) + self.bibliography_problems(doc)

    def bibliography_problems(self, bib: Bibliography) -> list[Problem]:
        with paused_gc():  # thousands of small lists must not trigger full collections
            return self._entry_problems(bib) + self.orphans(bib)

    def _entry_problems(self, bib: Bibliography) -> list[Problem]:
        """Findings about ``bib``'s entries: duplicates among co-used bibliographies, invalid
        identifiers. The index behind them is updated by the entries that changed only."""
        bibliographies = self.graph.co_used(bib)
        uris = tuple(b.uri for b in bibliographies)
        index = self._indexes.get(uris)
        if index is None:
            index = self._indexes[uris] = EntryIndex()
        index.update([r for b in bibliographies for r in b.references])
        return index.problems(bib)

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


class EntryIndex:
    """Keys, identifiers and cheap title folds of a set of co-used bibliographies' entries.

    The BibTeX parser keeps an unchanged entry as the same object across edits, so an edit
    updates this index by the few entries it replaced, and a 10,000-entry library is not
    re-grouped on every keystroke. Findings are built from the (few) colliding groups, in
    time linear in their size, and each names at most ``MAX_RELATED`` other entries.
    """

    def __init__(self) -> None:
        self._work_keys: weakref.WeakKeyDictionary[Reference, WorkKeys] = (
            weakref.WeakKeyDictionary()
        )
        self.members: dict[int, Reference] = {}
        self.groups: dict[tuple[str, str], dict[int, Reference]] = defaultdict(dict)
        self.colliding: set[tuple[str, str]] = set()
        self.invalid: dict[int, Reference] = {}
        self.children: dict[int, Reference] = {}
        """Entries with a ``crossref``, whose parent must be among the entries."""

    def update(self, refs: list[Reference]) -> None:
        current = {id(r): r for r in refs}
        for gone in self.members.keys() - current.keys():
            self._change(self.members[gone], remove=True)
        for new in current.keys() - self.members.keys():
            self._change(current[new], remove=False)
        self.members = current

    def work_keys(self, ref: Reference) -> WorkKeys:
        """DOI, arXiv id, ISBN (whole books only) and cheap title key with year, remembered
        per entry object."""
        keys = self._work_keys.get(ref)
        if keys is None:
            ids = reference_ids(ref)
            raw = ref.value("title")
            year = _YEAR.search(ref.value("year") or ref.value("date") or ref.value("issued")
                                or "")  # fmt: skip
            cheap = cheap_title_key(raw) if raw and year else None
            keys = self._work_keys[ref] = WorkKeys(
                ids.doi.value if ids.doi is not None else None,
                ids.arxiv.value.split("v")[0] if ids.arxiv is not None else None,
                _isbn(ref.value("isbn")) if ref.entry_type.lower() in _BOOK_TYPES else None,
                f"{cheap}/{year.group(1)}" if cheap else None,
            )
        return keys

    def _change(self, ref: Reference, *, remove: bool) -> None:
        keys = self.work_keys(ref)
        for group in (("key", ref.key), ("case", ref.key.casefold()), *keys.groups()):
            members = self.groups[group]
            if remove:
                members.pop(id(ref), None)
                if not members:
                    del self.groups[group]
            else:
                members[id(ref)] = ref
            if len(members) >= 2:
                self.colliding.add(group)
            else:
                self.colliding.discard(group)
        if remove:
            self.children.pop(id(ref), None)
            self.invalid.pop(id(ref), None)
            return
        if "crossref" in ref.fields:
            self.children[id(ref)] = ref
        if any(p.code in ("INVALID_IDENTIFIER", "PLACEHOLDER_IDENTIFIER")
               for p in reference_ids(ref).problems) or _too_long(ref):
            self.invalid[id(ref)] = ref

    def problems(self, bib: Bibliography) -> list[Problem]:
        own = {id(r) for r in bib.references}
        colliding = sorted(self.colliding)
        return (
            self._duplicate_keys(own, colliding)
            + self._duplicate_works(own, colliding)
            + [p for r in _in_order(r for i, r in self.invalid.items() if i in own)
               for p in _invalidreference_ids(r)]
            + self._undefined_crossrefs(own)
        )

    def _undefined_crossrefs(self, own: set[int]) -> list[Problem]:
        """A ``crossref`` that names no entry (BibTeX: "a bad cross reference"): the venue
        and year the entry leaves to its parent are missing, so they go unchecked."""
        problems = []
        for r in _in_order(r for i, r in self.children.items() if i in own):
            key = parent_key(r)
            if key is not None and ("case", key.casefold()) not in self.groups:
                problems.append(Problem(
                    code="UNDEFINED_CROSSREF",
                    span=r.fields["crossref"].span,
                    message=f"{r.key}: crossref '{key}' names no entry of this bibliography "
                            "or those used with it, so the fields it would give (venue, "
                            "year) are missing",
                    severity=Severity.WARNING,
                    key=r.key,
                ))
        return problems

    def _duplicate_keys(self, own: set[int], colliding: list[tuple[str, str]]) -> list[Problem]:
        """The same key twice (Error); keys that differ only in case (Warning: BibTeX reads
        them as one key, biber as two)."""
        problems = []
        for kind, value in colliding:
            if kind == "key":
                same = _in_order(self.groups[(kind, value)].values())
                for r in same:
                    if id(r) in own:
                        problems.append(Problem(
                            code="DUPLICATE_KEY",
                            span=r.key_span,
                            message=f"key '{r.key}' is defined {len(same)} times",
                            severity=Severity.ERROR,
                            key=r.key,
                            related=_related(r, same, lambda o, r=r: o is not r),
                        ))
            elif kind == "case":
                refs = _in_order(self.groups[(kind, value)].values())
                spellings = sorted({r.key for r in refs})
                if len(spellings) < 2:
                    continue
                for r in refs:
                    if id(r) in own:
                        others = ", ".join(repr(k) for k in spellings if k != r.key)
                        problems.append(Problem(
                            code="DUPLICATE_KEY",
                            span=r.key_span,
                            message=f"key '{r.key}' differs only in letter case from {others}: "
                                    "BibTeX reads them as one key (a repeated entry), "
                                    "biber as two",
                            severity=Severity.WARNING,
                            key=r.key,
                            related=_related(r, refs, lambda o, r=r: o.key != r.key),
                        ))
        return problems

    def _duplicate_works(self, own: set[int], colliding: list[tuple[str, str]]
                         ) -> list[Problem]:
        """Two keys for one work: the same DOI, arXiv id or ISBN, or the same normalized
        title, first-author surname and year (titles are decoded only where their cheap
        folds and years collide); volume, issue and first page must agree where both give
        them."""
        groups: list[tuple[str, list[Reference]]] = []
        titles: dict[tuple[str, str, int], list[Reference]] = {}
        for kind, value in colliding:
            if kind in ("DOI", "arXiv id", "ISBN"):
                groups.append((kind, _in_order(self.groups[(kind, value)].values())))
            elif kind == "cheap":
                for r in _in_order(self.groups[(kind, value)].values()):
                    identity = _title_identity(r)
                    if identity is not None:
                        titles.setdefault(identity, []).append(r)
        groups += [("title, first author and year", refs) for refs in titles.values()]
        flagged: dict[int, Problem] = {}
        for kind, refs in groups:
            checked = kind not in ("DOI", "arXiv id")
            for r, others, count in _same_works(refs, own, checked=checked):
                if id(r) in flagged:
                    continue
                names = ", ".join(repr(o.key) for o in others)
                more = count - len(others)
                flagged[id(r)] = Problem(
                    code="DUPLICATE_WORK",
                    span=r.key_span,
                    message=f"'{r.key}' and {names}"
                            f"{f' (and {more} more entries)' if more > 0 else ''} "
                            f"cite the same work (same {kind})",
                    severity=Severity.WARNING,
                    key=r.key,
                    related=tuple(Location(o.uri, o.key_span) for o in others),
                )
        return list(flagged.values())


MAX_RELATED = 3
"""Other entries a duplicate finding names: with n copies of a work, each of the n findings
would otherwise carry n-1 locations."""

_BOOK_TYPES = frozenset({
    "book", "mvbook", "proceedings", "mvproceedings", "collection", "mvcollection",
    "reference", "mvreference", "manual", "booklet", "periodical",
})  # fmt: skip
"""Whole books, BibTeX/biblatex and CSL: the only entries an ISBN identifies. Chapters and
papers (even ``@article`` in a proceedings volume) carry their volume's ISBN."""
_ISBN = re.compile(r"(?<![\dX])(?:97[89][- ]?)?(?:\d[- ]?){9}[\dX](?![\dX])", re.I)
_ANONYMOUS = frozenset({"anonymous", "anon", "anon.", "n.n.", "unknown"})
"""Author names that name nobody: recurring unsigned columns share them."""
_YEAR = re.compile(r"(?<!\d)(\d{4})(?!\d)")
_FIRST_PAGE = re.compile(r"[A-Za-z]*\d+|[ivxlcdm]+", re.I)


class WorkKeys(NamedTuple):
    """What an entry is matched on, read without decoding it."""

    doi: str | None
    arxiv: str | None
    isbn: str | None
    cheap: str | None
    """Cheap title fold and year, when both are present."""

    def groups(self) -> list[tuple[str, str]]:
        return [(kind, value) for kind, value in
                (("DOI", self.doi), ("arXiv id", self.arxiv), ("ISBN", self.isbn),
                 ("cheap", self.cheap)) if value is not None]  # fmt: skip


def _isbn(value: str | None) -> str | None:
    """The first ISBN of a field as 13 digits (an ISBN-10 converted), or None."""
    m = _ISBN.search(value) if value else None
    if m is None:
        return None
    digits = m.group(0).replace("-", "").replace(" ", "").upper()
    if len(digits) == 10:
        body = "978" + digits[:9]
        check = (10 - sum(int(d) * (3 if i % 2 else 1) for i, d in enumerate(body)) % 10) % 10
        digits = body + str(check)
    return digits if len(digits) == 13 else None


def _title_identity(ref: Reference) -> tuple[str, str, int] | None:
    """Normalized title, folded first-author surname and year; None without all three."""
    work = ref.work
    if not work.title or not work.authors or work.year is None:
        return None
    surname = fold_name(work.authors[0].family)
    if surname in _ANONYMOUS:
        return None
    return normalize_title(work.title), surname, work.year


def _coordinates(ref: Reference) -> tuple[str | None, ...]:
    """Volume, issue and first page, folded; None where the entry gives none."""
    volume = ref.value("volume")
    issue = ref.value("number") or ref.value("issue")
    pages = ref.value("pages") or ref.value("page")
    first = _FIRST_PAGE.search(pages) if pages else None
    return (
        volume.strip().casefold() or None if volume else None,
        issue.strip().casefold() or None if issue else None,
        first.group(0).casefold() if first else None,
    )


_SUBSETS = [tuple(d for d in range(3) if mask >> d & 1) for mask in range(8)]


def _same_works(refs: list[Reference], own: set[int], *, checked: bool
                ) -> Iterable[tuple[Reference, list[Reference], int]]:
    """For each of ``own`` in ``refs`` with another key for the same work: up to
    MAX_RELATED such entries and how many there are. With ``checked``, entries whose
    volumes, issues or first pages differ (both given) are different works.

    Linear in ``len(refs)``: each entry is filed under its values on every subset of the
    three coordinates; the entries that may be the same work as ``r`` are those filed, under
    the coordinates ``r`` gives, with each either ``r``'s value or none (at most 8 pools),
    and each pool is sampled once for a few distinct keys."""
    none = (None, None, None)
    coordinates = {id(r): _coordinates(r) if checked else none for r in refs}
    index: dict[tuple[int, ...], dict[tuple, list[Reference]]] = {
        subset: defaultdict(list) for subset in _SUBSETS
    }
    for r in refs:
        c = coordinates[id(r)]
        for subset, filed in index.items():
            filed[tuple(c[d] for d in subset)].append(r)
    samples: dict[int, list[Reference]] = {}
    for r in refs:
        if id(r) not in own:
            continue
        c = coordinates[id(r)]
        given = tuple(d for d in range(3) if c[d] is not None)
        filed = index[given]
        pools = [filed[combo] for combo in product(*[(c[d], None) for d in given])
                 if combo in filed]  # fmt: skip
        others: dict[str, Reference] = {}
        for pool in pools:
            sample = samples.get(id(pool))
            if sample is None:
                sample = samples[id(pool)] = _distinct_keys(pool, MAX_RELATED + 1)
            for o in sample:
                if o.key != r.key:
                    others.setdefault(o.key, o)
        if others:
            count = sum(len(pool) for pool in pools) - 1
            yield r, _in_order(others.values())[:MAX_RELATED], max(count, len(others))


def _distinct_keys(refs: list[Reference], limit: int) -> list[Reference]:
    """The first entry of each of the first ``limit`` distinct keys."""
    seen: dict[str, Reference] = {}
    for r in refs:
        seen.setdefault(r.key, r)
        if len(seen) >= limit:
            break
    return list(seen.values())


def _related(r: Reference, refs: list[Reference], keep) -> tuple[Location, ...]:
    """Up to MAX_RELATED locations of the entries of ``refs`` that ``keep`` accepts."""
    out = []
    for o in refs:
        if keep(o):
            out.append(Location(o.uri, o.key_span))
            if len(out) == MAX_RELATED:
                break
    return tuple(out)


def _in_order(refs: Iterable[Reference]) -> list[Reference]:
    return sorted(refs, key=lambda r: (r.uri, r.span.start))


def _invalidreference_ids(r: Reference) -> list[Problem]:
    """An entry's identifier and field-size findings, each on its field."""
    return [
        Problem(code=p.code, span=r.span_of(p.field), message=p.message,
                severity=Severity.WARNING, key=r.key)
        for p in reference_ids(r).problems
        if p.code in ("INVALID_IDENTIFIER", "PLACEHOLDER_IDENTIFIER")
    ] + [
        Problem(code="FIELD_TOO_LONG", span=r.span_of(name), severity=Severity.WARNING,
                key=r.key, message=f"{name} is {len(r.value(name) or ''):,} characters long: "
                                   "too long to be a real value, so it is not read")
        for name in _too_long(r)
    ]


def _too_long(ref: Reference) -> list[str]:
    return [name for name, f in ref.fields.items() if oversized(name, f.value)]
