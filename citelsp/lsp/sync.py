"""The editor's text of each open document, kept exactly as the client has it.

Lines end at ``\\n``, ``\\r\\n`` or ``\\r`` and nowhere else (LSP's definition): Python's
``str.splitlines`` also breaks at U+2028, U+0085, form feed and others, which shifted every
later edit in such a file. Positions arrive in the client's encoding (UTF-16 unless
negotiated) and are converted here, once, to code points.
"""

from __future__ import annotations

from collections.abc import Callable

from lsprotocol import types

from citelsp.spans import LineIndex


class OpenTexts:
    def __init__(self) -> None:
        self._texts: dict[str, str] = {}

    def open(self, uri: str, text: str) -> None:
        self._texts[uri] = text

    def close(self, uri: str) -> None:
        self._texts.pop(uri, None)

    def get(self, uri: str) -> str | None:
        return self._texts.get(uri)

    def change(self, uri: str, changes: list[types.TextDocumentContentChangeEvent],
               encoding: str, index_of: Callable[[str], LineIndex] = LineIndex) -> str | None:
        """Apply the changes in order; the new text (None for a document never opened).

        ``index_of`` gives the line index of a text (the server's cache: the index of the
        text before an edit is usually the one its last publication built)."""
        text = self._texts.get(uri)
        if text is None:
            return None
        for change in changes:
            if isinstance(change, types.TextDocumentContentChangePartial):
                index = index_of(text)
                start = offset_at(index, change.range.start, encoding)
                end = max(start, offset_at(index, change.range.end, encoding))
                text = text[:start] + change.text + text[end:]
            else:
                text = change.text
        self._texts[uri] = text
        return text


def offset_at(index: LineIndex, position: types.Position, encoding: str) -> int:
    """The code-point offset of a client position, clamped to its line (a line past the end
    is the end of the text)."""
    if position.line >= index.line_count:
        return len(index.text)
    start = index.line_start(position.line)
    line = index.line_text(position.line)
    return start + code_points(line, max(position.character, 0), encoding)


def code_points(line: str, units: int, encoding: str) -> int:
    """How many code points of ``line`` the first ``units`` client units cover."""
    if encoding == types.PositionEncodingKind.Utf32 or line.isascii():
        return min(units, len(line))
    width = 1 if encoding == types.PositionEncodingKind.Utf16 else 0
    counted = 0
    for i, ch in enumerate(line):
        if counted >= units:
            return i
        if width:
            counted += 2 if ord(ch) > 0xFFFF else 1
        else:
            counted += len(ch.encode("utf-8"))
    return len(line)
