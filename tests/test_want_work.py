"""The verifier's pass after a change costs what changed: an edit of one entry names and
looks up that entry, not the library; a cursor move with nothing queued orders nothing; a
pass where every wanted identity has a result visits nothing. What it keeps is checked
against what a pass over everything would hold: the wanted identities, the entries sharing
one, the status, the queue's order, and the work cancelled."""

from __future__ import annotations

import asyncio
import contextlib
import random

from citelsp.config import Settings
from citelsp.documents.model import Reference
from citelsp.resolution.resolve import unchecked_resolution
from citelsp.workspace import Listener, Workspace
from tests.test_publish_work import resolution

ENTRIES = 60


def entry(i: int, title: str | None = None, doi: str | None = None) -> str:
    extra = f"  doi = {{{doi}}},\n" if doi else ""
    return (f"@article{{k{i},\n  title = {{{title or f'Work number {i}'}}},\n"
            f"  author = {{Doe, Jane}},\n  journal = {{Journal of Work}},\n  year = {{2020}},\n"
            f"{extra}}}\n\n")


BIB = "".join(entry(i) for i in range(ENTRIES))


class Engine:
    """Answers every reference from its "cache" unless its title is in ``uncached`` (then a
    worker resolves it, waiting for ``gate`` when set); offline, an answer is incomplete."""

    def __init__(self) -> None:
        self.settings = Settings()
        self.uncached: set[str] = set()
        self.looked_up: list[str] = []
        self.resolved: list[str] = []
        self.gate: asyncio.Event | None = None
        self.offline = False

    @contextlib.contextmanager
    def cached_pass(self):
        yield

    async def from_cache(self, ref: Reference):
        self.looked_up.append(ref.key)
        if self.offline:
            return unchecked_resolution(ref, "offline", "offline")
        if ref.fields["title"].value in self.uncached:
            return unchecked_resolution(ref, "pending", "not in the cache")
        return resolution(ref, "clean")

    async def resolve(self, ref: Reference, refresh: bool = False):
        self.resolved.append(ref.key)
        if self.gate is not None:
            await self.gate.wait()
        return resolution(ref, "clean")

    async def probe(self) -> None:
        return None

    async def aclose(self) -> None:
        pass


class Statuses(Listener):
    def __init__(self) -> None:
        self.said: list[str] = []

    def status(self, message: str) -> None:
        self.said.append(message)


class Library:
    """A workspace with the library open (and the cursor in it) whose every entry has a
    result after the first pass; ``text`` is the library as the editor holds it."""

    def __init__(self, root, text: str = BIB) -> None:
        self.root = root
        self.listener = Statuses()
        self.ws = Workspace(Settings(verify=False), [root], self.listener)
        self.engine = Engine()
        self.ws.verifier.engine = self.engine
        self.uri = (root / "refs.bib").as_uri()
        self.text = text
        self.ws.open(self.uri, text)
        self.ws.focus = (self.uri, 0)

    async def settle(self) -> None:
        """A pass, and the lookups it queued done."""
        await self.ws.want()
        verifier = self.ws.verifier
        while verifier._queued or verifier._running:
            await asyncio.sleep(0.001)

    def edit(self, old: str, new: str) -> None:
        at = self.text.index(old)
        self.text = self.text[:at] + new + self.text[at + len(old):]
        self.ws.open(self.uri, self.text)
        self.ws.focus = (self.uri, at)

    def ref(self, key: str) -> Reference:
        return next(r for r in self.ws.document(self.uri).references if r.key == key)


def counted_identities(verifier, monkeypatch) -> list[str]:
    """The keys of the references the verifier asks the identity of from now on."""
    asked: list[str] = []
    identity = verifier.identity

    def counted(ref: Reference) -> str:
        asked.append(ref.key)
        return identity(ref)

    monkeypatch.setattr(verifier, "identity", counted)
    return asked


def everything_wanted(ws: Workspace) -> dict[str, int]:
    """What a pass over every wanted reference holds: identity → entries that have it."""
    holders: dict[str, set[int]] = {}
    for ref in ws.wanted():
        holders.setdefault(ws.verifier.identity(ref), set()).add(id(ref))
    return {identity: len(refs) for identity, refs in holders.items()}


def kept(ws: Workspace) -> dict[str, int]:
    return {identity: len(refs) for identity, refs in ws.verifier._holders.items()}


