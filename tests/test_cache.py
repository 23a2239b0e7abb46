"""The answer cache: round trips, versions, lifetimes, staleness, corruption, sharing."""

from __future__ import annotations

import dataclasses
import json
import logging
import multiprocessing
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing, contextmanager
from datetime import UTC, datetime
from pathlib import Path

import diskcache
import pytest
from hypothesis import given
from hypothesis import strategies as st

from citelsp.documents.model import Person
from citelsp.resolution.cache import CACHE_VERSION, AnswerCache
from citelsp.resolution.outcome import (
    Agency,
    Found,
    Handle,
    Malformed,
    NotFound,
    Record,
    Retraction,
    Unreachable,
)

DAY = 86400.0
START = 1_780_000_000.0

RECORD = Record(
    source="crossref",
    title="Attention Is All You Need",
    titles=("Attention Is All You Need",),
    short_titles=("Attention",),
    authors=(Person("Vaswani", "Ashish"), Person("Google Brain", literal=True)),
    years=(2017, 2018),
    venue="Advances in Neural Information Processing Systems",
    venue_aliases=("NeurIPS", "NIPS"),
    issns=("1049-5258",),
    volume="30",
    issue="1",
    first_page="5998",
    doi="10.5555/3295222.3295349",
    arxiv_id="1706.03762",
    source_id="W2963403868",
    work_type="proceedings-article",
    is_preprint=False,
    retractions=(Retraction("crossref", "10.1/notice", "2020-01-01"),),
    url="https://doi.org/10.5555/3295222.3295349",
)


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now

    def advance(self, days: float) -> None:
        self.now += days * DAY


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def cache(tmp_path, clock):
    answers = AnswerCache(tmp_path / "cache", clock=clock)
    yield answers
    answers.close()


@pytest.mark.parametrize(
    "answer",
    [
        Found((RECORD, Record(source="crossref", title="Other"))),
        Found(()),
        NotFound(),
        NotFound("no such DOI"),
        Agency("Crossref"),
        Agency(None),
        Handle(True),
        Handle(False),
        Malformed("incorrect id format for 1706.0376x"),
    ],
)
def test_every_answer_round_trips(cache, answer):
    cache.put("crossref", "doi", "10.5555/3295222.3295349", answer)
    cached = cache.get("crossref", "doi", "10.5555/3295222.3295349")
    assert cached is not None
    assert cached.answer == answer
    assert cached.stored_at == datetime.fromtimestamp(START, UTC)
    assert cached.age_days == 0.0
    assert cached.stale is False


def test_record_from_dict_ignores_unknown_keys_and_defaults_missing_ones():
    data = RECORD.to_dict() | {"added_by_a_newer_writer": 1}
    decoded = Record.from_dict(data)
    assert decoded == RECORD and hash(decoded) == hash(RECORD)
    assert not hasattr(decoded, "added_by_a_newer_writer")
    assert Record.from_dict({"source": "openalex", "title": "T"}) == Record("openalex", "T")
    with pytest.raises(TypeError):
        Record.from_dict({"title": "T"})


@pytest.mark.parametrize("record", [RECORD, Record(source="openalex")])
def test_record_to_dict_is_what_asdict_gives(record):
    """Written out for speed; ``asdict`` names every field of Record, Person and Retraction,
    so a field added to any of them without ``to_dict`` fails here."""
    assert json.dumps(record.to_dict()) == json.dumps(dataclasses.asdict(record))


def test_an_unreadable_record_is_a_miss(cache):
    cache.put("crossref", "doi", "10.1/x", Found((RECORD,)))
    raw = cache._cache
    (key,) = list(raw)
    entry = json.loads(raw[key])
    del entry["answer"]["records"][0]["source"]
    raw.set(key, json.dumps(entry))
    assert cache.get("crossref", "doi", "10.1/x") is None


