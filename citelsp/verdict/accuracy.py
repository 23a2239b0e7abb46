"""Bibliographic accuracy of a matched reference (seed 003 A2).

A field conflicts only when both sides have it and it disagrees with every matched record
that has it: several sources describe one work differently, and any one agreeing is enough.
Comparisons err towards agreement, because a false conflict costs a human's time. A record
abstains where it cannot know: a preprint on the venue, a list cut short on omitted authors.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import date
from functools import lru_cache

from citelsp.documents.model import Person, Work
from citelsp.documents.text import cn_titles_equal, has_han, titles_equal
from citelsp.documents.works import contains_words, fold_words, is_preprint_venue, venue_key
from citelsp.resolution.matching import common_era, same_person, years_of
from citelsp.resolution.outcome import FieldConflict, Record

CONFERENCE_ALIASES: tuple[tuple[str, ...], ...] = (
    (
        "neurips",
        "nips",
        "advances in neural information processing systems",
        "neural information processing systems",
    ),
    ("iclr", "international conference on learning representations"),
    ("icml", "international conference on machine learning"),
    ("cvpr", "computer vision and pattern recognition"),
    ("iccv", "international conference on computer vision"),
    ("eccv", "european conference on computer vision"),
    (
        "acl",
        "annual meeting of the association for computational linguistics",
        "association for computational linguistics",
    ),
    ("emnlp", "empirical methods in natural language processing"),
    ("naacl", "north american chapter of the association for computational linguistics"),
    ("eacl", "european chapter of the association for computational linguistics"),
    ("coling", "international conference on computational linguistics"),
    ("aaai", "aaai conference on artificial intelligence"),
    ("ijcai", "international joint conference on artificial intelligence"),
    ("kdd", "sigkdd", "knowledge discovery and data mining"),
    (
        "www",
        "the web conference",
        "world wide web conference",
        "international world wide web conference",
    ),
    ("sigir", "research and development in information retrieval"),
    (
        "chi",
        "conference on human factors in computing systems",
        "human factors in computing systems",
    ),
    ("uai", "uncertainty in artificial intelligence"),
    ("aistats", "artificial intelligence and statistics"),
    ("colt", "conference on learning theory"),
    ("interspeech",),
    ("icassp", "international conference on acoustics speech and signal processing"),
    ("miccai", "medical image computing and computer assisted intervention"),
    ("icra", "international conference on robotics and automation"),
    ("iros", "international conference on intelligent robots and systems"),
    ("corl", "conference on robot learning"),
    ("wsdm", "web search and data mining"),
    ("cikm", "conference on information and knowledge management"),
    ("recsys", "conference on recommender systems"),
    ("icde", "international conference on data engineering"),
    ("sigmod", "international conference on management of data"),
    ("vldb", "pvldb", "very large data bases", "proceedings of the vldb endowment"),
    ("osdi", "operating systems design and implementation"),
    ("sosp", "symposium on operating systems principles"),
    ("nsdi", "networked systems design and implementation"),
    ("sigcomm",),
    ("pldi", "programming language design and implementation"),
    ("popl", "principles of programming languages"),
    ("icse", "international conference on software engineering"),
    ("fse", "esec fse", "foundations of software engineering"),
    ("ccs", "conference on computer and communications security"),
    ("usenix security", "usenix security symposium"),
    ("stoc", "symposium on theory of computing"),
    ("focs", "foundations of computer science"),
    ("soda", "symposium on discrete algorithms"),
    ("jmlr", "journal of machine learning research"),
    ("tmlr", "transactions on machine learning research"),
    ("tacl", "transactions of the association for computational linguistics"),
    ("tpami", "pami", "transactions on pattern analysis and machine intelligence"),
    ("pnas", "proceedings of the national academy of sciences"),
)
"""Conference and journal names people abbreviate; two venues in one group agree. Entries
are normalized (lowercase, no punctuation) and matched as whole words."""

PREPRINT_TYPES = frozenset({"unpublished", "preprint", "posted-content"})

_STOPWORDS = frozenset(
    {
        "of",
        "the",
        "and",
        "on",
        "in",
        "for",
        "at",
        "to",
        "de",
        "la",
        "le",
        "der",
        "die",
        "und",
        "proceedings",
        "proc",
        "annual",
    }
)
_ORDINAL = re.compile(r"^(?:\d+(?:st|nd|rd|th)?|first|second|third|[ivxlc]+th)$")
_DETAIL_PREFIX = re.compile(r"^(?:vol|volume|no|number|issue|pp|p)\s+")
_NAMES_SHOWN = 8
"""Author lists longer than this are shortened in messages."""

Vote = tuple[Record, bool | None, str | None]
"""(record, agrees?, the record's value) — ``None`` when the record cannot be compared."""


def _venue_words(s: str) -> list[str]:
    """Folded words of a venue name without years, ordinals or edition numbers."""
    return [w for w in fold_words(s) if not _ORDINAL.match(w) and not w.isdigit()]


def _is_abbreviation(short: str, full: str) -> bool:
    """``mach`` abbreviates ``machine``; ``natl`` abbreviates ``national`` (same first letter,
    letters in order)."""
    if not short or not full or short[0] != full[0] or len(short) > len(full):
        return False
    rest = iter(full)
    return all(c in rest for c in short)


def _abbreviates(a: list[str], b: list[str]) -> bool:
    """Word by word, ignoring stop words, each word of the shorter name abbreviates the
    longer's; the shorter may stop early ("Proc. Natl. Acad. Sci." for PNAS's full name),
    as containment lets "Nature" agree with "Nature Communications"."""
    ca = [w for w in a if w not in _STOPWORDS]
    cb = [w for w in b if w not in _STOPWORDS]
    short, full = sorted((ca, cb), key=len)
    if not short or (len(short) < 2 and len(full) > 1):
        return False
    return all(
        _is_abbreviation(x, y) or _is_abbreviation(y, x) for x, y in zip(short, full, strict=False)
    )


def _initials(words: list[str], *, with_stopwords: bool) -> str:
    return "".join(w[0] for w in words if with_stopwords or w not in _STOPWORDS)


def _alias_groups(words: list[str]) -> set[int]:
    return {
        i
        for i, group in enumerate(CONFERENCE_ALIASES)
        if any(contains_words(words, alias.split()) for alias in group)
    }


@lru_cache(maxsize=16384)
def venues_agree(a: str, b: str) -> bool:
    """Containment, initials, word-prefix abbreviation or a shared alias group."""
    wa, wb = _venue_words(a), _venue_words(b)
    if not wa or not wb:
        return True
    if contains_words(wa, wb) or contains_words(wb, wa):
        return True
    for short, full in ((wa, wb), (wb, wa)):
        if (
            len(short) == 1
            and len(short[0]) >= 2
            and len(full) >= 2
            and short[0]
            in (
                _initials(full, with_stopwords=False),
                _initials(full, with_stopwords=True),
            )
        ):
            return True
    if _abbreviates(wa, wb):
        return True
    return bool(_alias_groups(wa) & _alias_groups(wb))


def _title_agrees(title: str, record: Record) -> bool | None:
    """None when the record has no title in the cited title's script (not comparable)."""
    variants = [record.title or "", *record.titles, *record.short_titles]
    han = has_han(title)
    comparable = [v for v in variants if v and has_han(v) == han]
    if not comparable:
        return None
    equal = cn_titles_equal if han else titles_equal
    return any(equal(title, v) for v in comparable)


def _year_agrees(year: int, record: Record, *, cited_preprint: bool) -> bool | None:
    if not record.years:
        return None
    year, years = common_era(year), years_of(record)
    if year > date.today().year + 1:
        return False  # a year that has not come yet is never a later published version
    if record.arxiv_id or record.is_preprint:
        return year >= min(years) - 1
    if cited_preprint:
        return year <= max(years) + 1
    return any(abs(year - y) <= 1 for y in years)


def _is_person(p: Person) -> bool:
    """A person's name, not an organization's (``literal``) nor an empty one."""
    return not p.literal and bool(p.family.strip())


def _names_organization(cited: Person, found: Sequence[Person]) -> bool:
    """The record names the cited organization too (a consortium listed by both): then it
    does not stand for people the citation left out."""
    name = fold_words(cited.family)
    return bool(name) and any(p.literal and fold_words(p.family) == name for p in found)


def _names(people: Sequence[Person]) -> str:
    names = [p.family for p in people]
    if len(names) > _NAMES_SHOWN:
        return ", ".join(names[: _NAMES_SHOWN - 2]) + f", … ({len(names)} in all)"
    return ", ".join(names)


def _authors_vote(work: Work, record: Record) -> tuple[bool | None, str]:
    """Does the record's author list agree with the cited one, and if not, why (a note).

    First author kept, every cited person present, order kept. A cited list that leaves out
    some of the record's people disagrees too, unless it says it is incomplete ("and
    others"), names an organization the record does not (it may stand for the people left
    out; organizations are never compared), or the source cut its list short.
    """
    cited, found = work.authors, record.authors
    people = [p for p in cited if _is_person(p)]
    if not people or not found:
        return None, ""
    if not cited[0].literal and not found[0].literal and not same_person(cited[0], found[0]):
        return False, ""
    matched: list[int] = []
    position = -1
    for person in people:
        position = next(
            (
                i
                for i in range(position + 1, len(found))
                if not found[i].literal and same_person(person, found[i])
            ),
            None,
        )
        if position is None:
            return False, ""
        matched.append(position)
    incomplete_by_design = work.has_et_al or any(
        not _is_person(p) and not _names_organization(p, found) for p in cited)
    if incomplete_by_design or record.authors_truncated:
        return True, ""
    missing = [p for i, p in enumerate(found) if i not in matched and _is_person(p)]
    if not missing:
        return True, ""
    total = sum(map(_is_person, found))
    return False, (
        f"cites {len(people)} of the record's {total} authors, without \u201cand others\u201d;"
        f" missing {_names(missing)}"
    )


def _venue_vote(work: Work, record: Record, links: Mapping[str, frozenset[str]]
                ) -> bool | None:
    """A preprint record abstains: only a version of record can contradict a cited venue.
    A cited name that a local index's snapshots give the record's venue too (``links``: an
    abbreviation or a series no rule here knows, "ApJ", "LNCS") agrees; that they give it to
    no venue of the record is no evidence (snapshots do not hold every name)."""
    if record.is_preprint:
        return None
    if work.issn and record.issns and set(map(_issn, work.issn)) & set(map(_issn, record.issns)):
        return True
    names = [n for n in (record.venue, *record.venue_aliases) if n and not is_preprint_venue(n)]
    if not names:
        return None
    cited = work.venue or ""
    return any(venues_agree(cited, n) for n in names) or (
        bool(links) and any(venue_key(cited) in links.get(venue_key(n), ()) for n in names))


def _preprint_only(venue: str, rs: Sequence[Record]) -> FieldConflict | None:
    """A cited venue that only preprint records describe is neither confirmed nor
    contradicted: a note (VENUE_UNCONFIRMED, P2), never a conflict, because the published
    version is often not indexed yet (decided 2026-12)."""
    if not all(r.is_preprint for r in rs) or any(
            name and not is_preprint_venue(name) and venues_agree(venue, name)
            for r in rs for name in (r.venue, *r.venue_aliases)):
        return None  # a version of record votes; an arXiv journal reference may confirm
    by_source = tuple((r.source, r.venue or "a preprint") for r in rs)
    found = "; ".join(dict.fromkeys(f for _, f in by_source))
    return FieldConflict("venue", venue, found, "VENUE_UNCONFIRMED", by_source)


def _detail(value: str | None) -> str:
    v = " ".join(fold_words(value or ""))
    v = _DETAIL_PREFIX.sub("", v)
    return v.lstrip("0") or v


def _plain_number(value: str | None) -> bool:
    return _detail(value).isdigit()


def _first_page(pages: str) -> str:
    return re.split(r"\s*(?:-|–|—|,)+\s*", pages.strip(), maxsplit=1)[0]


def _pages_equal(a: str, b: str) -> bool:
    """First pages agree, ``e123`` and ``123`` alike, and ``140:1`` (JMLR's paper:page)
    agrees with either part."""
    x, y = _detail(a), _detail(b)
    if x == y or x.lstrip("e ") == y.lstrip("e "):
        return True
    parts = [_detail(p) for p in a.split(":") if ":" in a]
    return y in parts


def _page_vote(cited: str, record: Record) -> tuple[bool | None, bool]:
    """(agrees?, a plain-number disagreement) for the cited first page.

    An article-numbered paper's own pages start at 1, so a cited first page of 1 agrees with
    an article number and is never more than a detail against another page number."""
    found = [v for v in (record.first_page, record.article_number) if v]
    if not found:
        return None, False
    if any(_pages_equal(cited, v) for v in found) or (
        record.article_number and _detail(cited) == "1"
    ):
        return True, False
    plain = (_plain_number(cited) and _detail(cited) != "1" and record.article_number is None
             and _plain_number(record.first_page))
    return False, plain


def _conflict(
    field: str,
    cited: str,
    votes: Sequence[Vote],
    reason: str = "METADATA_CONFLICT",
    note: str = "",
) -> FieldConflict | None:
    """A conflict when some record was comparable and none agreed; it names each
    disagreeing source and what it gives."""
    compared = [(r, agrees, found) for r, agrees, found in votes if agrees is not None]
    if not compared or any(agrees for _, agrees, _ in compared):
        return None
    by_source = tuple((r.source, found or "") for r, _, found in compared)
    found = "; ".join(dict.fromkeys(f for _, f in by_source))
    return FieldConflict(field, cited, found, reason, by_source, note)


def accuracy_conflicts(
    work: Work, entry_type: str, records: Sequence[Record],
    venue_links: Mapping[str, frozenset[str]] | None = None,
) -> tuple[FieldConflict, ...]:
    """Fields of the citation that disagree with every matched record.

    Field names are logical: title, year, author, venue, volume, pages (METADATA_CONFLICT
    when plain numbers differ, METADATA_DETAIL otherwise) and issue (METADATA_DETAIL); the
    caller maps them to the reference's own fields.
    """
    if not records:
        return ()
    out: list[FieldConflict | None] = []
    rs = list(records)
    if work.title:
        out.append(_conflict(
            "title", work.title, [(r, _title_agrees(work.title, r), r.title) for r in rs]))
    cited_preprint = (
        entry_type.casefold() in PREPRINT_TYPES
        or work.names_preprint
        or bool(work.venue and is_preprint_venue(work.venue))
    )
    if work.year is not None:
        out.append(_conflict("year", str(work.year), [
            (r, _year_agrees(work.year, r, cited_preprint=cited_preprint),
             ", ".join(str(y) for y in sorted(set(r.years))))
            for r in rs
        ]))
    if work.authors:
        author_votes = [(r, *_authors_vote(work, r)) for r in rs]
        note = next((n for _, agrees, n in author_votes if agrees is False and n), "")
        out.append(_conflict(
            "author",
            _names(work.authors) + (" and others" if work.has_et_al else ""),
            [(r, agrees, _names(r.authors)) for r, agrees, _ in author_votes],
            note=note,
        ))
    if work.venue and not is_preprint_venue(work.venue):
        out.append(_conflict(
            "venue", work.venue, [(r, _venue_vote(work, r, venue_links or {}), r.venue)
                             for r in rs])
            or _preprint_only(work.venue, rs))
    out += _number_conflicts(work, rs)
    return tuple(c for c in out if c is not None)


def _number_conflicts(work: Work, rs: Sequence[Record]) -> list[FieldConflict | None]:
    """Volume and first page: METADATA_CONFLICT when both sides are plain numbers; article
    numbers, ``e123``, roman numerals and every issue number: METADATA_DETAIL."""
    out: list[FieldConflict | None] = []
    if work.volume:
        votes = [(r, None if not r.volume else _detail(work.volume) == _detail(r.volume),
                  r.volume) for r in rs]
        plain = _plain_number(work.volume) and all(
            _plain_number(found) for _, agrees, found in votes if agrees is False)
        out.append(_conflict("volume", work.volume, votes,
                             "METADATA_CONFLICT" if plain else "METADATA_DETAIL"))
    if work.issue:
        out.append(_conflict("issue", work.issue, [
            (r, None if not r.issue else _detail(work.issue) == _detail(r.issue), r.issue)
            for r in rs
        ], "METADATA_DETAIL"))
    if work.pages:
        cited = _first_page(work.pages)
        page_votes = [(r, *_page_vote(cited, r)) for r in rs]
        plain = all(p for _, agrees, p in page_votes if agrees is False)
        out.append(_conflict(
            "pages", cited,
            [(r, agrees, r.first_page or r.article_number) for r, agrees, _ in page_votes],
            "METADATA_CONFLICT" if plain else "METADATA_DETAIL",
        ))
    return out


def _issn(s: str) -> str:
    return re.sub(r"[^0-9x]", "", s.casefold())
