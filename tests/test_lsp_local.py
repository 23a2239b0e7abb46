"""The language server's local features, driven over stdio with pytest-lsp (DESIGN.md §3, §7).

Every test starts the real server (``python -m citelsp``) on the workspace in
``tests/lsp_fixtures`` with ``CITELSP_OFFLINE=1`` and a private cache, so nothing reaches the
network. Positions are computed from the fixture text in the encoding the server negotiated:
UTF-16 for the VS Code-like client, UTF-8 for the Neovim-like one (Chinese and emoji precede
citations, so the two differ).
"""

from __future__ import annotations

import asyncio
import copy
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from tests.lsp_session import editor_client

FIXTURES = (Path(__file__).parent / "lsp_fixtures").resolve()
LOCAL_CODES = {
    "DANGLING_CITATION", "ORPHAN_REFERENCE", "DUPLICATE_KEY", "DUPLICATE_WORK",
    "MALFORMED_ENTRY", "MALFORMED_MARKER", "INVALID_IDENTIFIER", "NO_LOCATOR", "BAD_ANCHOR",
}  # fmt: skip
SLUG_MAP = {"attention-paper": "vaswani2017attention"}
TIMEOUT = 15.0
pytestmark = pytest.mark.asyncio(loop_scope="module")
"""One event loop per module: the shared session's client lives on it."""

_CACHE = tempfile.TemporaryDirectory(prefix="citelsp-lsp-tests-")
CONFIG = ClientServerConfig(
    client_factory=editor_client,
    server_command=[sys.executable, "-m", "citelsp"],
    server_env={**os.environ, "CITELSP_CACHE_DIR": _CACHE.name, "CITELSP_OFFLINE": "1"},
)


def _without_configuration(name: str) -> types.ClientCapabilities:
    """A client that cannot answer ``workspace/configuration`` (settings come by push only)."""
    capabilities = copy.deepcopy(client_capabilities(name))
    capabilities.workspace.configuration = False
    return capabilities


CLIENTS = {
    "vscode": client_capabilities("visual-studio-code"),
    "neovim": client_capabilities("neovim"),
}
CONFIG_CLIENTS = {
    "vscode": CLIENTS["vscode"],
    "neovim-no-configuration": _without_configuration("neovim"),
}


# --- helpers ---------------------------------------------------------------------------------


def uri_of(name: str) -> str:
    return (FIXTURES / name).as_uri()


def text_of(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def units(text: str, encoding: str) -> int:
    if encoding == types.PositionEncodingKind.Utf8:
        return len(text.encode("utf-8"))
    if encoding == types.PositionEncodingKind.Utf32:
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def position(text: str, offset: int, encoding: str) -> types.Position:
    line = text.count("\n", 0, offset)
    start = text.rfind("\n", 0, offset) + 1
    return types.Position(line=line, character=units(text[start:offset], encoding))


def find(text: str, needle: str, occurrence: int = 0) -> int:
    offset = -1
    for _ in range(occurrence + 1):
        offset = text.index(needle, offset + 1)
    return offset


def range_of(text: str, needle: str, encoding: str, occurrence: int = 0) -> types.Range:
    """The range of the ``occurrence``-th ``needle`` in ``text``."""
    start = find(text, needle, occurrence)
    return types.Range(
        start=position(text, start, encoding), end=position(text, start + len(needle), encoding)
    )


def at(text: str, needle: str, encoding: str, occurrence: int = 0, delta: int = 1
       ) -> types.Position:
    """A cursor inside the ``occurrence``-th ``needle`` (``delta`` code points in)."""
    return position(text, find(text, needle, occurrence) + delta, encoding)


def encoding_of(client: LanguageClient) -> str:
    return client.negotiated_encoding


async def wait_for_diagnostics(
    client: LanguageClient,
    uri: str,
    until: Callable[[Sequence[types.Diagnostic]], bool] = lambda _: True,
) -> Sequence[types.Diagnostic]:
    """The diagnostics last published for ``uri`` once they satisfy ``until``."""

    async def watch() -> Sequence[types.Diagnostic]:
        while True:
            found = client.diagnostics.get(uri)
            if found is not None and until(found):
                return found
            await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)

    return await asyncio.wait_for(watch(), TIMEOUT)


def local(diagnostics: Sequence[types.Diagnostic]) -> list[types.Diagnostic]:
    """Local findings only: verification diagnostics may come and go beside them."""
    return [d for d in diagnostics if d.code in LOCAL_CODES]


