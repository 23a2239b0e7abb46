"""Local checks: everything citelsp can say without the network (DESIGN.md §3).

The checks that look only at bibliographies (duplicate keys and works, invalid identifiers)
are remembered per bibliography and its co-used siblings, so an edit of a manuscript does
not re-read a 10,000-entry library; identifiers are remembered per reference, so an edit of
the library re-reads only the entries the parser built again.
"""

from __future__ import annotations

import weakref
from collections import defaultdict
from collections.abc import Iterable

from citelsp.documents.bibtex import paused_gc
from citelsp.documents.model import Bibliography, Location, Manuscript, Problem, Reference, Severity
from citelsp.documents.project import Corpus
from citelsp.documents.text import cheap_title_key, normalize_title
from citelsp.resolution.identifiers import ReferenceIds, identifiers_of

_IDENTIFIERS: weakref.WeakKeyDictionary[Reference, ReferenceIds] = weakref.WeakKeyDictionary()
_WORK_KEYS: weakref.WeakKeyDictionary[Reference, tuple] = weakref.WeakKeyDictionary()
_BIBLIOGRAPHY_MEMO: dict[str, tuple[tuple[weakref.ref, ...], list[Problem]]] = {}
"""uri → (the bibliography and its siblings, by weak reference; their findings)."""


def problems_for(corpus: Corpus, uri: str) -> list[Problem]:
    """Every local problem of one document: its parse problems plus the cross-document checks."""
    doc = corpus.get(uri)
    if doc is None:
        return []
    if isinstance(doc, Manuscript):
        problems = list(doc.problems) + detect_dangling_citations(corpus, doc)
        if doc.inline is not None:
            problems += list(doc.inline.problems) + bibliography_problems(corpus, doc.inline)
        return problems
    return list(doc.problems) + bibliography_problems(corpus, doc)


def bibliography_problems(corpus: Corpus, bib: Bibliography) -> list[Problem]:
    users = corpus.manuscripts_using(bib.uri)
    with paused_gc():  # thousands of small lists must not trigger full collections
        return (
            _entry_problems(bib, _siblings(corpus, bib, users))
            + detect_orphans(corpus, bib, users)
        )


def _entry_problems(bib: Bibliography, bibliographies: list[Bibliography]) -> list[Problem]:
    """Findings about ``bib``'s entries alone, recomputed only when a bibliography changed."""
    memo = _BIBLIOGRAPHY_MEMO.get(bib.uri)
    if memo is not None and len(memo[0]) == len(bibliographies) and all(
        ref() is b for ref, b in zip(memo[0], bibliographies, strict=True)
    ):
        return list(memo[1])
    siblings = [r for b in bibliographies for r in b.references]
    problems = (
        detect_duplicate_keys(bib, siblings)
        + detect_duplicate_works(bib, siblings)
        + detect_invalid_identifiers(bib)
    )
    _BIBLIOGRAPHY_MEMO[bib.uri] = (tuple(weakref.ref(b) for b in bibliographies), problems)
    return list(problems)


def _siblings(corpus: Corpus, bib: Bibliography, users: list[Manuscript]) -> list[Bibliography]:
    """``bib`` first, then the bibliographies used together with it."""
    seen = {bib.uri: bib}
    for m in users:
        for other in corpus.bibliographies_for(m):
            seen.setdefault(other.uri, other)
    return list(seen.values())


def _work_keys(ref: Reference) -> tuple[str | None, str | None, str | None]:
    """DOI, arXiv id and cheap title fold of one entry, remembered per entry object."""
    keys = _WORK_KEYS.get(ref)
    if keys is None:
        ids = _identifiers(ref)
        raw = ref.value("title")
        keys = _WORK_KEYS[ref] = (
            ids.doi.value if ids.doi is not None else None,
            ids.arxiv.value.split("v")[0] if ids.arxiv is not None else None,
            cheap_title_key(raw) if raw else None,
        )
    return keys


