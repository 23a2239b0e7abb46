"""NCBI E-utilities for the PubMed coordinate lookup of seed 001 §4: ESearch and ESummary.

The checks are strict on purpose: an incomplete or inconsistent page must never read as a
zero-hit or an ambiguous result, and an ESummary must echo the PMID that was asked for.
Every request carries ``tool`` and the configured NCBI e-mail; without an e-mail nothing is sent.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, quote_plus

from citelsp import links
from citelsp.config import Settings
from citelsp.resolution import records as r
from citelsp.resolution.http import HttpClient, HttpResponse
from citelsp.resolution.outcome import Found, NotFound, Record, Unreachable

SOURCE = "pubmed"
ENDPOINT = "eutils"
TOOL = "citelsp"


@dataclass(frozen=True)
class SearchResult:
    """An ESearch page: the total ``count`` and the ids on this page."""

    count: int
    ids: tuple[str, ...]


@dataclass(frozen=True)
class Summary:
    """One ESummary document, as NCBI sent it (fields differ per database)."""

    uid: str
    doc: Mapping[str, Any]


def _quoted(value: str) -> str:
    """A phrase for a search field; a quote inside would end the phrase early."""
    return '"' + " ".join(value.replace('"', " ").split()) + '"'


def journal_term(journal_ta: str) -> str:
    """``"TA"[ta]``: every PubMed record of one journal (seed 001 §4b coverage)."""
    return f"{_quoted(journal_ta)}[ta]"


def coordinate_term(journal_ta: str, volume: str, first_page: str) -> str:
    """``"TA"[ta] AND vol[vi] AND page[pg]`` (seed 001 §4c)."""
    return f"{journal_term(journal_ta)} AND {volume.strip()}[vi] AND {first_page.strip()}[pg]"


def author_year_term(journal_ta: str, first_author: str, year: int) -> str:
    """``"TA"[ta] AND "Family I"[1au] AND year[dp]``: only when volume or page is missing."""
    return f"{journal_term(journal_ta)} AND {_quoted(first_author)}[1au] AND {year}[dp]"


class PubMedClient:
    """Asks eutils.ncbi.nlm.nih.gov; every method answers, none raises."""

    def __init__(self, http: HttpClient, settings: Settings) -> None:
        self._http = http
        self._settings = settings

    @property
    def has_email(self) -> bool:
        """NCBI asks every caller for an e-mail; without one the PubMed branch is skipped."""
        return bool(self._settings.ncbi_email)

    async def esearch(self, db: str, term: str, retmax: int = 20) -> SearchResult | Unreachable:
        response = await self._get("/esearch.fcgi", {"db": db, "term": term, "retmax": str(retmax)})
        if isinstance(response, Unreachable):
            return response
        try:
            return _search_result(r.json_of(response), retmax)
        except r.PARSE_ERRORS as exc:
            return r.malformed("ESearch", exc)

    async def coordinate_search(
        self, journal_ta: str, volume: str, first_page: str
    ) -> SearchResult | Unreachable:
        return await self.esearch("pubmed", coordinate_term(journal_ta, volume, first_page))

    async def esummary(self, db: str, uid: str) -> Summary | NotFound | Unreachable:
        response = await self._get("/esummary.fcgi", {"db": db, "id": uid})
        if isinstance(response, Unreachable):
            return response
        try:
            return _summary(r.json_of(response), uid)
        except r.PARSE_ERRORS as exc:
            return r.malformed("ESummary", exc)

    async def article(self, pmid: str) -> Found | NotFound | Unreachable:
        """A PubMed article as a Record (title is PubMed's, an English one for Chinese papers)."""
        summary = await self.esummary("pubmed", pmid)
        if not isinstance(summary, Summary):
            return summary
        try:
            return Found((parse_article(summary),))
        except r.PARSE_ERRORS as exc:
            return r.malformed("ESummary", exc)

    async def _get(self, path: str, params: dict[str, str]) -> HttpResponse | Unreachable:
        if not self._settings.ncbi_email:
            return Unreachable("no NCBI e-mail configured (citelsp.ncbiEmail / CITELSP_NCBI_EMAIL)")
        email = self._settings.ncbi_email
        query = {**params, "retmode": "json", "tool": TOOL, "email": email}
        response = await self._http.get(ENDPOINT, path, params=query)
        if isinstance(response, Unreachable):
            return Unreachable(_without(response.reason, email))
        if 200 <= response.status < 300:
            return response
        return r.unexpected("NCBI", response)


def _without(reason: str, email: str) -> str:
    """A refused request names its URL, whose query carries the e-mail (perhaps encoded)."""
    for form in (email, quote(email, safe=""), quote_plus(email)):
        reason = reason.replace(form, "[email]")
    return reason


def _search_result(body: Any, retmax: int) -> SearchResult:
    result = r.mapping(r.mapping(body, "body").get("esearchresult"), "esearchresult")
    if "ERROR" in result:
        raise r.BodyError(f"ESearch error: {str(result['ERROR'])[:120]}")
    count = _digits(result.get("count"), "count")
    ids = [_digits(i, "id") for i in r.items(result.get("idlist"), "idlist")]
    if result.get("retstart", "0") != "0":
        raise r.BodyError("page does not start at 0")
    if len(set(ids)) != len(ids):
        raise r.BodyError("duplicate ids")
    if len(ids) != min(int(count), retmax):
        raise r.BodyError(f"{len(ids)} ids for count {count} and retmax {retmax}")
    return SearchResult(int(count), tuple(ids))


def _summary(body: Any, uid: str) -> Summary | NotFound:
    result = r.mapping(r.mapping(body, "body").get("result"), "result")
    uids = result.get("uids")
    if uids is not None:
        uids = r.items(uids, "uids")
        if not uids:
            return NotFound(f"{SOURCE}: no summary for {uid}")
        if uids != [uid]:
            raise r.BodyError(f"summary uids {uids[:3]!r} do not echo {uid}")
    doc = result.get(uid)
    if doc is None:
        return NotFound(f"{SOURCE}: no summary for {uid}")
    doc = r.mapping(doc, "summary")
    if "error" in doc:
        return NotFound(f"{SOURCE}: {str(doc['error'])[:120]}")
    if "uid" in doc and doc["uid"] != uid:
        raise r.BodyError(f"summary uid {doc['uid']!r} does not echo {uid}")
    return Summary(uid, doc)


def parse_article(summary: Summary) -> Record:
    """A ``db=pubmed`` summary; a present ``pubdate`` must begin with a four-digit year."""
    doc = summary.doc
    pubdate = r.text(doc.get("pubdate"))
    year = r.year(pubdate) if pubdate else None
    if pubdate and year is None:
        raise r.BodyError(f"pubdate {pubdate[:20]!r} has no year")
    ids = {
        r.text(a.get("idtype")): r.text(a.get("value"))
        for a in (r.mapping(x, "articleid") for x in r.items(doc.get("articleids"), "articleids"))
    }
    title = r.clean_title(doc.get("title"))
    venue = r.shown(doc.get("source"))
    return Record(
        source=SOURCE,
        title=title,
        titles=r.title_variants([title] if title else []),
        authors=r.people(doc.get("authors"), _author),
        years=(year,) if year else (),
        venue=venue,
        venue_aliases=r.unique([r.shown(doc.get("fulljournalname"))], besides=venue),
        issns=r.unique([r.text(doc.get("issn")), r.text(doc.get("essn"))]),
        volume=r.text(doc.get("volume")),
        issue=r.text(doc.get("issue")),
        first_page=r.first_page(doc.get("pages")),
        doi=r.doi(ids.get("doi")),
        source_id=summary.uid,
        url=links.pubmed_url(summary.uid),
    )


def _author(entry: Any):
    """PubMed writes ``Family Initials`` (``Cui H``)."""
    name = r.shown(r.mapping(entry, "author").get("name"))
    if not name:
        return None
    family, _, initials = name.rpartition(" ")
    return r.person(family or initials, initials if family else None)


def _digits(value: Any, what: str) -> str:
    if not (isinstance(value, str) and value.isascii() and value.isdigit()):
        raise r.BodyError(f"{what} {value!r:.30} is not a decimal string")
    return value