def found(diagnostics: Sequence[types.Diagnostic]) -> set[tuple[str, tuple[int, int, int, int]]]:
    return {(str(d.code), _key(d.range)) for d in local(diagnostics)}


def _key(r: types.Range) -> tuple[int, int, int, int]:
    return (r.start.line, r.start.character, r.end.line, r.end.character)


def locations(found_: Sequence[types.Location]) -> set[tuple[str, tuple[int, int, int, int]]]:
    return {(loc.uri, _key(loc.range)) for loc in found_}


def open_document(client: LanguageClient, name: str, text: str | None = None,
                  language: str = "markdown") -> str:
    """Open ``name`` (its disk text unless ``text`` is given); returns the text sent."""
    text = text_of(name) if text is None else text
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(
            uri=uri_of(name), language_id=language, version=1, text=text
        )
    ))
    return text


def close_document(client: LanguageClient, name: str) -> None:
    client.text_document_did_close(types.DidCloseTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=uri_of(name))
    ))


def edit(client: LanguageClient, name: str, version: int, range_: types.Range, new: str) -> None:
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri_of(name), version=version),
        content_changes=[types.TextDocumentContentChangePartial(range=range_, text=new)],
    ))


async def start(client: LanguageClient, capabilities: types.ClientCapabilities,
                options: dict | None = None) -> None:
    result = await client.initialize_session(types.InitializeParams(
        capabilities=capabilities,
        root_uri=FIXTURES.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=FIXTURES.as_uri(), name="fixtures")],
        initialization_options=options,
    ))
    client.negotiated_encoding = result.capabilities.position_encoding or "utf-16"


async def hover(client: LanguageClient, name: str, pos: types.Position) -> types.Hover | None:
    return await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri_of(name)), position=pos
    ))


# --- a shared session over the fixture workspace (read-only tests) ----------------------------

SESSION_FILES = {
    "paper.md": "markdown", "refs.bib": "bibtex", "refs.json": "json", "csl.md": "markdown",
    "plain.md": "markdown", "broken.md": "markdown", "broken.bib": "bibtex",
}  # fmt: skip


@pytest_lsp.fixture(config=CONFIG, scope="module", params=list(CLIENTS))
async def session(client: LanguageClient, request):
    """Every fixture open except ``paper.tex``, which stays on disk only."""
    client.capabilities_name = request.param
    await start(client, CLIENTS[request.param], {"citelsp": {"slugMap": SLUG_MAP}})
    for name, language in SESSION_FILES.items():
        open_document(client, name, language=language)
    for name in SESSION_FILES:
        await wait_for_diagnostics(client, uri_of(name))
    yield
    await client.shutdown_session()


@pytest_lsp.fixture(config=CONFIG, params=list(CONFIG_CLIENTS), loop_scope="module")
async def fresh(client: LanguageClient, request):
    """A server with nothing open; each test initializes it (``start``) its own way."""
    client.capabilities_name = request.param
    yield
    await client.shutdown_session()


# --- diagnostics -----------------------------------------------------------------------------


async def test_diagnostics_carry_source_code_and_description(session: LanguageClient):
    diagnostics = local(await wait_for_diagnostics(session, uri_of("broken.md")))
    assert diagnostics
    for d in diagnostics:
        assert d.source == "citelsp"
        assert d.code_description is not None
        assert d.code_description.href.startswith("https://")
        assert d.code_description.href.endswith("#" + str(d.code).lower())


async def test_clean_manuscript_has_no_local_findings(session: LanguageClient):
    """Every key of paper.md resolves (the marker slug through the slug map); code is skipped."""
    assert local(await wait_for_diagnostics(session, uri_of("paper.md"))) == []


async def test_manuscript_findings_at_exact_ranges(session: LanguageClient):
    text, enc = text_of("broken.md"), encoding_of(session)
    diagnostics = await wait_for_diagnostics(session, uri_of("broken.md"))
    assert found(diagnostics) == {
        ("DANGLING_CITATION", _key(range_of(text, "ghost2020", enc))),
        ("NO_LOCATOR", _key(range_of(text, "<!--ref:dup2020-->", enc))),
        # dup2020 is defined twice in broken.bib: each citation of it says so
        ("DUPLICATE_KEY", _key(range_of(text, "dup2020", enc, 0))),
        ("DUPLICATE_KEY", _key(range_of(text, "dup2020", enc, 1))),
        ("BAD_ANCHOR", _key(range_of(text, "<!--anchor:chapter:3-->", enc))),
        ("MALFORMED_MARKER", _key(range_of(text, "<!--ref:9bad-->", enc))),
        ("NO_LOCATOR", _key(range_of(text, "<!--ref:twin-b-->", enc))),
        ("BAD_ANCHOR", _key(range_of(text, "<!--anchor:page:12-->", enc))),
    }
    dangling = next(d for d in diagnostics if d.code == "DANGLING_CITATION")
    assert dangling.severity == types.DiagnosticSeverity.Error
    prefix = "注意力 🙂 [@"
    assert dangling.range.start.character == units(prefix, enc)


