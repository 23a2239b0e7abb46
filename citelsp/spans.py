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

    def edited(self, start: int, end: int, inserted: str, text: str) -> LineIndex:
        """The index of ``text``, which is this index's text with ``[start, end)`` replaced
        by ``inserted``: the line starts before the edit are kept and those after it moved,
        instead of splitting all of ``text`` again (a keystroke in a 5 MB library took a
        new index of 200,000 lines). A text with ``\r`` line ends is indexed anew."""
        if self._cr or "\r" in inserted:
            return LineIndex(text)
        starts = self._starts
        first = bisect.bisect_right(starts, start)
        after = bisect.bisect_right(starts, end, lo=first)
        found = starts[:first]
        at = inserted.find("\n")
        while at != -1:
            found.append(start + at + 1)
            at = inserted.find("\n", at + 1)
        delta = len(inserted) - (end - start)
        found += map(delta.__add__, starts[after:]) if delta else starts[after:]
        index = LineIndex.__new__(LineIndex)
        index.text, index._cr, index._starts = text, False, found
        return index

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
