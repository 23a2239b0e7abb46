import json
import os

import pytest

from citelsp.documents.model import Person, Work
from citelsp.resolution.identifiers import Identifier, ReferenceIds
from citelsp.resolution.identity import identity_of
from citelsp.verdict.decisions import Decision, DecisionStore, PermanentRejection

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

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError):
        store.record(Decision("b", "i", "verified"))
    assert store.path.read_bytes() == before
    assert sorted(p.name for p in store.path.parent.iterdir()) == ["decisions.json"]


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
