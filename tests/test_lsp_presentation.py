"""What the editor shows is one clear finding per place, in the client's markup: hovers
without stray escapes (plain text where asked), one card per reference a key names, code
actions listed once, help for a dangling key, and protocol errors answered."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import client_capabilities

from tests.lsp_session import accept_edits, codes, lsp_session, open_file, wait_until
from tests.test_lsp_verify import (  # noqa: F401  (fixtures)
    FAKE_DOI,
    REAL_DOI,
    api,
    code_actions,
    env,
    hover_at,
    position_of,
    run,
    verified,
)

BIB = f"""@article{{twice,
  title   = {{Augmenting large language models with chemistry tools}},
  author  = {{Bran, Andres M. and Cox, Sam and Schilter, Oliver and Baldassari, Carlo
             and White, Andrew D. and Schwaller, Philippe}},
  journal = {{Nature Machine Intelligence}},
  year    = {{2024}},
  doi     = {{{REAL_DOI}}},
}}

@article{{twice,
  title   = {{A Unified Benchmark of Hallucinated Citations}},
  author  = {{Smith, Jane}},
  journal = {{Journal of Imaginary Results}},
  year    = {{2023}},
  doi     = {{{FAKE_DOI}}},
}}

@article{{smith_2023,
  title   = {{Field_names and vol. 5 (with parentheses)}},
  author  = {{O'Brien, Pat}},
  year    = {{2023}},
}}
"""
PAPER = """---
bibliography: refs.bib
---
Both [@twice], a typo [@smith_2032], and an identifier [@10.1038/s42256-024-00832-8].
"""


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "refs.bib").write_text(BIB, encoding="utf-8")
    (root / "paper.md").write_text(PAPER, encoding="utf-8")
    return root


def plain_text_client() -> types.ClientCapabilities:
    caps = client_capabilities("neovim")
    hover = types.HoverClientCapabilities(content_format=[types.MarkupKind.PlainText])
    return attrs.evolve(caps, text_document=attrs.evolve(caps.text_document, hover=hover),
                        experimental={"citelspPromptsForIdentifier": True})


async def test_hover_text_has_no_stray_escapes(workspace, env):  # noqa: F811
    async with lsp_session(workspace, env, client="neovim") as lsp:
        bib = open_file(lsp, workspace / "refs.bib", "bibtex")
        card = await hover_at(lsp, bib, position_of(workspace / "refs.bib", "smith_2023"))
        assert "smith_2023" in card and "Field_names and vol. 5 (with parentheses)" in card
        assert "O'Brien" in card and "\\" not in card


async def test_plain_text_hover_for_a_client_that_asks_for_it(workspace, env):  # noqa: F811
    async with lsp_session(workspace, env, capabilities=plain_text_client()) as lsp:
        md = open_file(lsp, workspace / "paper.md", "markdown")
        await wait_until(lsp, verified(md, "twice"))
        result = await lsp.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=md),
            position=position_of(workspace / "paper.md", "@twice")))
        assert result.contents.kind == types.MarkupKind.PlainText
        text = result.contents.value
        assert "**" not in text and "|---|" not in text and "\\" not in text
        assert "found — the work exists as cited" in text
        assert "refuted — identifier evidence" in text, "both entries of a duplicated key"


async def test_a_duplicated_key_lists_each_action_once(workspace, env):  # noqa: F811
    async with lsp_session(workspace, env) as lsp:
        md = open_file(lsp, workspace / "paper.md", "markdown")
        await wait_until(lsp, verified(md, "twice"))
        found = await code_actions(lsp, md, position_of(workspace / "paper.md", "@twice"))
        titles = [a.title for a in found]
        assert len(titles) == len(set(titles)) and titles


async def test_one_diagnostic_per_reference_and_place(workspace, env):  # noqa: F811
    async with lsp_session(workspace, env) as lsp:
        bib = open_file(lsp, workspace / "refs.bib", "bibtex")
        md = open_file(lsp, workspace / "paper.md", "markdown")
        await wait_until(lsp, verified(bib, "twice"))
        await wait_until(lsp, verified(md, "twice"))
        for uri in (bib, md):
            places = [(d.range.start.line, d.range.start.character, d.message.split(":")[0])
                      for d in lsp.diagnostics[uri] if d.code != "DUPLICATE_KEY"]
            assert len(places) == len(set(places)), lsp.diagnostics[uri]


async def test_a_dangling_key_offers_the_near_key_and_an_entry_from_its_doi(
        workspace, env):  # noqa: F811
    paper = workspace / "paper.md"
    async with lsp_session(workspace, env) as lsp:
        applied = accept_edits(lsp)
        md = open_file(lsp, paper, "markdown")
        await wait_until(lsp, lambda c: "DANGLING_CITATION" in codes(c, md))
        typo = await code_actions(lsp, md, position_of(paper, "@smith_2032"))
        meant = [a for a in typo if a.title == "Did you mean 'smith_2023'?"]
        assert meant and meant[0].edit.changes[md][0].new_text == "smith_2023"
        assert not any("Create an entry" in a.title for a in typo), \
            "no prompt without a plugin that asks"

        by_doi = await code_actions(lsp, md, position_of(paper, "@10.1038"))
        create = [a for a in by_doi if a.title.startswith("Create an entry")]
        assert create, [a.title for a in by_doi]
        result = await run(lsp, create[0])
        assert result["applied"] and applied
        text = applied[0].changes[(workspace / "refs.bib").as_uri()][0].new_text
        assert "@article{10.1038/s42256-024-00832-8," in text
        assert "title = {Augmenting large language models with chemistry tools}" in text
        assert f"doi = {{{REAL_DOI}}}" in text


async def test_an_entry_from_a_doi_goes_into_a_csl_yaml_bibliography_as_yaml(
        tmp_path, env):  # noqa: F811
    """pandoc's CSL-YAML bibliography file: the new item follows the last one, indented
    like it, and the file reads back with every item."""
    from citelsp.documents.parse import parse_document

    refs = tmp_path / "refs.yaml"
    refs.write_text("---\nreferences:\n  - id: smith_2023\n    type: article-journal\n"
                    "    title: Field names\n...\n", encoding="utf-8")
    paper = tmp_path / "paper.md"
    paper.write_text("---\nbibliography: refs.yaml\n---\nSee [@10.1038/s42256-024-00832-8] "
                     "and [@smith_2023].\n", encoding="utf-8")
    async with lsp_session(tmp_path, env) as lsp:
        applied = accept_edits(lsp)
        md = open_file(lsp, paper, "markdown")
        await wait_until(lsp, lambda c: "DANGLING_CITATION" in codes(c, md))
        assert [d.message for d in lsp.diagnostics[md] if d.code == "DANGLING_CITATION"] == [
            "citation key '10.1038/s42256-024-00832-8' is not in any bibliography of this "
            "manuscript"], "smith_2023 is read from the YAML file"
        found = await code_actions(lsp, md, position_of(paper, "@10.1038"))
        create = [a for a in found if a.title.startswith("Create an entry")]
        assert create, [a.title for a in found]
        assert (await run(lsp, create[0]))["applied"]
        (edit,) = applied[0].changes[refs.as_uri()]
    text = refs.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    at = sum(len(line) for line in lines[:edit.range.start.line]) + edit.range.start.character
    after = text[:at] + edit.new_text + text[at:]
    assert "\n  - id: 10.1038/s42256-024-00832-8\n    type: article-journal\n" in after
    bib = parse_document(refs.as_uri(), after)
    assert not bib.problems
    assert [r.key for r in bib.references] == ["smith_2023", "10.1038/s42256-024-00832-8"]
    added = bib.references[1]
    assert added.fields["title"].value == \
        "Augmenting large language models with chemistry tools"
    assert added.fields["doi"].value == REAL_DOI
    assert after.endswith("\n...\n")


async def test_a_bibliography_rewritten_on_disk_is_read_again(tmp_path, env):  # noqa: F811
    """Zotero's auto-export rewrites refs.bib while it is not open: the server asks the
    client to watch such files, and a change it reports is read at once."""
    registered: list[types.Registration] = []

    def register(params: types.RegistrationParams) -> None:
        registered.extend(params.registrations)

    (tmp_path / "refs.bib").write_text(BIB, encoding="utf-8")
    paper = tmp_path / "paper.md"
    paper.write_text("---\nbibliography: refs.bib\n---\nSee [@new2024].\n", encoding="utf-8")
    async with lsp_session(tmp_path, env, features={
            types.CLIENT_REGISTER_CAPABILITY: register}) as lsp:
        md = open_file(lsp, paper, "markdown")
        await wait_until(lsp, lambda c: "DANGLING_CITATION" in codes(c, md) and registered)
        (watch,) = [r for r in registered
                    if r.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES]
        assert "bib" in watch.register_options["watchers"][0]["globPattern"]
        (tmp_path / "refs.bib").write_text(
            BIB + "@misc{new2024, title = {Added by Zotero}, year = 2024}\n", encoding="utf-8")
        lsp.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
            types.FileEvent(uri=(tmp_path / "refs.bib").as_uri(),
                            type=types.FileChangeType.Changed)]))
        await wait_until(lsp, lambda c: "DANGLING_CITATION" not in codes(c, md))


async def test_a_latex_chapter_opened_alone_uses_its_main_files_bibliography(
        tmp_path, env):  # noqa: F811
    """Not every .bib of the workspace: the one the main file that includes it names."""
    (tmp_path / "chapters").mkdir()
    (tmp_path / "main.tex").write_text("\\documentclass{book}\n\\begin{document}\n"
                                       "\\include{chapters/intro}\n\\bibliography{refs}\n"
                                       "\\end{document}\n", encoding="utf-8")
    (tmp_path / "refs.bib").write_text(BIB, encoding="utf-8")
    (tmp_path / "old.bib").write_text("@book{stale, title = {Stale}, year = 1999}\n",
                                      encoding="utf-8")
    chapter = tmp_path / "chapters" / "intro.tex"
    chapter.write_text("See \\cite{smith_2023} and \\cite{stale}.\n", encoding="utf-8")
    async with lsp_session(tmp_path, env) as lsp:
        tex = open_file(lsp, chapter, "latex")
        await wait_until(lsp, lambda c: "DANGLING_CITATION" in codes(c, tex))
        dangling = [d for d in lsp.diagnostics[tex] if d.code == "DANGLING_CITATION"]
        assert [d.message for d in dangling] == [
            "citation key 'stale' is not in any bibliography of this manuscript"]


async def test_a_citation_of_a_broken_entry_points_the_editor_at_it(tmp_path, env):  # noqa: F811
    bib = tmp_path / "refs.bib"
    bib.write_text("@article{broken, title = {Unclosed, year = 2020,\n\n@book{ok, title = {O}}\n",
                   encoding="utf-8")
    paper = tmp_path / "paper.md"
    paper.write_text("---\nbibliography: refs.bib\n---\nSee [@broken] and [@ok].\n",
                     encoding="utf-8")
    async with lsp_session(tmp_path, env) as lsp:
        md = open_file(lsp, paper, "markdown")
        await wait_until(lsp, lambda c: "DANGLING_CITATION" in codes(c, md))
        (dangling,) = [d for d in lsp.diagnostics[md] if d.code == "DANGLING_CITATION"]
        assert dangling.message == ("citation key 'broken': its entry in refs.bib cannot be "
                                    "read (the MALFORMED_ENTRY error at line 1)")
        (related,) = dangling.related_information
        assert related.location.uri == bib.as_uri() and related.location.range.start.line == 0
        assert related.message == ("the entry 'broken', which cannot be read: Unbalanced "
                                   "braces in field 'title': missing '}'.")


async def test_quarto_and_r_markdown_documents_are_checked(workspace, env):  # noqa: F811
    """VS Code's Quarto and R extensions send ``quarto`` and ``rmd`` as language ids; a
    figure cross-reference is not a citation."""
    text = PAPER + "See @fig-plot.\n"
    async with lsp_session(workspace, env) as lsp:
        for name, language in (("paper.qmd", "quarto"), ("paper.Rmd", "rmd")):
            (workspace / name).write_text(text, encoding="utf-8")
            uri = open_file(lsp, workspace / name, language)
            await wait_until(lsp, lambda c, uri=uri: "DANGLING_CITATION" in codes(c, uri))
            assert [d.message.split("'")[1] for d in lsp.diagnostics[uri]
                    if d.code == "DANGLING_CITATION"] == ["smith_2032",
                                                          "10.1038/s42256-024-00832-8"]


async def test_a_plugin_that_prompts_is_offered_create_entry_for_any_key(workspace, env):  # noqa: F811
    paper = workspace / "paper.md"
    async with lsp_session(workspace, env, capabilities=plain_text_client()) as lsp:
        md = open_file(lsp, paper, "markdown")
        await wait_until(lsp, lambda c: "DANGLING_CITATION" in codes(c, md))
        found = await code_actions(lsp, md, position_of(paper, "@smith_2032"))
        create = [a for a in found if a.title.startswith("Create an entry")]
        assert create and list(create[0].arguments) == [md, "smith_2032"]
        with pytest.raises(JsonRpcException, match="DOI_OR_ARXIV_ID"):
            await run(lsp, create[0])


async def test_settings_rules_switch_codes_off(workspace, env):  # noqa: F811
    async with lsp_session(workspace, env,
                           options={"rules": {"DANGLING_CITATION": False}}) as lsp:
        md = open_file(lsp, workspace / "paper.md", "markdown")
        bib = open_file(lsp, workspace / "refs.bib", "bibtex")
        await wait_until(lsp, lambda c: "DUPLICATE_KEY" in codes(c, bib))
        await wait_until(lsp, lambda c: md in c.diagnostics)
        assert "DANGLING_CITATION" not in codes(lsp, md)


async def test_a_unicode_space_between_fields_has_a_quick_fix(tmp_path, env):  # noqa: F811
    """The warning marks one invisible character; the fix makes it a plain space, and the
    warning goes with it."""
    bib_path = tmp_path / "nbsp.bib"
    bib_path.write_text("@book{knuth1984,\n  title\u00a0= {The {\\TeX}book},\n"
                        "  author = {Knuth, Donald E.},\n  year = 1984\n}\n", encoding="utf-8")
    async with lsp_session(tmp_path, env) as lsp:
        bib = open_file(lsp, bib_path, "bibtex")
        await wait_until(lsp, lambda c: "MALFORMED_ENTRY" in codes(c, bib))
        (warning,) = codes(lsp, bib)["MALFORMED_ENTRY"]
        assert warning.range.start == types.Position(line=1, character=7)
        assert warning.range.end == types.Position(line=1, character=8)
        found = await code_actions(lsp, bib, warning.range.start)
        title = "Replace a no-break space (U+00A0) with a plain space"
        fix = [a for a in found if a.title == title]
        assert fix, [a.title for a in found]
        (edit,) = fix[0].edit.changes[bib]
        assert (edit.range, edit.new_text) == (warning.range, " ")

        text = bib_path.read_text(encoding="utf-8").replace("\u00a0", " ")
        lsp.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=bib, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))
        await wait_until(lsp, lambda c: "MALFORMED_ENTRY" not in codes(c, bib))
