"""What a reference claims about its work (``Work``, ``Person``), decoded for comparison
and display.

``Reference.work`` calls ``work_of`` lazily, so a large library is decoded only where a
check or a lookup needs it. Identifiers (DOI, arXiv) are not part of a Work: they are read
from the raw fields by the resolution layer. This module sits below ``model`` (which
re-exports ``Work`` and ``Person``) and reads an entry through the small ``Entry`` protocol.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Protocol

from citelsp.documents.text import clean_markup, collapse_whitespace, latex_decode, plain_title
from citelsp.documents.text import unescape_latex_chars as unescape

_YEAR = re.compile(r"(?<!\d)(\d{4})(?!\d)")
_AND = re.compile(r"\s+and\s+", re.I)
_ISSN_SPLIT = re.compile(r"[,;\s]+")
_URL_COMMAND = re.compile(r"^\s*\\url\s*\{(.*)\}\s*$", re.S)
_COMMA = re.compile(",")
_SPACES = re.compile(r"\s+")
_BRACE = re.compile(r"[{}]")
_ET_AL = frozenset({"others", "et al", "et al.", "et. al.", "etal", "et alii", "u.a."})
_TRAILING_ET_AL = re.compile(r"\s*,?\s+et\.?\s+al\.?\s*$", re.I)
_NON_WORD = re.compile(r"[^a-z0-9]+")

PAPER_TYPES = frozenset(
    {
        "article",
        "inproceedings",
        "conference",
        "article-journal",
        "article-magazine",
        "article-newspaper",
        "paper-conference",
    }
)
"""BibTeX and CSL types of journal articles and proceedings papers (CSL ``article`` is a
preprint or working paper: a paper too)."""
MISC_TYPES = frozenset({"misc", "online", "electronic", "www", "unpublished", "manuscript"})
"""Types that say nothing about the kind of work: graded as a paper when a field names a
preprint server or proceedings ("Entries that are papers whatever their type")."""
PREPRINT_SERVERS = (
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
"""Words that name a preprint server (matched as whole words of a folded name)."""
_PREPRINT_HOSTS = re.compile(
    r"^(?:[\w-]+\.)*(?:arxiv\.org|biorxiv\.org|medrxiv\.org|ssrn\.com|researchsquare\.com"
    r"|preprints\.org|chemrxiv\.org|techrxiv\.org|psyarxiv\.com)$",
    re.I,
)
_PREPRINT_DOI = re.compile(
    r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)?10\.(?:48550/arxiv\.|2139/ssrn\.|1101/\d"
    r"|21203/rs\.|20944/preprints|26434/chemrxiv|31234/osf\.io|31219/osf\.io)",
    re.I,
)
_ARXIV_ID = re.compile(
    r"^\s*(?:arxiv:\s*)?(?:\d{4}\.\d{4,5}|[a-z-]+(?:\.[a-z]{2})?/\d{7})(?:v\d+)?\s*$", re.I
)
_URL_HOST = re.compile(r"^\s*(?:\\url\s*\{)?\s*https?://([^/\s:?#}]+)", re.I)
_NAMING_FIELDS = ("howpublished", "note", "journal", "journaltitle", "container-title",
                  "publisher", "archiveprefix", "eprinttype")
"""Fields whose words may say the entry is a preprint or a proceedings paper."""


class Written(Protocol):
    """A field as written (``model.Field``)."""

    @property
    def value(self) -> str: ...


class Entry(Protocol):
    """What ``work_of`` reads of a ``model.Reference``."""

    source_format: str
    csl: dict | None
    fields: Mapping[str, Written]
    inherited: Mapping[str, Written]


@dataclass(frozen=True)
class Person:
    """One name. ``literal`` marks an organization (braced in BibTeX, CSL ``literal``)."""

    family: str
    given: str = ""
    literal: bool = False

    def display(self) -> str:
        if self.literal or not self.given:
            return self.family
        return f"{self.given} {self.family}"


@dataclass(frozen=True)
class Work:
    """What a reference claims about the work it cites, decoded for comparison and display."""

    title: str | None = None
    authors: tuple[Person, ...] = ()
    year: int | None = None
    venue: str | None = None
    volume: str | None = None
    issue: str | None = None
    pages: str | None = None
    publisher: str | None = None
    url: str | None = None
    issn: tuple[str, ...] = ()
    language: str | None = None
    manual: bool = False
    has_et_al: bool = False
    """The author list ends in "and others" / "et al." (CSL ``others``): it is incomplete."""
    names_preprint: bool = False
    """A field names a preprint server (``howpublished = {arXiv preprint}``, an arxiv.org
    URL, an arXiv eprint, a bioRxiv or SSRN DOI)."""
    names_proceedings: bool = False
    """A field names proceedings (``howpublished = {Proc. of ...}``)."""
    formatted: bool = False
    """Read from formatted text (a ``\\bibitem``), not from fields: what is missing may be
    there, unread."""


def graded_as_paper(entry_type: str, work: Work) -> bool:
    """An article or proceedings paper whatever its type: a ``@misc`` that names a preprint
    server or proceedings is graded as an article (NOT_FOUND_IN_INDEXES when nothing
    matches), while a ``@misc`` web page stays a web page."""
    kind = entry_type.casefold()
    return kind in PAPER_TYPES or (
        kind in MISC_TYPES and (work.names_preprint or work.names_proceedings)
    )


def fold_words(s: str) -> list[str]:
    """Accent-stripped, casefolded words of a name (``&`` read as "and")."""
    s = "".join(c for c in unicodedata.normalize("NFKD", s) if not unicodedata.combining(c))
    return _NON_WORD.sub(" ", s.casefold().replace("&", " and ")).split()


@lru_cache(maxsize=65536)
def venue_key(name: str) -> str:
    """A venue name as venue lists compare it: folded words (case, accents and punctuation
    aside), so that "Nat. Commun." and "Nat Commun" are one name."""
    return " ".join(fold_words(name))


def contains_words(haystack: list[str], needle: list[str]) -> bool:
    """``needle`` occurs in ``haystack`` as a run of whole words."""
    n = len(needle)
    return n > 0 and any(haystack[i : i + n] == needle for i in range(len(haystack) - n + 1))


@lru_cache(maxsize=8192)
def is_preprint_venue(venue: str) -> bool:
    """The name is a preprint server's ("arXiv preprint arXiv:…", "CoRR", "bioRxiv").

    An ASCII name that holds no server's first word anywhere cannot hold one as a word, and
    is answered without folding: a snapshot names hundreds of thousands of venues, each
    read once, and folding was a tenth of an index build."""
    if venue.isascii() and not _has_hint(venue.lower(), _SERVER_HINTS):
        return False
    return names_preprint_server(venue)


def names_preprint_server(venue: str) -> bool:
    """What ``is_preprint_venue`` answers, by its definition: a server's name among the
    folded words of ``venue``."""
    words = fold_words(venue)
    return any(contains_words(words, p.split()) for p in PREPRINT_SERVERS)


def _has_hint(folded: str, hints: tuple[str, ...]) -> bool:
    return any(hint in folded for hint in hints)


def is_preprint_doi(doi: str) -> bool:
    """A DOI a preprint server registers (arXiv, SSRN, bioRxiv/medRxiv, Research Square…)."""
    return bool(_PREPRINT_DOI.match(doi.strip()))


def _names_proceedings(text: str) -> bool:
    words = fold_words(text)
    return "proceedings" in words or "proc" in words


_SERVER_HINTS = tuple(sorted({name.split()[0] for name in PREPRINT_SERVERS}))
"""Every preprint server's first word: a name holding none of them names no server."""
_CLAIM_HINTS = (*_SERVER_HINTS, "proc")
"""A field that names a preprint server or proceedings contains the server's first word or
"proc": one that contains none, braces aside, is not decoded to look (a long note took
milliseconds)."""
_NO_BRACES = str.maketrans("", "", "{}")


