"""DBLP's publication search (``/search/publ/api?q=…&format=json&h=5``), parsed into Records.

DBLP is free and needs no key; it covers computer science, where invented citations to
conference papers cluster. Its JSON is a rendering of XML: a list of one element comes as the
element itself (``hit``, ``author``, ``venue``, ``ee``), an author is a string or an object with
``text``, no hit means no ``hit`` at all. DBLP ends every title with a period and tells
homonymous authors apart with a four-digit number ("Wei Wang 0001"); both are removed here.
Its limits: "one or two seconds between two consecutive requests", and an empty 429 with
``Retry-After`` beyond that (https://dblp.org/faq/1474706.html).
"""

from __future__ import annotations

import re
from typing import Any

from citelsp import links
from citelsp.config import Settings
from citelsp.documents.model import Person
from citelsp.resolution import records as r
from citelsp.resolution import terms
from citelsp.resolution.http import HttpClient
from citelsp.resolution.outcome import Found, Record, Unreachable

SOURCE = "dblp"
PATH = "/search/publ/api"
PREPRINT_TYPES = frozenset({"Informal and Other Publications", "Informal Publications"})
"""DBLP's type for CoRR (arXiv) and other unrefereed publications."""
_HOMONYM = re.compile(r"\s+\d{4}$")
_ARXIV_EE = re.compile(r"^https?://arxiv\.org/abs/(.+?)(?:v\d+)?$", re.IGNORECASE)


class DblpClient:
    """Asks dblp.org's search API; every method answers, none raises."""

    def __init__(self, http: HttpClient, settings: Settings) -> None:
        self._http = http
        self._settings = settings

    async def search_title(self, title: str, hits: int = 5) -> Found | Unreachable:
        """``GET /search/publ/api?q=…&format=json&h=5``: the hits, possibly none."""
        params = {"q": title, "format": "json", "h": str(hits)}
        response = await self._http.get(SOURCE, PATH, params=params, kind=terms.SEARCH)
        if isinstance(response, Unreachable):
            return response
        return r.parse_found(SOURCE, response, _hits)


def _hits(body: Any) -> list[Record]:
    result = r.mapping(r.mapping(body, "body").get("result"), "result")
    hits = r.mapping(result.get("hits"), "hits")
    return [parse_info(r.mapping(r.mapping(hit, "hit").get("info"), "info"))
            for hit in _listed(hits.get("hit"))]


def _listed(value: Any) -> list:
    """DBLP's JSON gives a list of one as the element itself, and no list as nothing."""
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def parse_info(info: dict) -> Record:
    """One hit's ``info``: a DBLP record."""
    key = r.text(info.get("key"))
    if not key:
        raise r.BodyError("hit without a DBLP key")
    title = _title(info.get("title"))
    venues = [v for v in (r.text(v) for v in _listed(info.get("venue"))) if v]
    work_type = r.text(info.get("type"))
    doi = r.doi(info.get("doi"))
    ees = [e for e in (r.text(e) for e in _listed(info.get("ee"))) if e]
    arxiv_id = r.arxiv_id_from_doi(doi) or next(
        (m.group(1) for e in ees if (m := _ARXIV_EE.match(e))), None)
    authors = r.mapping(info.get("authors") or {}, "authors")
    return Record(
        source=SOURCE,
        title=title,
        titles=r.title_variants([title] if title else []),
        short_titles=r.main_titles([title] if title else []),
        authors=tuple(p for p in map(_author, _listed(authors.get("author"))) if p),
        years=r.unique([r.year(info.get("year"))]),
        venue=venues[0] if venues else None,
        venue_aliases=r.unique(venues, besides=venues[0] if venues else None),
        volume=r.text(info.get("volume")),
        issue=r.text(info.get("number")),
        first_page=r.first_page(info.get("pages")),
        doi=doi,
        arxiv_id=arxiv_id,
        source_id=key,
        work_type=work_type,
        is_preprint=work_type in PREPRINT_TYPES or arxiv_id is not None
        or r.is_preprint(None, venues, doi),
        url=links.allowed(f"https://dblp.org/rec/{links.quote_path(key)}"),
    )


def _title(value: Any) -> str | None:
    """The title without the period DBLP ends every title with ("Foo." but not "Foo...")."""
    raw = r.text(value)
    if raw and raw.endswith(".") and not raw.endswith(".."):
        raw = raw[:-1]
    return r.clean_title(raw)


def _author(entry: Any) -> Person | None:
    name = r.text(entry.get("text") if isinstance(entry, dict) else entry)
    return r.person_from_name(_HOMONYM.sub("", name)) if name else None
