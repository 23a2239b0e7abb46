"""The background verification: how a pass over cached answers shows its verdicts."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field

from citelsp.config import Settings
from citelsp.documents.bibtex import parse_bibtex
from citelsp.workspace import verification
from citelsp.workspace.verification import SHOW_CACHED_EVERY_S, TURN_S, Listener, Verifier


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class CachedOnly:
    """An engine whose every reference is answered from the cache in ``seconds``."""

    def __init__(self, clock: Clock, seconds: float) -> None:
        self.clock = clock
        self.seconds = seconds

    @contextlib.contextmanager
    def cached_pass(self):
        yield

    async def from_cache(self, ref):
        self.clock.now += self.seconds
        return Answered(ref.key)


@dataclass(frozen=True)
class Answered:
    """A complete resolution, as far as the scheduler looks at one."""

    key: str
    complete: bool = True
    unchecked: None = None

    @property
    def wants_network(self) -> bool:
        return not self.complete


def library(n: int):
    text = "".join(f"@misc{{k{i},\n  title = {{Work number {i}}},\n  year = {{2020}},\n}}\n"
                   for i in range(n))
    return list(parse_bibtex("file:///refs.bib", text).references)


async def shown_at(monkeypatch, refs, seconds: float) -> tuple[list[float], Clock]:
    clock = Clock()
    monkeypatch.setattr(verification.time, "monotonic", clock)
    shown: list[float] = []
    class Shown(Listener):
        def results_arrived(self, urgent: bool = False) -> None:
            shown.append(clock.now)

    scheduler = Verifier(Shown())
    scheduler.engine = CachedOnly(clock, seconds)
    await scheduler.want(refs)
    assert all(scheduler.result_for(r) == Answered(r.key) for r in refs)
    return shown, clock


async def test_a_short_cached_pass_shows_its_verdicts_once_at_the_end(monkeypatch):
    shown, clock = await shown_at(monkeypatch, library(300), 0.002)
    assert shown == [clock.now]


async def test_a_long_cached_pass_shows_verdicts_as_they_come_but_not_just_before_the_end(
        monkeypatch):
    refs = library(100)
    shown, clock = await shown_at(monkeypatch, refs, 0.05)
    assert len(shown) >= 4 and shown[-1] == clock.now
    gaps = [b - a for a, b in zip([100.0, *shown], shown, strict=False)]
    assert all(gap >= SHOW_CACHED_EVERY_S for gap in gaps[:-1])
    assert gaps[-1] >= SHOW_CACHED_EVERY_S / 2, "the last showing is not held back by one"


async def test_a_long_pass_lets_handlers_in_after_every_turn(monkeypatch):
    """However long each reference takes, a hover waits at most about ``TURN_S``."""
    clock = Clock()
    monkeypatch.setattr(verification.time, "monotonic", clock)
    scheduler = Verifier(Listener())
    scheduler.engine = CachedOnly(clock, 0.004)
    ran: list[float] = []

    async def handler() -> None:
        while True:
            ran.append(clock.now)
            await asyncio.sleep(0)

    task = asyncio.ensure_future(handler())
    await scheduler.want(library(200))
    task.cancel()
    assert clock.now >= 100.8  # the whole pass ran
    assert max(b - a for a, b in zip(ran, ran[1:], strict=False)) <= TURN_S + 0.004 + 1e-9


@dataclass(frozen=True)
class Resolved:
    key: str
    outcomes: dict = field(default_factory=dict)
    unchecked: None = None
    wants_network: bool = False


class Resolving(CachedOnly):
    """Nothing cached: every reference is resolved by a worker."""

    settings = Settings()

    async def from_cache(self, ref):
        return Answered(ref.key, complete=False)

    async def resolve(self, ref, refresh=False):
        return Resolved(ref.key)


async def test_each_resolution_is_handed_over_before_the_front_end_hears_of_it():
    """The workspace judges each resolution in its worker's turn, so a publication after a
    hundred results does not judge them all at once."""
    events: list[tuple[str, str]] = []

    class Heard(Listener):
        def results_arrived(self, urgent: bool = False) -> None:
            events.append(("arrived", ""))

    scheduler = Verifier(Heard(), resolved=lambda ref, res: events.append((ref.key, res.key)))
    scheduler.engine = Resolving(Clock(), 0)
    refs = library(5)
    await scheduler.want(refs)
    await asyncio.gather(*scheduler._workers)
    handed = [e for e in events if e[0] != "arrived"]
    assert sorted(handed) == sorted((r.key, r.key) for r in refs)
    for key, _ in handed:  # each followed by the front end's notice
        assert events[events.index((key, key)) + 1] == ("arrived", "")
