"""DOIs and arXiv ids: where a reference carries them, how they normalize, which are invalid.

Identifiers are normalized before any lookup; a still-malformed one is never
looked up (INVALID_IDENTIFIER) and a well-formed arXiv id with an impossible date is refuted
without a lookup (ARXIV_ID_REFUTED). DOIs are lowercased, so two DOIs that differ only in
letter case compare equal.
"""

from __future__ import annotations

import re
import time
import weakref
from dataclasses import dataclass
from datetime import date
from typing import Literal
from urllib.parse import unquote

from citelsp.documents.model import Field, Reference
from citelsp.documents.text import unescape_latex_chars
from citelsp.links import has_dot_segment

IdentifierKind = Literal["doi", "arxiv", "short_doi"]

_DOI = re.compile(r"10\.\d{4,9}/\S+")
_DOI_PREFIXES = re.compile(
    r"^(?:doi:\s*|info:doi/|(?:https?://)?(?:dx\.|www\.)?doi\.org/)", re.IGNORECASE
)
_TRAILING = ".,;)]}"
_CLOSERS = {")": "(", "]": "[", "}": "{"}

_ARXIV_NEW = re.compile(r"(\d{2})(\d{2})\.(\d{4,5})(v\d+)?")
_ARXIV_OLD = re.compile(r"([a-z]+(?:-[a-z]+)*)(\.[a-z]{2})?/(\d{2})(\d{2})(\d{3})(v\d+)?", re.I)
_ARXIV_PREFIX = re.compile(
    r"^(?:arxiv:\s*|(?:https?://)?(?:www\.|export\.)?arxiv\.org/(?:abs|pdf)/)", re.I
)
_ARXIV_DOI = re.compile(r"^10\.48550/arxiv\.(.+)$", re.IGNORECASE)
_ARXIV_IN_TEXT = re.compile(r"arxiv\s*:\s*([\w./-]+)", re.IGNORECASE)
_ARXIV_URL = re.compile(r"arxiv\.org/(?:abs|pdf)/([\w./-]+)", re.IGNORECASE)
_DOI_URL = re.compile(r"doi\.org/(\S+)", re.IGNORECASE)  # dx.doi.org too

_PLACEHOLDER = re.compile(
    r"^(?:10\.|arxiv:\s*)?(?:todo|tbd|tba|fixme|xx+|\?+|…|\.\.\.)$"  # the whole value
    r"|^10\.x+/|x{3,}|[…]|\.\.\.$"  # 10.xxxx/…, …/xxxxx, a trailing ellipsis
    r"|^(?:arxiv:\s*)?(?=[\d.]*x)[\dx]{4}\.[\dx]{4,5}$",  # 2402.XXXX, 24XX.XXXXX
    re.I,
)

_NEW_STYLE_START = (7, 4)
"""April 2007: the first month of ``YYMM.NNNN`` ids."""
_FIVE_DIGIT_START = (15, 1)
"""January 2015: new-style ids have five digits after the dot from here on."""
_OLD_STYLE_RANGE = ((1991, 8), (2007, 3))
"""``archive/YYMMNNN`` ids were issued from August 1991 to March 2007."""


def _strip_trailing(s: str) -> str:
    """Trim trailing punctuation and whitespace, keeping a closing bracket that is balanced
    inside the identifier (``10.1016/s0140-6736(20)30183-5`` style DOIs may end in one)."""
    while s:
        last = s[-1]
        unbalanced = last in _CLOSERS and s.count(last) > s.count(_CLOSERS[last])
        if not (last.isspace() or last in _TRAILING) or (last in _CLOSERS and not unbalanced):
            break
        s = s[:-1]
    return s


def is_doi(s: str) -> bool:
    """``10.NNNN/suffix`` with a printable suffix and no ``.``/``..`` segment.

    A control or format character (ESC, U+202E) cannot be typed into a resolver and would
    travel raw into hovers, terminals and an "Add DOI" edit; a dot segment would climb out of
    an API path. Neither can name a work, whatever the file or an API says."""
    return bool(_DOI.fullmatch(s)) and s.isprintable() and not has_dot_segment(s)


_SHORT_DOI = re.compile(r"10/[0-9a-z]+", re.I)


def is_short_doi(raw: str) -> bool:
    """A shortDOI (``10/ggd754``): a handle doi.org resolves to a full DOI. It is no invalid
    DOI; the full DOI it stands for is what is looked up."""
    return bool(_SHORT_DOI.fullmatch(_bare_doi(raw)))


