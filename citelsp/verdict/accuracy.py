"""Bibliographic accuracy of a matched reference (DESIGN.md §4, seed 003 A2).

A field conflicts only when both sides have it and it disagrees with every matched record
that has it: several sources describe one work differently, and any one agreeing is enough.
Comparisons err towards agreement, because a false conflict costs a human's time.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from datetime import date
from functools import lru_cache

from citelsp.documents.model import Person, Work
from citelsp.documents.text import cn_titles_equal, has_han, titles_equal
from citelsp.resolution.matching import same_person
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

PREPRINT_VENUES = (
    "arxiv",
    "corr",
    "biorxiv",
    "medrxiv",
    "ssrn",
    "preprint",
    "chemrxiv",
    "psyarxiv",
    "research square",
    "preprints org",
    "techrxiv",
    "osf preprints",
)
"""Venue words that mark a preprint server: a preprint venue never conflicts."""

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
_NON_WORD = re.compile(r"[^a-z0-9]+")
_ORDINAL = re.compile(r"^(?:\d+(?:st|nd|rd|th)?|first|second|third|[ivxlc]+th)$")


def _fold(s: str) -> str:
    s = "".join(c for c in unicodedata.normalize("NFKD", s) if not unicodedata.combining(c))
    return _NON_WORD.sub(" ", s.casefold().replace("&", " and ")).strip()


def _venue_words(s: str) -> list[str]:
    """Folded words of a venue name without years, ordinals or edition numbers."""
    return [w for w in _fold(s).split() if not _ORDINAL.match(w) and not w.isdigit()]


def _contains(haystack: Sequence[str], needle: Sequence[str]) -> bool:
    n = len(needle)
    return n > 0 and any(
        list(haystack[i : i + n]) == list(needle) for i in range(len(haystack) - n + 1)
    )


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
        if any(_contains(words, alias.split()) for alias in group)
    }


@lru_cache(maxsize=8192)
def is_preprint_venue(venue: str) -> bool:
    words = _fold(venue).split()
    return any(_contains(words, p.split()) for p in PREPRINT_VENUES)


@lru_cache(maxsize=16384)
def venues_agree(a: str, b: str) -> bool:
    """Containment, initials, word-prefix abbreviation or a shared alias group."""
    wa, wb = _venue_words(a), _venue_words(b)
    if not wa or not wb:
        return True
    if _contains(wa, wb) or _contains(wb, wa):
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
    if year > date.today().year + 1:
        return False  # a year that has not come yet is never a later published version
    if record.arxiv_id or record.is_preprint:
        return year >= min(record.years) - 1
    if cited_preprint:
        return year <= max(record.years) + 1
    return any(abs(year - y) <= 1 for y in record.years)


def _authors_agree(cited: Sequence[Person], found: Sequence[Person]) -> bool | None:
    """First author kept, every cited person present, order kept; omissions are fine."""
    people = [p for p in cited if not p.literal and p.family.strip()]
    if not people or not found:
        return None
    if not cited[0].literal and not found[0].literal and not same_person(cited[0], found[0]):
        return False
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
            return False
    return True


def _detail(value: str | None) -> str:
    v = _fold(value or "")
    v = re.sub(r"^(?:vol|volume|no|number|issue|pp|p)\s+", "", v)
    return v.lstrip("0") or v


def _first_page(pages: str) -> str:
    return re.split(r"\s*(?:-|–|—|,)+\s*", pages.strip(), maxsplit=1)[0]


def _pages_equal(a: str, b: str) -> bool:
    x, y = _detail(a), _detail(b)
    return x == y or x.lstrip("e ") == y.lstrip("e ")


def _conflict(
    field: str,
    cited: str,
    verdicts: Iterable[bool | None],
    found: Iterable[str | None],
    reason: str = "METADATA_CONFLICT",
) -> FieldConflict | None:
    """A conflict when some record was comparable and none agreed."""
    pairs = [(v, f) for v, f in zip(verdicts, found, strict=True) if v is not None]
    if not pairs or any(v for v, _ in pairs):
        return None
    return FieldConflict(field, cited, "; ".join(dict.fromkeys(f or "" for _, f in pairs)), reason)


def accuracy_conflicts(
    work: Work, entry_type: str, records: Sequence[Record]
) -> tuple[FieldConflict, ...]:
    """Fields of the citation that disagree with every matched record.

    Field names are logical: title, year, author, venue (METADATA_CONFLICT), and volume,
    issue, pages (METADATA_DETAIL); the caller maps them to the reference's own fields.
    """
    if not records:
        return ()
    out: list[FieldConflict | None] = []
    rs = list(records)
    if work.title:
        out.append(
            _conflict(
                "title",
                work.title,
                [_title_agrees(work.title, r) for r in rs],
                [r.title for r in rs],
            )
        )
    cited_preprint = entry_type.casefold() in PREPRINT_TYPES or bool(
        work.venue and is_preprint_venue(work.venue)
    )
    if work.year is not None:
        out.append(
            _conflict(
                "year",
                str(work.year),
                [_year_agrees(work.year, r, cited_preprint=cited_preprint) for r in rs],
                [", ".join(str(y) for y in sorted(set(r.years))) for r in rs],
            )
        )
    if work.authors:
        out.append(
            _conflict(
                "author",
                ", ".join(p.family for p in work.authors),
                [_authors_agree(work.authors, r.authors) for r in rs],
                [", ".join(p.family for p in r.authors) for r in rs],
            )
        )
    if work.venue and not is_preprint_venue(work.venue):
        out.append(
            _conflict(
                "venue", work.venue, [_venue_agrees(work, r) for r in rs], [r.venue for r in rs]
            )
        )
    for name, cited, found_of in (
        ("volume", work.volume, lambda r: r.volume),
        ("issue", work.issue, lambda r: r.issue),
        ("pages", work.pages and _first_page(work.pages), lambda r: r.first_page),
    ):
        if cited:
            equal = _pages_equal if name == "pages" else (lambda a, b: _detail(a) == _detail(b))
            out.append(
                _conflict(
                    name,
                    cited,
                    [None if not found_of(r) else equal(cited, found_of(r)) for r in rs],
                    [found_of(r) for r in rs],
                    reason="METADATA_DETAIL",
                )
            )
    return tuple(c for c in out if c is not None)


def _venue_agrees(work: Work, record: Record) -> bool | None:
    names = [n for n in (record.venue, *record.venue_aliases) if n]
    if record.is_preprint or any(is_preprint_venue(n) for n in names):
        return True
    if work.issn and record.issns and set(map(_issn, work.issn)) & set(map(_issn, record.issns)):
        return True
    if not names:
        return None
    return any(venues_agree(work.venue or "", n) for n in names)


def _issn(s: str) -> str:
    return re.sub(r"[^0-9x]", "", s.casefold())