def _may_claim(text: str) -> bool:
    return _has_hint(text.casefold().translate(_NO_BRACES), _CLAIM_HINTS)


@lru_cache(maxsize=8192)
def _field_claims(text: str) -> tuple[bool, bool]:
    """(names a preprint server, names proceedings) for one field as written. Remembered:
    a journal's name recurs in every entry of the journal."""
    if not _may_claim(text):
        return False, False
    decoded = latex_decode(text)
    return is_preprint_venue(decoded), _names_proceedings(decoded)


def _claims(values: dict[str, str]) -> tuple[bool, bool]:
    """(names a preprint server, names proceedings) from the fields as written."""
    claims = [_field_claims(v) for name in _NAMING_FIELDS if (v := values.get(name))]
    preprint = any(p for p, _ in claims)
    eprint = values.get("eprint")
    if not preprint and eprint and _ARXIV_ID.match(unescape(eprint)):
        preprint = True
    url = values.get("url")
    if not preprint and url and (m := _URL_HOST.match(url)):
        preprint = bool(_PREPRINT_HOSTS.match(m.group(1)))
    doi = values.get("doi")
    if not preprint and doi and is_preprint_doi(unescape(doi)):
        preprint = True
    return preprint, any(q for _, q in claims)


MAX_FIELD_CHARS = 10_000
"""A title, venue or other field longer than this is not read (a real title is a few hundred
characters; decoding and comparing megabytes took gigabytes)."""
MAX_NAMES_CHARS = 200_000
"""An author list longer than this is not read (thousands of authors fit)."""
MAX_CSL_NAMES = 10_000


