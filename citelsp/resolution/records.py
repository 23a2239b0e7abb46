"""What every source parser shares: reading a response body and turning fields into Record parts.

Each source names the same facts differently (``date-parts``, ``publication_year``,
``publicationYear``); these helpers give one meaning to titles, names, years, DOIs and pages so
that the parsers stay short. A body that does not have the documented shape is ``Unreachable``,
never an empty answer: a proxy's page or a changed API must not read as "no such work".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from citelsp.documents.model import Person
from citelsp.documents.text import clean_markup, collapse_whitespace, plain_title
from citelsp.documents.works import is_preprint_doi, is_preprint_venue
from citelsp.resolution.http import HttpResponse
from citelsp.resolution.identifiers import is_doi
from citelsp.resolution.outcome import Found, NotFound, Record, Unreachable

PARSER_VERSION = "5"
"""The version of what the record parsers give. Bump it with any change to a parser's output:
the answer cache (``CACHE_VERSION``) and local indexes store parsed Records, and are keyed by
it so that records parsed by older code are never read as today's."""
ARXIV_DOI_PREFIX = "10.48550/arxiv."
_DOI_URL = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi:)", re.IGNORECASE)
_YEAR = re.compile(r"^([0-9]{4})(?![0-9])")
_MAIN_TITLE = re.compile(r"\s*:\s+|\s*:$|\s+-\s+")
NAME_PARTICLES = frozenset(
    ("van", "von", "der", "den", "de", "del", "della", "da", "di", "du", "dos", "das", "le", "la")
    + ("ter", "ten", "bin", "al", "el", "st")
)
_SUFFIXES = frozenset({"jr", "jr.", "sr", "sr.", "ii", "iii", "iv"})
_ORGANIZATION_WORDS = frozenset(
    ("consortium", "consortia", "collaboration", "group", "team", "investigators", "committee",
     "network", "initiative", "alliance", "society", "association", "council", "project",
     "programme", "program", "organization", "organisation", "institute", "foundation",
     "university", "laboratory", "collective", "partnership", "panel", "taskforce")
)
"""Last words of a name that is an organization's, not a person's (``ODIN Consortium``,
``The ATLAS Collaboration``, ``MoTrPAC Study Group``): sources that only have a display name
give consortia as if they were people."""
_FAMILY_FIRST_SCRIPT = re.compile(
    "[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u1100-\u11ff\uac00-\ud7af]")
"""Japanese, Chinese and Korean names are written family name first (``宮地 元彦``)."""
_PATRONYMIC = re.compile("[\u0400-\u04ff]+(?:ич|вна|ична)$", re.IGNORECASE)
"""A Russian (Cyrillic) patronymic: ``Кондратенко Сергей Владимирович`` is Family Given
Patronymic."""
PREPRINT_WORK_TYPES = frozenset({"posted-content", "preprint"})
"""Work types sources give preprints: Crossref ``posted-content``, OpenAlex ``preprint``,
DataCite ``Preprint`` (compared casefolded)."""


class BodyError(ValueError):
    """A body that parses but does not have the shape the source documents."""


def unexpected(source: str, response: HttpResponse) -> Unreachable:
    """An answer no parser reads (400 and other statuses the HTTP layer lets through)."""
    return Unreachable(f"{source} answered HTTP {response.status}")


def not_found(source: str, response: HttpResponse) -> NotFound | Unreachable | None:
    """``NotFound`` for a 404/410 in the source's own words ("no such record"); ``Unreachable``
    for one in anyone else's (a proxy's or a CDN's page: a correct reference once got a P1 from
    one, cached for a week); None for any other status."""
    if response.status not in (404, 410):
        return None
    detail = _OWN_NOT_FOUND.get(source, _nobody)(response)
    if detail is None:
        return Unreachable(f"{source} answered HTTP {response.status} with a body it never "
                           "sends (a proxy's or CDN's page?)")
    return NotFound(f"{source}: {detail}")


def _json_object(response: HttpResponse) -> dict:
    try:
        body = response.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _nobody(response: HttpResponse) -> str | None:
    return None


