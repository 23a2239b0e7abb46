"""Per-origin pacing: one origin's callers are spaced, different origins do not wait for each
other, and the spacing adapts to what the service says (429, Retry-After, rate-limit headers)."""

from __future__ import annotations

import asyncio
import time

import pytest

from citelsp.config import Endpoint, Settings
from citelsp.resolution.http import HttpClient
from citelsp.resolution.pacing import (
    DEFAULT_INTERVAL_S,
    MAX_HOLD_S,
    RANK,
    RESERVED,
    Pacer,
    origin_of,
)

CROSSREF = origin_of("https://api.crossref.org")
ARXIV = origin_of("https://export.arxiv.org/api/query")
OPENALEX = origin_of("https://api.openalex.org")


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


def paced(intervals: dict, fake: FakeTime, **kwargs) -> Pacer:
    return Pacer(intervals, clock=fake.clock, sleep=fake.sleep, **kwargs)


def test_an_origin_is_scheme_host_and_port():
    assert origin_of("https://API.crossref.org/works") == ("https", "api.crossref.org", 443)
    assert origin_of("http://127.0.0.1:8000/doi") == ("http", "127.0.0.1", 8000)
    assert origin_of("http://127.0.0.1:8001/handle") != origin_of("http://127.0.0.1:8000")
    assert origin_of("https://api.crossref.org:port")[2] == 443, "a malformed port never raises"


async def test_concurrent_callers_of_one_origin_are_spaced():
    fake = FakeTime()
    pacer = paced({CROSSREF: 0.5}, fake)
    sent: list[float] = []

    async def request() -> None:
        await pacer.wait(CROSSREF)
        sent.append(fake.now)

    await asyncio.gather(*(request() for _ in range(4)))
    assert sent == [50.0, 50.5, 51.0, 51.5]


async def test_spacing_holds_on_the_real_monotonic_clock():
    doi_org = origin_of("https://doi.org")
    pacer = Pacer({doi_org: 0.05})
    await pacer.wait(doi_org)
    first = time.monotonic()
    await pacer.wait(doi_org)
    assert time.monotonic() - first >= 0.05 - 0.002


async def test_different_origins_are_not_serialized():
    """Once each origin's own interval has passed, neither waits for the other's request."""
    a, b = origin_of("http://127.0.0.1:8000"), origin_of("http://127.0.0.1:8001")
    fake = FakeTime()
    pacer = paced({a: 0.3, b: 0.3}, fake)
    await asyncio.gather(pacer.wait(a), pacer.wait(b))
    fake.now += 0.3
    await pacer.wait(a)
    await pacer.wait(b)
    await pacer.wait(origin_of("http://127.0.0.1:8002"))
    assert fake.sleeps == []
    await pacer.wait(a)
    assert fake.sleeps == [pytest.approx(0.3)], "the same origin is still spaced"


async def test_first_request_does_not_wait():
    fake = FakeTime()
    pacer = paced({ARXIV: 3.0}, fake)
    await pacer.wait(ARXIV)
    assert fake.sleeps == []
    await pacer.wait(origin_of("https://EXPORT.arxiv.org"))
    assert fake.sleeps == [3.0]


async def test_a_reserved_slot_goes_to_the_next_request_of_that_task_only():
    fake = FakeTime()
    pacer = paced({ARXIV: 3.0}, fake)
    await pacer.wait(ARXIV)
    await pacer.reserve(ARXIV)
    assert fake.sleeps == [3.0]
    assert not pacer.holds(CROSSREF)
    assert pacer.holds(ARXIV) and not pacer.holds(ARXIV), "one request per reservation"
    await pacer.wait(ARXIV)
    assert fake.sleeps == [3.0, 3.0], "the reserved slot was taken"


async def test_a_batch_reservation_is_not_starved_by_single_lookups():
    """Less urgent single lookups queued first must not take every slot from a batch."""
    fake = FakeTime()
    pacer = paced({CROSSREF: 0.5}, fake)
    order: list[str] = []
    await pacer.wait(CROSSREF)

    async def single(i: int) -> None:
        RANK.set(100 + i)
        await pacer.wait(CROSSREF)
        order.append(f"single{i}")

    async def batch() -> None:
        RANK.set(0)
        await asyncio.sleep(0)
        await pacer.reserve(CROSSREF)
        order.append("batch")

    await asyncio.gather(*(single(i) for i in range(3)), batch())
    assert order[0] == "batch"


async def test_hold_keeps_callers_away_and_restarts_the_interval_after_it():
    fake = FakeTime()
    pacer = paced({OPENALEX: 0.1}, fake)
    await pacer.wait(OPENALEX)
    pacer.hold(OPENALEX, 4.0)
    await pacer.wait(OPENALEX)
    assert fake.sleeps == [4.0]
    await pacer.wait(OPENALEX)
    assert fake.sleeps == [4.0, pytest.approx(0.1)]


