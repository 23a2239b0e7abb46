"""DataCite REST API: ``/dois/{doi}`` (JSON:API), parsed into a Record.

DataCite registers arXiv's DOIs (``10.48550/arXiv.…``), Zenodo, Dryad, figshare and more, so it
is the authoritative source for DataCite DOIs (routing).
"""

from __future__ import annotations

import re
from typing import Any

from citelsp import links
from citelsp.config import Settings
from citelsp.documents.model import Person
from citelsp.resolution import records as r
from citelsp.resolution.http import HttpClient
from citelsp.resolution.outcome import Found, NotFound, Record, Unreachable

SOURCE = "datacite"
_AFFILIATION = re.compile(r"\s*\([^()]*\)")


class DataCiteClient:
    """Asks api.datacite.org; every method answers, none raises."""

    def __init__(self, http: HttpClient, settings: Settings) -> None:
        self._http = http
        self._settings = settings

    async def by_doi(self, doi: str) -> Found | NotFound | Unreachable:
        response = await self._http.get(SOURCE, f"/dois/{links.quote_path(doi)}")
        if isinstance(response, Unreachable):
            return response
        if missing := r.not_found(SOURCE, response):
            return missing
        return r.parse_found(SOURCE, response, lambda body: [parse_doi(body)])


def parse_doi(body: Any) -> Record:
    """``{"data": {"id", "type": "dois", "attributes": {...}}}``."""
    data = r.mapping(r.mapping(body, "body").get("data"), "data")
    attributes = r.mapping(data.get("attributes"), "attributes")
    doi = r.doi(attributes.get("doi") or data.get("id"))
    if not doi:
        raise r.BodyError("record without a DOI")
    mains, subtitles = [], []
    for entry in r.items(attributes.get("titles"), "titles"):
        entry = r.mapping(entry, "title")
        title = r.clean_title(entry.get("title"))
        if title:
            (subtitles if entry.get("titleType") == "Subtitle" else mains).append(title)
    container = r.mapping(attributes.get("container") or {}, "container")
    types = r.mapping(attributes.get("types") or {}, "types")
    arxiv_id = r.arxiv_id_from_doi(doi)
    work_type = r.text(types.get("resourceTypeGeneral"))
    return Record(
        source=SOURCE,
        title=mains[0] if mains else None,
        titles=r.title_variants(mains, subtitles),
        short_titles=r.main_titles(mains),
        authors=tuple(p for entry in r.items(attributes.get("creators"), "creators")
                      for p in _creator(entry)),
        years=r.unique([r.year(attributes.get("publicationYear"))]),
        venue=r.shown(container.get("title")),
        issns=_issns(container, attributes),
        volume=r.text(container.get("volume")),
        issue=r.text(container.get("issue")),
        first_page=r.text(container.get("firstPage")),
        doi=doi,
        arxiv_id=arxiv_id,
        source_id=doi,
        work_type=work_type,
        is_preprint=r.is_preprint(work_type, [r.shown(container.get("title"))], doi)
        or arxiv_id is not None,
        url=links.doi_url(doi) if doi else None,
    )


def _creator(entry: Any) -> list[Person]:
    """One creator, or the several people some repositories put in one ``name``
    (``Cardenas, Valerie ; Samuelson, Kristin``, affiliations in brackets dropped)."""
    entry = r.mapping(entry, "creator")
    if entry.get("nameType") == "Organizational":
        found = [r.person(entry.get("name"), literal=True)]
    elif entry.get("familyName"):
        found = [r.person(entry["familyName"], entry.get("givenName"))]
    else:
        name = r.shown(entry.get("name")) or ""
        found = [r.person_from_name(_AFFILIATION.sub("", part)) for part in name.split(";")]
    return [p for p in found if p]


def _issns(container: dict, attributes: dict) -> tuple[str, ...]:
    found = []
    if container.get("identifierType") == "ISSN":
        found.append(r.text(container.get("identifier")))
    for related in r.items(attributes.get("relatedIdentifiers"), "relatedIdentifiers"):
        related = r.mapping(related, "relatedIdentifier")
        if related.get("relatedIdentifierType") == "ISSN":
            found.append(r.text(related.get("relatedIdentifier")))
    return r.unique(found)