def _crossref_404(response: HttpResponse) -> str | None:
    """Crossref's ``/works/{doi}`` 404: the text "Resource not found."."""
    return f"HTTP {response.status}" if response.body.strip() == b"Resource not found." else None


def _datacite_404(response: HttpResponse) -> str | None:
    """DataCite's JSON:API error: ``{"errors": [{"status": "404", "title": …}]}``."""
    errors = _json_object(response).get("errors")
    statuses = {str(e.get("status")) for e in errors if isinstance(e, dict)} if isinstance(
        errors, list) else set()
    return f"HTTP {response.status}" if str(response.status) in statuses else None


def _openalex_404(response: HttpResponse) -> str | None:
    """OpenAlex answers an unknown DOI with its web framework's "Not Found" page (recorded)
    or a JSON error object."""
    framework_page = b"The requested URL was not found on the server." in response.body
    own = framework_page or isinstance(_json_object(response).get("error"), str)
    return f"HTTP {response.status}" if own else None


def _semantic_scholar_404(response: HttpResponse) -> str | None:
    """``{"error": "Paper with id … not found"}``; the message is kept for the hover."""
    error = _json_object(response).get("error")
    return error[:200] if isinstance(error, str) else None


def _doi_registry_404(response: HttpResponse) -> str | None:
    """doi.org's "DOI Not Found" page, or the answer of the agency its content negotiation
    redirected to (Crossref, DataCite)."""
    if b"DOI Not Found" in response.body[:4096]:
        return f"HTTP {response.status}"
    return _crossref_404(response) or _datacite_404(response)


_OWN_NOT_FOUND: dict[str, Callable[[HttpResponse], str | None]] = {
    "crossref": _crossref_404,
    "datacite": _datacite_404,
    "openalex": _openalex_404,
    "semantic_scholar": _semantic_scholar_404,
    "doi_registry": _doi_registry_404,
}
"""How each source says "no such record" (the bodies recorded under ``fixtures/api``); a source
missing here has no 404 citelsp reads as an answer."""


def json_of(response: HttpResponse) -> Any:
    """The body as JSON, or ``BodyError``."""
    try:
        return response.json()
    except ValueError as exc:
        raise BodyError(str(exc)) from None


def malformed(source: str, exc: Exception) -> Unreachable:
    return Unreachable(f"malformed {source} body ({type(exc).__name__}: {exc})"[:300])


PARSE_ERRORS = (BodyError, ValueError, TypeError, KeyError, AttributeError, IndexError)
"""What a parser may raise on a body of the wrong shape; callers turn it into ``Unreachable``."""


def parse_found(
    source: str, response: HttpResponse, read: Callable[[Any], Iterable[Record]]
) -> Found | Unreachable:
    """Records ``read`` from a 2xx JSON body; any other status or shape is ``Unreachable``."""
    if not 200 <= response.status < 300:
        return unexpected(source, response)
    try:
        return Found(tuple(read(json_of(response))))
    except PARSE_ERRORS as exc:
        return malformed(source, exc)


def doi_batch(source: str, response: HttpResponse | Unreachable,
              read: Callable[[Any], Iterable[Record]], dois: Sequence[str]
              ) -> dict[str, Found | NotFound] | Unreachable:
    """A DOI batch's answer (a list of records ``read`` from the body) by requested DOI."""
    if isinstance(response, Unreachable):
        return response
    found = parse_found(source, response, read)
    if isinstance(found, Unreachable):
        return found
    return by_requested_doi(source, dois, found.records)


def by_requested_doi(source: str, dois: Sequence[str], records: Iterable[Record]
                     ) -> dict[str, Found | NotFound] | Unreachable:
    """A DOI batch's records by the DOIs as requested: a DOI absent from the list is what the
    single lookup answers 404. A record for no requested DOI, or two for one, means the list
    is not what one lookup per DOI would give: ``Unreachable``, so the caller asks one by one."""
    wanted = {doi(d) or d.lower(): d for d in dois}
    by_doi: dict[str, Record] = {}
    for record in records:
        key = record.doi
        if key not in wanted or key in by_doi:
            return Unreachable(f"{source} batch answered a record no single lookup would give")
        by_doi[key] = record
    absent = NotFound(f"{source}: no record")
    return {d: Found((by_doi[k],)) if k in by_doi else absent for k, d in wanted.items()}