async def test_a_429_halves_the_rate_and_a_quiet_period_restores_it():
    fake = FakeTime()
    pacer = paced({CROSSREF: 0.1}, fake, quiet_period_s=60.0)
    pacer.rate_limited(CROSSREF, retry_after=2.0)
    assert pacer.interval(CROSSREF) == pytest.approx(0.2)
    await pacer.wait(CROSSREF)
    assert fake.sleeps == [2.0], "Retry-After held every caller"
    pacer.rate_limited(CROSSREF, retry_after=None)
    assert pacer.interval(CROSSREF) == pytest.approx(0.4)
    fake.now += 60.0
    assert pacer.interval(CROSSREF) == pytest.approx(0.2)
    fake.now += 60.0
    assert pacer.interval(CROSSREF) == pytest.approx(0.1)
    fake.now += 600.0
    assert pacer.interval(CROSSREF) == pytest.approx(0.1), "never faster than documented"


def test_a_pause_too_long_to_wait_closes_the_origin():
    fake = FakeTime()
    pacer = paced({OPENALEX: 0.1}, fake)
    pacer.rate_limited(OPENALEX, retry_after=3600.0)
    assert pacer.closed_for(OPENALEX) == pytest.approx(3600.0)
    assert pacer.closed_for(CROSSREF) == 0.0
    fake.now += 3600.0
    assert pacer.closed_for(OPENALEX) == 0.0
    assert MAX_HOLD_S < 3600.0


def test_no_origin_is_ever_paused_beyond_the_maximum():
    """Slowdowns, announced intervals and configured intervals are all capped at MAX_HOLD_S;
    an announced interval beyond it closes the origin for that long instead."""
    fake = FakeTime()
    pacer = paced({ARXIV: 3.0, CROSSREF: 0.1, OPENALEX: 3600.0}, fake, margin=1.1)
    for _ in range(10):
        pacer.rate_limited(ARXIV, retry_after=1.0)
    assert pacer.interval(ARXIV) == MAX_HOLD_S, "64 × 3 s would be 192 s"
    assert pacer.interval(OPENALEX) == MAX_HOLD_S, "a configured hour is capped too"
    pacer.observe(CROSSREF, {"x-rate-limit-limit": "1", "x-rate-limit-interval": "3600s"})
    assert pacer.interval(CROSSREF) <= MAX_HOLD_S
    assert pacer.closed_for(CROSSREF) == pytest.approx(3600.0)
    pacer.observe(ARXIV, {"x-rate-limit-limit": "0", "x-rate-limit-interval": "1s"})
    assert pacer.closed_for(ARXIV) == 0.0, "a zero limit is not a division by zero"


async def test_rate_limit_headers_only_ever_slow_an_origin_down():
    fake = FakeTime()
    pacer = paced({CROSSREF: 0.1}, fake)
    pacer.observe(CROSSREF, {"x-rate-limit-limit": "50", "x-rate-limit-interval": "1s"})
    assert pacer.interval(CROSSREF) == pytest.approx(0.1), "50/s is faster than documented"
    pacer.observe(CROSSREF, {"x-rate-limit-limit": "3", "x-rate-limit-interval": "1s"})
    assert pacer.interval(CROSSREF) == pytest.approx(1 / 3)
    pacer.observe(OPENALEX, {"x-ratelimit-limit": "100", "x-ratelimit-remaining": "0",
                             "x-ratelimit-reset": "5"})
    await pacer.wait(OPENALEX)
    assert fake.sleeps == [5.0], "nothing remaining: held until the reset"


def test_intervals_come_from_settings_keyed_by_origin():
    endpoints = {
        "crossref": Endpoint("https://api.crossref.org", 100),
        "arxiv": Endpoint("https://export.arxiv.org/api/query", 3000),
        "doi_registry": Endpoint("http://127.0.0.1:8000", 200),
        "handle": Endpoint("http://127.0.0.1:8000/handle", 0),
        "datacite": Endpoint("http://127.0.0.1:8001/datacite", 0),
    }
    pacer = Pacer.from_settings(Settings(endpoints=endpoints))
    assert pacer.interval(CROSSREF) == 0.1
    assert pacer.interval(ARXIV) == 3.0
    assert pacer.interval(origin_of("http://127.0.0.1:8000")) == 0.2, "one origin: the largest"
    assert pacer.interval(origin_of("http://127.0.0.1:8001")) == 0.0, "another port, its own"
    assert pacer.interval(origin_of("https://data.crosscite.org")) == DEFAULT_INTERVAL_S


async def test_urgent_callers_take_the_next_slot_before_earlier_ones():
    fake = FakeTime()
    pacer = paced({CROSSREF: 1.0}, fake)
    await pacer.wait(CROSSREF)
    order: list[str] = []

    async def request(name: str, urgent: bool) -> None:
        await pacer.wait(CROSSREF, urgent=urgent)
        order.append(name)

    await asyncio.gather(request("search 1", False), request("search 2", False),
                         request("batch", True))
    assert order == ["batch", "search 1", "search 2"]