def normalize_doi(raw: str) -> str | None:
    """The DOI in lowercase without prefixes, or ``None`` when it is not ``10.NNNN/…``."""
    s = _bare_doi(raw).lower()
    return s if is_doi(s) else None


def _bare_doi(raw: str) -> str:
    """What a field gives as a DOI, without prefixes, in its own letter case."""
    s = unescape_latex_chars(raw).strip().strip("{}").strip()
    s = _DOI_PREFIXES.sub("", s)
    return _strip_trailing(unquote(s).strip())


def is_placeholder(raw: str) -> bool:
    """A stand-in for an identifier still to be filled in (``arXiv:2402.XXXX``,
    ``24XX.XXXXX``, ``10.xxxx/…``, ``TODO``): never looked up (PLACEHOLDER_IDENTIFIER)."""
    value = _DOI_PREFIXES.sub("", unescape_latex_chars(raw).strip().strip("{}").strip())
    return bool(_PLACEHOLDER.search(value))


def doi_prefix(doi: str) -> str:
    """``10.1234`` for ``10.1234/abc``: the key doi.org's ``/doiRA/`` answers per."""
    return doi.split("/", 1)[0]


def _split_arxiv(raw: str) -> tuple[str, str | None] | None:
    """(base id, version) of a normalized arXiv id, or ``None`` when it is malformed."""
    s = _ARXIV_PREFIX.sub("", unescape_latex_chars(raw).strip())
    s = _strip_trailing(s)
    if s.lower().endswith(".pdf"):
        s = s[:-4]
    if m := _ARXIV_NEW.fullmatch(s):
        yy, mm, number, version = m.groups()
        expected = 5 if (int(yy), int(mm)) >= _FIVE_DIGIT_START else 4
        if len(number) != expected:
            return None
        return f"{yy}{mm}.{number}", version
    if m := _ARXIV_OLD.fullmatch(s):
        archive, subject, yy, mm, number, version = m.groups()
        subject = subject.upper() if subject else ""
        return f"{archive.lower()}{subject}/{yy}{mm}{number}", version and version.lower()
    return None


def normalize_arxiv(raw: str) -> str | None:
    """The arXiv id (with its version, if one was cited), or ``None`` when it is malformed.

    New style ``YYMM.NNNNN`` (four digits after the dot before 2015), old style
    ``archive(.XX)/YYMMNNN``; ``arXiv:`` and ``arxiv.org/abs/`` prefixes are dropped.
    """
    parts = _split_arxiv(raw)
    if parts is None:
        return None
    base, version = parts
    return base + (version or "")


def _arxiv_month(arxiv_id: str) -> tuple[int, int, bool]:
    """(year, month, new_style) encoded in an arXiv id."""
    if m := _ARXIV_NEW.match(arxiv_id):
        return 2000 + int(m.group(1)), int(m.group(2)), True
    m = _ARXIV_OLD.match(arxiv_id)
    assert m is not None, arxiv_id
    yy = int(m.group(3))
    return (1900 + yy if yy >= 91 else 2000 + yy), int(m.group(4)), False


def arxiv_date_impossible(arxiv_id: str, today: date) -> bool:
    """True when no arXiv id can carry this date: month 00 or 13+, a month after ``today``,
    or a month outside the years its numbering scheme was in use."""
    year, month, new_style = _arxiv_month(arxiv_id)
    if not 1 <= month <= 12 or (year, month) > (today.year, today.month):
        return True
    if new_style:
        return (year % 100, month) < _NEW_STYLE_START
    first, last = _OLD_STYLE_RANGE
    return not first <= (year, month) <= last


def arxiv_doi(arxiv_id: str) -> str:
    """The DOI arXiv registers (with DataCite) for an unversioned id."""
    return f"10.48550/arxiv.{arxiv_id}".lower()


def arxiv_from_doi(doi: str) -> str | None:
    """The arXiv id inside ``10.48550/arXiv.ID`` (version kept), else ``None``."""
    m = _ARXIV_DOI.match(doi.strip())
    return normalize_arxiv(m.group(1)) if m else None


def agency_resolver(agency: str | None) -> str:
    """The resolver authoritative for DOIs of a registration agency (routing)."""
    name = (agency or "").strip().casefold()
    if name == "crossref":
        return "crossref"
    if name == "datacite":
        return "datacite"
    if name in ("istic", "cnki"):
        return "chinese_literature"
    return "doi_registry"


