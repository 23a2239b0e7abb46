"""The language server presents verification: graded diagnostics, progress, hover cards,
code actions, commands and human decisions, against recorded bodies on a loopback server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from tests.apiserver import ApiServer, add_empty_searches, fixture, load_default_routes
from tests.lsp_session import codes, lsp_session, open_file, wait_until

REAL_DOI = "10.1038/s42256-024-00832-8"
REAL_TITLE = "Augmenting large language models with chemistry tools"
FAKE_DOI = "10.1371/notarealdoi"
HOSTILE = "[click](command:citelsp.decide) <img src=x onerror=alert(1)> **bold** `code`"

BIB = f"""@article{{bran2024,
  title   = {{{REAL_TITLE}}},
  author  = {{Bran, Andres M. and Cox, Sam and Schilter, Oliver and Baldassari, Carlo
             and White, Andrew D. and Schwaller, Philippe}},
  journal = {{Nature Machine Intelligence}},
  year    = {{2024}},
  doi     = {{{REAL_DOI}}},
}}

@article{{wrongyear,
  title   = {{{REAL_TITLE}}},
  author  = {{Bran, Andres M. and Cox, Sam}},
  journal = {{Nature Machine Intelligence}},
  year    = {{2019}},
  doi     = {{{REAL_DOI}}},
}}

@article{{fake,
  title   = {{A Unified Benchmark of Hallucinated Citations}},
  author  = {{Smith, Jane}},
  journal = {{Journal of Imaginary Results}},
  year    = {{2023}},
  doi     = {{{FAKE_DOI}}},
}}

@article{{invented,
  title   = {{Quantum Gravitational Effects in Medieval Bread Baking}},
  author  = {{Nobody, Ann}},
  journal = {{Annals of Things}},
  year    = {{2021}},
}}

@article{{down,
  author  = {{Offline, Olga}},
  year    = {{2020}},
  doi     = {{10.9999/down.1}},
}}

@misc{{handbook,
  title    = {{Internal lab handbook}},
  author   = {{Lab, The}},
  year     = {{2020}},
  citelsp  = {{manual}},
}}

