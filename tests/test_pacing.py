"""Per-host pacing: one host's callers are spaced, different hosts do not wait for each other."""

from __future__ import annotations

import asyncio
import time

import pytest

from citelsp.config import Endpoint, Settings
from citelsp.resolution.pacing import DEFAULT_INTERVAL_S, Pacer


class FakeTime:
    """A clock that moves only when a caller sleeps; sleeping still yields to the loop."""

    def __init__(self) -> None:
        self.now = 50.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
        await asyncio.sleep(0)


async def test_concurrent_callers_of_one_host_are_spaced():
    fake = FakeTime()
    pacer = Pacer({"api.crossref.org": 0.5}, clock=fake.clock, sleep=fake.sleep)
    sent: list[float] = []

    async def request() -> None:
        await pacer.wait("api.crossref.org")
        sent.append(fake.now)

    await asyncio.gather(*(request() for _ in range(4)))
    assert sent == [50.0, 50.5, 51.0, 51.5]
    assert all(b - a >= 0.5 for a, b in zip(sent, sent[1:], strict=False))


async def test_spacing_holds_on_the_real_monotonic_clock():
    pacer = Pacer({"doi.org": 0.05})
    await pacer.wait("doi.org")
    first = time.monotonic()
    await pacer.wait("doi.org")
    assert time.monotonic() - first >= 0.05 - 0.002


async def test_different_hosts_are_not_serialized():
    pacer = Pacer({"a.example": 0.3, "b.example": 0.3})
    await asyncio.gather(pacer.wait("a.example"), pacer.wait("b.example"))
    start = time.monotonic()
    await asyncio.gather(pacer.wait("a.example"), pacer.wait("b.example"))
    elapsed = time.monotonic() - start
    assert 0.25 <= elapsed < 0.5


async def test_first_request_does_not_wait():
    fake = FakeTime()
    pacer = Pacer({"export.arxiv.org": 3.0}, clock=fake.clock, sleep=fake.sleep)
    await pacer.wait("export.arxiv.org")
    assert fake.sleeps == []
    await pacer.wait("EXPORT.arxiv.org")
    assert fake.sleeps == [3.0]


async def test_hold_keeps_callers_away_and_restarts_the_interval_after_it():
    fake = FakeTime()
    pacer = Pacer({"api.openalex.org": 0.1}, clock=fake.clock, sleep=fake.sleep)
    await pacer.wait("api.openalex.org")
    pacer.hold("api.openalex.org", 4.0)
    await pacer.wait("api.openalex.org")
    assert fake.sleeps == [4.0]
    await pacer.wait("api.openalex.org")
    assert fake.sleeps == [4.0, pytest.approx(0.1)]


def test_intervals_come_from_settings_keyed_by_host():
    endpoints = {
        "crossref": Endpoint("https://api.crossref.org", 100),
        "arxiv": Endpoint("https://export.arxiv.org/api/query", 3000),
        "doi_registry": Endpoint("http://127.0.0.1:8000", 200),
        "handle": Endpoint("http://127.0.0.1:8000/handle", 0),
    }
    pacer = Pacer.from_settings(Settings(endpoints=endpoints))
    assert pacer.interval("api.crossref.org") == 0.1
    assert pacer.interval("export.arxiv.org") == 3.0
    assert pacer.interval("127.0.0.1") == 0.2
    assert pacer.interval("data.crosscite.org") == DEFAULT_INTERVAL_S