def test_entries_read_back_whichever_encoder_wrote_them(cache):
    """orjson writes entries; one with a lone surrogate (which orjson refuses) is written by
    ``json`` with escapes, and entries an older version wrote with ``json`` still read."""
    odd = Found((Record(source="crossref", title="Broken \ud800 title"),))
    cache.put("crossref", "doi", "10.1/odd", odd)
    assert cache.get("crossref", "doi", "10.1/odd").answer == odd
    cache.put("crossref", "doi", "10.1/x", Found((RECORD,)))
    raw = cache._cache
    (key,) = [k for k in raw if "10.1/x" in k]
    raw.set(key, json.dumps(json.loads(raw[key])))  # as the stdlib wrote it: ASCII escapes
    assert cache.get("crossref", "doi", "10.1/x").answer == Found((RECORD,))


def test_key_is_resolver_form_and_normalized_query(cache):
    cache.put("crossref", "doi", "10.1000/ABC", NotFound())
    assert cache.get("crossref", "doi", "  10.1000/abc ") is not None
    assert cache.get("openalex", "doi", "10.1000/abc") is None
    assert cache.get("crossref", "title", "10.1000/abc") is None


@given(st.text(), st.text(), st.text())
def test_keys_are_the_json_list_older_caches_hold(resolver, form, query):
    """The key's format is the stored data's: a change would lose every cached answer."""
    answers = AnswerCache.__new__(AnswerCache)
    answers._version = CACHE_VERSION
    assert answers._key(resolver, form, query) == json.dumps(
        [CACHE_VERSION, resolver, form, query.strip().lower()])


def test_unreachable_is_never_stored(cache, tmp_path):
    cache.put("crossref", "doi", "10.1/x", Unreachable("HTTP 503 from api.crossref.org"))
    assert cache.get("crossref", "doi", "10.1/x") is None
    with diskcache.Cache(str(tmp_path / "cache")) as raw:
        assert len(raw) == 0


def test_unreachable_does_not_replace_a_stored_answer(cache):
    cache.put("crossref", "doi", "10.1/x", Found((RECORD,)))
    cache.put("crossref", "doi", "10.1/x", Unreachable("timed out"))
    assert cache.get("crossref", "doi", "10.1/x").answer == Found((RECORD,))


OTHER_VERSION = CACHE_VERSION + "-other"


def test_another_version_is_a_miss(tmp_path, clock):
    with_v1 = AnswerCache(tmp_path, clock=clock)
    with_v1.put("crossref", "doi", "10.1/x", Found((RECORD,)))
    with_v2 = AnswerCache(tmp_path, version=OTHER_VERSION, clock=clock)
    assert with_v2.get("crossref", "doi", "10.1/x") is None
    assert with_v1.get("crossref", "doi", "10.1/x") is not None


def test_version_stored_in_the_value_is_checked_too(tmp_path, clock):
    writer = AnswerCache(tmp_path, clock=clock)
    writer.put("crossref", "doi", "10.1/x", NotFound())
    writer.close()
    with diskcache.Cache(str(tmp_path)) as raw:
        (key,) = list(raw)
        raw.set(key.replace(f'["{CACHE_VERSION}"', f'["{OTHER_VERSION}"'), raw[key])
    reader = AnswerCache(tmp_path, version=OTHER_VERSION, clock=clock)
    assert reader.get("crossref", "doi", "10.1/x") is None


@pytest.mark.parametrize(
    ("answer", "kind", "days"),
    [
        (Found((RECORD,)), None, 90),
        (NotFound(), None, 7),
        (Malformed("bad id"), None, 7),
        (Agency("DataCite"), None, 90),
        (Agency(None), None, 7),
        (Handle(True), None, 90),
        (Handle(False), None, 7),
        (Found((RECORD,)), "retraction", 30),
    ],
)
def test_lifetimes(cache, clock, answer, kind, days):
    cache.put("crossref", "doi", "10.1/x", answer, kind=kind)
    clock.advance(days - 0.01)
    assert cache.get("crossref", "doi", "10.1/x") is not None
    clock.advance(0.02)
    assert cache.get("crossref", "doi", "10.1/x") is None


