"""Is a record the cited work? Seed 004 v5 "exact-title-or-bust", as citelsp matches.

Title similarity only retrieves candidates; it never proves identity. A title search matches
only on an exact normalized title without a year or first-author conflict. An identifier
lookup is more lenient (the identifier already binds the record), but it calls the identifier
*another work* only with a metadata conflict as well, because short names ("BERT") exist.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from citelsp.documents.model import Person, Work
from citelsp.documents.text import (
    cn_titles_equal,
    fold_name,
    has_han,
    is_generic_title,
    title_similarity,
    titles_equal,
)
from citelsp.resolution.outcome import FieldConflict, Record
from citelsp.resolution.records import NAME_PARTICLES

SIMILARITY_FLOOR = 0.70
"""SequenceMatcher ratio a non-exact title needs (seed 004 §1)."""

IdJudgementKind = Literal[
    "match", "match_with_title_conflict", "mismatch", "unconfirmed", "unverifiable", "no_title"
]

_NAME_TOKEN = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")
_GENERATIONS = frozenset({"jr", "sr", "ii", "iii", "iv"})


@dataclass(frozen=True)
class IdJudgement:
    """What an identifier lookup's record says about the cited work.

    ``no_title``: the citation has no title, so an identifier hit is accepted as it stands —
    there is no cited title for the record to contradict.
    """

    kind: IdJudgementKind
    similarity: float = 0.0
    """Best title ratio over the record's variants (0 when not comparable)."""
    record_title: str | None = None
    """The record title the cited one was compared with (the closest variant)."""

    @property
    def matched(self) -> bool:
        return self.kind in ("match", "match_with_title_conflict", "no_title")

    def reason(self, identifier_kind: str) -> str | None:
        """The reason code this judgement contributes for a ``doi`` or ``arxiv`` lookup."""
        arxiv = identifier_kind == "arxiv"
        return {
            "match_with_title_conflict": "METADATA_CONFLICT",
            "mismatch": "ARXIV_TITLE_MISMATCH" if arxiv else "DOI_TITLE_MISMATCH",
            "unconfirmed": "ARXIV_TITLE_UNCONFIRMED" if arxiv else "DOI_TITLE_UNCONFIRMED",
            "unverifiable": "DOI_EXISTS_TITLE_UNVERIFIABLE",
        }.get(self.kind)


@dataclass(frozen=True)
class TitleJudgement:
    """The outcome of examining every title-search candidate."""

    match: Record | None = None
    conflicts: tuple[FieldConflict, ...] = ()
    """Why exact-title candidates were rejected (year or first author); empty on a match."""
    near_matches: tuple[Record, ...] = ()
    """Non-exact candidates with ratio ≥ 0.70, best first: "did you mean", never a match."""
    generic: bool = False
    """The cited title is generic (seed 004 §0.12.2) and cannot match on title alone."""


_UNDECOMPOSED = str.maketrans({"ø": "o", "ł": "l", "đ": "d", "ħ": "h", "ı": "i", "ŧ": "t",
                               "æ": "ae", "œ": "oe", "þ": "th", "ð": "d"})
"""Folded letters NFKD leaves whole (a stroke or a ligature, not a combining accent), as a
writer without them types the name: Søren → soren, Łukasz → lukasz. Applied only when
comparing names: ``fold_name`` feeds the identity that human decisions are stored by, which
must not move. A small fixed table rather than a transliteration dependency."""


def _fold_for_comparison(s: str) -> str:
    folded = fold_name(s)
    return folded if folded.isascii() else folded.translate(_UNDECOMPOSED)


def _name_tokens(s: str) -> list[str]:
    """Folded words of a family name without a generational suffix: Crossref sometimes
    gives ``Trotter, Jr.`` as the family name, BibTeX reads ``Trotter, Jr., Leslie`` as
    Trotter with a suffix."""
    tokens = _NAME_TOKEN.findall(_fold_for_comparison(s))
    while len(tokens) > 1 and tokens[-1] in _GENERATIONS:
        tokens.pop()
    return tokens


def same_person(cited: Person, found: Person) -> bool:
    """Family names agree after folding. A display-name string (no given name, several
    tokens) carries its family name at the end, so one side's family tokens must end the
    other's; a Han display name carries it at the start. A two-surname family (Spanish
    ``Honorio Coronado``) is cited by its first surname too, also when a display name put
    that surname at the end of the given names (``Euridice N. Honorio`` ``Coronado``)."""
    return _same_family(cited.family, found.family) or _first_surname(
        cited.family, found.family, found.given)


