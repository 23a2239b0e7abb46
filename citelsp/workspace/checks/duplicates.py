"""Duplicate works: two keys for one work, by DOI, arXiv id, ISBN, or normalized title with
first author and year.

An entry is filed under what it is matched on, read without decoding it (``WorkKeys``);
titles are decoded only where their cheap folds and years collide.
"""

from __future__ import annotations

import re
import weakref
from collections import defaultdict
from collections.abc import Container, Iterable
from itertools import product
from typing import NamedTuple

from citelsp.documents.model import Location, Problem, Reference, Severity
from citelsp.documents.text import cheap_title_key, fold_name, normalize_title
from citelsp.resolution.identifiers import reference_ids
from citelsp.workspace.checks.groups import MAX_RELATED, Groups, in_order

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
_IDENTIFIED = ("DOI", "arXiv id", "ISBN")


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


class WorkIndex:
    """Entries by identifier and by cheap title key."""

    def __init__(self) -> None:
        self.groups = Groups()
        self._work_keys: weakref.WeakKeyDictionary[Reference, WorkKeys] = (
            weakref.WeakKeyDictionary())

    def add(self, ref: Reference) -> None:
        self.groups.file(ref, self.work_keys(ref).groups(), remove=False)

    def remove(self, ref: Reference) -> None:
        self.groups.file(ref, self.work_keys(ref).groups(), remove=True)

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

    def problems(self, own: Container[int]) -> list[Problem]:
        """Two keys for one work: the same DOI, arXiv id or ISBN, or the same normalized
        title, first-author surname and year (titles are decoded only where their cheap
        folds and years collide); volume, issue and first page must agree where both give
        them."""
        groups: list[tuple[str, list[Reference]]] = []
        titles: dict[tuple[str, str, int], list[Reference]] = {}
        for kind, value in self.groups.sorted_collisions():
            if kind in _IDENTIFIED:
                groups.append((kind, self.groups.of((kind, value))))
            else:
                for r in self.groups.of((kind, value)):
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


def _same_works(refs: list[Reference], own: Container[int], *, checked: bool
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
            yield r, in_order(others.values())[:MAX_RELATED], max(count, len(others))


def _distinct_keys(refs: list[Reference], limit: int) -> list[Reference]:
    """The first entry of each of the first ``limit`` distinct keys."""
    seen: dict[str, Reference] = {}
    for r in refs:
        seen.setdefault(r.key, r)
        if len(seen) >= limit:
            break
    return list(seen.values())
