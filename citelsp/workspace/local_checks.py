"""Local checks: everything citelsp can say without the network (DESIGN.md §3).

The checks that look only at bibliographies (duplicate keys and works, invalid identifiers)
keep an index per set of co-used bibliographies, updated by the entries an edit replaced;
identifiers are remembered per reference, so an edit re-reads only the entries the parser
built again. ``LocalChecks`` owns those indexes; the workspace drops them when the documents
they cover close.
"""

from __future__ import annotations

import weakref
from collections import defaultdict
from collections.abc import Iterable

from citelsp.documents.bibtex import paused_gc
from citelsp.documents.model import Bibliography, Location, Manuscript, Problem, Reference, Severity
from citelsp.documents.parse import Document
from citelsp.documents.text import cheap_title_key, normalize_title
from citelsp.resolution.identifiers import reference_ids
from citelsp.spans import Span
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
                        + self.dangling_citations(doc))
            if doc.inline is not None:
                problems += list(doc.inline.problems) + self.bibliography_problems(doc.inline)
            return problems
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
            at = manuscript.text.find(written) if written else -1
            span = Span(at, at + len(written)) if at >= 0 else Span(0, 0)
            problems.append(Problem(
                code="UNREADABLE_BIBLIOGRAPHY", span=span, severity=Severity.ERROR,
                message=f"bibliography '{written}' cannot be read: {why}"))
        return problems

    def dangling_citations(self, manuscript: Manuscript) -> list[Problem]:
        problems = []
        for c in manuscript.citations:
            if c.wildcard or self.graph.references_of(manuscript, c).references:
                continue
            what = "ref marker slug" if c.syntax == "marker" else "citation key"
            problems.append(Problem(
                code="DANGLING_CITATION",
                span=c.span,
                message=f"{what} '{c.key}' is not in any bibliography of this manuscript",
                severity=Severity.ERROR,
                key=c.key,
            ))
        return problems

    def orphans(self, bib: Bibliography) -> list[Problem]:
        """Entries no open manuscript cites; silent until a manuscript using ``bib`` is open."""
        open_users = self.graph.users(bib.uri)
        if not open_users or bib.source_format == "csl-yaml":
            return []
        cited: set[str] = set()
        for m in open_users:
            keys = self.graph.cited_keys(m)
            if keys is None:
                return []
            cited |= keys
        return [self._orphan(r) for r in bib.references if r.key not in cited]

    def _orphan(self, ref: Reference) -> Problem:
        """The orphan hint of one entry; the same object while the entry stays where it is."""
        span = ref.key_span
        known = self._orphans.get(ref)
        if known is not None and known.span == span:
            return known
        problem = self._orphans[ref] = Problem(
            code="ORPHAN_REFERENCE",
            span=span,
            message=f"'{ref.key}' is not cited by any open manuscript",
            severity=Severity.HINT,
            key=ref.key,
        )
        return problem


