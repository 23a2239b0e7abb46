"""OpenAlex: ``/works/doi:{doi}`` and ``/works?search=…``, parsed into Records.

Without an API key OpenAlex refuses with 401/403/429; the HTTP layer reports those as
``Unreachable`` and adds the key when one is configured.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from citelsp import links
from citelsp.config import Settings
from citelsp.resolution import records as r
from citelsp.resolution import terms
from citelsp.resolution.http import HttpClient
from citelsp.resolution.outcome import Found, NotFound, Record, Retraction, Unreachable

SOURCE = "openalex"
_ARXIV_LANDING = re.compile(r"^https?://(?:www\.)?arxiv\.org/abs/(.+?)(?:v\d+)?$", re.IGNORECASE)


class OpenAlexClient:
    """Asks api.openalex.org; every method answers, none raises."""

    def __init__(self, http: HttpClient, settings: Settings) -> None:
        self._http = http
        self._settings = settings

    async def by_doi(self, doi: str) -> Found | NotFound | Unreachable:
        """``GET /works/doi:{doi}`` (a ``https://doi.org/`` DOI is reduced to the bare DOI)."""
        bare = r.doi(doi) or doi
        response = await self._http.get(SOURCE, f"/works/doi:{links.quote_path(bare)}")
        if isinstance(response, Unreachable):
            return response
        if missing := r.not_found(SOURCE, response):
            return missing
        return r.parse_found(SOURCE, response, lambda body: [parse_work(r.mapping(body, "work"))])

    async def by_dois(self, dois: Sequence[str]) -> dict[str, Found | NotFound] | Unreachable:
        """Several DOIs in one ``GET /works?filter=doi:a|b`` (``per-page`` to match); keys are
        the DOIs as given, and a DOI absent from the results is what ``/works/doi:{doi}``
        answers 404. A DOI with ``|`` or ``,`` cannot be a filter value (``batchable``)."""
        values = "|".join(f"https://doi.org/{r.doi(d) or d}" for d in dois)
        params = {"filter": f"doi:{values}", "per-page": str(len(dois))}
        response = await self._http.get(SOURCE, "/works", params=params, urgent=True,
                                        kind=terms.LIST)
        return r.doi_batch(SOURCE, response, _results, dois)

    async def search_title(self, title: str, per_page: int = 5) -> Found | Unreachable:
        """``GET /works?search=…&per-page=5``: the ``results`` list, possibly empty."""
        params = {"search": title, "per-page": str(per_page)}
        response = await self._http.get(SOURCE, "/works", params=params, kind=terms.SEARCH)
        if isinstance(response, Unreachable):
            return response
        return r.parse_found(SOURCE, response, _results)


def batchable(doi: str) -> bool:
    """Whether ``doi`` can be one value of a ``filter=doi:a|b`` list."""
    return "|" not in doi and "," not in doi


def _results(body: Any) -> list[Record]:
    results = r.mapping(body, "body").get("results")
    if results is None:
        raise r.BodyError("no results list")
    return [parse_work(r.mapping(item, "result")) for item in r.items(results, "results")]


def parse_work(work: dict) -> Record:
    """One OpenAlex work object."""
    work_id = r.text(work.get("id"))
    if not work_id or "openalex.org/" not in work_id:
        raise r.BodyError("work without an OpenAlex id")
    title = r.clean_title(work.get("title") or work.get("display_name"))
    location = work.get("primary_location") or {}
    source = r.mapping(location, "primary_location").get("source") or {}
    source = r.mapping(source, "source")
    biblio = r.mapping(work.get("biblio") or {}, "biblio")
    doi = r.doi(work.get("doi"))
    arxiv_id = r.arxiv_id_from_doi(doi) or _arxiv_landing(location.get("landing_page_url"))
    work_type = r.text(work.get("type"))
    venue = r.shown(source.get("display_name"))
    authorships = r.items(work.get("authorships"), "authorships")
    return Record(
        source=SOURCE,
        title=title,
        titles=r.title_variants([title] if title else []),
        short_titles=r.main_titles([title] if title else []),
        authors=r.people(authorships, _author),
        # Lists cut authorships at 100 and say so; an older body only shows the 100.
        authors_truncated=work.get("is_authors_truncated") is True or len(authorships) >= 100,
        years=r.unique(r.year(work.get(k)) for k in ("publication_year", "publication_date")),
        venue=venue,
        venue_aliases=r.unique([r.shown(source.get("abbreviated_title"))]),
        issns=r.unique([*r.strings(source.get("issn")), r.text(source.get("issn_l"))]),
        volume=r.text(biblio.get("volume")),
        issue=r.text(biblio.get("issue")),
        first_page=r.text(biblio.get("first_page")),
        doi=doi,
        arxiv_id=arxiv_id,
        source_id=work_id.rsplit("/", 1)[-1],
        work_type=work_type,
        # A repository (arXiv, SSRN, Zenodo…) as the primary location: no version of record.
        is_preprint=r.is_preprint(work_type, [venue], doi) or arxiv_id is not None
        or source.get("type") == "repository",
        retractions=(Retraction(SOURCE),) if work.get("is_retracted") is True else (),
        url=links.allowed(work_id),
    )


def _author(authorship: Any):
    authorship = r.mapping(authorship, "authorship")
    author = r.mapping(authorship.get("author") or {}, "author")
    return r.person_from_name(author.get("display_name") or authorship.get("raw_author_name"))


def _arxiv_landing(url: Any) -> str | None:
    m = _ARXIV_LANDING.match(r.text(url) or "")
    return m.group(1) if m else None