async def test_bibliography_findings_at_exact_ranges(session: LanguageClient):
    text, enc = text_of("broken.bib"), encoding_of(session)
    diagnostics = await wait_for_diagnostics(session, uri_of("broken.bib"))
    codes = found(diagnostics)
    assert {c for c in codes if c[0] != "MALFORMED_ENTRY"} == {
        ("DUPLICATE_KEY", _key(range_of(text, "dup2020", enc, 0))),
        ("DUPLICATE_KEY", _key(range_of(text, "dup2020", enc, 1))),
        ("DUPLICATE_WORK", _key(range_of(text, "twin-a", enc))),
        ("DUPLICATE_WORK", _key(range_of(text, "twin-b", enc))),
        ("INVALID_IDENTIFIER", _key(range_of(text, "not-a-doi", enc))),
    }
    malformed = [d for d in diagnostics if d.code == "MALFORMED_ENTRY"]
    assert len(malformed) == 1
    assert malformed[0].range.start == position(text, find(text, "@article{broken"), enc)
    assert malformed[0].severity == types.DiagnosticSeverity.Error
    duplicate = next(d for d in diagnostics if d.code == "DUPLICATE_KEY")
    assert [r.location.range for r in duplicate.related_information or []] == [
        range_of(text, "dup2020", enc, 1)
    ]


async def test_orphans_in_bibtex_and_csl_json(session: LanguageClient):
    for name, orphan in (("refs.bib", "knuth1984texbook"), ("refs.json", "zhang2021zh")):
        diagnostics = await wait_for_diagnostics(session, uri_of(name))
        assert found(diagnostics) == {
            ("ORPHAN_REFERENCE", _key(range_of(text_of(name), orphan, encoding_of(session))))
        }
        hint = local(diagnostics)[0]
        assert hint.severity == types.DiagnosticSeverity.Hint
        assert list(hint.tags) == [types.DiagnosticTag.Unnecessary]


# --- completion ------------------------------------------------------------------------------

COMPLETION_CASES = [
    ("scratch.md", "As @", None),
    ("scratch.md", "As @dev", ["devlin2019bert"]),
    ("scratch.md", "Shown [@", None),
    ("scratch.md", "Shown [see @he2016resnet, p. 4; @vas", ["vaswani2017attention"]),
    ("scratch.md", "Marked<!--ref:", None),
    ("scratch.md", "Marked<!--ref:mu", ["mueller2020"]),
    ("scratch.md", "注意力 🙂 [@kn", ["knuth1984texbook"]),
    ("scratch.md", "MyST {cite:p}`", None),
    ("scratch.md", "MyST {cite}`he2016resnet, mu", ["mueller2020"]),
    ("scratch.tex", r"As \citep[p.~4]{", None),
    ("scratch.tex", r"As \cite{a, ", None),
    ("scratch.tex", r"As \textcite{vaswani2017attention,de",  # and "Deep", "der" in titles
     ["devlin2019bert", "he2016resnet", "mueller2020"]),
    ("scratch.tex", r"As \citeA<e.g.,>[p.~4]{he", ["he2016resnet"]),
    ("scratch.tex", r"As \volcite[see]{2}[45]{kn", ["knuth1984texbook"]),
]
ALL_KEYS = ["devlin2019bert", "he2016resnet", "knuth1984texbook", "mueller2020",
            "vaswani2017attention"]  # fmt: skip
HEADERS = {
    "scratch.md": "---\nbibliography: refs.bib\n---\n\n",
    "scratch.tex": "\\bibliography{refs}\n",
}


