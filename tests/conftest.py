"""Shared pytest fixtures. Each block says who it serves; add new fixtures in their own block."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from citelsp.config import Settings
from citelsp.resolution.http import HttpClient
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
