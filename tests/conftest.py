"""Shared pytest fixtures. Each block says who it serves; add new fixtures in their own block."""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator, Iterator

import pytest

from citelsp.config import Settings
from citelsp.resolution.arxiv import ArxivClient
from citelsp.resolution.crossref import CrossrefClient
from citelsp.resolution.datacite import DataCiteClient
from citelsp.resolution.doi_registry import DoiRegistryClient
from citelsp.resolution.http import HttpClient
from citelsp.resolution.openalex import OpenAlexClient
from citelsp.resolution.pubmed import PubMedClient
from citelsp.resolution.semantic_scholar import SemanticScholarClient
from tests.apiserver import ApiServer, load_default_routes

# --- Loopback API server (tests/apiserver.py) -------------------------------------------------


@pytest.fixture
def api_server() -> Iterator[ApiServer]:
    """A started loopback server with every recorded body routed at its real request path."""
    server = ApiServer().start()
    load_default_routes(server)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def api_settings(api_server: ApiServer, tmp_path) -> Settings:
    """Settings whose every endpoint points at ``api_server``, unpaced, with a private cache."""
    return api_server.settings(cache_dir=tmp_path / "cache", ncbi_email="tests@example.org")


@pytest.fixture
async def http_client(api_settings: Settings) -> AsyncIterator[HttpClient]:
    """The real HTTP client (policy included) talking to ``api_server``."""
    async with HttpClient(api_settings) as client:
        yield client


# --- end of the loopback API server block ------------------------------------------------------


# --- Source clients on the loopback server (test_sources.py, test_api_paths.py) ----------------


@pytest.fixture
def sources(http_client: HttpClient, api_settings: Settings):
    """Every source client, sharing ``http_client``."""

    class Sources:
        crossref = CrossrefClient(http_client, api_settings)
        openalex = OpenAlexClient(http_client, api_settings)
        s2 = SemanticScholarClient(http_client, api_settings)
        arxiv = ArxivClient(http_client, api_settings)
        datacite = DataCiteClient(http_client, api_settings)
        registry = DoiRegistryClient(http_client, api_settings)
        pubmed = PubMedClient(http_client, api_settings)

    return Sources


# --- end of the source clients block -----------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path):
    """A 1 MiB tmpfs; skipped where mounting is not allowed."""
    mount = tmp_path / "small"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)],
                          capture_output=True)
    if made.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True)


# --- PostgreSQL and Redis on loopback (tests/services.py; team-mode tests) ----------------------


@pytest.fixture(scope="session")
def postgres_admin_url() -> Iterator[str]:
    """A superuser URL of a PostgreSQL on loopback: CI's, or one started for this session."""
    import os

    from tests.services import PostgresServer

    url = os.environ.get("CITELSP_TEST_POSTGRES_URL")
    if url:
        yield url
        return
    server = PostgresServer().start()
    try:
        yield server.url
    finally:
        server.destroy()


@pytest.fixture
def postgres_url(postgres_admin_url: str) -> Iterator[str]:
    """A fresh, empty database of its own for each test."""
    from tests.services import drop_database, fresh_database

    url = fresh_database(postgres_admin_url)
    try:
        yield url
    finally:
        drop_database(postgres_admin_url, url)


@pytest.fixture(scope="session")
def redis_session_url() -> Iterator[str]:
    """A Redis on loopback: CI's, or one started for this session."""
    import os

    from tests.services import RedisServer

    url = os.environ.get("CITELSP_TEST_REDIS_URL")
    if url:
        yield url
        return
    server = RedisServer().start()
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture
def redis_url(redis_session_url: str) -> str:
    """The session's Redis, emptied for each test."""
    import redis

    client = redis.Redis.from_url(redis_session_url)
    client.flushall()
    client.close()
    return redis_session_url


# --- end of the PostgreSQL and Redis block ------------------------------------------------------