@pytest.mark.parametrize(("name", "line", "expected"), COMPLETION_CASES)
async def test_completion_of_keys(session: LanguageClient, name, line, expected):
    text = HEADERS[name] + line
    open_document(session, name, text, "latex" if name.endswith(".tex") else "markdown")
    try:
        result = await session.text_document_completion_async(types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri_of(name)),
            position=position(text, len(text), encoding_of(session)),
        ))
        devlin = [i for i in result.items if i.label == "devlin2019bert"]
        resolved = devlin and await session.completion_item_resolve_async(devlin[0])
    finally:
        close_document(session, name)
    assert isinstance(result, types.CompletionList)
    assert sorted(i.label for i in result.items) == (expected or ALL_KEYS)
    assert not result.is_incomplete
    if devlin:
        assert devlin[0].text_edit.new_text == "devlin2019bert"
        assert "BERT: Pre-training" in devlin[0].filter_text
        # VS Code asks for the details of the item it shows; Neovim's own completion never
        # does, and gets them in the list
        listed = session.capabilities_name == "neovim"
        assert devlin[0].detail == ("Devlin et al. (2019)" if listed else None)
        assert resolved.detail == "Devlin et al. (2019)"
        assert "BERT: Pre-training of Deep Bidirectional Transformers" in str(
            resolved.documentation
        )
        assert resolved.insert_text == "devlin2019bert"


async def test_completion_item_resolve_shows_decoded_authors_and_csl_entries(
        session: LanguageClient):
    before, after = "---\nbibliography: refs.json\n---\n\nAs 注意力 🙂 @le", "cun2015deep, p. 4"
    text, encoding = before + after, encoding_of(session)
    open_document(session, "scratch.md", text)
    try:
        result = await session.text_document_completion_async(types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri_of("scratch.md")),
            position=position(text, len(before), encoding),
        ))
        (item,) = result.items
        lecun = await session.completion_item_resolve_async(item)
        text = before[:-2] + after
        session.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri_of("scratch.md"),
                                                                version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))
        result = await session.text_document_completion_async(types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri_of("scratch.md")),
            position=position(text, len(before) - 2, encoding),
        ))
        items = {i.label: i for i in result.items}
        zhang = await session.completion_item_resolve_async(items["zhang2021zh"])
    finally:
        close_document(session, "scratch.md")
    typed = types.Range(start=position(before, len(before) - 2, encoding),
                        end=position(before, len(before), encoding))
    if session.capabilities_name == "vscode":  # the whole key, in replace mode
        key = types.Range(start=typed.start, end=types.Position(
            line=typed.end.line, character=typed.end.character + len("cun2015deep")))
        assert item.text_edit == types.InsertReplaceEdit(
            new_text="lecun2015deep", insert=typed, replace=key)
    else:
        assert item.text_edit == types.TextEdit(range=typed, new_text="lecun2015deep")
    assert set(items) == {"lecun2015deep", "zhang2021zh"}
    assert lecun.detail == "LeCun et al. (2015)"
    assert str(lecun.documentation).startswith("Deep learning\nYann LeCun, Yoshua Bengio")
    assert str(zhang.documentation).startswith("基于注意力机制的文本分类研究")


async def test_no_completion_outside_a_key_position(session: LanguageClient):
    text = "---\nbibliography: refs.bib\n---\n\nWrite to me@"
    open_document(session, "scratch.md", text)
    try:
        result = await session.text_document_completion_async(types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri_of("scratch.md")),
            position=position(text, len(text), encoding_of(session)),
        ))
    finally:
        close_document(session, "scratch.md")
    assert result is None or result.items == []


# --- hover -----------------------------------------------------------------------------------


async def test_hover_on_markdown_citation_after_non_ascii_text(session: LanguageClient):
    text, enc = text_of("paper.md"), encoding_of(session)
    result = await hover(session, "paper.md", at(text, "mueller2020", enc, delta=3))
    assert result is not None
    assert result.range == range_of(text, "mueller2020", enc)
    value = result.contents.value
    assert "Jörg Müller (2020)" in value
    assert "Über die Zitierpraxis in der Informatik" in value


async def test_hover_on_latex_citation_with_optional_argument(session: LanguageClient):
    text, enc = text_of("paper.tex"), encoding_of(session)
    open_document(session, "paper.tex", language="latex")
    try:
        result = await hover(session, "paper.tex", at(text, "devlin2019bert", enc))
    finally:
        close_document(session, "paper.tex")
    assert result is not None
    assert result.range == range_of(text, "devlin2019bert", enc)
    assert "Jacob Devlin" in result.contents.value
    assert "(2019)" in result.contents.value
    assert "10.18653/v1/N19-1423" in result.contents.value