@article{{hostile,
  title   = {{{HOSTILE}}},
  author  = {{Mallory, Eve}},
  journal = {{Nature Machine Intelligence}},
  year    = {{2024}},
  doi     = {{10.5555/hostile.1}},
}}
"""

PAPER = """---
bibliography: refs.bib
---
Chemistry agents [@bran2024] and again [@wrongyear].
A fabricated one [@fake] and an invented one [@invented].
Unreachable [@down], manual [@handbook], hostile [@hostile].
"""

TEX = r"""\documentclass{article}
\begin{document}
Chemistry \cite{bran2024} and \citep[p.~3]{fake}.
\bibliography{refs}
\end{document}
"""

CSL = [
    {"id": "cslfake", "type": "article-journal", "title": "Another Fabricated Work",
     "author": [{"family": "Doe", "given": "John"}], "issued": {"date-parts": [[2022]]},
     "DOI": FAKE_DOI},
    {"id": "cslreal", "type": "article-journal", "title": REAL_TITLE,
     "author": [{"family": "Bran", "given": "Andres M."}, {"literal": "others"}],
     "issued": {"date-parts": [[2024]]},
     "container-title": "Nature Machine Intelligence", "DOI": REAL_DOI},
]


def hostile_record() -> str:
    body = json.loads(fixture(f"crossref/{REAL_DOI.replace('/', '_')}.json").read_text())
    body["message"]["DOI"] = "10.5555/hostile.1"
    body["message"]["title"] = [HOSTILE + " [evil](https://evil.example/x)"]
    body["message"]["author"] = [{"family": "Mallory <script>", "given": "Eve"}]
    return json.dumps(body)


@pytest.fixture
def api() -> ApiServer:
    server = add_empty_searches(ApiServer().start())
    load_default_routes(server)
    for endpoint, path in (("crossref", "/works/10.9999/down.1"),
                           ("openalex", "/works/doi:10.9999/down.1"),
                           ("semantic_scholar", "/paper/DOI:10.9999/down.1"),
                           ("doi_registry", "/doiRA/10.9999"),
                           ("datacite", "/dois/10.9999/down.1"),
                           ("handle", "/api/handles/10.9999/down.1")):
        server.fail(endpoint, 503, path=path)
    server.add("doi_registry", "GET", "/doiRA/10.5555",
               body=json.dumps([{"DOI": "10.5555", "RA": "Crossref"}]))
    server.add("crossref", "GET", "/works/10.5555/hostile.1", body=hostile_record())
    yield server
    server.stop()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "refs.bib").write_text(BIB, encoding="utf-8")
    (root / "paper.md").write_text(PAPER, encoding="utf-8")
    (root / "paper.tex").write_text(TEX, encoding="utf-8")
    (root / "refs.json").write_text(json.dumps(CSL, indent=2), encoding="utf-8")
    return root


@pytest.fixture
def env(api: ApiServer, tmp_path: Path) -> dict[str, str]:
    return {**api.env(), "CITELSP_CACHE_DIR": str(tmp_path / "cache")}


def verified(uri: str, *keys: str):
    """Predicate: every key has a verification diagnostic in the document ``uri``."""
    def check(lsp) -> bool:
        shown = {d.message.split(":")[0] for d in lsp.diagnostics.get(uri, [])
                 if d.code not in ("ORPHAN_REFERENCE", "DUPLICATE_WORK", "DANGLING_CITATION")}
        return all(k in shown for k in keys)
    return check


async def test_graded_diagnostics_on_fields_and_citations(workspace, env):
    async with lsp_session(workspace, env) as lsp:
        bib = open_file(lsp, workspace / "refs.bib", "bibtex")
        md = open_file(lsp, workspace / "paper.md", "markdown")
        await wait_until(lsp, verified(bib, "fake", "wrongyear", "invented", "down", "handbook"))
        await wait_until(lsp, verified(md, "fake", "wrongyear", "invented", "down"))
        found = codes(lsp, bib)
        text = (workspace / "refs.bib").read_text().splitlines()

        refuted = found["DOI_REFUTED"][0]
        assert refuted.severity == types.DiagnosticSeverity.Error
        assert FAKE_DOI in text[refuted.range.start.line][refuted.range.start.character:]
        assert refuted.code_description.href.endswith("#doi_refuted")
        assert "does not exist" in refuted.message

        conflict = found["METADATA_CONFLICT"]
        year = [d for d in conflict if d.message.startswith("wrongyear:")][0]
        assert year.severity == types.DiagnosticSeverity.Warning
        assert text[year.range.start.line].strip().startswith("year")

        assert found["NOT_FOUND_IN_INDEXES"][0].severity == types.DiagnosticSeverity.Warning
        assert found["UNREACHABLE"][0].severity == types.DiagnosticSeverity.Information
        assert found["NO_AUTOMATED_SOURCE"][0].severity == types.DiagnosticSeverity.Hint
        assert not any(d.message.startswith("bran2024:") for ds in found.values() for d in ds
                       if d.code not in ("DUPLICATE_WORK", "ORPHAN_REFERENCE"))

        manuscript = codes(lsp, md)
        cited = {d.message.split(":")[0]: d for ds in manuscript.values() for d in ds}
        assert cited["fake"].code == "DOI_REFUTED"
        assert cited["wrongyear"].code == "METADATA_CONFLICT"
        assert "handbook" not in cited  # P3 stays in the bibliography
        line = (workspace / "paper.md").read_text().splitlines()[cited["fake"].range.start.line]
        start = cited["fake"].range.start.character
        assert line[start:cited["fake"].range.end.character] == "fake"
        for d in manuscript.get("NOT_FOUND_IN_INDEXES", []):
            assert "pending human check" in d.message and "fabricated" not in d.message


async def test_latex_and_csl_json_get_verification_diagnostics(workspace, env):
    async with lsp_session(workspace, env) as lsp:
        tex = open_file(lsp, workspace / "paper.tex", "latex")
        csl = open_file(lsp, workspace / "refs.json", "json")
        await wait_until(lsp, verified(tex, "fake"))
        await wait_until(lsp, verified(csl, "cslfake"))
        cite = codes(lsp, tex)["DOI_REFUTED"][0]
        line = (workspace / "paper.tex").read_text().splitlines()[cite.range.start.line]
        assert line[cite.range.start.character:cite.range.end.character] == "fake"
        refuted = codes(lsp, csl)["DOI_REFUTED"][0]
        json_line = (workspace / "refs.json").read_text().splitlines()[refuted.range.start.line]
        assert FAKE_DOI in json_line and '"DOI"' in json_line
        assert not any(d.message.startswith("cslreal:") for d in lsp.diagnostics[csl]
                       if d.code not in ("ORPHAN_REFERENCE", "DUPLICATE_WORK"))


async def test_editing_a_doi_re_resolves_only_that_reference(workspace, env, api):
    async with lsp_session(workspace, env) as lsp:
        bib = open_file(lsp, workspace / "refs.bib", "bibtex")
        open_file(lsp, workspace / "paper.md", "markdown")
        await wait_until(lsp, verified(bib, "fake", "wrongyear", "invented", "down"))
        before = len(api.questions())
        text = (workspace / "refs.bib").read_text()
        lines = text.splitlines()
        row = next(i for i, line in enumerate(lines) if FAKE_DOI in line)
        col = lines[row].index(FAKE_DOI)
        lsp.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=bib, version=2),
            content_changes=[types.TextDocumentContentChangePartial(
                range=types.Range(start=types.Position(line=row, character=col),
                                  end=types.Position(line=row, character=col + len(FAKE_DOI))),
                text=REAL_DOI)]))

        def settled(client) -> bool:
            ds = client.diagnostics.get(bib, [])
            return not any(d.message.startswith("fake:") and d.code == "DOI_REFUTED" for d in ds)

        await wait_until(lsp, settled)
        await wait_until(lsp, lambda c: any(d.message.startswith("fake:") for d in
                                            c.diagnostics.get(bib, [])
                                            if d.code not in ("ORPHAN_REFERENCE",
                                                              "DUPLICATE_WORK")))
        asked = {path for _endpoint, path in api.questions()[before:]}
        for other in ("10.9999/down.1", "Medieval", FAKE_DOI):
            assert not any(other in path for path in asked), other
        shown = [d for d in lsp.diagnostics.get(bib, []) if d.message.startswith("fake:")
                 and d.code not in ("ORPHAN_REFERENCE", "DUPLICATE_WORK")]
        mismatch = [d for d in shown if d.code == "DOI_TITLE_MISMATCH"]
        assert mismatch and "names another work" in mismatch[0].message, shown


async def test_cached_reopen_shows_verdicts_without_requests(workspace, env, api):
    async with lsp_session(workspace, env) as lsp:
        bib = open_file(lsp, workspace / "refs.bib", "bibtex")
        await wait_until(lsp, verified(bib, "fake", "wrongyear", "invented"))
    first = {str(d.code) for d in lsp.diagnostics[bib]}
    before = len(api.requests)
    async with lsp_session(workspace, env) as lsp:
        bib = open_file(lsp, workspace / "refs.bib", "bibtex")
        await wait_until(lsp, verified(bib, "fake", "wrongyear", "invented"))
        await wait_until(lsp, lambda c: {str(d.code) for d in c.diagnostics[bib]} >= first
                         - {"UNREACHABLE"})
    new = [s for s in api.requests[before:] if "down.1" not in s.decoded_path
           and "10.9999" not in s.decoded_path]
    assert new == []  # only the outage (never cached) is asked again


async def test_progress_reports_and_ends(workspace, env):
    async with lsp_session(workspace, env) as lsp:
        bib = open_file(lsp, workspace / "refs.bib", "bibtex")
        await wait_until(lsp, verified(bib, "fake", "invented"))

        def ended(client) -> bool:
            return any(isinstance(v, types.WorkDoneProgressEnd)
                       for values in client.progress_reports.values() for v in values)

        await wait_until(lsp, ended)
        reports = next(iter(lsp.progress_reports.values()))
        assert isinstance(reports[0], types.WorkDoneProgressBegin)
        assert reports[0].cancellable
        assert any(isinstance(v, types.WorkDoneProgressReport)
                   and v.message.startswith("Verifying references ") for v in reports)
        assert isinstance(reports[-1], types.WorkDoneProgressEnd)


async def test_cancelling_progress_stops_the_queue(workspace, env, api):
    api.delay = 0.3
    async with lsp_session(workspace, env) as lsp:
        open_file(lsp, workspace / "refs.bib", "bibtex")

        async def begun() -> str:
            while True:
                for token, values in lsp.progress_reports.items():
                    if values and isinstance(values[0], types.WorkDoneProgressBegin):
                        return token
                await lsp.wait_for_notification(types.PROGRESS)

        import asyncio

        token = await asyncio.wait_for(begun(), 20)
        lsp.protocol.notify(types.WINDOW_WORK_DONE_PROGRESS_CANCEL,
                            types.WorkDoneProgressCancelParams(token=token))

        async def ended() -> None:
            while not any(isinstance(v, types.WorkDoneProgressEnd)
                          for v in lsp.progress_reports[token]):
                await lsp.wait_for_notification(types.PROGRESS)

        await asyncio.wait_for(ended(), 20)
        end = lsp.progress_reports[token][-1]
        assert end.message.startswith("Cancelled")
        settled = len(api.requests)
        await asyncio.sleep(1.5)  # nothing to wait for: asserting that nothing happens
        assert len(api.requests) <= settled + 8  # at most the requests already in flight


def position_of(path: Path, needle: str, occurrence: int = 0) -> types.Position:
    lines = path.read_text(encoding="utf-8").splitlines()
    seen = 0
    for row, line in enumerate(lines):
        col = line.find(needle)
        while col != -1:
            if seen == occurrence:
                return types.Position(line=row, character=col + 1)
            seen += 1
            col = line.find(needle, col + 1)
    raise AssertionError(f"{needle!r} not in {path}")


async def hover_at(lsp, uri: str, position: types.Position) -> str:
    result = await lsp.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=position))
    assert result is not None
    return result.contents.value


async def test_hover_cards_for_each_kind_of_result(workspace, env):
    paper = workspace / "paper.md"
    async with lsp_session(workspace, env) as lsp:
        md = open_file(lsp, paper, "markdown")
        await wait_until(lsp, verified(md, "fake", "wrongyear", "invented", "down"))

        matched = await hover_at(lsp, md, position_of(paper, "@bran2024"))
        assert "found — the work exists as cited" in matched
        assert "| Crossref | ✔ matched | id |" in matched
        assert "](https://doi.org/10.1038/s42256-024-00832-8)" in matched
        assert "(live)" in matched or "(cache)" in matched

        refuted = await hover_at(lsp, md, position_of(paper, "@fake"))
        assert "refuted" in refuted and "P0 · DOI_REFUTED" in refuted
        assert "does not exist" in refuted

        invented = await hover_at(lsp, md, position_of(paper, "@invented"))
        assert "not confirmed" in invented and "NOT_FOUND_IN_INDEXES" in invented
        assert "pending human check" in invented

        down = await hover_at(lsp, md, position_of(paper, "@down"))
        assert "⚠ unreachable" in down and "UNREACHABLE" in down
        assert "fabricated" not in down


async def test_hover_escapes_hostile_titles(workspace, env):
    paper = workspace / "paper.md"
    async with lsp_session(workspace, env) as lsp:
        md = open_file(lsp, paper, "markdown")
        await wait_until(lsp, verified(md, "hostile"))
        card = await hover_at(lsp, md, position_of(paper, "@hostile"))
        for smuggled in ("[click](command:", "<img", "<script", "**bold**",
                         "(https://evil.example", "](command:"):
            assert smuggled not in card, smuggled
        assert "\\[click\\]" in card and "&lt;img" in card
        bib = workspace / "refs.bib"
        entry = await hover_at(lsp, bib.as_uri(), position_of(bib, "hostile,"))
        assert "](command:" not in entry and "<img" not in entry


async def code_actions(lsp, uri: str, position: types.Position) -> list[types.CodeAction]:
    return await lsp.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=types.Range(start=position, end=position),
        context=types.CodeActionContext(diagnostics=[])))


async def run(lsp, action):
    """Execute a code action's command (clients may see command-only actions as Commands)."""
    command = action.command if isinstance(action, types.CodeAction) else action
    return await lsp.workspace_execute_command_async(types.ExecuteCommandParams(
        command=command.command, arguments=command.arguments))


