"""Code-point spans and line/column lookup.

Every span in the core is a half-open range of code-point offsets into a document's text.
Only ``citelsp.lsp`` converts them to the client's UTF-16 positions.
"""

from __future__ import annotations

import bisect
import itertools
import operator
import re
from dataclasses import dataclass
from typing import NamedTuple

_EOL = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True, order=True)
class Span:
    """Half-open ``[start, end)`` range of code-point offsets."""

    start: int
    end: int

    def contains(self, offset: int) -> bool:
        """True when ``offset`` lies inside the span or touches its end (a cursor after a key)."""
        return self.start <= offset <= self.end

    def shifted(self, delta: int) -> Span:
        return Span(self.start + delta, self.end + delta)


class Edit(NamedTuple):
    """Replace ``span`` of the document at ``uri`` with ``text`` (an insertion when the span
    is empty)."""

    uri: str
    span: Span
    text: str


class LineIndex:
    """Maps code-point offsets to 0-based ``(line, column)`` pairs and back.

    Lines end at ``\n``, ``\r\n`` or ``\r``, as LSP counts them (not at U+2028 or a form
    feed, as ``str.splitlines`` would)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._cr = "\r" in text
        if self._cr:
            self._starts = [0, *(m.end() for m in _EOL.finditer(text))]
            return
        lengths = map(operator.add, map(len, text.split("\n")), itertools.repeat(1))
        self._starts = [0, *itertools.accumulate(lengths)]
        self._starts.pop()

    @property
    def line_count(self) -> int:
        return len(self._starts)

    def position(self, offset: int) -> tuple[int, int]:
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self._starts, offset) - 1
        return line, offset - self._starts[line]

    def offset(self, line: int, column: int) -> int:
        if line >= len(self._starts):
            return len(self.text)
        start = self._starts[max(line, 0)]
        return min(start + max(column, 0), start + len(self.line_text(line)))

    def line_start(self, line: int) -> int:
        return self._starts[min(max(line, 0), len(self._starts) - 1)]

    def line_text(self, line: int) -> str:
        """The line without its line ending."""
        start = self.line_start(line)
        if not self._cr:
            end = self.text.find("\n", start)
            return self.text[start:] if end == -1 else self.text[start:end]
        m = _EOL.search(self.text, start)
        return self.text[start:] if m is None else self.text[start:m.start()]
