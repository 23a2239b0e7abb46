"""``lsp/convert.py``, the one place that converts: positions in each encoding, and feature
answers into their LSP types."""

from __future__ import annotations

import pytest
from lsprotocol import types
from pytest_lsp import client_capabilities

from citelsp.lsp.convert import (
    completion_data,
    inserts_or_replaces,
    lsp_code_actions,
    lsp_completion_list,
    lsp_position,
    lsp_resolved_completion,
    lsp_symbols,
    markup_for,
    offset_of,
    resolves_details,
)
from citelsp.spans import Edit, LineIndex, Span
from citelsp.workspace.completion import Completion, Completions, Details
from citelsp.workspace.fixes import OPEN_URL, Fix
from citelsp.workspace.symbols import Symbol

TEXT = "a\n注意 🙂 [@key]\n"
KEY = TEXT.index("key")


@pytest.mark.parametrize(("encoding", "column"), [("utf-16", 8), ("utf-8", 14), ("utf-32", 7)])
def test_an_offset_after_an_emoji_is_a_column_in_the_clients_units_and_back(encoding, column):
    index = LineIndex(TEXT)
    position = lsp_position(index, KEY, encoding)
    assert (position.line, position.character) == (1, column)
    assert offset_of(index, position, encoding) == KEY


def test_a_position_past_the_last_line_or_its_end_is_clamped():
    index = LineIndex("ab\ncd")
    assert offset_of(index, types.Position(line=9, character=1), "utf-16") == 4
    assert offset_of(index, types.Position(line=0, character=99), "utf-16") == 2


def test_fixes_become_quick_fixes_with_edits_or_bare_commands():
    text = "x [@kee]\n"
    index = LineIndex(text)

    def range_for(uri, span):
        return types.Range(start=lsp_position(index, span.start, "utf-16"),
                           end=lsp_position(index, span.end, "utf-16"))

    ours = [types.Diagnostic(range=range_for("u", Span(4, 7)), message="m", source="citelsp")]
    edit, command = lsp_code_actions([
        Fix("Did you mean 'key'?", (Edit("file:///p.md", Span(4, 7), "key"),)),
        Fix("Open DOI", command=OPEN_URL, arguments=("https://doi.org/10.1/x",)),
    ], range_for, ours)
    assert isinstance(edit, types.CodeAction) and edit.kind == types.CodeActionKind.QuickFix
    assert edit.diagnostics == ours
    (change,) = edit.edit.changes["file:///p.md"]
    assert (change.range.start.character, change.range.end.character, change.new_text) == \
        (4, 7, "key")
    assert command == types.Command(title="Open DOI", command=OPEN_URL,
                                    arguments=["https://doi.org/10.1/x"])


def test_completions_are_listed_bare_and_resolved_with_their_details():
    typed = types.Range(start=types.Position(line=1, character=4),
                        end=types.Position(line=1, character=7))
    found = Completions([Completion("doe:2020", "doe:2020 T"), Completion("a", "a U")],
                        Span(10, 13), Span(10, 15), complete=False)
    listed = lsp_completion_list(found, "file:///p.md", typed)
    assert listed.is_incomplete
    item, second = listed.items
    assert (item.label, item.kind, item.filter_text, item.insert_text, item.detail,
            item.documentation) == (
        "doe:2020", types.CompletionItemKind.Reference, "doe:2020 T", "doe:2020", None, None)
    assert item.text_edit == types.TextEdit(range=typed, new_text="doe:2020")
    assert (item.sort_text, second.sort_text) == ("0000", "0001")
    assert completion_data(item) == ("file:///p.md", "doe:2020")
    assert completion_data(types.CompletionItem(label="x", data=["junk"])) is None
    resolved = lsp_resolved_completion(item, Details("Doe (2020)", "T\nJane Doe"))
    assert (resolved.label, resolved.detail, resolved.documentation) == (
        "doe:2020", "Doe (2020)", "T\nJane Doe")
    gone = types.CompletionItem(label="x")
    assert lsp_resolved_completion(gone, None) is gone
    complete = Completions([Completion("a", "a U", Details("A (2020)", "U"))], Span(0, 0),
                           Span(0, 0), complete=True)
    listed = lsp_completion_list(complete, "file:///p.md", None)
    assert not listed.is_incomplete and listed.items[0].text_edit is None
    assert (listed.items[0].detail, listed.items[0].documentation) == ("A (2020)", "U")
    key = types.Range(start=types.Position(line=1, character=4),
                      end=types.Position(line=1, character=12))
    (item,) = lsp_completion_list(found, "file:///p.md", typed, key).items[:1]
    assert item.text_edit == types.InsertReplaceEdit(new_text="doe:2020", insert=typed,
                                                     replace=key)


@pytest.mark.parametrize(("client", "lazily"), [
    ("visual-studio-code", True), ("neovim", False), (None, False)])
def test_details_come_with_the_list_unless_the_client_resolves_them(client, lazily):
    capabilities = client_capabilities(client) if client else types.ClientCapabilities()
    assert resolves_details(capabilities) is lazily
    assert inserts_or_replaces(capabilities) is lazily  # VS Code alone of the three


def test_symbols_and_markup_in_lsp_types():
    field = Symbol("year", "2020", "field", Span(3, 9), Span(3, 7))
    (entry,) = lsp_symbols([Symbol("k", "@misc", "entry", Span(0, 10), Span(1, 2), (field,))],
                           lambda span: types.Range(
                               start=types.Position(line=0, character=span.start),
                               end=types.Position(line=0, character=span.end)))
    assert entry.kind == types.SymbolKind.Class and entry.children[0].kind == \
        types.SymbolKind.Field and entry.children[0].children is None
    plain = types.ClientCapabilities(text_document=types.TextDocumentClientCapabilities(
        hover=types.HoverClientCapabilities(content_format=[types.MarkupKind.PlainText])))
    assert not markup_for(plain).markdown and markup_for(types.ClientCapabilities()).markdown