def mapping(value: Any, what: str) -> dict:
    if not isinstance(value, dict):
        raise BodyError(f"{what} is not an object")
    return value


def items(value: Any, what: str) -> list:
    """A JSON array; ``None`` (an absent optional list) reads as empty."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise BodyError(f"{what} is not a list")
    return value


def text(value: Any) -> str | None:
    """A scalar field as stripped text; lists give their first string (CSL titles do this)."""
    if type(value) is str:  # the common case first (an index build reads millions)
        return collapse_whitespace(value) or None
    if isinstance(value, list):
        value = next((v for v in value if isinstance(v, str) and v.strip()), None)
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        value = str(value)
    if not isinstance(value, str):
        raise BodyError(f"expected text, got {type(value).__name__}")
    value = collapse_whitespace(value)
    return value or None


def shown(value: Any) -> str | None:
    """A field people read (a venue, a name, a publisher) as the service means it to be
    shown: entities decoded however often escaped, inline markup dropped (``clean_markup``,
    the one decoding titles get too). Identifiers and URLs stay as ``text`` reads them."""
    raw = text(value)
    if not raw or ("&" not in raw and "<" not in raw):
        return raw
    return clean_markup(raw) or None


def strings(value: Any) -> list[str]:
    """A field that is a string or a list of strings, as non-empty strings."""
    if isinstance(value, str):
        value = [value]
    return [s for s in (text(v) for v in items(value, "list of strings")) if s]


def shown_strings(value: Any) -> list[str]:
    """``strings`` as shown (``shown``): venue lists, alternate names."""
    if isinstance(value, str):
        value = [value]
    return [s for s in (shown(v) for v in items(value, "list of strings")) if s]


def clean_title(value: Any) -> str | None:
    """A title as plain text, cleaned as the cited title is (``plain_title``: LaTeX, entities
    and markup)."""
    raw = text(value)
    if not raw:
        return None
    return plain_title(raw) or None


def clean_titles(value: Any) -> list[str]:
    """A title field that is a string or a list, each title cleaned, empty ones dropped."""
    return [t for t in (clean_title(s) for s in strings(value)) if t]


def unique(values: Iterable[Any], *, besides: Any = None) -> tuple:
    """Values in first-seen order without repeats, empties and ``besides``."""
    seen: dict[Any, None] = {}
    for value in values:
        if value is not None and value != "" and value != besides:
            seen.setdefault(value, None)
    return tuple(seen)


def title_variants(titles: Iterable[str], subtitles: Iterable[str] = ()) -> tuple[str, ...]:
    """Every title, then every ``title: subtitle`` pairing (sources do not pair them for us)."""
    titles, subtitles = list(titles), list(subtitles)
    return unique([*titles, *(f"{t}: {s}" for t in titles for s in subtitles)])


def main_titles(titles: Iterable[str], short: Iterable[str] = ()) -> tuple[str, ...]:
    """The part of each title before ``:`` or `` - ``, plus the source's short titles."""
    mains = []
    for title in titles:
        head = _MAIN_TITLE.split(title, maxsplit=1)[0].strip()
        if head and head != title:
            mains.append(head)
    return unique([*mains, *short])


def is_preprint(work_type: str | None = None, venues: Iterable[str | None] = (),
                doi: str | None = None) -> bool:
    """The record describes a preprint (arXiv, bioRxiv, SSRN, CoRR, posted content): its
    type, its venue or its DOI says so. Preprint records do not vote on the venue."""
    if work_type and work_type.casefold() in PREPRINT_WORK_TYPES:
        return True
    if doi and is_preprint_doi(doi):
        return True
    return any(v and is_preprint_venue(v) for v in venues)