READ_FIELDS = frozenset({
    "title", "author", "editor", "journal", "journaltitle", "booktitle", "container-title",
    "volume", "number", "issue", "pages", "page", "publisher", "year", "date", "issued",
    "doi", "eprint", "arxiv", "arxivid", "url", "howpublished", "note", "isbn", "issn",
    "language", "langid",
})  # fmt: skip
"""The fields citelsp reads and compares; others (an abstract, a table of contents) may be
as long as they like."""


def oversized(name: str, value: str) -> bool:
    """Whether a field citelsp reads is too long to be read (see ``MAX_FIELD_CHARS``)."""
    if len(value) <= MAX_FIELD_CHARS:  # nearly every value: no name lookup
        return False
    name = name.lower()
    if name not in READ_FIELDS:
        return False
    limit = MAX_NAMES_CHARS if name in ("author", "editor") else MAX_FIELD_CHARS
    return len(value) > limit


def work_of(ref: Entry) -> Work:
    values = {name: f.value for name, f in ref.fields.items()}  # each field read once
    if ref.inherited:  # what a crossref parent gives (venue, year); never identifiers
        values = {**{name: f.value for name, f in ref.inherited.items()}, **values}
    preprint, proceedings = _claims(values)
    work = (_bibtex_work(values) if ref.source_format in ("bibtex", "bibitem", "bbl")
            else _csl_work(ref.csl or {}))
    if preprint or proceedings or ref.source_format == "bibitem":
        work = replace(work, names_preprint=preprint, names_proceedings=proceedings,
                       formatted=ref.source_format == "bibitem")
    return work


# --- BibTeX ----------------------------------------------------------------------------------


_NOOPSORT = re.compile(r"\{\\noopsort\s*\{[^{}]*\}\}|\\noopsort\s*\{[^{}]*\}")
_BIBSTRING = re.compile(r"\\bibstring\s*\{([^{}]*)\}")
_HYPHEN = re.compile(r"\\hyphen(?![^\W\d_])\s*")


def _biblatex_macros(value: str) -> str:
    """biblatex's sorting and string macros as printed: ``\\noopsort{key}`` prints nothing,
    ``\\bibstring{and}`` its key word, ``\\hyphen`` a hyphen."""
    if "\\" not in value:
        return value
    value = _BIBSTRING.sub(r"\1", _NOOPSORT.sub("", value))
    return _HYPHEN.sub("-", value)


def _bibtex_work(values: dict[str, str]) -> Work:
    if any("\\noopsort" in v or "\\bibstring" in v or "\\hyphen" in v for v in values.values()):
        values = {name: _biblatex_macros(value) for name, value in values.items()}
    author = values.get("author") or ""
    authors, et_al = parse_bibtex_names("" if oversized("author", author) else author)
    url = values.get("url")
    issn = values.get("issn")
    title = values.get("title")
    if title is not None and oversized("title", title):
        title = None
    return Work(
        title=plain_title(title) or None if title is not None else None,
        authors=authors,
        year=_date_year(values.get("date")) or _year(values.get("year")),
        venue=_decoded(values, "journal", "journaltitle", "booktitle"),
        volume=_decoded(values, "volume"),
        issue=_decoded(values, "number", "issue"),
        pages=_decoded(values, "pages"),
        publisher=_decoded(values, "publisher"),
        url=_bibtex_url(url) if url else None,
        issn=tuple(_ISSN_SPLIT.split(unescape(issn).strip())) if issn and issn.strip() else (),
        language=_decoded(values, "language", "langid"),
        manual=(_decoded(values, "citelsp") or "").casefold() == "manual",
        has_et_al=et_al,
    )


