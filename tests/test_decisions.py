import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

import pytest

from citelsp.config import Settings
from citelsp.documents.model import Person, Work
from citelsp.resolution.identifiers import Identifier, ReferenceIds
from citelsp.resolution.identity import identity_of
from citelsp.verdict import decisions as decisions_module
from citelsp.verdict.decisions import (
    MAX_DECISIONS_BYTES,
    Decision,
    DecisionsRefused,
    DecisionStore,
    PermanentRejection,
)
from citelsp.workspace import Workspace
from citelsp.workspace.verification import Listener
from tests.test_cli import ROOT, citelsp

WORK = Work(title="Attention Is All You Need", authors=(Person("Vaswani", "A."),), year=2017)
IDS = ReferenceIds(doi=Identifier("doi", "10.5555/x", "doi", "10.5555/X"))


def test_identity_is_stable_and_tracks_what_is_cited():
    same = Work(
        title="attention is all you need!", authors=(Person("VASWANI", "Ashish"),), year=2017
    )
    assert identity_of(IDS, WORK) == identity_of(IDS, same)
    assert identity_of(IDS, WORK) != identity_of(ReferenceIds(), WORK)
    assert identity_of(IDS, WORK) != identity_of(IDS, Work(title=WORK.title, year=2018))
    assert identity_of(IDS, WORK) != identity_of(IDS, Work(title=WORK.title, year=2017))


def test_record_persists_across_stores(tmp_path):
    identity = identity_of(IDS, WORK)
    store = DecisionStore(tmp_path)
    assert store.load() == []
    store.record(Decision("vaswani2017", identity, "verified", "checked the PDF"))
    fresh = DecisionStore(tmp_path)
    fresh.load()
    decision, stale = fresh.get("vaswani2017", identity)
    assert (decision.decision, decision.note, stale) == ("verified", "checked the PDF", False)
    assert decision.decided_at.endswith("+00:00")
    data = json.loads((tmp_path / ".citelsp" / "decisions.json").read_text())
    assert data["decisions"][0]["citation_key"] == "vaswani2017"


def test_changed_identity_makes_the_decision_stale(tmp_path):
    store = DecisionStore(tmp_path)
    store.record(Decision("k", "old-identity", "verified"))
    decision, stale = store.get("k", "new-identity")
    assert decision is not None and decision.identity == "old-identity" and stale
    assert store.get("other", "new-identity") == (None, False)


def test_rejection_is_permanent_for_its_identity(tmp_path):
    store = DecisionStore(tmp_path)
    store.record(Decision("k", "id1", "rejected", "no such paper"))
    with pytest.raises(PermanentRejection):
        store.record(Decision("k", "id1", "verified"))
    assert store.get("k", "id1")[0].decision == "rejected"
    store.record(Decision("k", "id2", "verified"))
    assert store.get("k", "id2")[0].decision == "verified"
    assert store.get("k", "id1")[0].decision == "rejected"


def test_verified_can_become_rejected(tmp_path):
    store = DecisionStore(tmp_path)
    store.record(Decision("k", "id1", "verified"))
    store.record(Decision("k", "id1", "rejected"))
    assert store.get("k", "id1")[0].decision == "rejected"
    assert len(store.load()) == 1


def test_record_merges_with_another_writer(tmp_path):
    first, second = DecisionStore(tmp_path), DecisionStore(tmp_path)
    first.load()
    second.load()
    first.record(Decision("a", "i", "verified"))
    second.record(Decision("b", "i", "verified"))
    assert {d.citation_key for d in DecisionStore(tmp_path).load()} == {"a", "b"}


def test_write_is_atomic_and_leaves_no_temporary_files(tmp_path, monkeypatch):
    store = DecisionStore(tmp_path)
    store.record(Decision("a", "i", "verified"))
    before = store.path.read_bytes()

    def broken_replace(src, dst, **dir_fds):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(DecisionsRefused, match=r"\(disk full\): nothing was recorded"):
        store.record(Decision("b", "i", "verified"))
    assert store.path.read_bytes() == before
    assert sorted(p.name for p in store.path.parent.iterdir()) == [
        "decisions.json", "decisions.json.lock"]


