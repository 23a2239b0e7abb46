"""The source clients a resolution asks, built over one shared HTTP client."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from citelsp.config import Settings
from citelsp.resolution.arxiv import ArxivClient
from citelsp.resolution.crossref import CrossrefClient
from citelsp.resolution.datacite import DataCiteClient
from citelsp.resolution.dblp import DblpClient
from citelsp.resolution.doi_registry import DoiRegistryClient
from citelsp.resolution.http import HttpClient
from citelsp.resolution.openalex import OpenAlexClient
from citelsp.resolution.outcome import Outcome
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
    dblp: DblpClient

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
            dblp=DblpClient(http, settings),
        )


OPENALEX_KEY_ADVICE = (
    "OpenAlex refused requests made without an API key (required, free, since 2026): set "
    "CITELSP_OPENALEX_API_KEY or the setting citelsp.openalexApiKey"
)
_REFUSALS = ("HTTP 401", "HTTP 403", "HTTP 429")


def refused_for_want_of_key(outcomes: Mapping[str, Outcome], settings: Settings) -> bool:
    """OpenAlex said no and no key is configured: say so once, pointing at the setting."""
    outcome = outcomes.get("openalex")
    return (not settings.openalex_api_key and outcome is not None
            and outcome.status == "unreachable"
            and any(r in outcome.summary for r in _REFUSALS))
