"""``lsp/convert.py``, the one place that converts: positions in each encoding, and feature
answers into their LSP types."""

from __future__ import annotations

import pytest
from lsprotocol import types

from citelsp.lsp.convert import (
    lsp_code_actions,
    lsp_completion_list,
    lsp_position,
    lsp_symbols,
    markup_for,
    offset_of,
)
from citelsp.spans import Edit, LineIndex, Span
from citelsp.workspace.completion import Completion
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


def test_completions_symbols_and_markup_in_lsp_types():
    (item,) = lsp_completion_list([Completion("k", "A (2020)", "T", "k T")]).items
    assert (item.label, item.kind, item.detail, item.documentation, item.insert_text) == (
        "k", types.CompletionItemKind.Reference, "A (2020)", "T", "k")
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
