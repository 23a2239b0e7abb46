"""Hostile files and paths: nothing citelsp reads can hang it, fill its memory, crash it, or
lead it to write outside the workspace; each such input is one message on its document."""

from __future__ import annotations

import gc
import math
import os
import weakref
from pathlib import Path

import pytest

from citelsp.config import Settings
from citelsp.files import FileRefused, read_bytes
from citelsp.verdict.decisions import Decision, DecisionsRefused, DecisionStore
from citelsp.workspace import Workspace
from tests.lsp_session import lsp_session
from tests.test_cli import citelsp

BIB = "@article{a, title = {A Title}, year = 2020}\n"


def problems_of(ws: Workspace, uri: str) -> list[tuple[str, str]]:
    return [(p.code, p.message) for p in ws.local_problems(uri)]


@pytest.mark.timeout(60)
def test_devices_and_fifos_are_refused_not_read(tmp_path):
    fifo = tmp_path / "pipe.bib"
    os.mkfifo(fifo)
    for path in (Path("/dev/zero"), fifo):
        with pytest.raises(FileRefused, match="not a regular file"):
            read_bytes(path)
    big = tmp_path / "big.bib"
    with big.open("wb") as f:
        f.truncate(64)
    with pytest.raises(FileRefused, match="larger than"):
        read_bytes(big, limit=32)


@pytest.mark.timeout(60)
def test_a_manuscript_naming_dev_zero_or_a_fifo_gets_one_error(tmp_path):
    os.mkfifo(tmp_path / "pipe.bib")
    paper = tmp_path / "paper.md"
    text = "---\nbibliography: [/dev/zero, pipe.bib, refs.bib]\n---\n[@a]\n"
    (tmp_path / "refs.bib").write_text(BIB)
    ws = Workspace(Settings(), [tmp_path])
    ws.open(paper.as_uri(), text)
    found = problems_of(ws, paper.as_uri())
    assert found == [
        ("UNREADABLE_BIBLIOGRAPHY", "bibliography '/dev/zero' cannot be read: not a regular file"),
        ("UNREADABLE_BIBLIOGRAPHY", "bibliography 'pipe.bib' cannot be read: not a regular file"),
    ], "refs.bib is still read and [@a] resolves"
    spans = [p.span for p in ws.local_problems(paper.as_uri())]
    assert text[spans[1].start:spans[1].end] == "pipe.bib"


@pytest.mark.timeout(120)
def test_check_with_hostile_paths_finishes_and_says_why(tmp_path):
    os.mkfifo(tmp_path / "pipe.bib")
    (tmp_path / "paper.md").write_text("---\nbibliography: /dev/zero\n---\n[@a]\n")
    done = citelsp("check", "paper.md", "pipe.bib", "--offline", cwd=tmp_path)
    assert done.returncode == 2
    assert "pipe.bib: cannot read (not a regular file)" in done.stderr
    assert "its bibliography /dev/zero cannot be read (not a regular file)" in done.stderr


def test_a_bibliography_named_by_url_is_not_fetched_and_says_so(tmp_path):
    """pandoc fetches ``bibliography: https://…``; citelsp reads local files only, and
    must not look for a file called ``https:/…``."""
    paper = tmp_path / "paper.md"
    text = "---\nbibliography: [https://example.org/refs.bib, refs.bib]\n---\n[@a]\n"
    (tmp_path / "refs.bib").write_text(BIB)
    ws = Workspace(Settings(), [tmp_path])
    ws.open(paper.as_uri(), text)
    assert problems_of(ws, paper.as_uri()) == [(
        "UNREADABLE_BIBLIOGRAPHY", "bibliography 'https://example.org/refs.bib' cannot be "
        "read: a URL, and citelsp reads local files only: download it and name the file")]


def test_nul_in_a_bibliography_path_is_a_diagnostic_not_a_crash(tmp_path):
    ws = Workspace(Settings(), [tmp_path])
    md = (tmp_path / "paper.md").as_uri()
    tex = (tmp_path / "paper.tex").as_uri()
    ws.open(md, '---\nbibliography: "refs\\0.bib"\n---\n[@a]\n')
    ws.open(tex, "\\cite{a}\\bibliography{re\x00fs}\n")
    for uri in (md, tex):
        codes = [code for code, _ in problems_of(ws, uri)]
        assert "UNREADABLE_BIBLIOGRAPHY" in codes and "DANGLING_CITATION" in codes
        ws.problems(uri)


def test_a_slug_map_that_is_a_device_is_ignored(tmp_path):
    ws = Workspace(Settings(slug_map="/dev/zero"), [tmp_path])
    uri = (tmp_path / "paper.md").as_uri()
    ws.open(uri, "<!--ref:x-->\n")
    assert ws.graph.slug_map() == {}


