"""Crossref REST API: ``/works/{doi}``, title search and DOI batches, parsed into Records.

Crossref is also where retraction notices live: ``updated-by`` on a retracted work and
``update-to`` on the notice itself (retraction check).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from citelsp import links
from citelsp.config import Settings
from citelsp.resolution import records as r
from citelsp.resolution import terms
from citelsp.resolution.http import HttpClient
from citelsp.resolution.outcome import Found, NotFound, Record, Retraction, Unreachable

SOURCE = "crossref"
RETRACTION_TYPES = frozenset({"retraction", "partial_retraction", "withdrawal", "removal"})
"""Crossmark update types that take a work back; corrections and new versions do not."""
YEAR_FIELDS = ("issued", "published-print", "published-online", "published")
"""Publication dates; ``created``, ``deposited`` and ``indexed`` are deposit dates (a backfile
article is deposited decades after print) and never a year of the work."""


class CrossrefClient:
    """Asks api.crossref.org; every method answers, none raises."""

    def __init__(self, http: HttpClient, settings: Settings) -> None:
        self._http = http
        self._settings = settings

    async def by_doi(self, doi: str) -> Found | NotFound | Unreachable:
        """``GET /works/{doi}``; Crossref's 404 (text "Resource not found.") is ``NotFound``."""
        response = await self._http.get(SOURCE, f"/works/{links.quote_path(doi)}")
        if isinstance(response, Unreachable):
            return response
        if missing := r.not_found(SOURCE, response):
            return missing
        return r.parse_found(SOURCE, response, lambda body: (parse_work(_message(body, "work")),))

    async def search_title(self, title: str, rows: int = 5) -> Found | Unreachable:
        """``GET /works?query.title=…&rows=5``: candidates, best first (possibly none)."""
        response = await self._http.get(
            SOURCE, "/works", params={"query.title": title, "rows": str(rows)},
            kind=terms.SEARCH)
        if isinstance(response, Unreachable):
            return response
        return r.parse_found(SOURCE, response, _work_list)

    async def by_dois(self, dois: Sequence[str]) -> dict[str, Found | NotFound] | Unreachable:
        """Several DOIs in one ``GET /works?filter=doi:a,doi:b`` (``rows`` to match); keys are
        the DOIs as given. A DOI absent from the list is what ``/works/{doi}`` answers 404.
        A DOI with a comma cannot be a filter value (``batchable``)."""
        params = {"filter": ",".join(f"doi:{d}" for d in dois), "rows": str(len(dois))}
        response = await self._http.get(SOURCE, "/works", params=params, urgent=True,
                                        kind=terms.LIST)
        return r.doi_batch(SOURCE, response, _work_list, dois)


def batchable(doi: str) -> bool:
    """Whether ``doi`` can be one value of a ``filter=doi:…`` list."""
    return "," not in doi


def _message(body: Any, message_type: str) -> dict:
    envelope = r.mapping(body, "body")
    if envelope.get("message-type") != message_type:
        raise r.BodyError(f"message-type is {envelope.get('message-type')!r}, not {message_type}")
    return r.mapping(envelope.get("message"), "message")


def _work_list(body: Any) -> list[Record]:
    message = _message(body, "work-list")
    return [parse_work(r.mapping(item, "item")) for item in r.items(message.get("items"), "items")]


def parse_work(work: dict) -> Record:
    """One Crossref work (the ``message`` of ``/works/{doi}`` or an item of a work list)."""
    doi = r.doi(work.get("DOI"))
    if not doi:
        raise r.BodyError("work without a DOI")
    titles = r.clean_titles(work.get("title")) + r.clean_titles(work.get("original-title"))
    subtitles = r.clean_titles(work.get("subtitle"))
    venues = r.shown_strings(work.get("container-title"))
    venue = venues[0] if venues else None
    work_type = r.text(work.get("type"))
    return Record(
        source=SOURCE,
        title=titles[0] if titles else None,
        titles=r.title_variants(titles, subtitles),
        short_titles=r.main_titles(titles, r.clean_titles(work.get("short-title"))),
        authors=r.people(work.get("author"), _author),
        years=r.unique(r.date_parts_year(work.get(name)) for name in YEAR_FIELDS),
        venue=venue,
        venue_aliases=r.unique(
            [*venues, *r.shown_strings(work.get("short-container-title"))], besides=venue
        ),
        issns=_issns(work),
        volume=r.text(work.get("volume")),
        issue=r.text(work.get("issue")),
        first_page=r.first_page(work.get("page")),
        article_number=r.text(work.get("article-number")),
        doi=doi,
        arxiv_id=r.arxiv_id_from_doi(doi),
        source_id=doi,
        work_type=work_type,
        is_preprint=r.is_preprint(work_type, [venue], doi),
        retractions=_retractions(work, doi),
        url=links.doi_url(doi) if doi else None,
    )


def _author(entry: Any):
    entry = r.mapping(entry, "author")
    if entry.get("family"):
        return r.person(entry["family"], entry.get("given"))
    return r.person(entry.get("name"), literal=True)


def _issns(work: dict) -> tuple[str, ...]:
    typed = [
        r.text(r.mapping(t, "issn-type").get("value"))
        for t in r.items(work.get("issn-type"), "issn-type")
    ]
    return r.unique([*r.strings(work.get("ISSN")), *typed])


def _retractions(work: dict, doi: str) -> tuple[Retraction, ...]:
    """``updated-by`` retractions of this work, and ``update-to`` when this work is the notice.

    A notice that retracts *another* DOI gets the kind ``<type>_notice``: the cited DOI is then
    the notice itself, not the retracted work.
    """
    found = []
    for entry in r.items(work.get("updated-by"), "updated-by"):
        entry = r.mapping(entry, "updated-by entry")
        kind = r.text(entry.get("type"))
        if kind in RETRACTION_TYPES:
            notice = r.doi(entry.get("DOI"))
            found.append(Retraction(SOURCE, notice, r.date_parts_iso(entry.get("updated")), kind))
    for entry in r.items(work.get("update-to"), "update-to"):
        entry = r.mapping(entry, "update-to entry")
        kind = r.text(entry.get("type"))
        if kind in RETRACTION_TYPES:
            target = r.doi(entry.get("DOI"))
            kind = kind if target == doi else f"{kind}_notice"
            found.append(Retraction(SOURCE, doi, r.date_parts_iso(entry.get("updated")), kind))
    return tuple(found)