@lru_cache(maxsize=65536)
def _same_family(cited: str, found: str) -> bool:
    """``same_person`` on family names alone (memoized: author lists are compared pairwise)."""
    a, b = _fold_for_comparison(cited), _fold_for_comparison(found)
    if not a or not b:
        return True
    if a == b:
        return True
    if _latin(a) != _latin(b):
        return True  # Кондратенко cited as Kondratenko, 张 as Zhang: not comparable
    if has_han(a) or has_han(b):
        short, long_ = sorted((a.replace(" ", ""), b.replace(" ", "")), key=len)
        return long_.startswith(short) or long_.endswith(short)
    ta, tb = _name_tokens(cited), _name_tokens(found)
    if not ta or not tb:
        return True
    if ta == tb or "".join(ta) == "".join(tb):
        return True
    short, long_ = sorted((ta, tb), key=len)
    return long_[-len(short) :] == short


@lru_cache(maxsize=65536)
def _first_surname(cited: str, family: str, given: str) -> bool:
    """``cited`` is the first of the record's surnames: the first words of its family name,
    or the words just before it that a display name left at the end of its given names
    (which then still hold a given name). Particles alone (``de``) name no one."""
    tc = _name_tokens(cited)
    if not tc or all(t in NAME_PARTICLES for t in tc) or not _latin(fold_name(cited)):
        return False
    tf, tg = _name_tokens(family), _name_tokens(given)
    if len(tf) > len(tc) and tf[: len(tc)] == tc:
        return True
    return len(tg) > len(tc) and tg[-len(tc) :] == tc


@lru_cache(maxsize=65536)
def _latin(name: str) -> bool:
    """Every letter of ``name`` is a Latin one (a name in another script is not comparable
    with a transliteration of it)."""
    return all(unicodedata.name(c, "").startswith("LATIN") for c in name if c.isalpha())


def _first_person(people: Sequence[Person]) -> Person | None:
    return people[0] if people and not people[0].literal and people[0].family.strip() else None


def first_author_conflict(work: Work, record: Record) -> bool:
    """Both sides name a first author (not an organization) and the family names differ."""
    cited, found = _first_person(work.authors), _first_person(record.authors)
    if cited is None or found is None:
        return False
    return not same_person(cited, found)


BUDDHIST_ERA = range(2400, 2701)
"""Years of the Thai solar calendar (Buddhist era, 543 years ahead) a record or an entry may
give: 2549 is 2006. No Gregorian publication year is that far in the future."""


def common_era(year: int) -> int:
    """The Gregorian year of ``year``, which may be a Buddhist-era year (a Thai thesis's 2549
    and a citation's 2006 are the same year, not a conflict)."""
    return year - 543 if year in BUDDHIST_ERA else year


def years_of(record: Record) -> tuple[int, ...]:
    """The record's years in the common era."""
    return tuple(common_era(y) for y in record.years)


def year_conflict(work: Work, record: Record) -> bool:
    """Both sides give a year and the cited one is more than a year from every record year."""
    if work.year is None or not record.years:
        return False
    cited = common_era(work.year)
    return all(abs(cited - y) > 1 for y in years_of(record))


def _metadata_conflicts(work: Work, record: Record) -> tuple[FieldConflict, ...]:
    out = []
    if year_conflict(work, record):
        found = ", ".join(str(y) for y in sorted(set(record.years)))
        out.append(FieldConflict("year", str(work.year), found,
                                 by_source=((record.source, found),),
                                 note="same title, another year"))
    if first_author_conflict(work, record):
        found = record.authors[0].family
        out.append(FieldConflict("author", work.authors[0].family, found,
                                 by_source=((record.source, found),),
                                 note="same title, another first author"))
    return tuple(out)


def _variants(record: Record, *, with_short: bool) -> list[str]:
    seen = [record.title] if record.title else []
    seen += list(record.titles) + (list(record.short_titles) if with_short else [])
    return [t for i, t in enumerate(seen) if t and t not in seen[:i]]


def _best_ratio(title: str, variants: Sequence[str], floor: float = 0.0
                ) -> tuple[float, str | None]:
    best, best_variant = 0.0, None
    for v in variants:
        ratio = title_similarity(title, v, floor)
        if ratio > best:
            best, best_variant = ratio, v
    return best, best_variant