def apply(text: str, edits: list[types.TextEdit]) -> str:
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))

    def at(p: types.Position) -> int:
        return offsets[p.line] + p.character

    for e in sorted(edits, key=lambda e: at(e.range.start), reverse=True):
        text = text[:at(e.range.start)] + e.new_text + text[at(e.range.end):]
    return text


async def test_code_actions_fix_metadata_and_open_links(workspace, env):
    bib_path = workspace / "refs.bib"
    async with lsp_session(workspace, env) as lsp:
        bib = open_file(lsp, bib_path, "bibtex")
        open_file(lsp, workspace / "paper.md", "markdown")
        await wait_until(lsp, verified(bib, "fake", "wrongyear"))

        found = await code_actions(lsp, bib, position_of(bib_path, "wrongyear"))
        titles = [a.title for a in found]
        fix = next(a for a in found if a.title.startswith("Apply verified metadata"))
        fixed = apply(bib_path.read_text(), fix.edit.changes[bib])
        assert "year    = {2024}" in fixed.split("@article{wrongyear")[1].split("@article")[0]
        assert any(t.startswith("Open DOI 10.1038/s42256-024-00832-8") for t in titles)
        assert any("Search Crossref" in t for t in titles)
        assert any(t.startswith("Re-verify") for t in titles)

        opener = next(a for a in found if a.title.startswith("Open DOI"))
        await run(lsp, opener)
        shown = lsp.shown_documents[-1]
        assert shown.uri == "https://doi.org/10.1038/s42256-024-00832-8" and shown.external

        with pytest.raises(JsonRpcException):
            await lsp.workspace_execute_command_async(types.ExecuteCommandParams(
                command="citelsp.openUrl", arguments=["http://evil.example/x"]))
        assert len(lsp.shown_documents) == 1