@dataclass(frozen=True)
class Identifier:
    """A normalized identifier and the reference field it was read from (for diagnostics)."""

    kind: IdentifierKind
    value: str
    """DOI in lowercase; arXiv id without its version."""
    field: str
    """The field name as written in the reference (``doi``, ``DOI``, ``eprint``, ``url``…)."""
    raw: str
    version: str | None = None
    """``v2`` when a versioned arXiv id was cited."""
    impossible: bool = False
    """An arXiv id whose date cannot exist: refuted without a lookup (ARXIV_ID_REFUTED)."""
    short: str | None = None
    """The shortDOI the reference cites, when this full DOI is what doi.org resolved it to."""

    @property
    def shown(self) -> str:
        """The identifier as the reference cites it, for people: a DOI in the letter case it
        was written in (``10.1002/JOR.1100150407``); ``value`` is what is compared."""
        if self.kind == "doi" and (cited := _bare_doi(self.raw)).lower() == self.value:
            return cited
        return self.value

    @property
    def cited(self) -> str:
        """``shown``, and for a resolved shortDOI both forms (``10/ggd754 = 10.1038/…``): what
        the hover and the report say the reference cites."""
        return f"{self.short} = {self.value}" if self.short is not None else self.shown

    def resolved(self, doi: str) -> Identifier:
        """This shortDOI as the full DOI doi.org resolved it to."""
        return Identifier("doi", doi, self.field, self.raw, short=self.value)


@dataclass(frozen=True)
class IdentifierProblem:
    field: str
    code: str
    """INVALID_IDENTIFIER (warning), PLACEHOLDER_IDENTIFIER (warning) or ARXIV_ID_REFUTED."""
    message: str


@dataclass(frozen=True)
class ReferenceIds:
    doi: Identifier | None = None
    arxiv: Identifier | None = None
    problems: tuple[IdentifierProblem, ...] = ()
    short_doi: Identifier | None = None
    """A cited shortDOI (``10/ggd754``, lowercase) while ``doi`` is None: resolving it through
    doi.org's Handle API gives the DOI to look up."""

    @property
    def any(self) -> bool:
        return self.doi is not None or self.arxiv is not None or self.short_doi is not None


_ARXIV_TEXT_FIELDS = ("journal", "journaltitle", "howpublished", "note", "container-title")
_ARXIV_FIELDS = ("arxiv", "arxivid", "arxiv_id")


def _by_folded_name(fields: dict[str, Field]) -> dict[str, Field]:
    """The fields by casefolded name, the first of each name kept. Lowercase ASCII names (a
    BibTeX entry's all are) are their own casefolds: then ``fields`` is that already."""
    names = "".join(fields)
    if names.isascii() and names == names.lower():
        return fields
    folded: dict[str, Field] = {}
    for name, f in fields.items():
        folded.setdefault(name.casefold(), f)
    return folded