def _decoded(values: dict[str, str], *names: str) -> str | None:
    """The first of the fields ``names`` that decodes to some text."""
    for name in names:
        value = values.get(name)
        if value is not None and not oversized(name, value) and (text := latex_decode(value)):
            return text
    return None


@lru_cache(maxsize=65536)
def parse_bibtex_names(value: str) -> tuple[tuple[Person, ...], bool]:
    """Split a BibTeX name list on ``and`` at brace depth 0 and parse each name.

    Returns the people and whether the list ended in ``and others`` (et al.). Remembered:
    an author's entries, and the same entry in several files, repeat the list.
    """
    people: list[Person] = []
    et_al = False
    for name in _split_top_level(value, _AND):
        name = name.strip()
        if name[-3:].lower().rstrip(".").endswith("al") and _TRAILING_ET_AL.search(name):
            name, et_al = _TRAILING_ET_AL.sub("", name), True
        if not name:
            continue
        if name.casefold() in _ET_AL:
            et_al = True
            continue
        people.append(parse_bibtex_name(name))
    return tuple(people), et_al


def parse_bibtex_name(name: str) -> Person:
    """One name in any of BibTeX's three forms: "First von Last", "von Last, First",
    "von Last, Jr, First". A name wholly in braces is an organization (``literal``)."""
    name = name.strip()
    if _wholly_braced(name):
        return Person(family=latex_decode(name), literal=True)
    parts = [p.strip() for p in _split_top_level(name, _COMMA)]
    if "=" in name and (named := _extended_name(parts)) is not None:
        return named
    if len(parts) == 1:
        words = _split_top_level(parts[0], _SPACES)
        words = [w for w in words if w]
        if len(words) <= 1:
            return Person(family=latex_decode(parts[0]))
        # The family name starts at the first lowercase "von" word, else it is the last word.
        first_von = next((i for i, w in enumerate(words[:-1]) if i > 0 and _is_lower(w)), None)
        split = first_von if first_von is not None else len(words) - 1
        return Person(
            family=latex_decode(" ".join(words[split:])),
            given=latex_decode(" ".join(words[:split])),
        )
    # "von Last, Jr, First": the Jr part is left out, as family names are what is compared.
    return Person(family=latex_decode(parts[0]), given=latex_decode(parts[-1]))


_NAME_PART = re.compile(r"([A-Za-z-]+)\s*=\s*(.*)", re.S)


def _extended_name(parts: list[str]) -> Person | None:
    """biblatex's extended name format, ``family=Dijk, given=Marten, prefix=van,
    useprefix=true`` (Better BibTeX writes it), or None when ``parts`` are not in it. The
    prefix joins the family name, as a "von" part does in the classic forms."""
    fields: dict[str, str] = {}
    for part in parts:
        m = _NAME_PART.fullmatch(part)
        if m is None:
            return None
        fields[m.group(1).lower()] = m.group(2).strip()
    if "family" not in fields:
        return None
    family = " ".join(p for p in (fields.get("prefix"), fields["family"]) if p)
    if _wholly_braced(fields["family"]) and not ({"prefix", "given"} & fields.keys()):
        return Person(family=latex_decode(fields["family"]), literal=True)
    return Person(family=latex_decode(family), given=latex_decode(fields.get("given", "")))


def _split_top_level(value: str, separator: re.Pattern[str]) -> list[str]:
    """Split on ``separator`` only where the brace depth is 0 (an unmatched ``}`` does not go
    below 0). ``separator`` never matches a brace or the empty string, so the depth is the
    same all along a match and only the braces between matches need counting."""
    if "{" not in value:
        return separator.split(value)
    pieces: list[str] = []
    depth = 0
    start = scanned = 0
    for m in separator.finditer(value):
        for brace in _BRACE.findall(value, scanned, m.start()):
            depth = depth + 1 if brace == "{" else max(depth - 1, 0)
        scanned = m.end()
        if depth == 0:
            pieces.append(value[start : m.start()])
            start = m.end()
    pieces.append(value[start:])
    return pieces