class EntryIndex:
    """Keys, identifiers and cheap title folds of a set of co-used bibliographies' entries.

    The BibTeX parser keeps an unchanged entry as the same object across edits, so an edit
    updates this index by the few entries it replaced, and a 10,000-entry library is not
    re-grouped on every keystroke. Findings are built from the (few) colliding groups.
    """

    def __init__(self) -> None:
        self._work_keys: weakref.WeakKeyDictionary[Reference, tuple] = weakref.WeakKeyDictionary()
        self.members: dict[int, Reference] = {}
        self.groups: dict[tuple[str, str], dict[int, Reference]] = defaultdict(dict)
        self.colliding: set[tuple[str, str]] = set()
        self.invalid: dict[int, Reference] = {}

    def update(self, refs: list[Reference]) -> None:
        current = {id(r): r for r in refs}
        for gone in self.members.keys() - current.keys():
            self._change(self.members[gone], remove=True)
        for new in current.keys() - self.members.keys():
            self._change(current[new], remove=False)
        self.members = current

    def _work_key(self, ref: Reference) -> tuple[str | None, str | None, str | None]:
        """DOI, arXiv id and cheap title fold of one entry, remembered per entry object."""
        keys = self._work_keys.get(ref)
        if keys is None:
            ids = reference_ids(ref)
            raw = ref.value("title")
            keys = self._work_keys[ref] = (
                ids.doi.value if ids.doi is not None else None,
                ids.arxiv.value.split("v")[0] if ids.arxiv is not None else None,
                cheap_title_key(raw) if raw else None,
            )
        return keys

    def _change(self, ref: Reference, *, remove: bool) -> None:
        doi, arxiv, cheap = self._work_key(ref)
        for group in (("key", ref.key), ("DOI", doi), ("arXiv id", arxiv), ("cheap", cheap)):
            if group[1] is None:
                continue
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
            self.invalid.pop(id(ref), None)
        elif any(p.code in ("INVALID_IDENTIFIER", "PLACEHOLDER_IDENTIFIER")
                 for p in reference_ids(ref).problems):
            self.invalid[id(ref)] = ref

    def problems(self, bib: Bibliography) -> list[Problem]:
        own = {id(r) for r in bib.references}
        return (
            self._duplicate_keys(own)
            + self._duplicate_works(own)
            + [p for r in _in_order(r for i, r in self.invalid.items() if i in own)
               for p in _invalidreference_ids(r)]
        )

    def _duplicate_keys(self, own: set[int]) -> list[Problem]:
        problems = []
        for kind, key in sorted(self.colliding):
            if kind != "key":
                continue
            same = _in_order(self.groups[(kind, key)].values())
            for r in same:
                if id(r) in own:
                    problems.append(Problem(
                        code="DUPLICATE_KEY",
                        span=r.key_span,
                        message=f"key '{r.key}' is defined {len(same)} times",
                        severity=Severity.ERROR,
                        key=r.key,
                        related=tuple(Location(o.uri, o.key_span) for o in same if o is not r),
                    ))
        return problems

    def _duplicate_works(self, own: set[int]) -> list[Problem]:
        """Two keys for one work: same DOI, arXiv id, or normalized title (titles are decoded
        only where their cheap folds collide)."""
        groups: dict[tuple[str, str], list[Reference]] = {}
        for kind, value in sorted(self.colliding):
            if kind in ("DOI", "arXiv id"):
                groups[(kind, value)] = _in_order(self.groups[(kind, value)].values())
        for kind, value in sorted(self.colliding):
            if kind != "cheap":
                continue
            for r in _in_order(self.groups[(kind, value)].values()):
                if r.work.title:
                    groups.setdefault(("title", normalize_title(r.work.title)), []).append(r)
        flagged: dict[int, Problem] = {}
        for (kind, _value), refs in groups.items():
            keys = sorted({r.key for r in refs})
            if len(keys) < 2:
                continue
            for r in refs:
                if id(r) not in own or id(r) in flagged:
                    continue
                others = [k for k in keys if k != r.key]
                flagged[id(r)] = Problem(
                    code="DUPLICATE_WORK",
                    span=r.key_span,
                    message=f"'{r.key}' and {', '.join(repr(k) for k in others)} cite the "
                            f"same work (same {kind})",
                    severity=Severity.WARNING,
                    key=r.key,
                    related=tuple(Location(o.uri, o.key_span) for o in refs if o.key != r.key),
                )
        return list(flagged.values())


def _in_order(refs: Iterable[Reference]) -> list[Reference]:
    return sorted(refs, key=lambda r: (r.uri, r.span.start))


def _invalidreference_ids(r: Reference) -> list[Problem]:
    return [
        Problem(code=p.code, span=r.span_of(p.field), message=p.message,
                severity=Severity.WARNING, key=r.key)
        for p in reference_ids(r).problems
        if p.code in ("INVALID_IDENTIFIER", "PLACEHOLDER_IDENTIFIER")
    ]