def test_old_answers_are_flagged_stale(cache, clock):
    cache.put("crossref", "doi", "10.1/x", Found((RECORD,)))
    clock.advance(29.5)
    fresh = cache.get("crossref", "doi", "10.1/x")
    assert fresh.stale is False and fresh.age_days == pytest.approx(29.5)
    clock.advance(1)
    old = cache.get("crossref", "doi", "10.1/x")
    assert old.stale is True and old.age_days == pytest.approx(30.5)
    assert old.stored_at == datetime.fromtimestamp(START, UTC)


def test_stale_days_zero_never_flags(tmp_path, clock):
    answers = AnswerCache(tmp_path, stale_days=0, clock=clock)
    answers.put("crossref", "doi", "10.1/x", Found((RECORD,)))
    clock.advance(80)
    assert answers.get("crossref", "doi", "10.1/x").stale is False


def test_delete_and_clear(cache):
    cache.put("crossref", "doi", "10.1/a", NotFound())
    cache.put("crossref", "doi", "10.1/b", NotFound())
    cache.delete("crossref", "doi", "10.1/A")
    assert cache.get("crossref", "doi", "10.1/a") is None
    assert cache.get("crossref", "doi", "10.1/b") is not None
    cache.clear()
    assert cache.get("crossref", "doi", "10.1/b") is None


# --- whose database, and when it may be rebuilt (issue 13, item 4) -----------------------------


