"""Every reference says where it stands, whatever the network does: the eighteen-reference
paper of ``tests/lsp_fixtures/eighteen`` (two invented works, a dangling citation, a
duplicated key) against a loopback service switched off and on.

A reference that could not be checked carries a P2 UNREACHABLE that says why (offline,
outage, budget) in its squiggle, its hover, the status and the checklist; when the service
comes back, it is checked again without the writer doing anything.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types

from tests.apiserver import ApiServer, add_empty_searches, load_default_routes
from tests.lsp_session import lsp_session, open_file, wait_until

PAPER = Path(__file__).parent / "lsp_fixtures" / "eighteen"
LOCAL = {"ORPHAN_REFERENCE", "DUPLICATE_KEY", "DUPLICATE_WORK", "DANGLING_CITATION"}
INVENTED = {"hallucinated2023": "DOI_REFUTED", "invented2021": "NOT_FOUND_IN_INDEXES"}
SETTLES_IN_S = 15
"""How long a reference may go without a state after it is opened or the network changes."""
RETURNS_IN_S = 120
"""How long the back-off probe may take to notice the network is back (it waits 2 s, then
twice as long each time, at most a minute), and the references to be checked again."""


@pytest.fixture
def api() -> ApiServer:
    server = add_empty_searches(ApiServer().start())
    load_default_routes(server)
    yield server
    server.stop()


@pytest.fixture
def paper(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(PAPER, root)
    return root


@pytest.fixture
def env(api: ApiServer, tmp_path: Path) -> dict[str, str]:
    return {**api.env(), "CITELSP_CACHE_DIR": str(tmp_path / "cache")}


def entries(bib: Path) -> list[tuple[str, int, int]]:
    """(key, first line, last line) of every entry, in file order."""
    lines = bib.read_text(encoding="utf-8").splitlines()
    starts = [(n, m.group(1)) for n, line in enumerate(lines)
              if (m := re.match(r"@\w+\{([^,]+),", line))]
    ends = [n - 1 for n, _ in starts[1:]] + [len(lines) - 1]
    return [(key, start, end) for (start, key), end in zip(starts, ends, strict=True)]


def states(lsp, bib: Path) -> list[set[str]]:
    """The verification codes shown on each entry of ``bib``, in file order."""
    shown = [d for d in lsp.diagnostics.get(bib.as_uri(), []) if d.code not in LOCAL]
    return [{str(d.code) for d in shown if start <= d.range.start.line <= end}
            for _key, start, end in entries(bib)]


def all_unchecked(bib: Path):
    def check(lsp) -> bool:
        return all(codes == {"UNREACHABLE"} for codes in states(lsp, bib))
    return check


def all_checked(bib: Path):
    """Predicate: nothing is left unchecked and the invented works have their findings."""
    def check(lsp) -> bool:
        found = dict(zip((key for key, _, _ in entries(bib)), states(lsp, bib), strict=True))
        return not any("UNREACHABLE" in codes for codes in states(lsp, bib)) and all(
            code in found[key] for key, code in INVENTED.items())
    return check


class Statuses:
    """``citelsp/status`` notifications, as the VS Code extension's status bar reads them."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def __call__(self, params) -> None:
        self.seen.append(params.message if hasattr(params, "message") else params["message"])

    async def until(self, lsp, predicate, timeout: float = SETTLES_IN_S) -> str:
        async def loop() -> str:
            while not (self.seen and predicate(self.seen[-1])):
                await lsp.wait_for_notification("citelsp/status")
            return self.seen[-1]
        return await asyncio.wait_for(loop(), timeout)


async def hover(lsp, path: Path, line: int, character: int) -> str:
    result = await lsp.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=path.as_uri()),
        position=types.Position(line=line, character=character)))
    assert result is not None, (path.name, line, character)
    return result.contents.value


async def checklist(lsp) -> str:
    shown = await lsp.workspace_execute_command_async(types.ExecuteCommandParams(
        command="citelsp.showChecklist", arguments=[]))
    return shown["markdown"]


def listed(markdown: str) -> list[str]:
    """The keys of the checklist's verification items (one per reference)."""
    return re.findall(r"^- \[ \] \*\*(\S+)\*\* · `(?!DANGLING|DUPLICATE_KEY)", markdown, re.M)


async def assert_every_reference_says_unchecked(lsp, paper: Path, statuses: Statuses) -> None:
    bib = paper / "refs.bib"
    for key, start, _end in entries(bib):
        card = await hover(lsp, bib, start, 10)
        assert "not checked" in card, (key, card)
    text = (paper / "paper.md").read_text(encoding="utf-8").splitlines()
    for row, line in enumerate(text):
        for m in re.finditer(r"@(\w+)", line):
            if m.group(1) != "missing2022":
                card = await hover(lsp, paper / "paper.md", row, m.start() + 1)
                assert "not checked" in card, (m.group(1), card)
    assert len(listed(await checklist(lsp))) == len(entries(bib))
    await statuses.until(lsp, lambda s: f"{len(entries(bib))} references not checked" in s)


def open_paper(lsp, paper: Path) -> Path:
    open_file(lsp, paper / "paper.md", "markdown")
    open_file(lsp, paper / "refs.bib", "bibtex")
    return paper / "refs.bib"


async def assert_every_reference_is_checked_again(lsp, paper: Path, statuses: Statuses
                                                   ) -> None:
    bib = paper / "refs.bib"
    await wait_until(lsp, all_checked(bib), RETURNS_IN_S)
    card = await hover(lsp, bib, entries(bib)[0][1], 10)
    assert "found — the work exists as cited" in card
    assert "DOI 10.1002/JOR.1100150407 → " in card, "the DOI as cited, not lowercased"
    assert set(listed(await checklist(lsp))) == set(INVENTED)
    await statuses.until(lsp, lambda s: "not checked" not in s)


