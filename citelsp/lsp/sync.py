"""The editor's text of each open document, kept exactly as the client has it.

Lines end at ``\\n``, ``\\r\\n`` or ``\\r`` and nowhere else (LSP's definition): Python's
``str.splitlines`` also breaks at U+2028, U+0085, form feed and others, which shifted every
later edit in such a file. Positions arrive in the client's encoding (UTF-16 unless
negotiated) and are converted here, once, to code points.
"""

from __future__ import annotations

import re

from lsprotocol import types

_EOL = re.compile(r"\r\n|\r|\n")


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
               encoding: str) -> str | None:
        """Apply the changes in order; the new text (None for a document never opened)."""
        text = self._texts.get(uri)
        if text is None:
            return None
        for change in changes:
            if isinstance(change, types.TextDocumentContentChangePartial):
                start = offset_at(text, change.range.start, encoding)
                end = max(start, offset_at(text, change.range.end, encoding))
                text = text[:start] + change.text + text[end:]
            else:
                text = change.text
        self._texts[uri] = text
        return text


def offset_at(text: str, position: types.Position, encoding: str) -> int:
    """The code-point offset of a client position, clamped to its line (a line past the end
    is the end of the text)."""
    start = 0
    if position.line > 0:
        for n, m in enumerate(_EOL.finditer(text), 1):
            if n == position.line:
                start = m.end()
                break
        else:
            return len(text)
    m = _EOL.search(text, start)
    end = m.start() if m is not None else len(text)
    return start + code_points(text[start:end], max(position.character, 0), encoding)


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