async def test_add_matched_doi_to_an_entry_without_one(workspace, env):
    bib_path = workspace / "refs.bib"
    bib_path.write_text(BIB + f"""
@article{{nodoi,
  title   = {{{REAL_TITLE}}},
  author  = {{Bran, Andres M.}},
  journal = {{Nature Machine Intelligence}},
  year    = {{2024}},
}}
""", encoding="utf-8")
    async with lsp_session(workspace, env) as lsp:
        bib = open_file(lsp, bib_path, "bibtex")

        async def offered() -> types.CodeAction:
            while True:
                actions = await code_actions(lsp, bib, position_of(bib_path, "nodoi"))
                for a in actions:
                    if a.title.startswith("Add DOI"):
                        return a
                await lsp.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)

        import asyncio

        action = await asyncio.wait_for(offered(), 30)
        assert REAL_DOI in action.title.lower()
        fixed = apply(bib_path.read_text(), action.edit.changes[bib])
        entry = fixed.split("@article{nodoi")[1]
        assert f"doi = {{{REAL_DOI}}}" in entry


async def test_apply_verified_metadata_from_a_hostile_depositor_writes_inert_values(
        workspace, env, api):
    """Issue 29: an organization author and a venue that close their value and open new
    fields (url, note, doi) in a depositor's record stay text in the applied entry."""
    from citelsp.documents.bibtex import parse_bibtex
    from citelsp.documents.bibtex_writer import written_form
    from citelsp.documents.works import parse_bibtex_names

    organization = "ACME}} , url = {https://evil.example/} , note = {\\input{/etc/passwd}} , x = {{"
    venue = "Nature}, doi = {10.6666/evil}, url = {https://evil.example/"
    body = json.loads(fixture(f"crossref/{REAL_DOI.replace('/', '_')}.json").read_text())
    body["message"].update(DOI="10.5555/deposit.1", author=[
        {"family": "Bran", "given": "Andres M."}, {"name": organization}],
        **{"container-title": [venue]})
    api.add("crossref", "GET", "/works/10.5555/deposit.1", body=json.dumps(body))
    bib_path = workspace / "refs.bib"
    bib_path.write_text(f"""@article{{deposit,
  title   = {{{REAL_TITLE}}},
  author  = {{Doe, Jane}},
  journal = "Journal of Chemistry Tools",
  year    = {{2024}},
  doi     = {{10.5555/deposit.1}},
}}
""", encoding="utf-8")
    async with lsp_session(workspace, env) as lsp:
        bib = open_file(lsp, bib_path, "bibtex")
        await wait_until(lsp, verified(bib, "deposit"))
        found = await code_actions(lsp, bib, position_of(bib_path, "deposit"))
        fix = next(a for a in found if a.title.startswith("Apply verified metadata"))
        fixed = apply(bib_path.read_text(), fix.edit.changes[bib])
    (ref,) = parse_bibtex(bib, fixed).references
    assert set(ref.fields) == {"title", "author", "journal", "year", "doi"}
    assert ref.fields["doi"].value == "10.5555/deposit.1"
    people, _ = parse_bibtex_names(ref.fields["author"].value)
    assert [p.family for p in people] == ["Bran", written_form(organization)]
    assert ref.work.venue == written_form(venue)