async def test_hover_on_slug_mapped_marker(session: LanguageClient):
    text, enc = text_of("paper.md"), encoding_of(session)
    result = await hover(session, "paper.md", at(text, "attention-paper", enc))
    assert "Attention Is All You Need" in result.contents.value


async def test_hover_on_entries(session: LanguageClient):
    enc = encoding_of(session)
    bib = await hover(session, "refs.bib", at(text_of("refs.bib"), "knuth1984texbook", enc))
    assert bib.range == range_of(text_of("refs.bib"), "knuth1984texbook", enc)
    assert "Donald E. Knuth (1984)." in bib.contents.value, "no stray escapes"
    json_ = await hover(session, "refs.json", at(text_of("refs.json"), "Deep learning", enc))
    assert "Yann LeCun" in json_.contents.value
    assert json_.range == range_of(text_of("refs.json"), "lecun2015deep", enc)
    cited = await hover(session, "csl.md", at(text_of("csl.md"), "[@doe2020yaml", enc, delta=3))
    assert "A Study of Inline Bibliographies" in cited.contents.value


async def test_hover_on_front_matter_entry(session: LanguageClient):
    text = text_of("csl.md")
    inline = await hover(session, "csl.md", at(text, "doe2020yaml", encoding_of(session)))
    assert inline is not None
    assert "A Study of Inline Bibliographies" in inline.contents.value


async def test_hover_on_dangling_citation(session: LanguageClient):
    text = text_of("broken.md")
    result = await hover(session, "broken.md", at(text, "ghost2020", encoding_of(session)))
    assert "not in any bibliography" in result.contents.value


# --- definition, references, rename, symbols -------------------------------------------------


async def test_definition_across_files(session: LanguageClient):
    enc = encoding_of(session)
    bib = text_of("refs.bib")
    cases = [
        ("paper.md", "devlin2019bert", "refs.bib", bib, "devlin2019bert"),
        ("paper.md", "attention-paper", "refs.bib", bib, "vaswani2017attention"),
        ("plain.md", "lecun2015deep", "refs.json", text_of("refs.json"), "lecun2015deep"),
        ("csl.md", "[@doe2020yaml", "csl.md", text_of("csl.md"), "doe2020yaml"),
    ]
    for source, needle, target, target_text, key in cases:
        result = await session.text_document_definition_async(types.DefinitionParams(
            text_document=types.TextDocumentIdentifier(uri=uri_of(source)),
            position=at(text_of(source), needle, enc, delta=3),
        ))
        assert locations(result) == {(uri_of(target), _key(range_of(target_text, key, enc)))}


@pytest.mark.parametrize("include_declaration", [True, False])
async def test_references_from_entry_reach_unopened_latex(session: LanguageClient,
                                                          include_declaration):
    enc = encoding_of(session)
    md, tex, plain, bib = (text_of(n) for n in ("paper.md", "paper.tex", "plain.md", "refs.bib"))
    result = await session.text_document_references_async(types.ReferenceParams(
        text_document=types.TextDocumentIdentifier(uri=uri_of("refs.bib")),
        position=at(bib, "vaswani2017attention", enc),
        context=types.ReferenceContext(include_declaration=include_declaration),
    ))
    expected = {
        (uri_of("paper.md"), _key(range_of(md, "vaswani2017attention", enc, 0))),
        (uri_of("paper.md"), _key(range_of(md, "vaswani2017attention", enc, 1))),
        (uri_of("paper.md"), _key(range_of(md, "attention-paper", enc))),
        (uri_of("paper.tex"), _key(range_of(tex, "vaswani2017attention", enc, 0))),
        (uri_of("paper.tex"), _key(range_of(tex, "vaswani2017attention", enc, 1))),
        (uri_of("plain.md"), _key(range_of(plain, "vaswani2017attention", enc))),
    }
    if include_declaration:
        expected.add((uri_of("refs.bib"), _key(range_of(bib, "vaswani2017attention", enc))))
    assert locations(result) == expected