def people(entries: Any, convert: Callable[[Any], Person | None]) -> tuple[Person, ...]:
    """A JSON list of names through ``convert``, nameless entries dropped."""
    return tuple(p for p in map(convert, items(entries, "names")) if p)


def person(family: Any, given: Any = None, *, literal: bool = False) -> Person | None:
    family_text = shown(family)
    if not family_text:
        return None
    return Person(family=family_text, given=shown(given) or "", literal=literal)


def person_from_name(name: Any) -> Person | None:
    """A display name as a Person: ``Given Family`` (particles kept) or ``Family, Given``;
    family name first in CJK scripts and in a Cyrillic name that ends with a patronymic; an
    organization's name (a consortium, a study group) as a literal name."""
    full = shown(name)
    if not full:
        return None
    words = full.split()
    if len(words) >= 2 and words[-1].casefold() in _ORGANIZATION_WORDS:
        return Person(family=full, literal=True)
    tokens = words
    if "," in full:
        family, _, given = (part.strip() for part in full.partition(","))
        if family and "," not in given and given.lower() not in _SUFFIXES:
            return Person(family=family, given=given)
        tokens = full.replace(",", " ").split()
    if len(tokens) >= 2 and not full.isascii() and (  # neither pattern matches ASCII
            _FAMILY_FIRST_SCRIPT.search(tokens[0]) or (
            len(tokens) == 3 and _PATRONYMIC.search(tokens[2])
            and not _PATRONYMIC.search(tokens[1]))):
        return Person(family=tokens[0], given=" ".join(tokens[1:]))
    while len(tokens) > 1 and tokens[-1].lower().rstrip(",") in _SUFFIXES:
        tokens.pop()
    start = len(tokens) - 1
    while start > 1 and tokens[start - 1].lower() in NAME_PARTICLES:
        start -= 1
    return Person(family=" ".join(tokens[start:]), given=" ".join(tokens[:start]))


def year(value: Any) -> int | None:
    """A year from an int or a date string starting with four ASCII digits."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        found = value
    elif isinstance(value, str) and (m := _YEAR.match(value.strip())):
        found = int(m.group(1))
    else:
        return None
    return found if 1000 <= found <= 2999 else None


def date_parts(value: Any) -> list[int]:
    """``{"date-parts": [[2020, 1, 30]]}`` (Crossref, CSL) as ``[2020, 1, 30]``, or ``[]``."""
    if not isinstance(value, dict):
        return []
    parts = value.get("date-parts")
    if not isinstance(parts, list) or not parts or not isinstance(parts[0], list):
        return []
    numbers = []
    for part in parts[0]:
        if isinstance(part, bool):
            break
        if isinstance(part, str) and part.isascii() and part.isdigit():
            part = int(part)
        if not isinstance(part, int):
            break
        numbers.append(part)
    return numbers


def date_parts_year(value: Any) -> int | None:
    parts = date_parts(value)
    return year(parts[0]) if parts else None


def date_parts_iso(value: Any) -> str | None:
    parts = date_parts(value)
    if not parts or year(parts[0]) is None:
        return None
    return "-".join([f"{parts[0]:04d}", *(f"{p:02d}" for p in parts[1:3])])


def doi(value: Any) -> str | None:
    """A DOI without a resolver prefix, lowercased (DOIs compare case-insensitively); ``None``
    for anything that cannot be a DOI, so that an API's control characters never reach a
    hover link or an "Add DOI" edit."""
    raw = text(value)
    if not raw:
        return None
    bare = _DOI_URL.sub("", raw).strip().lower()
    return bare if is_doi(bare) else None


def arxiv_id_from_doi(value: str | None) -> str | None:
    if value and value.lower().startswith(ARXIV_DOI_PREFIX):
        return value[len(ARXIV_DOI_PREFIX):] or None
    return None


def first_page(pages: Any) -> str | None:
    """The first page of ``"776-779"``, ``"E4832 - E4841"`` or ``"145"``."""
    raw = text(pages)
    if not raw:
        return None
    return re.split(r"\s*[-\u2010-\u2015]\s*", raw, maxsplit=1)[0] or None