@pytest.mark.parametrize("content", ["{not json", '{"decisions": [{"bogus": 1}]}', "[]"])
def test_corrupt_file_reads_as_empty_and_is_backed_up_before_rewrite(tmp_path, content):
    path = tmp_path / ".citelsp" / "decisions.json"
    path.parent.mkdir()
    path.write_text(content)
    store = DecisionStore(tmp_path)
    assert store.load() == [] and store.corrupt
    assert path.read_text() == content
    store.record(Decision("k", "i", "verified"))
    assert (path.parent / "decisions.json.bak").read_text() == content
    assert [d.citation_key for d in DecisionStore(tmp_path).load()] == ["k"]


WRITER = """
import sys, time
from pathlib import Path
from citelsp.verdict.decisions import Decision, DecisionStore
root, prefix, start = Path(sys.argv[1]), sys.argv[2], float(sys.argv[3])
time.sleep(max(0.0, start - time.time()))  # both writers begin together
for i in range(40):
    kind = "rejected" if i % 2 else "verified"
    DecisionStore(root).record(Decision(f"{prefix}{i}", "identity", kind))
"""


def test_two_processes_recording_at_once_lose_nothing(tmp_path):
    start = str(time.time() + 1.5)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), prefix, start],
                                env=env) for prefix in ("a", "b")]
    assert [w.wait(timeout=120) for w in writers] == [0, 0]
    store = DecisionStore(tmp_path)
    found = {(d.citation_key, d.decision) for d in store.load()}
    assert store.problem is None
    assert found == {(f"{p}{i}", "rejected" if i % 2 else "verified")
                     for p in "ab" for i in range(40)}


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_thirty_kills_during_decide_leave_every_finished_decision(tmp_path):
    keys = [f"k{i}" for i in range(30)]
    (tmp_path / "refs.bib").write_text("".join(
        f"@article{{{k}, title = {{Work {k}}}, year = 2020}}\n" for k in keys))
    env = {k: v for k, v in os.environ.items() if not k.startswith("CITELSP_")}
    env.update(PYTHONPATH=str(ROOT), CITELSP_CACHE_DIR=str(tmp_path / ".cache"))
    finished: set[str] = set()
    chance = random.Random(29)
    for key in keys:
        decide = subprocess.Popen([sys.executable, "-m", "citelsp", "decide", key, "--rejected"],
                                  cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        time.sleep(chance.uniform(0.2, 0.9))
        decide.send_signal(signal.SIGKILL)
        if decide.wait() == 0:
            finished.add(key)
        store = DecisionStore(tmp_path)
        on_file = {d.citation_key for d in store.load() if d.decision == "rejected"}
        assert store.problem is None and not store.corrupt, key
        assert finished <= on_file <= set(keys)
    done = subprocess.run([sys.executable, "-m", "citelsp", "decide", "k0", "--rejected"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, "no lock is left behind by a killed writer"


def over_the_cap(tmp_path: Path) -> bytes:
    """A decisions file of real decisions (one a rejection) past the 8 MiB read cap."""
    decisions = [asdict(Decision("gone", "i", "rejected", "no such paper"))]
    decisions += [asdict(Decision(f"k{i}", "i", "verified", "x" * 10_000)) for i in range(900)]
    raw = json.dumps({"version": 1, "decisions": decisions}).encode()
    assert len(raw) > MAX_DECISIONS_BYTES
    path = tmp_path / ".citelsp" / "decisions.json"
    path.parent.mkdir()
    path.write_bytes(raw)
    return raw


def test_a_file_over_the_cap_is_reported_and_never_rewritten(tmp_path):
    raw = over_the_cap(tmp_path)
    store = DecisionStore(tmp_path)
    assert store.load() == []
    assert "none of its decisions (rejections included) is applied" in store.problem
    assert "move old decisions out of it" in store.problem
    with pytest.raises(DecisionsRefused, match="larger than 8 MiB"):
        store.record(Decision("new", "i", "verified"))
    with pytest.raises(DecisionsRefused, match="larger than 8 MiB"):
        store.clear("gone")
    assert store.path.read_bytes() == raw


def test_the_writer_is_told_when_decisions_cannot_be_applied(tmp_path):
    over_the_cap(tmp_path)
    (tmp_path / "refs.bib").write_text("@article{gone, title = {Gone}, year = 2020}\n")
    done = citelsp("check", "refs.bib", "--offline", "--fail-on", "never", cwd=tmp_path)
    assert "decisions.json is larger than 8 MiB" in done.stderr
    refused = citelsp("decide", "gone", "--verified", cwd=tmp_path)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "rejections included" in refused.stderr


def test_an_unreadable_file_is_not_replaced_by_an_empty_one(tmp_path, monkeypatch):
    store = DecisionStore(tmp_path)
    store.record(Decision("gone", "i", "rejected"))
    before = store.path.read_bytes()

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(decisions_module, "read_bytes", refuse)
    with pytest.raises(DecisionsRefused, match="cannot be read .Permission denied"):
        store.record(Decision("new", "i", "verified"))
    assert store.path.read_bytes() == before
    assert not store.path.with_name("decisions.json.bak").exists()


def test_a_decision_that_would_pass_the_cap_is_refused(tmp_path):
    store = DecisionStore(tmp_path)
    store.record(Decision("gone", "i", "rejected"))
    before = store.path.read_bytes()
    with pytest.raises(DecisionsRefused, match="would grow past 8 MiB"):
        store.record(Decision("big", "i", "verified", "x" * MAX_DECISIONS_BYTES))
    assert store.path.read_bytes() == before


def test_decide_on_a_full_disk_says_so_and_exits_2(small_disk):
    full_disk = small_disk
    (full_disk / "refs.bib").write_text("@article{a, title = {A}, year = 2020}\n"
                                        "@article{b, title = {B}, year = 2020}\n")
    assert citelsp("decide", "a", "--rejected", cwd=full_disk).returncode == 0
    before = (full_disk / ".citelsp" / "decisions.json").read_bytes()
    with contextlib.suppress(OSError), (full_disk / "filler").open("wb") as filler:
        while True:
            filler.write(bytes(4096))
            filler.flush()
    done = citelsp("decide", "b", "--rejected", cwd=full_disk)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "No space left on device" in done.stderr and "nothing was recorded" in done.stderr
    assert (full_disk / ".citelsp" / "decisions.json").read_bytes() == before


def test_the_editor_is_told_when_decisions_on_file_are_not_applied(tmp_path):
    """A parsed-but-broken or refused file is a notice to the writer (the editor shows it),
    never a silent empty list."""
    class Notices(Listener):
        def __init__(self) -> None:
            self.told: list[str] = []

        def notice(self, message: str) -> None:
            self.told.append(message)

    over_the_cap(tmp_path)
    notices = Notices()
    Workspace(Settings(), [tmp_path], listener=notices)
    assert len(notices.told) == 1 and "rejections included" in notices.told[0]
    (tmp_path / ".citelsp" / "decisions.json").write_text("{not json")
    notices.told.clear()
    Workspace(Settings(), [tmp_path], listener=notices)
    assert len(notices.told) == 1 and "cannot be parsed" in notices.told[0]


def test_a_decision_is_found_as_a_scan_of_every_decision_finds_it(tmp_path):
    """``get`` files the decisions by key (publishing asks for every entry of a library):
    it answers what reading the whole list in order answers, after every change."""
    rng = random.Random(5)
    store = DecisionStore(tmp_path)

    def scanned(key: str, identity: str) -> tuple[Decision | None, bool]:
        decisions = store.load()
        exact = [d for d in decisions if d.citation_key == key and d.identity == identity]
        if exact:
            return exact[0], False
        same_key = [d for d in decisions if d.citation_key == key]
        return (same_key[-1], True) if same_key else (None, False)

    for step in range(60):
        key, identity = f"k{rng.randrange(6)}", f"i{rng.randrange(4)}"
        if rng.random() < 0.2:
            store.clear(key)
        else:
            store.record(Decision(key, identity, "verified", f"note {step}"))
        for probe_key, probe_identity in [(f"k{k}", f"i{i}") for k in range(7) for i in range(5)]:
            assert store.get(probe_key, probe_identity) == scanned(probe_key, probe_identity)
