"""Markdown's block structure as pandoc reads it, as far as citations care: which lines are
code (fenced or indented) and which are YAML metadata blocks.

One pass over the lines, hand-written for the same reason as ``pandoc.py``'s scanners: the
citation readers need code-point offsets, and pandoc's own rules (an unclosed fence is text, a
fence's info string is one word or ``{attributes}``, a list item's content column decides
whether an indented line is code, YAML blocks anywhere after a blank line) are not CommonMark's.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

import yaml

from citelsp.spans import Span

_LINE = re.compile(r"[^\n]*\n?")
_QUOTE = re.compile(r"(?:[ ]{0,3}>[ ]?)*")
_FENCE = re.compile(r"(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n]*?)[ \t]*\r?\n?$")
_FENCE_INFO = re.compile(r"(?:\{[^{}\n]*\}|[^\s{][^\s]*)?")
_LIST_MARKER = re.compile(
    r"(?:[*+-]|\(?(?:\d{1,9}|#|[A-Za-z]|[ivxlcdmIVXLCDM]+)[.)]|\(@(?:[\w-]*[^\W_])?\))"
    r"(?P<gap>[ \t]+|$)")
_HTML_BLOCK_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?>")
_HEADER = re.compile(r"#{1,6}(?:[ \t]|$)")
_RULE = re.compile(r"(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$")
_YAML_OPEN = re.compile(r"---[ \t]*\r?\n(?![ \t]*\r?\n)")
_YAML_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*\r?$\n?", re.M)


@dataclass(frozen=True)
class YamlBlock:
    """A YAML metadata block."""

    span: Span
    """The block with its fences."""
    body: Span
    """The YAML between the fences."""


@dataclass
class Blocks:
    """What a Markdown document's block structure hides from the citation scanners."""

    code: list[Span] = field(default_factory=list)
    """Fenced and indented code blocks, in order."""
    yaml: list[YamlBlock] = field(default_factory=list)
    """YAML metadata blocks, in order; the first is the front matter when it opens the file."""
    examples: list[Span] = field(default_factory=list)
    """The labels of example list items, ``label`` in ``(@label)``: ``@label`` refers to the
    item, not to a work."""


def _indent(line: str) -> int:
    """The column of the first non-blank character (a tab moves to the next multiple of 4)."""
    column = 0
    for ch in line:
        if ch == " ":
            column += 1
        elif ch == "\t":
            column += 4 - column % 4
        else:
            break
    return column


def scan_blocks(text: str, *, front: YamlBlock | None = None, indented: bool = True) -> Blocks:
    """The code and YAML blocks of ``text``; ``front``, when given, is taken as the first YAML
    block whatever it holds (the front matter is read even when its YAML is broken). Without
    ``indented`` (plain text), only fenced code is code, and a fence may follow any line."""
    blocks = Blocks()
    lines = [(m.start(), m.end()) for m in _LINE.finditer(text) if m.end() > m.start()]
    i = 0
    if front is not None:
        blocks.yaml.append(front)
        while i < len(lines) and lines[i][0] < front.span.end:
            i += 1
    closers = _Closers(text, lines)
    columns: list[int] = []  # content columns of the open list items
    divs = 0  # fenced divs open
    block_start = True
    while i < len(lines):
        start, end = lines[i]
        line = text[start:end]
        quote = _QUOTE.match(line).end()
        rest = line[quote:]
        if not rest.strip():
            block_start = True
            i += 1
            continue
        indent = _indent(rest)
        if block_start:
            while columns and indent < columns[-1]:
                columns.pop()
        base = columns[-1] if columns else 0
        if indented and block_start and indent >= base + 4:
            i = _indented_code(text, lines, i, base + 4, blocks.code)
            continue
        body = rest.lstrip(" \t")
        fence = _FENCE.match(body)
        interrupts = block_start or columns or not indented or body[0] == "`"
        if fence is not None and interrupts and _is_fence(fence):  # ~~~ ends no paragraph
            closing = closers.after(i, fence.group("fence"))
            if closing is not None:
                close = lines[closing][1]
                blocks.code.append(Span(start, close - (text[close - 1] == "\n")))
                i = closing + 1
                block_start = True
                continue
        if block_start and quote == 0 and indent == 0 and (
                yaml_block := _yaml_block(text, start)) is not None:
            blocks.yaml.append(yaml_block)
            while i < len(lines) and lines[i][0] < yaml_block.span.end:
                i += 1
            block_start = True
            continue
        if block_start or columns:  # a list does not interrupt a paragraph
            at = end - len(line) + len(line) - len(body)
            _open_items(body, at, indent, columns, base, blocks.examples)
        div_fence, divs_before = body.startswith(":::"), divs
        bare = not body.strip(": \t\r\n")
        if div_fence and bare and divs:  # a bare ::: closes a div, even after a paragraph
            divs -= 1
        elif div_fence and not bare and block_start:
            divs += 1
        if (block_start and _HTML_BLOCK_TAG.fullmatch(body.rstrip())) or (
                div_fence and divs != divs_before):
            while columns and indent < columns[-1]:  # a div's tag or fence ends a list
                columns.pop()
            block_start = True
        else:
            block_start = bool(_HEADER.match(body) or _RULE.match(body.rstrip()))
        i += 1
    return blocks