async def test_rename_edits_bib_markdown_and_unopened_latex(session: LanguageClient):
    enc = encoding_of(session)
    md, tex, bib = text_of("paper.md"), text_of("paper.tex"), text_of("refs.bib")
    where = types.TextDocumentIdentifier(uri=uri_of("paper.md"))
    cursor = at(md, "devlin2019bert", enc, delta=2)
    prepared = await session.text_document_prepare_rename_async(
        types.PrepareRenameParams(text_document=where, position=cursor)
    )
    assert prepared == range_of(md, "devlin2019bert", enc)
    result = await session.text_document_rename_async(types.RenameParams(
        text_document=where, position=cursor, new_name="devlin2019pretraining"
    ))
    edits = {
        (uri, _key(e.range)) for uri, changes in result.changes.items() for e in changes
    }
    assert edits == {
        (uri_of("refs.bib"), _key(range_of(bib, "devlin2019bert", enc))),
        (uri_of("paper.md"), _key(range_of(md, "devlin2019bert", enc, 0))),
        (uri_of("paper.md"), _key(range_of(md, "devlin2019bert", enc, 1))),
        (uri_of("paper.tex"), _key(range_of(tex, "devlin2019bert", enc))),
    }
    assert {e.new_text for changes in result.changes.values() for e in changes} == {
        "devlin2019pretraining"
    }


async def test_rename_through_a_slug_keeps_the_slug(session: LanguageClient):
    enc = encoding_of(session)
    md = text_of("paper.md")
    result = await session.text_document_rename_async(types.RenameParams(
        text_document=types.TextDocumentIdentifier(uri=uri_of("paper.md")),
        position=at(md, "attention-paper", enc),
        new_name="vaswani2017",
    ))
    md_edits = {_key(e.range) for e in result.changes[uri_of("paper.md")]}
    assert _key(range_of(md, "attention-paper", enc)) not in md_edits
    assert len(md_edits) == 2
    assert len(result.changes[uri_of("paper.tex")]) == 2
    assert len(result.changes[uri_of("refs.bib")]) == 1


async def test_rename_rejects_an_invalid_key(session: LanguageClient):
    md = text_of("paper.md")
    with pytest.raises(Exception, match="not a valid citation key"):
        await session.text_document_rename_async(types.RenameParams(
            text_document=types.TextDocumentIdentifier(uri=uri_of("paper.md")),
            position=at(md, "devlin2019bert", encoding_of(session)),
            new_name="two words",
        ))


async def test_document_symbols_for_bibliographies(session: LanguageClient):
    enc = encoding_of(session)
    cases = [
        ("refs.bib", ["vaswani2017attention", "devlin2019bert", "he2016resnet", "mueller2020",
                      "knuth1984texbook"]),
        ("refs.json", ["lecun2015deep", "zhang2021zh"]),
        ("csl.md", ["doe2020yaml"]),
    ]
    for name, keys in cases:
        symbols = await session.text_document_document_symbol_async(types.DocumentSymbolParams(
            text_document=types.TextDocumentIdentifier(uri=uri_of(name))
        ))
        assert [s.name for s in symbols] == keys
        for s, key in zip(symbols, keys, strict=True):
            assert s.selection_range == range_of(text_of(name), key, enc)
            assert "title" in {c.name for c in s.children or []}
    bib = await session.text_document_document_symbol_async(types.DocumentSymbolParams(
        text_document=types.TextDocumentIdentifier(uri=uri_of("refs.bib"))
    ))
    assert bib[1].detail.startswith("@inproceedings")


# --- edits -----------------------------------------------------------------------------------


async def test_fixing_a_dangling_key_clears_it(fresh: LanguageClient):
    await start(fresh, CONFIG_CLIENTS[fresh.capabilities_name])
    enc = encoding_of(fresh)
    text = open_document(fresh, "broken.md")
    await wait_for_diagnostics(fresh, uri_of("broken.md"),
                               lambda ds: any(d.code == "DANGLING_CITATION" for d in ds))
    edit(fresh, "broken.md", 2, range_of(text, "ghost2020", enc), "after")
    after = await wait_for_diagnostics(
        fresh, uri_of("broken.md"), lambda ds: not any(d.code == "DANGLING_CITATION" for d in ds)
    )
    assert {d.code for d in local(after)} == {"NO_LOCATOR", "BAD_ANCHOR", "MALFORMED_MARKER",
                                          "DUPLICATE_KEY"}