async def test_a_cancelled_caller_gives_its_slot_to_the_next():
    fake = FakeTime()
    pacer = paced({CROSSREF: 1.0}, fake)
    await pacer.wait(CROSSREF)
    gone = asyncio.ensure_future(pacer.wait(CROSSREF))
    await asyncio.sleep(0)
    gone.cancel()
    await pacer.wait(CROSSREF)
    assert fake.sleeps == [1.0]


async def test_slots_go_to_the_reference_asked_for_first():
    """Requests carry the rank of their reference (``RANK``): an earlier reference's search
    takes the next slot even if a later one's was already waiting."""
    fake = FakeTime()
    pacer = paced({OPENALEX: 1.0}, fake)
    await pacer.wait(OPENALEX)
    order: list[int] = []

    async def request(rank: int) -> None:
        RANK.set(rank)
        await pacer.wait(OPENALEX)
        order.append(rank)

    await asyncio.gather(request(7), request(3), request(5))
    assert order == [3, 5, 7]


async def test_the_next_slot_counts_from_the_actual_send():
    """A send held back after its slot (a busy event loop) pushes the next slot back too."""
    fake = FakeTime()
    pacer = paced({CROSSREF: 1.0}, fake)
    await pacer.wait(CROSSREF)
    fake.now += 0.4
    pacer.sent(CROSSREF)
    await pacer.wait(CROSSREF)
    assert fake.sleeps == [pytest.approx(1.0)]
    assert fake.now == pytest.approx(51.4)


async def test_the_next_interval_counts_from_when_the_request_was_written(api_server, tmp_path):
    """A request held back after its slot (a slow connect, a busy loop) moves the next slot."""
    written: list[float] = []

    class Recording(Pacer):
        def sent(self, origin, lane="") -> None:
            written.append(time.monotonic())
            super().sent(origin, lane)

    settings = api_server.settings(cache_dir=tmp_path / "cache", use_cache=False)
    client = HttpClient(settings, pacer=Recording({}))
    try:
        await client.get("crossref", "/works/10.1000/none")
    finally:
        await client.aclose()
    assert len(written) == 1, "when the headers were written (the slot set it before)"


async def test_a_reservation_ends_with_the_request_even_one_refused_before_it_went(
        api_server, tmp_path):
    """A batch refused before it was sent must not hand its slot to every fallback lookup."""
    settings = api_server.settings(cache_dir=tmp_path / "cache", use_cache=False)
    client = HttpClient(settings)
    try:
        await client.reserve("crossref")
        assert RESERVED.get() is not None
        refused = await client.get("crossref", "/works/10.1234/../../admin")
        assert "dot segment" in refused.reason
        assert RESERVED.get() is None
    finally:
        await client.aclose()


def test_crossref_lists_and_queries_have_their_own_lane_at_the_documented_rates():
    """Since 2025-12-01 Crossref allows 10 single records/s and 3 lists or queries/s in the
    polite pool (a mailto), 5/s and 1/s in the public pool."""
    polite = Pacer.from_settings(Settings(mailto="someone@example.org"))
    assert polite.interval(CROSSREF, "single") == pytest.approx(0.1)
    assert polite.interval(CROSSREF, "list") == pytest.approx(1 / 3)
    public = Pacer.from_settings(Settings())
    assert public.interval(CROSSREF, "single") == pytest.approx(0.2)
    assert public.interval(CROSSREF, "list") == pytest.approx(1.0)
    datacite = origin_of("https://api.datacite.org")
    assert polite.interval(datacite) == pytest.approx(0.3), "1,000 per 5 minutes identified"
    assert public.interval(datacite) == pytest.approx(0.6), "500 per 5 minutes anonymous"
    test_server = Settings(endpoints={"crossref": Endpoint("http://127.0.0.1:9", 0)})
    local = origin_of("http://127.0.0.1:9")
    assert Pacer.from_settings(test_server).interval(local, "list") == 0.0, \
        "minIntervalMs scales every lane"


async def test_a_lane_is_slowed_by_its_own_headers_and_refusals_only():
    fake = FakeTime()
    pacer = paced({(CROSSREF, "single"): 0.1, (CROSSREF, "list"): 0.3}, fake)
    pacer.observe(CROSSREF, {"x-rate-limit-limit": "1", "x-rate-limit-interval": "2s"}, "list")
    pacer.rate_limited(CROSSREF, retry_after=1.0, lane="list")
    assert pacer.interval(CROSSREF, "list") == pytest.approx(2.0)
    assert pacer.interval(CROSSREF, "single") == pytest.approx(0.1)
    await pacer.wait(CROSSREF, lane="single")
    assert fake.sleeps == [1.0], "a Retry-After holds every lane of the origin"