def _open_items(body: str, at: int, indent: int, columns: list[int], base: int,
                examples: list[Span]) -> None:
    """Push the content column of each list item that ``body`` (at offset ``at``) opens
    (``1. - x`` opens two), closing the items at or right of it first; add the labels of
    example items, ``(@label)``, to ``examples``."""
    column = indent
    while (marker := _LIST_MARKER.match(body)) is not None and column < base + 4 and (
            not _RULE.match(body.rstrip())):
        if body.startswith("(@") and marker.start("gap") > 3:
            examples.append(Span(at + 2, at + marker.start("gap") - 1))
        at += marker.end()
        gap = len(marker.group("gap").expandtabs(4))
        content = column + marker.start("gap") + (gap if 0 < gap <= 4 else 1)
        while columns and columns[-1] > column:
            columns.pop()
        columns.append(content)
        body, column, base = body[marker.end():], content, content


def _indented_code(text: str, lines: list[tuple[int, int]], i: int, column: int,
                   code: list[Span]) -> int:
    """Add the indented code block starting at line ``i``; the index of the line after it."""
    first = last = i
    while i < len(lines):
        line = text[lines[i][0]:lines[i][1]]
        rest = line[_QUOTE.match(line).end():]
        if rest.strip():
            if _indent(rest) < column:
                break
            last = i
        i += 1
    code.append(Span(lines[first][0], lines[last][1]))
    return last + 1


def _is_fence(m: re.Match[str]) -> bool:
    """An opening fence: its info string is one word or ``{attributes}`` (pandoc), and a
    backtick fence's info holds no backtick."""
    info = m.group("info")
    if m.group("fence")[0] == "`" and "`" in info:
        return False
    return _FENCE_INFO.fullmatch(info) is not None


class _Closers:
    """The lines that could close a fence (a run of one fence character, nothing else), so
    that each opening fence finds its closer by bisection, and an unclosed fence (pandoc
    reads it as text) costs no scan of the rest of the file."""

    def __init__(self, text: str, lines: list[tuple[int, int]]) -> None:
        self._at: dict[str, list[int]] = {"`": [], "~": []}
        self._length: dict[str, list[int]] = {"`": [], "~": []}
        for j, (start, end) in enumerate(lines):
            line = text[start:end]
            body = line[_QUOTE.match(line).end():].strip()
            if len(body) >= 3 and body[0] in "`~" and body.strip(body[0]) == "":
                self._at[body[0]].append(j)
                self._length[body[0]].append(len(body))
        self._unclosed: dict[str, int] = {}
        """Per character, the shortest fence found unclosed: a longer one after it is too."""

    def after(self, i: int, opening: str) -> int | None:
        """The line after line ``i`` that closes ``opening`` (the same character, at least as
        many), or None."""
        ch = opening[0]
        if len(opening) >= self._unclosed.get(ch, len(opening) + 1):
            return None
        at, length = self._at[ch], self._length[ch]
        for k in range(bisect.bisect_right(at, i), len(at)):
            if length[k] >= len(opening):
                return at[k]
        self._unclosed[ch] = min(len(opening), self._unclosed.get(ch, len(opening)))
        return None


def _yaml_block(text: str, start: int) -> YamlBlock | None:
    """The YAML metadata block opening at ``start``: ``---`` not followed by a blank line, up
    to a ``---`` or ``...`` line, holding a YAML mapping (anything else is a rule and text)."""
    opening = _YAML_OPEN.match(text, start)
    if opening is None:
        return None
    closing = _YAML_CLOSE.search(text, opening.end())
    if closing is None:
        return None
    try:
        data = yaml.load(text[opening.end():closing.start()], Loader=yaml.BaseLoader)
    except (yaml.YAMLError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    return YamlBlock(Span(start, closing.end()), Span(opening.end(), closing.start()))
