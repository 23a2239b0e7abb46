"""The local index in PostgreSQL (DESIGN.md §12–13), against the real server the test session
starts: built from the same snapshot files as the SQLite index, it gives the same answers to the
same questions, a check with it asks no service, and a reader never sees a half-built index."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

from citelsp.config import Settings
from citelsp.documents.model import Person, Work
from citelsp.index.adapter import open_index
from citelsp.index.backends import open_backend, open_writer
from citelsp.index.build import IndexFileError
from citelsp.index.postgres import PostgresIndex
from citelsp.index.query import IndexOpenError, LocalIndexes
from citelsp.resolution.matching import judge_title_search
from citelsp.uris import shown_url
from tests.apiserver import ApiServer, load_default_routes
from tests.snapshots import crossref_works, jsonl, openalex_works, write_gz, write_snapshots
from tests.test_check_e2e import ROOT, run_cli
from tests.test_index_plan import check, grades, sample_bib


def build(where, sources, *, fresh=True):
    writer = open_writer(where, fresh=fresh)
    try:
        loaded = {name: writer.add(name, path) for name, path in sources.items()}
    except BaseException:
        writer.abandon()
        raise
    writer.close()
    return loaded


@pytest.fixture(scope="module")
def snapshots(tmp_path_factory) -> dict[str, Path]:
    return write_snapshots(tmp_path_factory.mktemp("pgindex") / "snapshots")


@pytest.fixture(scope="module")
def sqlite_index(snapshots, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("sqlite") / "works.sqlite"
    build(path, snapshots)
    return path


@pytest.fixture
def pg_index(postgres_url, snapshots) -> str:
    build(postgres_url, snapshots)
    return postgres_url


def records(hits) -> list:
    return sorted((h.record for h in hits), key=repr)


def test_both_backends_give_the_same_answers(pg_index, sqlite_index):
    pg, lite = LocalIndexes([open_backend(pg_index)]), LocalIndexes.open([sqlite_index])
    assert [(s.label, s.works, s.malformed) for s in pg.snapshots] == [
        (s.label, s.works, s.malformed) for s in lite.snapshots]
    dois = [w["DOI"] for w in crossref_works()] + [w["doi"] for w in openalex_works()]
    for doi in [*dois, "10.9999/not.in.any.snapshot"]:
        assert records(pg.by_doi(doi)) == records(lite.by_doi(doi)), doi
    for arxiv in ("1605.08386v2", "arXiv:0808.05394", "astro-ph/0601001", "2501.99999"):
        assert records(pg.by_arxiv(arxiv)) == records(lite.by_arxiv(arxiv)), arxiv
    held = [t for t in {w["title"][0] for w in crossref_works() if w.get("title")} if t]
    matched = 0
    for title in held:  # as cited: another case, a trailing period
        work = Work(title=title.upper() + ".")
        pg_match, lite_match = (judge_title_search(work, [h.record for h in index.by_title(
            work.title)], with_near=False).match for index in (pg, lite))
        assert pg_match == lite_match, title
        matched += pg_match is not None
    assert matched > 80
    for absent in ("A title no snapshot has ever held, surely",
                   "Quantum gravitational chromodynamics of medieval beekeeping"):
        assert pg.by_title(absent) == lite.by_title(absent) == []
    prefix = crossref_works()[0]["DOI"].split("/")[0]
    assert pg.agency(prefix) == lite.agency(prefix) == "Crossref"
    venue = crossref_works()[0]["container-title"][0]
    assert pg.indexes[0].venue(venue) == lite.indexes[0].venue(venue) != []
    journal = "Annual Review of Pathology: Mechanisms of Disease"
    assert pg.venue_links(journal) == lite.venue_links(journal) == {"annu rev pathol mech dis"}
    assert pg.venue_links("ANNU. REV. PATHOL. MECH. DIS.") == lite.venue_links(
        "Annu Rev Pathol Mech Dis") == {"annual review of pathology mechanisms of disease"}
    assert pg.venue_links("ICML") == lite.venue_links("ICML") == frozenset()


def test_a_title_with_typos_finds_the_work_and_both_judge_it_alike(pg_index, sqlite_index):
    """Trigrams find a title with a typo that FTS5 (every word) does not; matching still asks
    for an exact title, so neither backend matches it and the services are asked."""
    pg, lite = LocalIndexes([open_backend(pg_index)]), LocalIndexes.open([sqlite_index])
    for cited, want in (("Heat-bath randm walks with Markov bases", "1605.08386"),
                        ("Heat bath random walks with Markof bases", "1605.08386")):
        work = Work(title=cited, authors=(Person(family="Potka"),))
        found = pg.by_title(cited)
        assert want in [h.record.arxiv_id for h in found]
        for index in (pg, lite):
            assert judge_title_search(work, [h.record for h in index.by_title(cited)],
                                      with_near=False).match is None
        near = judge_title_search(work, [h.record for h in found]).near_matches
        assert any(r.arxiv_id == want for r in near)  # a near match, never a match


def test_a_check_with_the_postgres_index_asks_no_service(pg_index, sqlite_index, tmp_path):
    with ApiServer() as server:
        load_default_routes(server)
        settings = server.settings(use_cache=False)
        bib = sample_bib()
        with_sqlite = check(settings.with_changes(index=(sqlite_index,)), bib)
        with_pg = check(settings.with_changes(index_url=pg_index), bib)
        assert server.requests == []
        assert grades(with_pg) == grades(with_sqlite)
        assert sum(v == "true" for v, _ in grades(with_pg).values()) > 90
        (tmp_path / "refs.bib").write_text(bib)
        done = run_cli(server, "check", "refs.bib", "--format", "json", "--fail-on", "never",
                       cache_dir=tmp_path / "cache", cwd=tmp_path,
                       env={"CITELSP_INDEX_URL": pg_index})
        assert done.returncode == 0, done.stderr
        assert server.requests == []
    report = json.loads(done.stdout)
    summaries = {o["citation_key"]: o["resolvers"] for o in report["outcomes"]}
    assert summaries["c0"]["crossref"]["response_summary"].startswith("Crossref snapshot 2026-07")


def test_an_update_replaces_a_changed_record_while_a_reader_keeps_reading(postgres_url,
                                                                          tmp_path,
                                                                          monkeypatch):
    works = openalex_works()
    changed = dict(works[0], title="A Corrected Title Of The Work")
    write_gz(tmp_path / "works/updated_date=2025-01-01/part_000.gz", jsonl(works[:5]))
    build(postgres_url, {"openalex": tmp_path / "works"})
    reader = LocalIndexes([open_backend(postgres_url)])
    assert reader.by_doi(works[0]["doi"])[0].record.title == works[0]["title"]
    write_gz(tmp_path / "works/updated_date=2025-03-01/part_000.gz",
             jsonl([changed, *works[5:8]]))
    writer = open_writer(postgres_url, fresh=False)
    loaded = writer.add("openalex", tmp_path / "works")
    assert (loaded.kept, loaded.replaced) == (4, 1)  # only the newer folder, as in SQLite
    # not committed yet: the reader sees the index as it was
    assert reader.by_doi(works[0]["doi"])[0].record.title == works[0]["title"]
    assert reader.by_doi(works[6]["doi"]) == []
    writer.close()
    [hit] = reader.by_doi(works[0]["doi"])
    assert hit.record.title == "A Corrected Title Of The Work"
    assert hit.snapshot.label == "OpenAlex snapshot 2025-01"  # read when it was opened
    monkeypatch.setattr("citelsp.index.postgres.SNAPSHOTS_TTL_S", 0.0)
    [hit] = reader.by_doi(works[0]["doi"])
    assert hit.snapshot.label == "OpenAlex snapshot 2025-03"  # and again once old
    assert reader.by_doi(works[6]["doi"])
    assert [h.record.title for h in reader.by_title("A corrected title of the work")] == [
        "A Corrected Title Of The Work"]
    fresh = LocalIndexes([open_backend(postgres_url)])
    [snapshot] = fresh.snapshots
    assert (snapshot.label, snapshot.works) == ("OpenAlex snapshot 2025-03", 8)


def test_a_failed_build_leaves_the_old_index(pg_index, snapshots, monkeypatch):
    from citelsp.index import build as build_module

    before = LocalIndexes([open_backend(pg_index)])
    counts = [(s.label, s.works) for s in before.snapshots]
    real_rows, calls = build_module._rows, []

    def failing(entries, subset):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real_rows(entries, subset)

    monkeypatch.setattr(build_module, "BATCH", 10)
    monkeypatch.setattr(build_module, "_rows", failing)
    with pytest.raises(KeyboardInterrupt):
        build(pg_index, {"crossref": snapshots["crossref"]})
    assert [(s.label, s.works) for s in LocalIndexes([open_backend(pg_index)]).snapshots] == \
        counts
    assert before.by_doi(crossref_works()[0]["DOI"])
    with psycopg.connect(pg_index) as conn:  # nothing left behind: one generation, the live one
        schemas = [r[0] for r in conn.execute("SELECT nspname FROM pg_namespace WHERE nspname "
                                              "LIKE 'citelsp_index%' ORDER BY 1")]
        live = conn.execute("SELECT generation FROM citelsp_index.live").fetchall()
    assert schemas == ["citelsp_index", live[0][0]] and len(live) == 1


def many_works(n: int) -> list[dict]:
    """``n`` Crossref works made from the recorded ones (the fields verification keeps), each
    with a DOI of its own."""
    fields = ("title", "author", "issued", "container-title", "type", "volume", "page")
    base = [{k: w[k] for k in fields if k in w} for w in crossref_works()]
    return [dict(base[i % len(base)], DOI=f"10.5555/many.{i}") for i in range(n)]


def test_a_build_killed_mid_way_leaves_the_old_index_usable(pg_index, snapshots, tmp_path):
    write_gz(tmp_path / "big/0.jsonl.gz", jsonl(many_works(60_000)))
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("CITELSP_")},
           "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen([sys.executable, "-m", "citelsp", "index", "build", pg_index,
                              "--crossref", str(tmp_path / "big")], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        with psycopg.connect(pg_index, autocommit=True) as watch:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and child.poll() is None:
                copying = watch.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE application_name = "
                    "'citelsp index' AND query LIKE 'COPY %%'").fetchone()[0]
                if copying:
                    break
                time.sleep(0.05)
            assert child.poll() is None, child.stderr.read()
            os.kill(child.pid, signal.SIGKILL)
            child.wait()
            index = LocalIndexes([open_backend(pg_index)])
            assert index.by_doi(crossref_works()[0]["DOI"])
            assert index.by_doi("10.5555/many.1") == []
            assert sum(s.works for s in index.snapshots) == 288
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    # the server rolls the dead build back and frees its lock: the next build runs
    deadline = time.monotonic() + 30
    while True:
        try:
            build(pg_index, {"dblp": snapshots["dblp"]})
            break
        except IndexFileError as exc:
            assert "another build" in str(exc) and time.monotonic() < deadline
            time.sleep(0.2)
    assert [s.label for s in LocalIndexes([open_backend(pg_index)]).snapshots] == [
        "DBLP snapshot 2025-06"]


def test_queries_keep_working_while_a_build_replaces_the_index(pg_index, tmp_path):
    """A reader opened before a rebuild answers throughout it, from the old index until the
    new one is committed, then from the new one (the same connection)."""
    reader = LocalIndexes([open_backend(pg_index)])
    doi = crossref_works()[0]["DOI"]
    before = len(reader.by_doi(doi))
    write_gz(tmp_path / "more/0.jsonl.gz", jsonl(many_works(3000)))
    old, new, failures, done = [], [], [], threading.Event()

    def ask():
        while not done.is_set():
            try:
                old.append(len(reader.by_doi(doi)))
                new.append(len(reader.by_doi("10.5555/many.7")))
            except Exception as exc:  # noqa: BLE001 - any failure is the finding
                failures.append(exc)

    thread = threading.Thread(target=ask)
    thread.start()
    try:
        while not new and thread.is_alive():  # answering before the build begins
            time.sleep(0.01)
        build(pg_index, {"crossref": tmp_path / "more"})
        time.sleep(0.2)
    finally:
        done.set()
        thread.join()
    assert failures == [] and len(old) > 10 and before >= 2
    # each answer is the old index's or the new one's, and once new, never old again
    assert old == sorted(old, reverse=True) and set(old) == {before, 0}
    assert new == sorted(new) and set(new) == {0, 1}


def test_one_writer_at_a_time(pg_index, snapshots):
    first = open_writer(pg_index, fresh=True)
    try:
        with pytest.raises(IndexFileError, match="another build or update"):
            open_writer(pg_index, fresh=False)
    finally:
        first.abandon()
    build(pg_index, {"dblp": snapshots["dblp"]})  # the lock went with the transaction


def test_status_build_and_update_commands(postgres_url, snapshots, capsys):
    from citelsp.cli import main

    assert main(["index", "update", postgres_url, "--dblp", str(snapshots["dblp"])]) == 2
    assert "no index to update (build one first)" in capsys.readouterr().err
    assert main(["index", "status", postgres_url]) == 2
    assert "no citelsp index in this database" in capsys.readouterr().err
    assert main(["index", "build", postgres_url, "--crossref", str(snapshots["crossref"]),
                 "--years", "2020-2030"]) == 0
    assert main(["index", "update", postgres_url, "--dblp", str(snapshots["dblp"])]) == 0
    capsys.readouterr()
    assert main(["index", "status", postgres_url]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{shown_url(postgres_url)}: ") and " works, " in out[0]
    assert out[0].endswith(" MiB")
    assert [line.split()[:3] for line in out[1:]] == [
        ["Crossref", "snapshot", "2026-07"], ["DBLP", "snapshot", "2025-06"]]
    assert "20 works" in out[2] and str(snapshots["dblp"]) in out[2]


def test_a_password_is_never_printed():
    assert shown_url("postgresql://lab:s3cret@db.example:5432/citelsp") == \
        "postgresql://lab:***@db.example:5432/citelsp"
    assert shown_url("postgresql://lab@db/citelsp") == "postgresql://lab@db/citelsp"


def test_an_unreachable_database_is_not_used_and_said_once(sqlite_index):
    from tests.services import free_port

    url = f"postgresql://nobody:pw@127.0.0.1:{free_port()}/none"
    index, notes = open_index(Settings(index=(sqlite_index,), index_url=url))
    assert index is not None and len(index.indexes) == 1  # the file is still asked
    assert notes[0].startswith("citelsp: local index not used: postgresql://nobody:***@")
    assert not any(":pw@" in note for note in notes)
    with pytest.raises(IndexOpenError):
        PostgresIndex(url)


def test_a_server_gone_mid_run_answers_nothing_then_comes_back(snapshots, caplog):
    """A database that goes away answers nothing (the services are asked instead, never a
    verdict from absence); once it is back, the next question reconnects."""
    from tests.services import PostgresServer

    server = PostgresServer().start()
    try:
        build(server.url, {"crossref": snapshots["crossref"]})
        index = LocalIndexes([open_backend(server.url)])
        doi = crossref_works()[0]["DOI"]
        assert index.by_doi(doi)
        server.stop()
        assert index.by_doi(doi) == [] and index.by_title("anything at all") == []
        said = [r.getMessage() for r in caplog.records if "did not answer" in r.getMessage()]
        assert len(said) == 1 and "go to the services" in said[0]  # once, not per question
        server.start()
        assert index.by_doi(doi)
    finally:
        server.destroy()


def test_a_slow_title_search_gives_no_candidates_and_the_reader_goes_on(pg_index,
                                                                        monkeypatch):
    """Trigram candidates only ever give near matches: a search past its time is cancelled
    (on a connection of its own, so that identifier lookups have no timeout), and the
    reader answers the next question."""
    from citelsp.index import postgres

    monkeypatch.setattr(postgres, "CANDIDATES_TIMEOUT_MS", 50)
    index = PostgresIndex(pg_index)
    with pytest.raises(postgres._TimedOut):
        index._rows("SELECT pg_sleep(2)", (), text=True)
    assert index._rows("SELECT pg_sleep(0.1)", ())  # no timeout on lookups
    assert index.by_key(f"doi:{crossref_works()[0]['DOI'].lower()}")
    assert index.by_title("Heat-bath randm walks with Markov bases")


def test_files_parsed_by_several_processes_load_alike(postgres_url, snapshots, sqlite_index):
    """A large folder is parsed by one process per core while this one COPYs what they send."""
    writer = open_writer(postgres_url, fresh=True)
    loaded = writer.add("crossref", snapshots["crossref"], workers=2)
    writer.close()
    assert loaded.kept == len(crossref_works())
    pg, lite = LocalIndexes([open_backend(postgres_url)]), LocalIndexes.open([sqlite_index])
    for work in crossref_works():
        assert records(h for h in pg.by_doi(work["DOI"]) if h.record.source == "crossref") == \
            records(h for h in lite.by_doi(work["DOI"]) if h.record.source == "crossref")


def test_a_user_who_may_not_create_schemas_is_told_what_a_build_needs(postgres_url, snapshots):
    role = f"reader_{uuid.uuid4().hex[:12]}"  # roles are the whole server's: one of its own
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'pw'")
    try:
        parts = urlsplit(postgres_url)
        url = urlunsplit(parts._replace(netloc=f"{role}:pw@{parts.netloc.rpartition('@')[2]}"))
        with pytest.raises(IndexFileError, match=r"permission denied .*GRANT CREATE ON DATAB"):
            build(url, {"dblp": snapshots["dblp"]})
    finally:
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute(f"DROP ROLE {role}")


def test_a_database_named_where_index_files_go_is_read_as_the_index_url(pg_index):
    """``CITELSP_INDEX=postgresql://…`` (the commands take a path or a URL alike) is the
    database, not two files split at the ``:`` of the URL."""
    settings = Settings.from_options({}, environ={"CITELSP_INDEX": pg_index})
    assert (settings.index, settings.index_url) == ((), pg_index)
    index, notes = open_index(settings)
    assert index is not None and not any("not used" in n for n in notes)
    assert index.by_doi(crossref_works()[0]["DOI"])
    both = Settings.from_options({"index": pg_index},
                                 environ={"CITELSP_INDEX_URL": "postgresql://other/db"})
    assert both.index_url == "postgresql://other/db" and both.index == ()


async def test_the_editor_asks_the_postgres_index_first(pg_index, tmp_path):
    """The language server reads CITELSP_INDEX_URL as the command line does: the hover names
    the snapshot, and no service is asked."""
    from tests.lsp_session import lsp_session, open_file, wait_until
    from tests.test_lsp_verify import hover_at, position_of, verified

    root = tmp_path / "ws"
    root.mkdir()
    entries = sample_bib().split("@article")[1:3]
    (root / "refs.bib").write_text("".join(f"@article{e}" for e in entries))
    keys = [e.split("{", 1)[1].split(",", 1)[0] for e in entries]
    (root / "paper.md").write_text("---\nbibliography: refs.bib\n---\nSee "
                                   + " ".join(f"[@{k}]" for k in keys) + ".\n")
    with ApiServer() as server:
        load_default_routes(server)
        env = {**server.env(), "CITELSP_CACHE_DIR": str(tmp_path / "cache"),
               "CITELSP_INDEX_URL": pg_index}
        async with lsp_session(root, env) as lsp:
            md = open_file(lsp, root / "paper.md", "markdown")
            await wait_until(lsp, verified(md, keys[0]))
            card = await hover_at(lsp, md, position_of(root / "paper.md", f"@{keys[0]}"))
        assert server.requests == []
    assert "Crossref snapshot 2026-07: DOI" in card


def test_an_index_older_parsers_wrote_is_built_again(postgres_url, snapshots, capsys):
    """As the file: a PostgreSQL index whose records older parsers wrote is not read, and
    index status and update say to build it again."""
    from citelsp.cli import main
    from citelsp.index.build import LAYOUT_VERSION

    assert main(["index", "build", postgres_url, "--crossref", str(snapshots["crossref"])]) == 0
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        [live] = conn.execute("SELECT generation FROM citelsp_index.live").fetchone()
        conn.execute(f"UPDATE {live}.meta SET value = %s WHERE key = 'schema'",
                     (f"{LAYOUT_VERSION}+records4",))
    capsys.readouterr()
    with pytest.raises(IndexOpenError, match="record parsers"):
        open_backend(postgres_url)
    assert main(["index", "status", postgres_url]) == 2
    assert "another citelsp's record parsers (version 4" in capsys.readouterr().err
    assert main(["index", "update", postgres_url, "--dblp", str(snapshots["dblp"])]) == 2
    assert "build it again" in capsys.readouterr().err