def _identifiers(ref: Reference) -> ReferenceIds:
    ids = _IDENTIFIERS.get(ref)
    if ids is None:
        ids = _IDENTIFIERS[ref] = identifiers_of(ref)
    return ids


def detect_dangling_citations(corpus: Corpus, manuscript: Manuscript) -> list[Problem]:
    problems = []
    bibs = corpus.bibliographies_for(manuscript)
    for c in manuscript.citations:
        if c.wildcard or corpus.resolve(manuscript, c, bibs).references:
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


def detect_duplicate_keys(bib: Bibliography, siblings: Iterable[Reference]) -> list[Problem]:
    by_key: dict[str, list[Reference]] = defaultdict(list)
    for r in siblings:
        by_key[r.key].append(r)
    problems = []
    for r in bib.references:
        same = by_key[r.key]
        if len(same) < 2:
            continue
        others = tuple(Location(o.uri, o.key_span) for o in same if o is not r)
        problems.append(Problem(
            code="DUPLICATE_KEY",
            span=r.key_span,
            message=f"key '{r.key}' is defined {len(same)} times",
            severity=Severity.ERROR,
            key=r.key,
            related=others,
        ))
    return problems


def detect_duplicate_works(bib: Bibliography, siblings: Iterable[Reference]) -> list[Problem]:
    """Two keys for one work: same DOI, arXiv id, or normalized title.

    Titles are bucketed by a cheap fold of the raw text; only colliding ones are decoded.
    """
    siblings = list(siblings)
    groups: dict[tuple[str, str], list[Reference]] = defaultdict(list)
    buckets: dict[str, list[Reference]] = defaultdict(list)
    for r in siblings:
        doi, arxiv, cheap = _work_keys(r)
        if doi:
            groups[("DOI", doi)].append(r)
        if arxiv:
            groups[("arXiv id", arxiv)].append(r)
        if cheap:
            buckets[cheap].append(r)
    for candidates in buckets.values():
        if len(candidates) < 2 or len({r.key for r in candidates}) < 2:
            continue
        for r in candidates:
            title = r.work.title
            if title:
                groups[("title", normalize_title(title))].append(r)

    own = {id(r) for r in bib.references}
    flagged: dict[int, Problem] = {}
    for (kind, _value), refs in groups.items():
        if len(refs) < 2:
            continue
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
                message=f"'{r.key}' and {', '.join(repr(k) for k in others)} cite the same work "
                        f"(same {kind})",
                severity=Severity.WARNING,
                key=r.key,
                related=tuple(Location(o.uri, o.key_span) for o in refs if o.key != r.key),
            )
    return list(flagged.values())


def detect_invalid_identifiers(bib: Bibliography) -> list[Problem]:
    problems = []
    for r in bib.references:
        for p in _identifiers(r).problems:
            if p.code != "INVALID_IDENTIFIER":
                continue
            problems.append(Problem(
                code=p.code,
                span=r.span_of(p.field),
                message=p.message,
                severity=Severity.WARNING,
                key=r.key,
            ))
    return problems


def detect_orphans(corpus: Corpus, bib: Bibliography, users: list[Manuscript]) -> list[Problem]:
    """Entries no open manuscript cites; silent until a manuscript using ``bib`` is open."""
    open_users = [m for m in users if m.uri in corpus.open_uris]
    if not open_users or bib.source_format == "csl-yaml":
        return []
    cited: set[str] = set()
    for m in open_users:
        bibs = corpus.bibliographies_for(m)
        for c in m.citations:
            if c.wildcard:
                return []
            cited.add(corpus.resolve(m, c, bibs).key)
    return [
        Problem(
            code="ORPHAN_REFERENCE",
            span=r.key_span,
            message=f"'{r.key}' is not cited by any open manuscript",
            severity=Severity.HINT,
            key=r.key,
        )
        for r in bib.references
        if r.key not in cited
    ]