async def test_an_edit_of_one_entry_names_and_looks_up_that_entry_alone(tmp_path, monkeypatch):
    lib = Library(tmp_path)
    await lib.settle()
    verifier = lib.ws.verifier
    assert len(verifier.results) == ENTRIES
    named, lib.engine.looked_up = verifier.named, []
    lib.edit("Work number 30}", "Work number 30b}")
    asked = counted_identities(verifier, monkeypatch)
    await lib.settle()
    assert set(asked) == {"k30"} and len(asked) <= 3, asked
    assert verifier.named - named == 1, "one identity worked out, not one per entry"
    assert lib.engine.looked_up == ["k30"]
    assert verifier.visited <= 5  # the entry replaced, its successor named, ordered, looked up
    assert lib.ws.result(lib.ref("k30")) is not None
    assert kept(lib.ws) == everything_wanted(lib.ws)


async def test_a_pass_with_nothing_changed_or_the_cursor_moved_visits_and_orders_nothing(
        tmp_path, monkeypatch):
    lib = Library(tmp_path)
    await lib.settle()
    ordered: list[int] = []
    real = lib.ws.wanting.ordered
    monkeypatch.setattr(lib.ws.wanting, "ordered",
                        lambda refs: ordered.append(len(refs)) or real(refs))
    named = lib.ws.verifier.named
    asked = counted_identities(lib.ws.verifier, monkeypatch)
    for offset in (0, len(BIB) // 2, len(BIB) - 1):
        lib.ws.focus = (lib.uri, offset)
        await lib.ws.want()
        assert lib.ws.verifier.visited == 0
    assert ordered == [] and asked == [] and lib.ws.verifier.named == named
    assert lib.engine.looked_up.count("k1") == 1


async def test_an_edited_entry_not_in_the_cache_is_looked_up_live(tmp_path):
    lib = Library(tmp_path)
    await lib.settle()
    lib.engine.uncached.add("Work number 12 revised")
    lib.edit("Work number 12}", "Work number 12 revised}")
    await lib.settle()
    assert lib.engine.resolved == ["k12"]
    assert lib.ws.result(lib.ref("k12")).resolution.complete


async def test_the_lookup_of_a_removed_entry_is_cancelled_and_a_queued_one_dropped(tmp_path):
    lib = Library(tmp_path)
    await lib.settle()
    engine, verifier = lib.engine, lib.ws.verifier
    engine.gate = asyncio.Event()  # lookups hang until the gate opens
    engine.uncached |= {f"Fresh {i}" for i in range(20)}
    lib.edit(entry(5), "".join(entry(100 + i, f"Fresh {i}") for i in range(20)))
    await lib.ws.want()
    await asyncio.sleep(0.01)
    running = dict(verifier._running)
    assert running and verifier._queued  # 16 workers: some run, the rest wait
    lib.edit("".join(entry(100 + i, f"Fresh {i}") for i in range(20)), "")
    await lib.ws.want()
    await asyncio.sleep(0.01)
    assert all(task.cancelled() for task in running.values())
    assert not verifier._queued and not verifier._running
    engine.gate.set()
    assert kept(lib.ws) == everything_wanted(lib.ws)


async def test_two_entries_sharing_an_identity_count_twice_in_the_status(tmp_path):
    twins = entry(0, "Shared work", "10.1000/same") + entry(1, "Shared work", "10.1000/same")
    lib = Library(tmp_path, twins + BIB.replace("{k0,", "{k900,").replace("{k1,", "{k901,"))
    lib.engine.offline = lib.ws.verifier.offline = True
    await lib.settle()
    verifier = lib.ws.verifier
    assert verifier.identity(lib.ref("k0")) == verifier.identity(lib.ref("k1"))
    assert kept(lib.ws) == everything_wanted(lib.ws)
    total = ENTRIES + 2
    assert lib.listener.said[-1] == f"offline — {total} references not checked"
    lib.edit(entry(1, "Shared work", "10.1000/same"), "")  # one twin deleted
    await lib.settle()
    assert lib.listener.said[-1] == f"offline — {total - 1} references not checked"
    assert lib.engine.looked_up.count("k0") == 1, "the identity stayed wanted: not looked up"
    identity = verifier.identity(lib.ref("k0"))
    verifier.results[identity] = resolution(lib.ref("k0"), "clean")  # the network answered
    verifier._say_status()
    assert lib.listener.said[-1] == f"offline — {total - 2} references not checked"


async def test_a_result_removed_from_a_wanted_identity_is_looked_up_again(tmp_path):
    lib = Library(tmp_path)
    await lib.settle()
    verifier = lib.ws.verifier
    del verifier.results[verifier.identity(lib.ref("k7"))]
    lib.engine.looked_up = []
    await lib.settle()
    assert lib.engine.looked_up == ["k7"]
    assert lib.ws.result(lib.ref("k7")) is not None


async def test_queued_lookups_go_most_urgent_first_as_the_whole_list_orders_them(tmp_path):
    paper = "---\nbibliography: refs.bib\n---\nFirst @k40, then [@k3; @k50] and @k9.\n"
    (tmp_path / "refs.bib").write_text(BIB, encoding="utf-8")
    (tmp_path / "paper.md").write_text(paper, encoding="utf-8")
    lib = Library(tmp_path)
    paper_uri = (tmp_path / "paper.md").as_uri()
    lib.ws.open(paper_uri, paper)
    other = (tmp_path / "more.bib").as_uri()
    lib.ws.open(other, "".join(entry(200 + i) for i in range(5)))
    lib.engine.uncached = {f"Work number {i}" for i in (*range(ENTRIES), *range(200, 205))}
    lib.engine.gate = asyncio.Event()
    lib.ws.focus = (paper_uri, paper.index("@k50"))
    await lib.ws.want()
    verifier = lib.ws.verifier
    queue = sorted(verifier._queue)
    keys = [verifier._queued[i].key for _r, _s, i, _f in queue if i in verifier._queued]
    started = [r.key for r in lib.ws.wanted() if verifier.identity(r) in verifier._running]
    order = list(dict.fromkeys(r.key for r in lib.ws.wanted()))
    assert started + keys == [k for k in order if k in set(started + keys)]
    assert order[:4] == ["k50", "k3", "k9", "k40"]  # by distance from the cursor
    refs = [r for uri in (lib.uri, other) for r in lib.ws.document(uri).references]
    for focus in [(paper_uri, paper.index("@k50")), (lib.uri, len(BIB) // 2), None]:
        lib.ws.focus = focus
        assert lib.ws.wanting.ordered(random.Random(1).sample(refs, len(refs))) == list(
            dict.fromkeys(lib.ws.wanted()))
    lib.engine.gate.set()
    verifier.cancel_all()


async def test_any_sequence_of_edits_keeps_what_a_pass_over_everything_holds(tmp_path):
    """Entries edited, inserted, deleted and duplicated, a manuscript opened, edited and
    closed, passes skipped between parses: the identities wanted and the entries sharing
    each are those of a pass over every wanted reference, and each has its result."""
    lib = Library(tmp_path)
    await lib.settle()
    rng = random.Random(27)
    paper_uri = (tmp_path / "paper.md").as_uri()
    paper = "---\nbibliography: refs.bib\n---\n"
    for step in range(60):
        choice = rng.randrange(6)
        keys = [r.key for r in lib.ws.document(lib.uri).references]
        if choice == 0 and keys:  # retitle an entry
            key = rng.choice(keys)
            lib.edit(f"{{{key},\n  title = {{", f"{{{key},\n  title = {{Re{step} ")
        elif choice == 1:  # insert an entry, sometimes a copy of another work
            i = 1000 + step
            title = f"Work number {rng.randrange(ENTRIES)}" if rng.random() < 0.5 else None
            lib.edit("@article{k", entry(i, title) + "@article{k")
        elif choice == 2 and keys:  # delete an entry
            key = rng.choice(keys)
            start = lib.text.index(f"@article{{{key},")
            lib.edit(lib.text[start:lib.text.index("}\n\n", start) + 3], "")
        elif choice == 3:  # the manuscript cites, opens or closes
            if lib.ws.document(paper_uri) is not None and rng.random() < 0.3:
                lib.ws.close(paper_uri)
            else:
                paper += f"See @{rng.choice(keys)}.\n"
                lib.ws.open(paper_uri, paper)
        elif choice == 4:
            lib.ws.focus = (lib.uri, rng.randrange(len(lib.text)))
        if rng.random() < 0.6:  # else the next pass takes in two changes
            await lib.settle()
            assert kept(lib.ws) == everything_wanted(lib.ws), step
            assert all(lib.ws.result(r) is not None for r in lib.ws.wanted()), step