def judge_identifier_record(work: Work, record: Record, *, authoritative: bool) -> IdJudgement:
    """Judge the record an identifier lookup returned against the cited work.

    ``authoritative``: the record comes from the source that registers the identifier; only
    then can a failed title test (with a first-author or year conflict) name another work.
    """
    title = (work.title or "").strip()
    if not title:
        return IdJudgement("no_title")
    variants = _variants(record, with_short=True)
    if not variants:
        return IdJudgement("unverifiable")
    if has_han(title):
        han = [v for v in variants if has_han(v)]
        if not han:
            return IdJudgement("unverifiable", record_title=variants[0])
        if any(cn_titles_equal(title, v) for v in han):
            return IdJudgement("match", 1.0, next(v for v in han if cn_titles_equal(title, v)))
        return IdJudgement("mismatch" if authoritative else "unconfirmed", 0.0, han[0])
    latin = [v for v in variants if not has_han(v)]
    if not latin:
        return IdJudgement("unverifiable", record_title=variants[0])
    for v in latin:
        if titles_equal(title, v):
            return IdJudgement("match", 1.0, v)
    ratio, closest = _best_ratio(title, latin)
    if ratio >= SIMILARITY_FLOOR:
        return IdJudgement("match_with_title_conflict", ratio, closest)
    if authoritative and (first_author_conflict(work, record) or year_conflict(work, record)):
        return IdJudgement("mismatch", ratio, closest or latin[0])
    return IdJudgement("unconfirmed", ratio, closest or latin[0])


def _exact_title(title: str, variants: Sequence[str]) -> bool:
    if has_han(title):
        return any(cn_titles_equal(title, v) for v in variants if has_han(v))
    return any(titles_equal(title, v) for v in variants if not has_han(v))


def _same_kind(work: Work, record: Record) -> bool:
    """The record is the kind of version cited: a version of record for a cited venue, a
    preprint for a cited preprint, so that the accuracy checks compare like with like."""
    return bool(work.venue or work.names_preprint) and record.is_preprint == work.names_preprint


def _agreement(work: Work, record: Record) -> int:
    """How many identity fields positively agree (used to rank exact-title candidates)."""
    score = 0
    if work.year is not None and any(abs(common_era(work.year) - y) <= 1
                                     for y in years_of(record)):
        score += 1
    cited, found = _first_person(work.authors), _first_person(record.authors)
    if cited is not None and found is not None and same_person(cited, found):
        score += 1
    return score


def judge_title_search(work: Work, candidates: Sequence[Record], *, with_near: bool = True
                       ) -> TitleJudgement:
    """Examine every candidate; match only an exact normalized title without conflicts.

    Among several acceptable exact-title candidates, the one whose year and first author
    agree wins over one missing them, and a version of record over a preprint when a venue
    is cited. A generic cited title never matches on title alone.
    """
    title = (work.title or "").strip()
    if not title:
        return TitleJudgement()
    if is_generic_title(title):
        return TitleJudgement(generic=True)
    accepted: list[tuple[int, int, int, Record]] = []
    conflicts: list[FieldConflict] = []
    inexact: list[tuple[int, Record, list[str]]] = []
    for index, record in enumerate(candidates):
        variants = _variants(record, with_short=False)
        if _exact_title(title, variants):
            rejected = _metadata_conflicts(work, record)
            if rejected:
                conflicts.extend(c for c in rejected if c not in conflicts)
            else:
                accepted.append(
                    (-_agreement(work, record), -_same_kind(work, record), index, record))
        else:
            inexact.append((index, record, variants))
    if accepted:
        # Near matches only matter when nothing matched; scoring them is the costly part.
        return TitleJudgement(min(accepted, key=lambda t: t[:3])[3])
    near = near_matches(work, [r for _, r, _ in inexact]) if with_near else ()
    return TitleJudgement(None, tuple(conflicts), near)


def near_matches(work: Work, candidates: Sequence[Record]) -> tuple[Record, ...]:
    """Non-exact candidates with ratio ≥ 0.70, best first: "did you mean", never a match."""
    title = (work.title or "").strip()
    if not title or has_han(title) or is_generic_title(title):
        return ()
    near: list[tuple[float, int, Record]] = []
    for index, record in enumerate(candidates):
        variants = _variants(record, with_short=False)
        if _exact_title(title, variants):
            continue
        ratio, _ = _best_ratio(title, [v for v in variants if not has_han(v)], SIMILARITY_FLOOR)
        if ratio >= SIMILARITY_FLOOR:
            near.append((-ratio, index, record))
    return tuple(r for _, _, r in sorted(near, key=lambda t: t[:2]))
