"""Identifier lookups, batched across references wherever the service offers a batch form.

The request plan (``resolve.py``) asks for one identifier at a time; these lookups gather the
identifiers that references ask for together into one request per source (``batching``):

Crossref ``/works?filter=doi:a,doi:b&rows=N``, OpenAlex ``/works?filter=doi:a|b&per-page=N``,
Semantic Scholar ``POST /paper/batch`` (with ``fields``), arXiv ``?id_list=a,b&max_results=N``
and doi.org ``/doiRA/a,b``; DataCite, the Handle System and title searches have no batch form.
The sizes below are the services' documented limits, or a URL-length bound where none is
documented.

The answers are the single lookups' answers (each client maps a batch back to its keys the
way the single endpoint would answer them), so the cache and the judging never know whether
an answer came in a batch.
"""

from __future__ import annotations

from collections.abc import Callable

from citelsp.resolution import crossref, openalex, terms
from citelsp.resolution.arxiv import base_id
from citelsp.resolution.batching import Batcher
from citelsp.resolution.http import HttpClient
from citelsp.resolution.outcome import Agency, Found, Malformed, NotFound, Unreachable
from citelsp.resolution.sources import Sources

CROSSREF_BATCH = 50
"""``rows`` may reach 1,000, but the filter rides in the URL: 50 DOIs keep it near 2 KB."""
OPENALEX_BATCH = 50
"""The OR limit of a filter: 50 values in the older documentation, 100 in the current one."""
SEMANTIC_SCHOLAR_BATCH = 500
"""The documented maximum of ids per ``/paper/batch`` request."""
ARXIV_BATCH = 100
"""arXiv allows 2,000 results per call; 100 ids keep the URL short."""
DOI_RA_BATCH = 50
"""The DOI Handbook documents comma-separated lists without a maximum."""

DoiAnswer = Found | NotFound | Unreachable


class Lookups:
    """One batcher per source and kind of identifier, shared by every reference of an engine."""

    def __init__(self, sources: Sources, http: HttpClient) -> None:
        def reserve(endpoint: str) -> Callable[[bool], object]:
            return lambda several: http.reserve(endpoint, terms.LIST if several else terms.SINGLE)

        self.crossref: Batcher[str, DoiAnswer] = Batcher(
            size=CROSSREF_BATCH, ask_many=sources.crossref.by_dois,
            ask_one=sources.crossref.by_doi, reserve=reserve("crossref"),
            batchable=crossref.batchable)
        self.openalex: Batcher[str, DoiAnswer] = Batcher(
            size=OPENALEX_BATCH, ask_many=sources.openalex.by_dois,
            ask_one=sources.openalex.by_doi, reserve=reserve("openalex"),
            batchable=openalex.batchable)
        self.semantic_scholar: Batcher[str, DoiAnswer] = Batcher(
            size=SEMANTIC_SCHOLAR_BATCH, ask_many=sources.semantic_scholar.by_ids,
            ask_one=sources.semantic_scholar.by_id, reserve=reserve("semantic_scholar"))
        self.arxiv: Batcher[str, Found | NotFound | Malformed | Unreachable] = Batcher(
            size=ARXIV_BATCH, ask_many=sources.arxiv.by_arxiv_ids,
            ask_one=sources.arxiv.by_arxiv_id, reserve=reserve("arxiv"),
            conflicts=lambda arxiv_id: base_id(arxiv_id).lower())
        self.agency: Batcher[str, Agency | Unreachable] = Batcher(
            size=DOI_RA_BATCH, ask_many=sources.doi_registry.agencies,
            ask_one=sources.doi_registry.agency, reserve=reserve("doi_registry"))
        self._datacite = sources.datacite

    async def by_doi(self, resolver: str, doi: str) -> DoiAnswer:
        """``resolver``'s record of ``doi`` (DataCite has no batch form: asked alone)."""
        if resolver == "crossref":
            return await self.crossref.ask(doi)
        if resolver == "openalex":
            return await self.openalex.ask(doi)
        if resolver == "semantic_scholar":
            return await self.semantic_scholar.ask(f"DOI:{doi}")
        if resolver == "datacite":
            return await self._datacite.by_doi(doi)
        raise ValueError(f"no DOI lookup for {resolver}")

    def close(self) -> None:
        for batcher in (self.crossref, self.openalex, self.semantic_scholar, self.arxiv,
                        self.agency):
            batcher.close()