class _Reader:
    """Collects identifiers and problems from one reference's fields, case-insensitively."""

    def __init__(self, ref: Reference, today: date) -> None:
        self.fields = _by_folded_name(ref.fields)
        self.today = today
        self.problems: list[IdentifierProblem] = []
        self.short_doi: Identifier | None = None

    def invalid(self, f: Field, what: str, raw: str | None = None) -> None:
        value = (raw if raw is not None else f.value).strip()
        if is_placeholder(value):
            self.problems.append(IdentifierProblem(
                f.name, "PLACEHOLDER_IDENTIFIER",
                f"{what} {value!r} is a placeholder: the real "
                f"{'arXiv id' if 'arXiv' in what else 'DOI'} is missing "
                "(fill it in, or remove the field)"))
            return
        self.problems.append(
            IdentifierProblem(
                f.name, "INVALID_IDENTIFIER", f"{what} {f.value.strip()!r} is not valid"
            )
        )

    def arxiv(self, f: Field, raw: str) -> Identifier | None:
        parts = _split_arxiv(raw)
        if parts is None:
            self.invalid(f, "arXiv id", raw)
            return None
        base, version = parts
        impossible = arxiv_date_impossible(base, self.today)
        if impossible:
            self.problems.append(
                IdentifierProblem(
                    f.name,
                    "ARXIV_ID_REFUTED",
                    f"arXiv id {base} does not exist: its date (YYMM) is impossible",
                )
            )
        return Identifier("arxiv", base, f.name, raw, version, impossible)

    def read_doi(self) -> Identifier | None:
        if (f := self.fields.get("doi")) is not None and f.value.strip():
            doi = None if is_placeholder(f.value) else normalize_doi(f.value)
            if doi is not None:
                return Identifier("doi", doi, f.name, f.value)
            if not self.short(f, f.value):
                self.invalid(f, "DOI")
        if (f := self.fields.get("url")) is not None and (m := _DOI_URL.search(f.value)):
            doi = None if is_placeholder(m.group(1)) else normalize_doi(m.group(1))
            if doi is not None:
                return Identifier("doi", doi, f.name, f.value)
            if not self.short(f, m.group(1)):
                self.invalid(f, "DOI in URL", m.group(1))
        return None

    def short(self, f: Field, raw: str) -> bool:
        """Keep the first shortDOI cited (``10/ggd754``); whether ``raw`` is one."""
        if not is_short_doi(raw):
            return False
        if self.short_doi is None:
            self.short_doi = Identifier("short_doi", _bare_doi(raw).lower(), f.name, f.value)
        return True

    def read_arxiv(self) -> Identifier | None:
        if (f := self.fields.get("eprint")) is not None and f.value.strip():
            prefix = self.fields.get("archiveprefix") or self.fields.get("eprinttype")
            if prefix is not None and prefix.value.strip().casefold() == "arxiv":
                return self.arxiv(f, f.value)
            if prefix is None and (_split_arxiv(f.value) is not None
                                   or is_placeholder(f.value)):
                return self.arxiv(f, f.value)
        for name in _ARXIV_FIELDS:
            if (f := self.fields.get(name)) is not None and f.value.strip():
                return self.arxiv(f, f.value)
        for name in _ARXIV_TEXT_FIELDS:
            if (f := self.fields.get(name)) is not None and (m := _ARXIV_IN_TEXT.search(f.value)):
                return self.arxiv(f, m.group(1))
        if (f := self.fields.get("url")) is not None and (m := _ARXIV_URL.search(f.value)):
            return self.arxiv(f, m.group(1))
        return None


_REMEMBERED: weakref.WeakKeyDictionary[Reference, tuple[date, ReferenceIds]] = (
    weakref.WeakKeyDictionary()
)


def identifiers_of(ref: Reference, today: date | None = None) -> ReferenceIds:
    """The DOI and arXiv id a reference cites, with the problems found reading them.

    Remembered per entry object and day: the parser keeps an unchanged entry as the same
    object, so the checks, the identity and the resolver read each entry once."""
    today = today or date.today()
    known = _REMEMBERED.get(ref)
    if known is None or known[0] != today:
        known = _REMEMBERED[ref] = (today, _read_identifiers(ref, today))
    return known[1]


def _read_identifiers(ref: Reference, today: date) -> ReferenceIds:
    reader = _Reader(ref, today)
    doi = reader.read_doi()
    arxiv = reader.read_arxiv()
    if doi is not None and (m := _ARXIV_DOI.match(doi.value)) is not None:
        parts = _split_arxiv(m.group(1))
        source = reader.fields[doi.field.casefold()]
        if parts is None:
            reader.invalid(source, "arXiv DOI", m.group(1))
            doi = None
        else:
            base, version = parts
            if version:
                reader.problems.append(
                    IdentifierProblem(
                        doi.field,
                        "INVALID_IDENTIFIER",
                        f"arXiv DOIs carry no version: {doi.value} is checked as "
                        f"{arxiv_doi(base)} and arXiv id {base}{version}",
                    )
                )
                doi = Identifier("doi", arxiv_doi(base), doi.field, doi.raw)
            if arxiv is None:
                arxiv = reader.arxiv(source, m.group(1))
    return ReferenceIds(doi, arxiv, tuple(reader.problems),
                        reader.short_doi if doi is None else None)


_DAY: list = [0.0, None]
"""When ``_today`` last asked the clock, and its answer."""


def _today() -> date:
    """Today, asking the clock at most once a minute (it is read for every entry)."""
    now = time.monotonic()
    if _DAY[1] is None or now - _DAY[0] > 60:
        _DAY[:] = [now, date.today()]
    return _DAY[1]


def reference_ids(ref: Reference) -> ReferenceIds:
    """``identifiers_of(ref)`` for today, without asking the clock for every entry."""
    return identifiers_of(ref, _today())
