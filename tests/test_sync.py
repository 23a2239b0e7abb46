"""The server's copy of an open document follows the editor's exactly: lines end only at
``\\n``, ``\\r\\n`` and ``\\r`` (not at U+2028, U+0085 or a form feed), and positions are
UTF-16 code units. Random edits are replayed against a model of the client's text."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types

from citelsp.lsp.sync import OpenTexts
from citelsp.spans import LineIndex

ALPHABET = "ab @{}\n\r\u2028\u0085\x0c\x0b\u00e9\U0001f600注"
UTF16 = types.PositionEncodingKind.Utf16


def client_lines(text: str) -> list[str]:
    """Lines as an LSP client counts them (line endings included)."""
    lines, start, i = [], 0, 0
    while i < len(text):
        if text[i] == "\r" and text[i + 1:i + 2] == "\n":
            lines.append(text[start:i + 2])
            i += 2
            start = i
            continue
        if text[i] in "\r\n":
            lines.append(text[start:i + 1])
            start = i + 1
        i += 1
    lines.append(text[start:])
    return lines


def position(text: str, offset: int) -> types.Position:
    """The client's (line, UTF-16 column) of a code-point offset."""
    before = text[:offset]
    lines = client_lines(before)
    return types.Position(line=len(lines) - 1,
                          character=len(lines[-1].encode("utf-16-le")) // 2)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=ALPHABET, max_size=40),
       st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 10_000),
                          st.text(alphabet=ALPHABET, max_size=6)), max_size=12))
def test_random_edits_match_the_clients_text(initial, edits):
    texts = OpenTexts()
    texts.open("file:///d.md", initial)
    expected = initial
    for a, b, new in edits:
        start, end = sorted((a % (len(expected) + 1), b % (len(expected) + 1)))
        # a client never splits a surrogate pair or a \r\n
        change = types.TextDocumentContentChangePartial(
            range=types.Range(start=position(expected, start), end=position(expected, end)),
            text=new)
        if expected[start - 1:start + 1] == "\r\n" or expected[end - 1:end + 1] == "\r\n":
            continue
        expected = expected[:start] + new + expected[end:]
        assert texts.change("file:///d.md", [change], UTF16) == expected


def test_a_line_separator_inside_a_line_does_not_shift_later_edits():
    texts = OpenTexts()
    text = "key\u2028one\ftwo\u0085three\rfour\r\nfive\nsix"
    texts.open("file:///d.md", text)
    change = types.TextDocumentContentChangePartial(
        range=types.Range(start=types.Position(line=2, character=0),
                          end=types.Position(line=2, character=4)), text="FIVE")
    assert texts.change("file:///d.md", [change], UTF16) == text.replace("five", "FIVE")


def test_line_index_counts_lines_as_lsp_does():
    rng = random.Random(7)
    for _ in range(200):
        text = "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(30)))
        index = LineIndex(text)
        lines = client_lines(text)
        assert index.line_count == len(lines)
        for offset in range(len(text) + 1):
            if text[offset - 1:offset + 1] == "\r\n":
                continue
            expected = position(text, offset)
            line, column = index.position(offset)
            assert (line, len(text[index.line_start(line):offset].encode("utf-16-le")) // 2
                    ) == (expected.line, expected.character)


def test_an_edited_line_index_is_the_index_of_the_new_text():
    """``LineIndex.edited`` (the lines after an edit moved, not the text split again) gives
    the index a fresh split gives, for any edit, ``\\r`` line ends included."""
    rng = random.Random(11)
    for _ in range(2000):
        text = "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(40)))
        start = rng.randrange(len(text) + 1)
        end = rng.randrange(start, len(text) + 1)
        inserted = "".join(rng.choice("ab\n\n é\r") for _ in range(rng.randrange(4)))
        new = text[:start] + inserted + text[end:]
        edited = LineIndex(text).edited(start, end, inserted, new)
        fresh = LineIndex(new)
        assert edited.text is new and edited.line_count == fresh.line_count, (text, inserted)
        assert [edited.position(i) for i in range(len(new) + 1)] == [
            fresh.position(i) for i in range(len(new) + 1)], (text, start, end, inserted)


def test_the_server_keeps_the_index_its_edits_made():
    text = "one\ntwo\nthree\n" * 50
    texts = OpenTexts()
    texts.open("file:///d.bib", text)
    told = []
    change = types.TextDocumentContentChangePartial(
        range=types.Range(start=types.Position(line=1, character=1),
                          end=types.Position(line=2, character=2)), text="X\nY")
    new = texts.change("file:///d.bib", [change, change], UTF16,
                       indexed=lambda t, index: told.append((t, index)))
    [(same, index)] = told
    assert same is new and index._starts == LineIndex(new)._starts
