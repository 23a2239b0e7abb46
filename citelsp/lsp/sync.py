"""The editor's text of each open document, kept exactly as the client has it.

Lines end at ``\\n``, ``\\r\\n`` or ``\\r`` and nowhere else (LSP's definition): Python's
``str.splitlines`` also breaks at U+2028, U+0085, form feed and others, which shifted every
later edit in such a file. Positions arrive in the client's encoding (UTF-16 unless
negotiated) and are converted here, once, to code points.
"""

from __future__ import annotations

from collections.abc import Callable

from lsprotocol import types

from citelsp.lsp.convert import offset_at
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
               encoding: str, index_of: Callable[[str], LineIndex] = LineIndex,
               indexed: Callable[[str, LineIndex], None] | None = None) -> str | None:
        """Apply the changes in order; the new text (None for a document never opened).

        ``index_of`` gives the line index of a text (the server's cache: the index of the
        text before an edit is usually the one its last publication built); ``indexed`` is
        told the new text's index, made from the old one by the edits (``LineIndex.edited``:
        a keystroke's cost follows the lines after it, not a split of the whole text)."""
        text = self._texts.get(uri)
        if text is None:
            return None
        index: LineIndex | None = None
        for change in changes:
            if isinstance(change, types.TextDocumentContentChangePartial):
                index = index_of(text) if index is None else index
                start = offset_at(index, change.range.start, encoding)
                end = max(start, offset_at(index, change.range.end, encoding))
                new = text[:start] + change.text + text[end:]
                index, text = index.edited(start, end, change.text, new), new
            else:
                text, index = change.text, None
        self._texts[uri] = text
        if index is not None and indexed is not None:
            indexed(text, index)
        return text