async def test_adding_the_entry_clears_the_dangling_citation(fresh: LanguageClient):
    await start(fresh, CONFIG_CLIENTS[fresh.capabilities_name])
    bib = open_document(fresh, "broken.bib", language="bibtex")
    open_document(fresh, "broken.md")
    await wait_for_diagnostics(fresh, uri_of("broken.md"),
                               lambda ds: any(d.code == "DANGLING_CITATION" for d in ds))
    end = position(bib, len(bib), encoding_of(fresh))
    edit(fresh, "broken.bib", 2, types.Range(start=end, end=end),
         "\n@misc{ghost2020, title = {Now Defined}, year = {2020}}\n")
    await wait_for_diagnostics(
        fresh, uri_of("broken.md"), lambda ds: not any(d.code == "DANGLING_CITATION" for d in ds)
    )


async def test_a_burst_of_edits_ends_in_the_final_state(fresh: LanguageClient):
    await start(fresh, CONFIG_CLIENTS[fresh.capabilities_name])
    text = open_document(fresh, "plain.md")
    await wait_for_diagnostics(fresh, uri_of("plain.md"))
    enc = encoding_of(fresh)
    start_ = position(text, find(text, "lecun2015deep"), enc)
    for version, typed in enumerate("ghost", start=2):
        pos = types.Position(line=start_.line, character=start_.character + version - 2)
        edit(fresh, "plain.md", version, types.Range(start=pos, end=pos), typed)
    final = "ghostlecun2015deep"
    ranges = await wait_for_diagnostics(
        fresh, uri_of("plain.md"),
        lambda ds: any(d.code == "DANGLING_CITATION" and final in d.message for d in ds),
    )
    dangling = [d for d in ranges if d.code == "DANGLING_CITATION"]
    assert len(dangling) == 1
    assert dangling[0].range.end.character - dangling[0].range.start.character == len(final)


async def test_diagnostics_carry_the_version_they_were_computed_for(fresh: LanguageClient):
    await start(fresh, CONFIG_CLIENTS[fresh.capabilities_name])
    uri = uri_of("plain.md")

    async def published(until: Callable[[types.PublishDiagnosticsParams], bool]
                        ) -> types.PublishDiagnosticsParams:
        while True:
            params = await asyncio.wait_for(
                fresh.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS), TIMEOUT)
            if params.uri == uri and until(params):
                return params

    text = open_document(fresh, "plain.md")
    assert (await published(lambda _: True)).version == 1
    pos = position(text, find(text, "lecun2015deep"), encoding_of(fresh))
    edit(fresh, "plain.md", 7, types.Range(start=pos, end=pos), "ghost")
    after = await published(lambda p: any(
        d.code == "DANGLING_CITATION" and "ghostlecun2015deep" in d.message
        for d in p.diagnostics))
    assert after.version == 7


# --- settings --------------------------------------------------------------------------------


def _dangling_keys(diagnostics: Sequence[types.Diagnostic]) -> set[str]:
    text = text_of("plain.md")
    keys = set()
    for d in diagnostics:
        if d.code == "DANGLING_CITATION":
            line = text.splitlines()[d.range.start.line]
            keys.add(line[d.range.start.character:d.range.end.character])
    return keys


async def test_defaults_need_no_configuration(fresh: LanguageClient):
    """Without front matter or settings a manuscript uses every bibliography in the workspace."""
    await start(fresh, CONFIG_CLIENTS[fresh.capabilities_name])
    open_document(fresh, "plain.md")
    assert local(await wait_for_diagnostics(fresh, uri_of("plain.md"))) == []


async def test_initialization_options_name_the_bibliography(fresh: LanguageClient):
    await start(fresh, CONFIG_CLIENTS[fresh.capabilities_name],
                {"citelsp": {"bibliography": ["refs.json"]}})
    open_document(fresh, "plain.md")
    diagnostics = await wait_for_diagnostics(fresh, uri_of("plain.md"))
    assert _dangling_keys(diagnostics) == {"vaswani2017attention"}


async def test_workspace_configuration_answered_by_the_client(fresh: LanguageClient):
    """Settings the client holds reach the server only if it can ask for them."""
    fresh.set_configuration({"bibliography": ["refs.json"]}, section="citelsp")
    await start(fresh, CONFIG_CLIENTS[fresh.capabilities_name])
    open_document(fresh, "plain.md")
    expected = {"vaswani2017attention"} if fresh.capabilities_name == "vscode" else set()
    diagnostics = await wait_for_diagnostics(
        fresh, uri_of("plain.md"), lambda ds: _dangling_keys(ds) == expected
    )
    assert _dangling_keys(diagnostics) == expected