def _wholly_braced(name: str) -> bool:
    if not (name.startswith("{") and name.endswith("}")):
        return False
    depth = 0
    for i, c in enumerate(name):
        depth += c == "{"
        depth -= c == "}"
        if depth == 0 and i < len(name) - 1:
            return False
    return True


def _is_lower(word: str) -> bool:
    """A "von" word: its first letter at brace depth 0 is lowercase."""
    depth = 0
    for c in word:
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif depth == 0 and c.isalpha():
            return c.islower()
    return False


def _bibtex_url(value: str) -> str | None:
    """A URL as written, minus ``\\url{}`` and character escapes; never typeset."""
    m = _URL_COMMAND.match(value)
    url = unescape(m.group(1) if m else value).strip()
    return url or None


_DATE_YEAR = re.compile(r"\s*(-?)(\d{4,})(?![\dXu])")


def _date_year(value: str | None) -> int | None:
    """The year of a biblatex ``date`` (which wins over ``year``, as in biber): the first of a
    range (``1829/1830``); a BC year as pandoc reads it (``-0876``, ISO 8601's year -876, is
    877 BC: -877). An uncertain year (``199u``, ``19XX``) is none: no year to compare."""
    if not value:
        return None
    m = _DATE_YEAR.match(value)
    if m is None:
        return None
    year = int(m.group(2))
    return -year - 1 if m.group(1) else year


def _year(value: Any) -> int | None:
    if value is None:
        return None
    m = _YEAR.search(str(value))
    return int(m.group(1)) if m else None


# --- CSL -------------------------------------------------------------------------------------


def _csl_work(item: dict) -> Work:
    item = {str(k).lower(): v for k, v in item.items()}  # "URL" and "url" alike

    def text(name: str) -> str | None:
        value = item.get(name)
        if isinstance(value, list):
            value = value[0] if value else None
        if value is None or isinstance(value, dict) or oversized(name, str(value)):
            return None
        cleaned = clean_markup(str(value)) if isinstance(value, str) else str(value)
        return cleaned or None

    author = item.get("author")
    if isinstance(author, dict | str):  # one name, as pandoc reads CSL-YAML written by hand
        author = [author if isinstance(author, dict) else {"literal": author}]
    people = author if isinstance(author, list) and len(author) <= MAX_CSL_NAMES else []
    named = [_csl_person(p if isinstance(p, dict) else {"literal": p})
             for p in people if isinstance(p, dict | str)]
    authors = tuple(p for p in named if p.family.casefold() not in _ET_AL)
    note = item.get("note")
    title = item.get("title")
    if isinstance(title, str) and oversized("title", title):
        title = None
    return Work(
        title=plain_title(title) or None if isinstance(title, str) else text("title"),
        authors=authors,
        year=_csl_year(item.get("issued")),
        venue=text("container-title"),
        volume=text("volume"),
        issue=text("issue"),
        pages=text("page"),
        publisher=text("publisher"),
        url=text("url"),
        issn=_csl_issn(item.get("issn")),
        language=text("language"),
        manual=isinstance(note, str) and "citelsp:manual" in note,
        has_et_al=len(authors) < len(named),
    )


def _csl_person(person: dict) -> Person:
    if person.get("literal"):
        return Person(family=collapse_whitespace(str(person["literal"])), literal=True)
    family = " ".join(
        str(p) for p in (person.get("non-dropping-particle"), person.get("family")) if p
    )
    given = str(person.get("given") or "")
    if not family:  # seed 001: some records put the whole name into "given"
        return Person(family=collapse_whitespace(given))
    return Person(family=collapse_whitespace(family), given=collapse_whitespace(given))


def _csl_year(issued: Any) -> int | None:
    if isinstance(issued, dict):
        parts = issued.get("date-parts")
        if isinstance(parts, list) and parts and isinstance(parts[0], list) and parts[0]:
            year = _year(parts[0][0])
            if year is not None:
                return year
        return next(
            (y for k in ("raw", "literal", "year") if (y := _year(issued.get(k))) is not None),
            None,
        )
    if isinstance(issued, list) and issued:
        return _csl_year(issued[0])
    return _year(issued)


def _csl_issn(value: Any) -> tuple[str, ...]:
    values = value if isinstance(value, list) else [value] if value else []
    return tuple(part for v in values for part in _ISSN_SPLIT.split(str(v).strip()) if part)
