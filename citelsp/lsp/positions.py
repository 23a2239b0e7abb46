"""Code-point spans ↔ LSP positions in the client's encoding (UTF-16 unless negotiated)."""

from __future__ import annotations

from lsprotocol import types

from citelsp.spans import LineIndex, Span


class LineIndexes:
    """One LineIndex per open document text, rebuilt only when the text object changes and
    dropped when the document closes."""

    def __init__(self) -> None:
        self._indexes: dict[str, tuple[str, LineIndex]] = {}

    def of(self, uri: str, text: str) -> LineIndex:
        cached = self._indexes.get(uri)
        if cached is not None and cached[0] is text:
            return cached[1]
        index = LineIndex(text)
        self._indexes[uri] = (text, index)
        return index

    def forget(self, uri: str) -> None:
        self._indexes.pop(uri, None)


def _units(text: str, encoding: str) -> int:
    if encoding == types.PositionEncodingKind.Utf32 or text.isascii():
        return len(text)
    if encoding == types.PositionEncodingKind.Utf8:
        return len(text.encode("utf-8"))
    return len(text.encode("utf-16-le")) // 2


def lsp_position(index: LineIndex, offset: int, encoding: str) -> types.Position:
    line, column = index.position(offset)
    start = index.line_start(line)
    return types.Position(line=line, character=_units(index.text[start:start + column], encoding))


def lsp_range(index: LineIndex, span: Span, encoding: str) -> types.Range:
    return types.Range(
        start=lsp_position(index, span.start, encoding),
        end=lsp_position(index, span.end, encoding),
    )


def offset_of(index: LineIndex, position: types.Position, encoding: str) -> int:
    """The code-point offset of a client position (clamped to the line)."""
    line = min(position.line, index.line_count - 1)
    text = index.line_text(line).rstrip("\r")
    if encoding == types.PositionEncodingKind.Utf32 or text.isascii():
        column = min(position.character, len(text))
    else:
        units = 0
        column = len(text)
        for i, ch in enumerate(text):
            if units >= position.character:
                column = i
                break
            units += _units(ch, encoding)
    return index.line_start(line) + column