async def test_did_change_configuration_bibliography_republishes(fresh: LanguageClient):
    await start(fresh, CONFIG_CLIENTS[fresh.capabilities_name])
    open_document(fresh, "plain.md")
    assert _dangling_keys(await wait_for_diagnostics(fresh, uri_of("plain.md"))) == set()
    settings = {"bibliography": ["refs.json"]}
    fresh.set_configuration(settings, section="citelsp")
    fresh.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"citelsp": settings})
    )
    diagnostics = await wait_for_diagnostics(
        fresh, uri_of("plain.md"), lambda ds: bool(_dangling_keys(ds))
    )
    assert _dangling_keys(diagnostics) == {"vaswani2017attention"}


async def test_did_change_configuration_min_priority_republishes(fresh: LanguageClient):
    await start(fresh, CONFIG_CLIENTS[fresh.capabilities_name])
    open_document(fresh, "broken.md")
    before = local(await wait_for_diagnostics(fresh, uri_of("broken.md")))
    fresh.diagnostics.pop(uri_of("broken.md"))
    fresh.set_configuration({"minPriority": "P1"}, section="citelsp")
    fresh.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"citelsp": {"minPriority": "P1"}})
    )
    after = local(await wait_for_diagnostics(fresh, uri_of("broken.md")))
    assert {(d.code, _key(d.range)) for d in after} == {(d.code, _key(d.range)) for d in before}


# --- hostile and malformed input -------------------------------------------------------------

HOSTILE = {
    "hostile.bib": (
        "bibtex",
        "@article{evil,\n  title = {[click](command:workbench.action.terminal.new) "
        "<img src=x onerror=alert(1)> `code` **bold**},\n  author = {<script>x</script>},\n"
        "  year = {2020}\n}\n@article{deep, title = {" + "{" * 3000 + "}\n"
        "@article{, title = {no key}}\n@\n@string{loop = loop # loop}\n"
        "@article{nul\0key, title = \"unterminated\n@misc{tail, title = {Tail}}\n",
    ),
    "hostile.json": (
        "json",
        '[{"id": "ok", "type": "book", "title": "Fine"}, {"id": "bad", "type": "book", '
        '"title": "unterminated\n',
    ),
    "hostile.md": (
        "markdown",
        "---\nbibliography: hostile.bib\nreferences: &a [*a, *a]\n---\n"
        "<!--ref:evil <!--ref: <!--anchor:quote:" + "w " * 40 + "--> [@evil] "
        + "[" * 5000 + "@" * 2000 + "\n```\nunclosed fence [@evil]\n",
    ),
}


async def test_hostile_input_gives_diagnostics_and_the_server_survives(fresh: LanguageClient):
    await start(fresh, CONFIG_CLIENTS[fresh.capabilities_name])
    for name, (language, text) in HOSTILE.items():
        open_document(fresh, name, text, language)
    bib = await wait_for_diagnostics(
        fresh, uri_of("hostile.bib"), lambda ds: any(d.code == "MALFORMED_ENTRY" for d in ds)
    )
    assert all(d.range.start.line >= 0 for d in bib)
    await wait_for_diagnostics(
        fresh, uri_of("hostile.json"), lambda ds: any(d.code == "MALFORMED_ENTRY" for d in ds)
    )
    await wait_for_diagnostics(fresh, uri_of("hostile.md"))
    text = HOSTILE["hostile.bib"][1]
    result = await hover(fresh, "hostile.bib", at(text, "evil", encoding_of(fresh)))
    value = result.contents.value
    assert "](command:" not in value and "<img" not in value and "<script" not in value
    symbols = await fresh.text_document_document_symbol_async(types.DocumentSymbolParams(
        text_document=types.TextDocumentIdentifier(uri=uri_of("hostile.json"))
    ))
    assert [s.name for s in symbols] == ["ok"]


async def test_malformed_json_then_hover_still_answers(fresh: LanguageClient):
    await start(fresh, CONFIG_CLIENTS[fresh.capabilities_name])
    text = '[{"id": "k1", "type": "book", "title": "A Book"},\n {"id": "k2", "type": }]'
    open_document(fresh, "broken.json", text, "json")
    diagnostics = await wait_for_diagnostics(fresh, uri_of("broken.json"))
    malformed = [d for d in diagnostics if d.code == "MALFORMED_ENTRY"]
    assert len(malformed) == 1 and malformed[0].range.start.line == 1
    result = await hover(fresh, "broken.json", at(text, "k1", encoding_of(fresh)))
    assert "A Book" in result.contents.value
