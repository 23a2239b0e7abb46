"""Semantic Scholar Graph API: papers by DOI or arXiv id, title search and batches.

Every request names ``fields``: without it only the id and title come back.
The API key, when configured, is added by the HTTP layer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from citelsp import links
from citelsp.config import Settings
from citelsp.resolution import records as r
from citelsp.resolution import terms
from citelsp.resolution.http import HttpClient
from citelsp.resolution.outcome import Found, NotFound, Record, Unreachable

SOURCE = "semantic_scholar"
FIELDS = "title,year,publicationDate,authors,venue,publicationVenue,journal,externalIds"


class SemanticScholarClient:
    """Asks api.semanticscholar.org/graph/v1; every method answers, none raises."""

    def __init__(self, http: HttpClient, settings: Settings) -> None:
        self._http = http
        self._settings = settings

    async def by_doi(self, doi: str) -> Found | NotFound | Unreachable:
        return await self._paper("DOI", doi)

    async def by_arxiv_id(self, arxiv_id: str) -> Found | NotFound | Unreachable:
        return await self._paper("arXiv", arxiv_id)

    async def search_title(self, title: str, limit: int = 5) -> Found | Unreachable:
        """``GET /paper/search``; no hits (``total: 0``, ``data`` missing) is ``Found(())``."""
        params = {"query": title, "limit": str(limit), "fields": FIELDS}
        response = await self._http.get(SOURCE, "/paper/search", params=params,
                                        kind=terms.SEARCH)
        if isinstance(response, Unreachable):
            return response
        return r.parse_found(SOURCE, response, _search_data)

    async def batch(self, paper_ids: Sequence[str]) -> tuple[Found | NotFound, ...] | Unreachable:
        """``POST /paper/batch`` for ids like ``DOI:…``/``arXiv:…``; answers align with the ids."""
        response = await self._http.post_json(
            SOURCE, "/paper/batch", {"ids": list(paper_ids)}, params={"fields": FIELDS},
            urgent=True, kind=terms.LIST)
        if isinstance(response, Unreachable):
            return response
        if not 200 <= response.status < 300:
            return r.unexpected(SOURCE, response)
        try:
            papers = r.items(r.json_of(response), "batch")
            if len(papers) != len(paper_ids):
                raise r.BodyError(f"{len(papers)} answers for {len(paper_ids)} ids")
            return tuple(
                Found((parse_paper(r.mapping(p, "paper")),)) if p is not None
                else NotFound(f"{SOURCE}: no paper")
                for p in papers
            )
        except r.PARSE_ERRORS as exc:
            return r.malformed(SOURCE, exc)

    async def by_id(self, paper_id: str) -> Found | NotFound | Unreachable:
        """One ``DOI:…`` or ``arXiv:…`` id, asked alone."""
        scheme, _, identifier = paper_id.partition(":")
        return await self._paper(scheme, identifier)

    async def by_ids(self, paper_ids: Sequence[str]
                     ) -> dict[str, Found | NotFound] | Unreachable:
        """``batch`` keyed by the ids as given (a null entry is what the single lookup's 404
        says)."""
        answers = await self.batch(paper_ids)
        if isinstance(answers, Unreachable):
            return answers
        return dict(zip(paper_ids, answers, strict=True))

    async def _paper(self, scheme: str, identifier: str) -> Found | NotFound | Unreachable:
        response = await self._http.get(
            SOURCE, f"/paper/{scheme}:{links.quote_path(identifier)}", params={"fields": FIELDS}
        )
        if isinstance(response, Unreachable):
            return response
        if missing := r.not_found(SOURCE, response):
            return missing
        return r.parse_found(SOURCE, response, lambda body: [parse_paper(r.mapping(body, "paper"))])


def _search_data(body: Any) -> list[Record]:
    data = r.mapping(body, "body").get("data")
    return [parse_paper(r.mapping(p, "paper")) for p in r.items(data, "data")]


def parse_paper(paper: dict) -> Record:
    """One Semantic Scholar paper object (requested with ``FIELDS``)."""
    paper_id = r.text(paper.get("paperId"))
    if not paper_id:
        raise r.BodyError("paper without a paperId")
    title = r.clean_title(paper.get("title"))
    journal = r.mapping(paper.get("journal") or {}, "journal")
    venue_obj = r.mapping(paper.get("publicationVenue") or {}, "publicationVenue")
    external = r.mapping(paper.get("externalIds") or {}, "externalIds")
    venue = r.shown(paper.get("venue"))
    names = [venue, r.shown(journal.get("name")), r.shown(venue_obj.get("name"))]
    # S2 often names "ArXiv" as the journal of a published paper: only the venue decides.
    primary = venue or names[2] or names[1]
    volume = r.text(journal.get("volume"))
    doi = r.doi(external.get("DOI"))
    return Record(
        source=SOURCE,
        title=title,
        titles=r.title_variants([title] if title else []),
        short_titles=r.main_titles([title] if title else []),
        authors=r.people(paper.get("authors"), _author),
        years=r.unique([r.year(paper.get("year")), r.year(paper.get("publicationDate"))]),
        venue=venue or names[1] or names[2],
        venue_aliases=r.unique(
            [n for n in names[1:] if n != venue] + r.shown_strings(venue_obj.get("alternate_names"))
        ),
        issns=r.unique(r.strings(venue_obj.get("issn"))),
        volume=None if volume and volume.startswith("abs/") else volume,
        first_page=r.first_page(journal.get("pages")),
        doi=doi,
        arxiv_id=r.text(external.get("ArXiv")) or r.arxiv_id_from_doi(doi),
        source_id=paper_id,
        is_preprint=r.is_preprint(None, [primary], doi),
        url=links.allowed(r.text(paper.get("url"))) or links.semantic_scholar_paper_url(paper_id),
    )


def _author(author: Any):
    return r.person_from_name(r.mapping(author, "author").get("name"))