EDITORS = pytest.mark.parametrize("editor", ["visual_studio_code", "neovim@v0.7.0"])
"""The clients of issue 25's report: VS Code, and the Neovim 0.7.2 it was tried in."""


@EDITORS
async def test_offline_from_the_start_every_reference_says_so_and_rechecks_itself(
        paper, env, api, editor):
    api.stop()  # the network is down before the editor starts
    statuses = Statuses()
    async with lsp_session(paper, env, features={"citelsp/status": statuses},
                           client=editor) as lsp:
        bib = open_paper(lsp, paper)
        await wait_until(lsp, all_unchecked(bib), SETTLES_IN_S)
        await assert_every_reference_says_unchecked(lsp, paper, statuses)

        api.start()  # the network is back: nothing for the writer to do
        await assert_every_reference_is_checked_again(lsp, paper, statuses)


@EDITORS
async def test_offline_midway_every_reference_says_so_and_rechecks_itself(paper, env, api,
                                                                         editor):
    """Verified online; then the network goes and the cache is cleared, so every reference
    is asked again and none can be answered (verification stops going to the network after
    a few): every one says so, and is checked again when the network is back."""
    statuses = Statuses()
    async with lsp_session(paper, env, features={"citelsp/status": statuses},
                           client=editor) as lsp:
        bib = open_paper(lsp, paper)
        await wait_until(lsp, all_checked(bib), RETURNS_IN_S)

        api.stop()  # also cuts the connections the server keeps alive
        await lsp.workspace_execute_command_async(types.ExecuteCommandParams(
            command="citelsp.clearCache", arguments=[]))
        await wait_until(lsp, all_unchecked(bib), SETTLES_IN_S)
        await assert_every_reference_says_unchecked(lsp, paper, statuses)

        api.start()
        await assert_every_reference_is_checked_again(lsp, paper, statuses)


async def test_a_re_verify_that_reaches_no_source_keeps_the_verdicts(paper, env, api):
    async with lsp_session(paper, env) as lsp:
        bib = paper / "refs.bib"
        open_file(lsp, bib, "bibtex")
        await wait_until(lsp, all_checked(bib), RETURNS_IN_S)
        before = states(lsp, bib)
        api.stop()
        answer = await lsp.workspace_execute_command_async(types.ExecuteCommandParams(
            command="citelsp.reverify", arguments=[]))
        assert answer["queued"] == len(entries(bib))

        async def ended() -> None:
            while not any(isinstance(v, types.WorkDoneProgressEnd)
                          for v in list(lsp.progress_reports.values())[-1]):
                await lsp.wait_for_notification(types.PROGRESS)

        await asyncio.wait_for(ended(), SETTLES_IN_S)
        assert states(lsp, bib) == before


async def test_a_checklist_written_while_verification_runs_lists_every_reference(
        paper, env, api):
    """The status counts references not checked yet; the checklist written meanwhile lists
    each of them (it listed only those with a verdict), as the command line lists all."""
    api.delay = 30.0  # every answer is on its way
    async with lsp_session(paper, env) as lsp:
        bib = open_paper(lsp, paper)
        markdown = await checklist(lsp)
        assert sorted(listed(markdown)) == sorted(key for key, _, _ in entries(bib))
        assert "not looked up yet" in markdown
        api.delay = 0.0


def test_the_command_line_lists_the_references_the_editor_lists(paper, env):
    done = subprocess.run(
        [sys.executable, "-m", "citelsp", "check", str(paper / "paper.md"), "--offline",
         "--format", "markdown"], capture_output=True, text=True, timeout=120,
        env={**os.environ, **env})
    assert sorted(listed(done.stdout)) == sorted(key for key, _, _ in entries(paper / "refs.bib"))
    assert done.stdout.count("Not checked: offline, no cached answer") == 18


async def test_a_duplicated_key_with_only_the_manuscript_open(paper, env):
    """The citation of a key two entries define says so, and shows one finding of each kind
    there (two near-identical infos, and no DUPLICATE_KEY, before)."""
    async with lsp_session(paper, {**env, "CITELSP_OFFLINE": "1"}) as lsp:
        md = open_file(lsp, paper / "paper.md", "markdown")
        line = next(n for n, text in enumerate(
            (paper / "paper.md").read_text(encoding="utf-8").splitlines())
            if "@kuschel2014" in text)

        def at_citation(client) -> list[str]:
            return sorted(str(d.code) for d in client.diagnostics.get(md, [])
                          if d.range.start.line == line and "kuschel2014" in d.message)

        await wait_until(lsp, lambda c: "UNREACHABLE" in at_citation(c), SETTLES_IN_S)
        assert at_citation(lsp) == ["DUPLICATE_KEY", "UNREACHABLE"]
        duplicate = next(d for d in lsp.diagnostics[md] if d.code == "DUPLICATE_KEY")
        assert "refs.bib:125, refs.bib:145" in duplicate.message


async def test_re_verify_in_offline_mode_says_why_nothing_happens(paper, env, api):
    async with lsp_session(paper, {**env, "CITELSP_OFFLINE": "1"}) as lsp:
        bib = open_paper(lsp, paper)
        await wait_until(lsp, all_unchecked(bib), SETTLES_IN_S)
        answer = await lsp.workspace_execute_command_async(types.ExecuteCommandParams(
            command="citelsp.reverify", arguments=[]))
        assert answer["queued"] == 0

        async def told() -> None:
            while not any("offline mode is on" in m.message for m in lsp.messages):
                await lsp.wait_for_notification(types.WINDOW_SHOW_MESSAGE)

        await asyncio.wait_for(told(), SETTLES_IN_S)
    assert api.requests == []
