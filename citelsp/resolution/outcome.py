"""What a source answered (``Record`` and answers) and what it proves (``Outcome``).

Answers are what the cache stores; outcomes are recomputed from answers for every
reference, so two entries citing one DOI are judged separately.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from datetime import datetime
from functools import lru_cache
from typing import Literal

from citelsp.documents.model import Person

Status = Literal["matched", "unmatched", "unreachable", "skipped"]
QueriedBy = Literal["id", "title"] | None
Unchecked = Literal["offline", "outage", "budget", "pending"]
"""Why a source gave no answer: offline (not asked, nothing cached), outage (asked: a network
error, a refusal, a malformed body), budget (not asked: the day's budget for it is spent),
pending (not asked yet). Every front end says "not checked: KIND" from this one word."""


@dataclass(frozen=True)
class Retraction:
    """A retraction (or reinstatement) notice that points at the cited DOI."""

    source: str
    notice_doi: str | None = None
    date: str | None = None
    kind: str = "retraction"


@dataclass(frozen=True)
class Record:
    """One work as one source describes it, parsed from its response body."""

    source: str
    title: str | None = None
    titles: tuple[str, ...] = ()
    """Full title variants: the title, ``title: subtitle``, every title element carried."""
    short_titles: tuple[str, ...] = ()
    """Main titles (before ``:`` or `` - ``) and short titles; used for ID lookups only."""
    authors: tuple[Person, ...] = ()
    authors_truncated: bool = False
    """The source cut the author list short (OpenAlex ``is_authors_truncated``): a cited
    list missing the tail is no omission."""
    years: tuple[int, ...] = ()
    """Every year the record gives: issued, print, online, first arXiv version."""
    venue: str | None = None
    venue_aliases: tuple[str, ...] = ()
    issns: tuple[str, ...] = ()
    volume: str | None = None
    issue: str | None = None
    first_page: str | None = None
    article_number: str | None = None
    """An article number given apart from pages (Crossref ``article-number``)."""
    doi: str | None = None
    arxiv_id: str | None = None
    source_id: str | None = None
    work_type: str | None = None
    is_preprint: bool = False
    """A preprint (arXiv, bioRxiv, SSRN, posted content): it does not vote on the venue."""
    retractions: tuple[Retraction, ...] = ()
    url: str | None = None

    @property
    def year(self) -> int | None:
        return min(self.years) if self.years else None

    def to_dict(self) -> dict:
        """As JSON data, what ``asdict`` gives: written out, because ``asdict`` deep-copies
        every value and took a third of storing a title search's answer, on the event loop."""
        data = {name: getattr(self, name) for name in _RECORD_FIELDS}
        data["authors"] = tuple(
            {"family": p.family, "given": p.given, "literal": p.literal} for p in self.authors)
        data["retractions"] = tuple(
            {"source": r.source, "notice_doi": r.notice_doi, "date": r.date, "kind": r.kind}
            for r in self.retractions)
        return data

    @classmethod
    def from_dict(cls, data: dict) -> Record:
        """The inverse of ``to_dict``: unknown keys (a newer writer's) are ignored, missing
        ones take their defaults, a missing ``source`` is a ``TypeError`` as in ``__init__``.

        The instance is filled directly: the frozen ``__init__`` sets each of twenty fields
        through ``object.__setattr__``, and a cached reopen decodes thousands of records."""
        if "source" not in data:
            raise TypeError("Record.from_dict: no source")
        values = {**_RECORD_DEFAULTS, **data}
        if len(values) > len(_RECORD_DEFAULTS) + 1:
            values = {k: v for k, v in values.items() if k in _RECORD_DEFAULTS or k == "source"}
        for name in _RECORD_TUPLES:
            values[name] = tuple(values[name] or ())
        values["authors"] = tuple([_person(p["family"], p["given"], p["literal"])
                                   if len(p) == 3 and "literal" in p and "given" in p
                                   else _person(**p) for p in values["authors"] or ()])
        values["retractions"] = tuple([Retraction(**r) for r in values["retractions"] or ()])
        record = object.__new__(cls)
        record.__dict__.update(values)
        return record


_RECORD_FIELDS = tuple(f.name for f in fields(Record))
_RECORD_DEFAULTS = {f.name: f.default for f in fields(Record) if f.name != "source"}
_RECORD_TUPLES = ("titles", "short_titles", "years", "venue_aliases", "issns")


@lru_cache(maxsize=65536)
def _person(family: str, given: str = "", literal: bool = False) -> Person:
    """One shared (immutable) Person per name: the records of one work from several sources,
    and the candidates of many title searches, name the same people over and over. Called
    positionally where it can be (a keyword call's cache key costs a dict and a sort)."""
    return Person(family, given, literal)


@dataclass(frozen=True)
class Found:
    """The source returned these records (one for an ID lookup, candidates for a search)."""

    records: tuple[Record, ...]


@dataclass(frozen=True)
class NotFound:
    """The source answered, and it has nothing for this query (e.g. HTTP 404)."""

    detail: str = "not found"


@dataclass(frozen=True)
class Unreachable:
    """No usable answer: outage, timeout, rate limit, policy refusal, malformed body; or,
    with ``kind`` "budget", not asked because the day's budget for the source is spent."""

    reason: str
    kind: Unchecked = "outage"


@dataclass(frozen=True)
class Agency:
    """doi.org ``/doiRA/{prefix}``: the registration agency, or ``None`` for an unknown prefix."""

    name: str | None


@dataclass(frozen=True)
class Handle:
    """hdl.handle.net ``/api/handles/{doi}``: ``responseCode`` 1 (exists) or 100 (does not)."""

    exists: bool


@dataclass(frozen=True)
class Alias:
    """doi.org ``/api/handles/10/…?type=HS_ALIAS``: the full DOI a shortDOI stands for."""

    doi: str


@dataclass(frozen=True)
class Malformed:
    """The source says the identifier itself is malformed (arXiv's error feed)."""

    detail: str


Answer = Found | NotFound | Unreachable | Agency | Handle | Alias | Malformed
"""Everything but ``Unreachable`` may be cached."""


@dataclass(frozen=True)
class FieldConflict:
    """A cited field that disagrees with every matched record (accuracy)."""

    field: str
    cited: str
    found: str
    """What the records give instead (several values joined by "; ")."""
    reason: str = "METADATA_CONFLICT"
    by_source: tuple[tuple[str, str], ...] = ()
    """(resolver, value) for each record that disagrees: who says so, and what."""
    note: str = ""
    """What differs, when the two values do not say it at a glance ("cites 2 of the
    record's 5 authors; missing …")."""


@dataclass
class Outcome:
    """One resolver's result for one reference (seed 000 vocabulary plus evidence)."""

    resolver: str
    status: Status
    queried_by: QueriedBy
    summary: str
    reason: str | None = None
    """Reason code this outcome contributes (DOI_REFUTED, DOI_TITLE_UNCONFIRMED, ...)."""
    refutes_identifier: bool = False
    """ID-keyed evidence of fabrication (the identifier does not exist or names another work)."""
    record: Record | None = None
    near_matches: tuple[Record, ...] = ()
    conflicts: tuple[FieldConflict, ...] = ()
    """Why an exact-title candidate was rejected (year or first author)."""
    checked_at: datetime | None = None
    from_cache: bool = False
    cache_age_days: float | None = None
    url: str | None = None
    """Where a human can see what the source has (a search or record page)."""
    details: dict = field(default_factory=dict)
    unchecked: Unchecked | None = None
    """Why this source gave no answer, when it was wanted and gave none (``Unchecked``)."""


UNCHECKED_ORDER: tuple[Unchecked, ...] = ("budget", "outage", "offline", "pending")
"""The most telling reason first: a spent budget or an outage says more than "offline"."""


@dataclass(frozen=True)
class NotChecked:
    """Why a reference is not checked: no source answered for it, and some that were wanted
    could not be asked or did not answer."""

    kind: Unchecked
    resolvers: tuple[str, ...]
    """The sources that gave no answer for that reason."""


def not_checked(outcomes: Mapping[str, Outcome]) -> NotChecked | None:
    """``NotChecked`` when no source answered (matched or not) and one could not be asked
    or did not answer; None when a source answered or none was wanted (a manual entry)."""
    kinds: dict[str, list[str]] = {}
    for name, o in outcomes.items():
        if o.status in ("matched", "unmatched"):
            return None
        if o.unchecked is not None:
            kinds.setdefault(o.unchecked, []).append(name)
    kind = next((k for k in UNCHECKED_ORDER if k in kinds), None)
    return None if kind is None else NotChecked(kind, tuple(kinds[kind]))


@lru_cache(maxsize=1024)
def skipped(resolver: str, why: str, reason: str | None = None, searchable: bool = False,
            unchecked: Unchecked | None = None) -> Outcome:
    """A source not asked, and why (``searchable``: a title search may still run;
    ``unchecked``: it was wanted, and could not be asked). Shared by every reference with the
    same one: most outcomes of a large library are one of a few dozen of these, and reports
    render each once. So it is never changed once made."""
    return Outcome(resolver, "skipped", None, why, reason=reason,
                   details={"searchable": searchable}, unchecked=unchecked)