async def test_human_decisions_persist_across_restart(workspace, env):
    bib_path = workspace / "refs.bib"
    async with lsp_session(workspace, env) as lsp:
        bib = open_file(lsp, bib_path, "bibtex")
        await wait_until(lsp, verified(bib, "fake", "invented"))
        for key, verdict in (("invented", "verified"), ("fake", "rejected")):
            action = next(a for a in await code_actions(lsp, bib, position_of(bib_path, key))
                          if a.title.endswith(verdict))
            await run(lsp, action)
        await wait_until(lsp, lambda c: any(d.code == "HUMAN_REJECTED"
                                            for d in c.diagnostics.get(bib, [])))
    stored = json.loads((workspace / ".citelsp" / "decisions.json").read_text())
    assert {d["citation_key"]: d["decision"] for d in stored["decisions"]} == {
        "invented": "verified", "fake": "rejected"}

    async with lsp_session(workspace, env) as lsp:
        bib = open_file(lsp, bib_path, "bibtex")
        await wait_until(lsp, verified(bib, "fake", "down"))
        shown = codes(lsp, bib)
        assert not any(d.message.startswith("invented:") for ds in shown.values() for d in ds
                       if d.code != "ORPHAN_REFERENCE")
        assert shown["HUMAN_REJECTED"][0].severity == types.DiagnosticSeverity.Error
        card = await hover_at(lsp, bib, position_of(bib_path, "invented,"))
        assert "Human decision:** verified" in card
        action = next(a for a in await code_actions(lsp, bib, position_of(bib_path, "fake,"))
                      if a.title.endswith("verified"))
        await run(lsp, action)
        assert any("permanent" in m.message for m in lsp.messages)


