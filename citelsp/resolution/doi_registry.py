"""The DOI system itself: registration agency (doiRA), Handle existence, CSL content negotiation.

doiRA only routes; Handle ``responseCode`` decides whether a DOI exists; CSL
content negotiation gives a title for agencies no index covers. The shapes are checked strictly
(seed 001): anything unexpected is ``Unreachable``, never an answer.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import Any

from citelsp import links
from citelsp.config import Settings
from citelsp.resolution import records as r
from citelsp.resolution import terms
from citelsp.resolution.http import HttpClient
from citelsp.resolution.outcome import Agency, Alias, Found, Handle, NotFound, Record, Unreachable

SOURCE = "doi_registry"
CSL_JSON = "application/vnd.citationstyles.csl+json"
UNKNOWN_PREFIX_STATUS = "DOI does not exist"
HANDLE_EXISTS, HANDLE_MISSING, HANDLE_VALUES_MISSING = 1, 100, 200
YEAR_FIELDS = ("issued", "published-print", "published-online")


class DoiRegistryClient:
    """Asks doi.org and hdl.handle.net; every method answers, none raises."""

    def __init__(self, http: HttpClient, settings: Settings) -> None:
        self._http = http
        self._settings = settings

    async def agency(self, prefix: str) -> Agency | Unreachable:
        """``GET /doiRA/{prefix}`` → ``[{"DOI": prefix, "RA": "Crossref"}]``.

        An unknown prefix is ``Agency(None)``: doi.org answers it with a documented status row.
        """
        rows = await self._rows([prefix])
        if isinstance(rows, Unreachable):
            return rows
        if len(rows) != 1 or not isinstance(rows[0], dict):
            return Unreachable(f"doiRA answered {len(rows)} rows for {prefix}")
        echo = rows[0].get("DOI")
        if not isinstance(echo, str) or echo.strip().lower() != prefix.lower():
            return Unreachable(f"doiRA answered for another prefix than {prefix}")
        return _agency(rows[0], prefix)

    async def agencies(self, prefixes: Sequence[str]
                       ) -> dict[str, Agency | Unreachable] | Unreachable:
        """Several prefixes in one ``GET /doiRA/a,b`` (the DOI Handbook's comma-separated list):
        one row per prefix, matched by its echo; a list that is not one row per prefix asked
        is ``Unreachable`` as a whole, so the caller asks one by one."""
        rows = await self._rows(prefixes)
        if isinstance(rows, Unreachable):
            return rows
        wanted = {p.lower(): p for p in prefixes}
        found: dict[str, Agency | Unreachable] = {}
        for row in rows:
            echo = row.get("DOI") if isinstance(row, dict) else None
            key = echo.strip().lower() if isinstance(echo, str) else None
            if key not in wanted or wanted[key] in found:
                return Unreachable("doiRA answered the prefix list with rows not asked for")
            found[wanted[key]] = _agency(row, wanted[key])
        if len(found) != len(wanted):
            return Unreachable(f"doiRA answered {len(found)} rows for {len(wanted)} prefixes")
        return found

    async def _rows(self, prefixes: Sequence[str]) -> list | Unreachable:
        joined = ",".join(links.quote_path(p) for p in prefixes)
        several = len(prefixes) > 1
        response = await self._http.get(SOURCE, f"/doiRA/{joined}", urgent=several,
                                        kind=terms.LIST if several else terms.SINGLE)
        if isinstance(response, Unreachable):
            return response
        if response.status != 200:
            return r.unexpected(SOURCE, response)
        try:
            return r.items(r.json_of(response), "doiRA body")
        except r.BodyError as exc:
            return r.malformed(SOURCE, exc)

    async def handle(self, doi: str) -> Handle | Unreachable:
        """``GET /api/handles/{doi}``: ``responseCode`` 1 or 100, as exact JSON integers.

        The proxy answers a missing handle with HTTP 404 and ``{"responseCode": 100, …}``.
        """
        body = await self._handle_record(doi)
        if isinstance(body, Unreachable):
            return body
        return Handle(body["responseCode"] == HANDLE_EXISTS)

    async def alias(self, short_doi: str) -> Alias | Handle | Unreachable:
        """The full DOI a shortDOI (``10/ggd754``) stands for: ``GET /api/handles/10/ggd754
        ?type=HS_ALIAS`` answers ``responseCode`` 1 with the ``HS_ALIAS`` value (the DOI
        Handbook's REST API response format). ``Handle(False)`` only for the authoritative "no
        such handle" (HTTP 404 with ``responseCode`` 100); a handle without an alias value
        (``responseCode`` 200, "values not found") or with one that is no DOI is
        ``Unreachable``: no verdict either way."""
        body = await self._handle_record(short_doi, {"type": "HS_ALIAS"})
        if isinstance(body, Unreachable):
            return body
        code = body["responseCode"]
        if code == HANDLE_MISSING:
            return Handle(False) if body["http_status"] == 404 else Unreachable(
                "Handle proxy answered responseCode 100 without HTTP 404")
        if code == HANDLE_VALUES_MISSING:
            return Unreachable(f"the handle {short_doi} holds no DOI alias")
        values = body.get("values")
        data = [v.get("data") for v in values if isinstance(v, dict)
                and v.get("type") == "HS_ALIAS"] if isinstance(values, list) else []
        dois = {d for a in data if isinstance(a, dict) and (d := r.doi(a.get("value")))}
        if len(dois) != 1:
            return Unreachable(f"the handle {short_doi} names {len(dois)} DOIs as its alias")
        return Alias(dois.pop())

    async def _handle_record(self, handle: str, params: dict[str, str] | None = None
                             ) -> dict | Unreachable:
        """The Handle proxy's JSON object for ``handle`` with an exact integer
        ``responseCode`` (1 only with HTTP 200; 100, or 200 "values not found", with HTTP 200
        or 404) and ``http_status`` added; anything else is Unreachable."""
        response = await self._http.get("handle", f"/api/handles/{links.quote_path(handle)}",
                                        params=params)
        if isinstance(response, Unreachable):
            return response
        if response.status not in (200, 404):
            return Unreachable(f"Handle proxy answered HTTP {response.status}")
        try:
            body = r.mapping(r.json_of(response), "Handle body")
        except r.BodyError as exc:
            return r.malformed("Handle", exc)
        code = body.get("responseCode")
        known = (HANDLE_EXISTS, HANDLE_MISSING) if params is None else (
            HANDLE_EXISTS, HANDLE_MISSING, HANDLE_VALUES_MISSING)
        if type(code) is not int or code not in known:
            return Unreachable(f"Handle proxy answered an unknown responseCode {code!r:.40}")
        if code == HANDLE_EXISTS and response.status != 200:
            return Unreachable("Handle proxy answered responseCode 1 with an error status")
        echo = body.get("handle")
        if echo is not None and (not isinstance(echo, str) or echo.lower() != handle.lower()):
            return Unreachable(f"Handle proxy answered for another handle than {handle}")
        return {**body, "http_status": response.status}

    async def csl(self, doi: str) -> Found | NotFound | Unreachable:
        """``GET https://doi.org/{doi}``, ``Accept: CSL-JSON``; the HTTP layer follows redirects."""
        response = await self._http.get(SOURCE, f"/{links.quote_path(doi)}", accept=CSL_JSON)
        if isinstance(response, Unreachable):
            return response
        if missing := r.not_found(SOURCE, response):
            return missing
        if not 200 <= response.status < 300:
            return r.unexpected(SOURCE, response)
        if "json" not in response.content_type.lower():
            return Unreachable(f"content negotiation gave {response.content_type[:60]!r}, not CSL")
        try:
            record = parse_csl(r.mapping(r.json_of(response), "CSL item"))
        except r.PARSE_ERRORS as exc:
            return r.malformed("CSL", exc)
        if record.doi is not None and record.doi != doi.lower():
            return Unreachable(f"CSL item is for {record.doi}, not {doi}")
        return Found((record,))


def _agency(row: dict, prefix: str) -> Agency | Unreachable:
    """One doiRA row: the agency, ``Agency(None)`` for the documented unknown-prefix status."""
    if "RA" not in row:
        if row.get("status") == UNKNOWN_PREFIX_STATUS:
            return Agency(None)
        return Unreachable(f"doiRA row for {prefix} has neither RA nor the documented status")
    agency = row["RA"]
    if not isinstance(agency, str) or not agency.strip() or _has_control(agency):
        return Unreachable(f"doiRA gave a malformed RA for {prefix}")
    return Agency(agency.strip())


def parse_csl(item: dict) -> Record:
    """One CSL-JSON item; ``title`` and ``container-title`` may be strings or lists."""
    titles = r.clean_titles(item.get("title")) + r.clean_titles(item.get("original-title"))
    venues = r.shown_strings(item.get("container-title"))
    venue = venues[0] if venues else None
    echo = item.get("DOI")
    doi = r.doi(echo)
    if echo is not None and not doi:
        raise r.BodyError("malformed DOI echo")
    return Record(
        source=SOURCE,
        title=titles[0] if titles else None,
        titles=r.title_variants(titles, r.clean_titles(item.get("subtitle"))),
        short_titles=r.main_titles(titles, r.clean_titles(item.get("short-title"))),
        authors=r.people(item.get("author"), _author),
        years=r.unique(r.date_parts_year(item.get(k)) for k in YEAR_FIELDS),
        venue=venue,
        venue_aliases=r.unique(
            [*venues, *r.shown_strings(item.get("container-title-short"))], besides=venue
        ),
        issns=r.unique(r.strings(item.get("ISSN"))),
        volume=r.text(item.get("volume")),
        issue=r.text(item.get("issue")),
        first_page=r.first_page(item.get("page")),
        doi=doi,
        arxiv_id=r.arxiv_id_from_doi(doi),
        source_id=doi,
        work_type=r.text(item.get("type")),
        is_preprint=r.is_preprint(r.text(item.get("type")), [venue], doi)
        or item.get("subtype") == "preprint",
        url=links.doi_url(doi) if doi else links.allowed(r.text(item.get("URL"))),
    )


def _author(entry: Any):
    """CSL names; ISTIC often puts the whole name in ``given`` (display only, seed 001)."""
    entry = r.mapping(entry, "author")
    if entry.get("literal"):
        return r.person(entry["literal"], literal=True)
    if entry.get("family"):
        return r.person(entry["family"], entry.get("given"))
    return r.person(entry.get("given") or entry.get("name"))


def _has_control(value: str) -> bool:
    return any(unicodedata.category(c).startswith("C") for c in value)