def snapshot(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


def filled(directory: Path, clock, count: int = 200) -> None:
    """Our database with ``count`` answers in it, closed (checkpointed into cache.db)."""
    answers = AnswerCache(directory, clock=clock)
    for i in range(count):
        answers.put("crossref", "doi", f"10.1/{i}", Found((RECORD,)))
    answers.close()


def quick_check(database: Path) -> list[tuple]:
    with closing(sqlite3.connect(database)) as con:
        try:
            return con.execute("PRAGMA quick_check").fetchall()
        except sqlite3.DatabaseError as exc:
            return [(str(exc),)]


def flip_index_page(database: Path) -> None:
    """Damage the root page of the expiry index: reads by key still work, so only an
    integrity check notices (the bit rot that used to stay in place)."""
    with closing(sqlite3.connect(database)) as con:
        (root,) = con.execute("SELECT rootpage FROM sqlite_master "
                              "WHERE name = 'Cache_expire_time'").fetchone()
        (page_size,) = con.execute("PRAGMA page_size").fetchone()
    with database.open("r+b") as file:
        file.seek((root - 1) * page_size)
        file.write(b"\xff" * 16)
    assert quick_check(database) != [("ok",)]


@contextmanager
def immutable(path: Path) -> Iterator[None]:
    """``chattr +i``: read-only even for root (the tests run as root in CI)."""
    if shutil.which("chattr") is None or subprocess.run(
            ["chattr", "+i", str(path)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i is not available here")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


def test_a_damaged_database_of_ours_is_rebuilt_and_nothing_else_touched(tmp_path, clock):
    directory = tmp_path / "cache"
    filled(directory, clock)
    (directory / "notes.txt").write_text("not ours")
    flip_index_page(directory / "cache.db")

    rebuilt = AnswerCache(directory, clock=clock)
    assert quick_check(directory / "cache.db") == [("ok",)]
    assert rebuilt.get("crossref", "doi", "10.1/1") is None
    rebuilt.put("crossref", "doi", "10.1/y", Handle(True))
    assert rebuilt.get("crossref", "doi", "10.1/y").answer == Handle(True)
    assert (directory / "notes.txt").read_text() == "not ours"


@pytest.mark.parametrize("content", [
    b"this is not sqlite" * 500,
    b"",
    b"SQLite format 3\x00 but only a header",
])
def test_a_file_that_is_not_our_database_is_left_alone(tmp_path, clock, caplog, content):
    directory = tmp_path / "cache"
    directory.mkdir()
    (directory / "cache.db").write_bytes(content)
    before = snapshot(directory)

    answers = AnswerCache(directory, clock=clock)
    answers.put("crossref", "doi", "10.1/x", NotFound())
    assert answers.get("crossref", "doi", "10.1/x") is None
    answers.clear()
    answers.close()
    assert snapshot(directory) == before
    assert "answer cache off" in caplog.text


def test_a_foreign_sqlite_database_gets_no_tables_and_no_rows(tmp_path, clock):
    directory = tmp_path / "cache"
    directory.mkdir()
    with closing(sqlite3.connect(directory / "cache.db")) as con:
        con.execute("CREATE TABLE notes (body TEXT)")
        con.executemany("INSERT INTO notes VALUES (?)", [(f"note {i}",) for i in range(50)])
        con.commit()
    before = snapshot(directory)

    answers = AnswerCache(directory, clock=clock)
    answers.put("crossref", "doi", "10.1/x", NotFound())
    answers.close()
    assert snapshot(directory) == before


def test_a_database_from_before_the_marker_is_adopted(tmp_path, clock):
    directory = tmp_path / "cache"
    with diskcache.Cache(str(directory)) as legacy:
        legacy.set(json.dumps([CACHE_VERSION, "crossref", "doi", "10.1/x"]), json.dumps(
            {"version": CACHE_VERSION, "stored_at": START, "expires_at": START + DAY,
             "answer": {"type": "handle", "exists": True}}))
    answers = AnswerCache(directory, clock=clock)
    assert answers.get("crossref", "doi", "10.1/x").answer == Handle(True)
    answers.close()
    with closing(sqlite3.connect(directory / "cache.db")) as con:
        assert con.execute("PRAGMA application_id").fetchone()[0] != 0


HOLD_LOCK = """
import sqlite3, sys
con = sqlite3.connect(sys.argv[1], isolation_level=None)
con.execute("BEGIN EXCLUSIVE")
con.execute("UPDATE Settings SET value = value WHERE key = 'count'")
print("locked", flush=True)
sys.stdin.readline()
con.execute("COMMIT")
"""


def test_a_database_locked_by_another_process_is_read_not_deleted(tmp_path, clock, caplog):
    directory = tmp_path / "cache"
    filled(directory, clock)
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(directory / "cache.db")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        answers = AnswerCache(directory, clock=clock)
        assert answers.get("crossref", "doi", "10.1/7").answer == Found((RECORD,))
        answers.put("crossref", "doi", "10.1/new", NotFound())
        assert answers.get("crossref", "doi", "10.1/new") is None
        answers.close()
        holder.communicate("\n", timeout=30)
    finally:
        holder.kill()
    assert holder.returncode == 0
    assert "held by another process" in caplog.text
    again = AnswerCache(directory, clock=clock)
    assert all(again.get("crossref", "doi", f"10.1/{i}") is not None for i in range(200))


def test_a_read_only_database_is_read_not_rebuilt(tmp_path, clock):
    directory = tmp_path / "cache"
    filled(directory, clock)
    before = (directory / "cache.db").read_bytes()
    with immutable(directory / "cache.db"):
        answers = AnswerCache(directory, clock=clock)
        assert answers.get("crossref", "doi", "10.1/3").answer == Found((RECORD,))
        answers.put("crossref", "doi", "10.1/new", NotFound())
        answers.clear()
        assert answers.get("crossref", "doi", "10.1/3") is not None
        answers.close()
    assert (directory / "cache.db").read_bytes() == before


def test_a_pass_answers_misses_without_asking_sqlite(cache, monkeypatch):
    cache.put("crossref", "doi", "10.1/known", NotFound())
    asked: list[str] = []
    store = cache._cache
    monkeypatch.setattr(store, "get", lambda key, *a, **k: asked.append(key) or None)
    with cache.pass_over():
        assert cache.get("crossref", "doi", "10.1/absent") is None
        assert asked == []  # not stored when the pass began: no query
        cache.get("crossref", "doi", "10.1/KNOWN ")  # the same normalized key is asked for
        assert len(asked) == 1
        cache.put("crossref", "doi", "10.1/later", NotFound())  # stored during the pass
        cache.get("crossref", "doi", "10.1/later")
        assert len(asked) == 2
    cache.get("crossref", "doi", "10.1/absent")  # after the pass every key is asked for
    assert len(asked) == 3


def test_a_pass_over_a_read_only_database_still_finds_its_answers(tmp_path, clock):
    directory = tmp_path / "cache"
    filled(directory, clock)
    with immutable(directory):
        answers = AnswerCache(directory, clock=clock)
        assert type(answers._cache).__name__ == "ReadOnlyStore"
        with answers.pass_over():
            assert answers.get("crossref", "doi", "10.1/3").answer == Found((RECORD,))
            assert answers.get("crossref", "doi", "10.1/absent") is None
        answers.close()


def test_a_pass_whose_listing_fails_asks_for_every_key(cache, monkeypatch):
    cache.put("crossref", "doi", "10.1/known", NotFound())

    def broken():
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(cache._cache, "iterkeys", broken)
    with cache.pass_over():
        assert cache.get("crossref", "doi", "10.1/known").answer == NotFound()


def test_a_read_only_directory_is_read_not_rebuilt(tmp_path, clock):
    directory = tmp_path / "cache"
    filled(directory, clock)
    before = snapshot(directory)
    with immutable(directory):
        answers = AnswerCache(directory, clock=clock)
        assert answers.get("crossref", "doi", "10.1/3").answer == Found((RECORD,))
        answers.put("crossref", "doi", "10.1/new", NotFound())
        answers.close()
    assert snapshot(directory) == before


def test_a_database_error_on_a_sound_database_rebuilds_nothing(cache, monkeypatch):
    cache.put("crossref", "doi", "10.1/x", NotFound())

    def spurious(self, *args, **kwargs):
        raise sqlite3.DatabaseError("database disk image is malformed")

    with monkeypatch.context() as patch:
        patch.setattr(diskcache.Cache, "get", spurious)
        assert cache.get("crossref", "doi", "10.1/x") is None
    assert cache.get("crossref", "doi", "10.1/x") is not None


def test_damage_found_while_open_rebuilds(tmp_path, clock):
    directory = tmp_path / "cache"
    answers = AnswerCache(directory, clock=clock)
    for i in range(200):
        answers.put("crossref", "doi", f"10.1/{i}", Found((RECORD,)))
    answers._cache.close()
    flip_index_page(directory / "cache.db")
    answers.put("crossref", "doi", "10.1/after", NotFound())
    answers.put("crossref", "doi", "10.1/after", NotFound())
    assert answers.get("crossref", "doi", "10.1/after") is not None
    assert quick_check(directory / "cache.db") == [("ok",)]


def test_transient_errors_are_a_miss_and_ignored_without_rebuild(cache, monkeypatch):
    cache.put("crossref", "doi", "10.1/x", NotFound())

    def locked(self, *args, **kwargs):
        raise sqlite3.OperationalError("database is locked")

    with monkeypatch.context() as patch:
        patch.setattr(diskcache.Cache, "get", locked)
        patch.setattr(diskcache.Cache, "set", locked)
        assert cache.get("crossref", "doi", "10.1/x") is None
        cache.put("crossref", "doi", "10.1/y", NotFound())
    assert cache.get("crossref", "doi", "10.1/x") is not None
    assert cache.get("crossref", "doi", "10.1/y") is None


def test_unusable_directory_disables_the_cache(tmp_path, clock):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the directory should be")
    answers = AnswerCache(blocker, clock=clock)
    answers.put("crossref", "doi", "10.1/x", NotFound())
    assert answers.get("crossref", "doi", "10.1/x") is None
    answers.clear()
    answers.close()


def test_two_instances_share_one_directory(tmp_path, clock):
    first = AnswerCache(tmp_path, clock=clock)
    second = AnswerCache(tmp_path, clock=clock)
    first.put("crossref", "doi", "10.1/x", Found((RECORD,)))
    assert second.get("crossref", "doi", "10.1/x").answer == Found((RECORD,))
    second.put("openalex", "title", "attention is all you need", NotFound())
    assert first.get("openalex", "title", "attention is all you need") is not None
    second.clear()
    assert first.get("crossref", "doi", "10.1/x") is None


def _write_many(directory: str, worker: int, count: int) -> None:
    answers = AnswerCache(Path(directory))
    for i in range(count):
        answers.put("crossref", "doi", f"10.{worker}/{i}", Handle(i % 2 == 0))
        answers.get("crossref", "doi", f"10.{worker}/{i // 2}")
    answers.close()


def test_processes_writing_concurrently_lose_nothing(tmp_path):
    context = multiprocessing.get_context("spawn")
    workers = [
        context.Process(target=_write_many, args=(str(tmp_path), worker, 40)) for worker in range(3)
    ]
    for process in workers:
        process.start()
    for process in workers:
        process.join(60)
    assert [p.exitcode for p in workers] == [0, 0, 0]
    answers = AnswerCache(tmp_path)
    for worker in range(3):
        for i in range(40):
            cached = answers.get("crossref", "doi", f"10.{worker}/{i}")
            assert cached is not None and cached.answer == Handle(i % 2 == 0)


def test_a_full_cache_disk_is_logged_once(small_disk, clock, caplog):
    answers = AnswerCache(small_disk / "cache", clock=clock)
    big = Found(tuple(Record(source="crossref", title=f"{i} " + "x" * 2000) for i in range(20)))
    with caplog.at_level(logging.WARNING, logger="citelsp.cache"):
        for i in range(300):
            answers.put("crossref", "doi", f"10.1/{i}", big)
    answers.close()
    failures = [r.getMessage() for r in caplog.records if "failed" in r.getMessage()]
    assert len(failures) == 1, failures[:3]
    assert "full" in failures[0] and "the same failure again is not logged" in failures[0]


def test_stats_prune_and_purge_of_the_local_cache(tmp_path, clock):
    answers = AnswerCache(tmp_path, clock=clock)
    answers.put("crossref", "doi", "10.1/a", NotFound())
    answers.put("crossref", "doi", "10.1/b", Found((RECORD,)))
    answers.put("openalex", "doi", "10.1/b", Found((RECORD,)))
    AnswerCache(tmp_path, version=OTHER_VERSION, clock=clock).put(
        "crossref", "doi", "10.1/a", NotFound())
    clock.advance(8)  # the not-found answer has expired
    assert [(r.version, r.resolver, r.live, r.expired) for r in answers.stats()] == [
        (CACHE_VERSION, "crossref", 1, 1), (CACHE_VERSION, "openalex", 1, 0),
        (OTHER_VERSION, "crossref", 0, 1)]
    assert answers.prune() == 2
    assert answers.get("crossref", "doi", "10.1/b") is not None
    assert answers.purge() == 2
    assert answers.stats() == []
    answers.close()


def test_cache_commands_on_the_local_cache(tmp_path, monkeypatch, capsys):
    from citelsp.cli import main

    monkeypatch.delenv("CITELSP_CACHE_URL", raising=False)
    monkeypatch.setenv("CITELSP_CACHE_DIR", str(tmp_path))
    answers = AnswerCache(tmp_path)
    answers.put("crossref", "doi", "10.1/a", Found((RECORD,)))
    answers.close()
    assert main(["cache", "stats"]) == 0
    assert capsys.readouterr().out == (f"answer cache: {tmp_path}\nversion {CACHE_VERSION} "
                                       "(current): 1 answer (crossref 1)\n")
    assert main(["cache", "prune"]) == 0
    assert capsys.readouterr().out.startswith("pruned 0 answers")
    assert main(["cache", "clear"]) == 0
    assert capsys.readouterr().out == f"cleared 1 answer from {tmp_path}\n"
    assert main(["cache", "stats"]) == 0
    assert capsys.readouterr().out.endswith("empty\n")