async def test_commands_checklist_export_reverify_and_clear_cache(workspace, env, api):
    async with lsp_session(workspace, env) as lsp:
        bib = open_file(lsp, workspace / "refs.bib", "bibtex")
        await wait_until(lsp, verified(bib, "fake", "invented", "down"))
        shown = await lsp.workspace_execute_command_async(types.ExecuteCommandParams(
            command="citelsp.showChecklist", arguments=[]))
        assert "## P0" in shown["markdown"] and "fake" in shown["markdown"]
        assert (workspace / ".citelsp" / "checklist.md").exists()
        exported = await lsp.workspace_execute_command_async(types.ExecuteCommandParams(
            command="citelsp.exportReport", arguments=["json"]))
        report = json.loads((workspace / ".citelsp" / "report.json").read_text())
        assert exported["format"] == "json" and report["summaries"]

        before = api.asked(path_contains=FAKE_DOI)
        await lsp.workspace_execute_command_async(types.ExecuteCommandParams(
            command="citelsp.reverify", arguments=["fake"]))

        async def asked_again(part: str, before: int) -> None:
            """Until the service is asked again (the verdicts it gives are those shown
            already, so no new diagnostics need come), alone or in a batch: a count of
            request paths missed a DOI asked in a batch's query."""
            while api.asked(path_contains=part) <= before:
                await asyncio.sleep(0.05)

        await asyncio.wait_for(asked_again(FAKE_DOI, before), 30)
        await wait_until(lsp, verified(bib, "fake"))

        before = api.asked(path_contains="s42256")
        await lsp.workspace_execute_command_async(types.ExecuteCommandParams(
            command="citelsp.clearCache", arguments=[]))
        await asyncio.wait_for(asked_again("s42256", before), 30)


