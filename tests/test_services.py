"""The loopback PostgreSQL and Redis that the team-mode tests use are real and isolated."""

from __future__ import annotations

import psycopg
import redis


def test_each_test_gets_an_empty_database_with_pg_trgm(postgres_url: str) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        tables = conn.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchone()
        assert tables == (0,)
        assert conn.execute("SELECT similarity('citelsp', 'citelsp')").fetchone() == (1.0,)


def test_redis_starts_empty(redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url)
    assert client.dbsize() == 0
    client.set("k", "v")
    assert client.get("k") == b"v"
