"""The source clients a resolution asks, built over one shared HTTP client."""

from __future__ import annotations

from dataclasses import dataclass

from citelsp.config import Settings
from citelsp.resolution.arxiv import ArxivClient
from citelsp.resolution.crossref import CrossrefClient
from citelsp.resolution.datacite import DataCiteClient
from citelsp.resolution.doi_registry import DoiRegistryClient
from citelsp.resolution.http import HttpClient
from citelsp.resolution.openalex import OpenAlexClient
from citelsp.resolution.pubmed import PubMedClient
from citelsp.resolution.semantic_scholar import SemanticScholarClient


@dataclass(frozen=True)
class Sources:
    crossref: CrossrefClient
    openalex: OpenAlexClient
    semantic_scholar: SemanticScholarClient
    arxiv: ArxivClient
    datacite: DataCiteClient
    doi_registry: DoiRegistryClient
    pubmed: PubMedClient

    @classmethod
    def create(cls, http: HttpClient, settings: Settings) -> Sources:
        return cls(
            crossref=CrossrefClient(http, settings),
            openalex=OpenAlexClient(http, settings),
            semantic_scholar=SemanticScholarClient(http, settings),
            arxiv=ArxivClient(http, settings),
            datacite=DataCiteClient(http, settings),
            doi_registry=DoiRegistryClient(http, settings),
            pubmed=PubMedClient(http, settings),
        )