async def test_reports_are_not_written_through_a_citelsp_folder_linked_outside(
        workspace, env, tmp_path):
    """Issue 29: showChecklist and exportReport overwrote a report.json that a symbolic
    .citelsp led to outside the workspace."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "report.json").write_text("not citelsp's")
    (workspace / ".citelsp").symlink_to(outside, target_is_directory=True)
    async with lsp_session(workspace, env) as lsp:
        open_file(lsp, workspace / "refs.bib", "bibtex")
        shown = await lsp.workspace_execute_command_async(types.ExecuteCommandParams(
            command="citelsp.showChecklist", arguments=[]))
        exported = await lsp.workspace_execute_command_async(types.ExecuteCommandParams(
            command="citelsp.exportReport", arguments=["json"]))
        assert shown["uri"] is None and exported["uri"] is None
        for name in ("checklist.md", "report.json"):
            assert any(name in m.message and "outside the workspace" in m.message
                       for m in lsp.messages), name
    assert sorted(p.name for p in outside.iterdir()) == ["report.json"]
    assert (outside / "report.json").read_text() == "not citelsp's"


async def test_near_match_offers_did_you_mean(workspace, env, api):
    near_title = "Augmenting large language models with chemistry tool"
    api.add("crossref", "GET", "/works", query={"query.title": near_title},
            body=fixture("crossref/search/title_Augmenting_large_language_models_with_"
                         "chemistry_tools.json"))
    bib_path = workspace / "refs.bib"
    bib_path.write_text(f"""@article{{near,
  title   = {{{near_title}}},
  author  = {{Bran, Andres M.}},
  journal = {{Nature Machine Intelligence}},
  year    = {{2024}},
}}
""", encoding="utf-8")
    async with lsp_session(workspace, env) as lsp:
        bib = open_file(lsp, bib_path, "bibtex")
        await wait_until(lsp, verified(bib, "near"))
        assert codes(lsp, bib)["NEAR_MATCH_ONLY"][0].severity == types.DiagnosticSeverity.Warning
        action = next(a for a in await code_actions(lsp, bib, position_of(bib_path, "near"))
                      if isinstance(a, types.CodeAction) and a.title.startswith("Did you mean"))
        fixed = apply(bib_path.read_text(), action.edit.changes[bib])
        assert f"{{{REAL_TITLE}}}" in fixed
        assert f"doi = {{{REAL_DOI}}}" in fixed


async def test_min_priority_setting_hides_lower_priorities(workspace, env):
    async with lsp_session(workspace, env, options={"minPriority": "P1"}) as lsp:
        bib = open_file(lsp, workspace / "refs.bib", "bibtex")
        await wait_until(lsp, verified(bib, "fake", "invented"))
        shown = codes(lsp, bib)
        assert "DOI_REFUTED" in shown and "NOT_FOUND_IN_INDEXES" in shown
        assert "UNREACHABLE" not in shown and "NO_AUTOMATED_SOURCE" not in shown


async def test_no_request_leaves_before_the_workspace_settings_are_known(workspace, env, api):
    """The initialization options leave verification online, the workspace's settings say
    offline, and the client answers ``workspace/configuration`` only after the verification
    debounce (300 ms): nothing may be asked under the settings about to change."""
    async def slow_configuration(client: LanguageClient, params: types.ConfigurationParams):
        await asyncio.sleep(1.5)
        return [{"offline": True} for _ in params.items]

    async with lsp_session(workspace, env, features={
            types.WORKSPACE_CONFIGURATION: slow_configuration}) as lsp:
        bib = open_file(lsp, workspace / "refs.bib", "bibtex")
        await wait_until(lsp, verified(bib, "down", "fake"))
        assert {d.code for d in lsp.diagnostics[bib] if d.message.startswith("fake:")} == {
            "UNREACHABLE"}, "answered offline"
    assert api.requests == []


async def test_offline_shows_cached_verdicts_and_one_message(workspace, env, api):
    async with lsp_session(workspace, env) as lsp:
        bib = open_file(lsp, workspace / "refs.bib", "bibtex")
        # Every reference the index answers for (bran2024 asks what wrongyear asks), so
        # that all their answers are cached before this session ends, however slow the
        # machine.
        await wait_until(lsp, verified(bib, "fake", "invented", "wrongyear", "hostile"))
    before = len(api.requests)
    async with lsp_session(workspace, {**env, "CITELSP_OFFLINE": "1"}) as lsp:
        bib = open_file(lsp, workspace / "refs.bib", "bibtex")
        await wait_until(lsp, verified(bib, "fake", "invented", "down"))  # a slow machine
        for _ in range(100):  # logged once the pass is over, after or before the publish
            if "citelsp: offline — 1 reference not checked" in [
                    m.message for m in lsp.log_messages]:
                break
            await asyncio.sleep(0.1)
        assert [m.message for m in lsp.messages if "offline" in m.message] == [
            "citelsp: offline — showing local checks and cached verdicts only"]
        down = [d for d in lsp.diagnostics[bib] if d.message.startswith("down:")]
        assert [(d.code, d.severity) for d in down] == [
            ("UNREACHABLE", types.DiagnosticSeverity.Information)], "not checked, and says so"
        assert "offline, no cached answer" in down[0].message
        assert "citelsp: offline — 1 reference not checked" in [
            m.message for m in lsp.log_messages]
    assert len(api.requests) == before


async def test_clear_cache_keeps_a_cache_the_team_shares(workspace, env, api, postgres_url):
    """The editor's "clear cache" on a shared (PostgreSQL) cache looks the references up again
    and leaves the team's answers stored: one writer's command must not empty everybody's."""
    psycopg = pytest.importorskip("psycopg")
    shared_env = {**env, "CITELSP_CACHE_URL": postgres_url}
    async with lsp_session(workspace, shared_env) as lsp:
        bib = open_file(lsp, workspace / "refs.bib", "bibtex")
        await wait_until(lsp, verified(bib, "fake", "invented", "down"))
        with psycopg.connect(postgres_url) as conn:
            stored = conn.execute("SELECT count(*) FROM citelsp_answers").fetchone()[0]
        assert stored > 0
        before = api.asked(path_contains="s42256")
        done = await lsp.workspace_execute_command_async(types.ExecuteCommandParams(
            command="citelsp.clearCache", arguments=[]))
        assert done["shared"] and not done["cleared"] and done["queued"] > 0
        deadline = asyncio.get_running_loop().time() + 30
        while api.asked(path_contains="s42256") <= before:  # looked up again, fresh
            assert asyncio.get_running_loop().time() < deadline
            await asyncio.sleep(0.05)
        await wait_until(lsp, verified(bib, "fake"))
        with psycopg.connect(postgres_url) as conn:
            kept = conn.execute("SELECT count(*) FROM citelsp_answers").fetchone()[0]
        assert kept >= stored