def test_decisions_are_never_read_or_written_through_a_link_out_of_the_workspace(tmp_path):
    root, outside = tmp_path / "ws", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    secret = outside / "secret.json"
    secret.write_text("not json, and private")
    (root / ".citelsp").mkdir()
    (root / ".citelsp" / "decisions.json").symlink_to(secret)
    store = DecisionStore(root)
    assert store.load() == []
    with pytest.raises(DecisionsRefused, match="outside the workspace"):
        store.record(Decision("a", "id", "rejected"))
    assert not (root / ".citelsp" / "decisions.json.bak").exists(), "nothing copied in"
    assert secret.read_text() == "not json, and private"

    (root / ".citelsp" / "decisions.json").unlink()
    (root / ".citelsp").rmdir()
    (root / ".citelsp").symlink_to(outside, target_is_directory=True)
    with pytest.raises(DecisionsRefused):
        DecisionStore(root).record(Decision("a", "id", "rejected"))
    assert sorted(p.name for p in outside.iterdir()) == ["secret.json"]
    (root / "refs.bib").write_text(BIB)
    done = citelsp("decide", "a", "--rejected", cwd=root)
    assert done.returncode == 2 and "outside the workspace" in done.stderr


@pytest.mark.timeout(60)
def test_a_fifo_named_decisions_json_does_not_hang(tmp_path):
    (tmp_path / ".citelsp").mkdir()
    os.mkfifo(tmp_path / ".citelsp" / "decisions.json")
    assert DecisionStore(tmp_path).load() == []
    (tmp_path / "refs.bib").write_text(BIB)
    done = citelsp("check", "refs.bib", "--offline", cwd=tmp_path)
    assert done.returncode in (0, 3)


def test_closed_documents_are_released(tmp_path):
    ws = Workspace(Settings(), [tmp_path])
    (tmp_path / "refs.bib").write_text(BIB * 50)
    uri = (tmp_path / "paper.md").as_uri()
    text = "---\nbibliography: refs.bib\n---\n" + "[@a] " * 2000
    alive = []
    for _ in range(20):
        doc = ws.open(uri, text)
        ws.problems(uri)
        alive.append(weakref.ref(doc))
        del doc
        ws.close(uri)
    gc.collect()
    assert not any(ref() is not None for ref in alive)
    assert uri not in ws.corpus.open and uri not in ws._local
    assert ws.graph.users((tmp_path / "refs.bib").as_uri()) == []


def test_a_megabyte_title_is_one_warning_and_is_not_read(tmp_path):
    """A 5 MB title once took gigabytes to decode and compare; it is now left unread."""
    bib = tmp_path / "refs.bib"
    bib.write_text("@article{big, title = {" + "word " * 1_000_000 + "},"
                   " author = {Doe, Jane}, year = 2020}\n" + BIB)
    ws = Workspace(Settings(), [tmp_path])
    uri = bib.as_uri()
    ws.open(uri, bib.read_text())
    found = problems_of(ws, uri)
    assert [code for code, _ in found] == ["FIELD_TOO_LONG"]
    assert found[0][1].startswith("title is 5,000,000 characters long")
    big = next(r for r in ws.references() if r.key == "big")
    assert big.work.title is None and big.work.authors[0].family == "Doe"


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan, 10**400, -5, 2.5, "1e400",
                                   "soon", True, 10**12])
def test_a_numeric_setting_out_of_range_falls_back_with_a_message(value):
    options = {"debounceMs": value, "staleDays": value, "indexStaleDays": value,
               "openalexDailyBudgetUsd": value, "resolvers": {"crossref": {"minIntervalMs": value}}}
    settings = Settings.from_options(options, environ={})
    budget = 2.5 if value == 2.5 else None  # $2.50 is a fine budget
    assert (settings.debounce_ms, settings.stale_days, settings.index_stale_days,
            settings.openalex_daily_budget_usd, settings.endpoints["crossref"].min_interval_ms
            ) == (200, 30, 120, budget, 100)
    assert len(settings.refused) == 5 - (budget is not None)
    assert all("is used instead" in message for message in settings.refused)


def test_numeric_settings_in_range_are_read_without_a_message():
    settings = Settings.from_options({"debounceMs": 0, "staleDays": "7", "indexStaleDays": 1e2,
                                      "openalexDailyBudgetUsd": 0.5}, environ={})
    assert (settings.debounce_ms, settings.stale_days, settings.index_stale_days,
            settings.openalex_daily_budget_usd, settings.refused) == (0, 7, 100, 0.5, ())


@pytest.mark.timeout(120)
async def test_an_infinite_setting_does_not_stop_the_server(tmp_path):
    (tmp_path / "refs.bib").write_text(BIB)
    options = {"debounceMs": math.inf, "offline": True}  # 1e400 in a settings.json
    async with lsp_session(tmp_path, {"CITELSP_CACHE_DIR": str(tmp_path / "cache")},
                           options=options) as lsp:
        # sent while initializing, so before the answer to initialize
        told = [m.message for m in lsp.messages if "debounceMs" in m.message]
        assert told == ["citelsp: citelsp.debounceMs = 'inf' is not a whole number from 0 to "
                        "60,000: 200 is used instead"]


def test_the_command_line_says_which_environment_value_it_refused(tmp_path):
    (tmp_path / "refs.bib").write_text(BIB)
    done = citelsp("check", "refs.bib", "--offline", "--allow-unchecked", cwd=tmp_path,
                   env={"CITELSP_CACHE_STALE_DAYS": "1e400"})
    assert done.returncode == 0 and "Traceback" not in done.stderr
    assert "CITELSP_CACHE_STALE_DAYS = '1e400' is not a whole number" in done.stderr
