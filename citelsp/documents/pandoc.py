"""Pandoc Markdown: ``[@key]``, ``[see @key, p. 4; @other]``, ``@key``, ``[-@key]`` citations,
and the Markdown code the citation scanners must not read.

Code blocks and code spans are found with a hand-written CommonMark subset rather than a
Markdown library: the scanners need the code-point offsets of code in one linear pass, and
Python Markdown parsers (markdown-it-py, mistune) give line ranges at best.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable

from citelsp.documents.model import Citation
from citelsp.spans import Span

MASK = "\0"
"""Fill for masked text: neither whitespace nor a word character, so no grammar sees through it."""

_KEY = r"\w(?:\w|[:.#$%&+?<>~/-](?=\w)|[:/](?=/))*"
_CITE = re.compile(r"(?<![\w\\/@.])@(?:\{(?P<braced>[^{}\n]+)\}|(?P<key>" + _KEY + r"))")
_CROSS_REFERENCE = re.compile(
    r"(?:fig|tbl|lst|eq|sec|tip|nte|wrn|imp|cau|thm|lem|cor|prp|cnj|def|exm|exr|sol|rem)-\w"
    r"|(?:fig|tbl|lst|eq|sec):\w")
"""Quarto's cross-reference kinds (``fig-``, ``thm-``, callouts ``nte-``…) and pandoc-crossref's
(``fig:``)."""
_EVERY_ENTRY = re.compile(r"(?<![\w\\/@.])@\*")
_BRACKETS = re.compile(r"\[(?:[^\[\]\n]|\n(?![ \t]*\r?\n))*\]")
_FENCE = re.compile(r"^(?:[ \t]*>)*[ \t]*(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*)$", re.M)
_BACKTICKS = re.compile(r"`+")
_BLANK_LINE = re.compile(r"\n[ \t]*\r?\n")
_NOT_NEWLINE = re.compile(r"[^\r\n]")


def parse_pandoc(uri: str, text: str) -> list[Citation]:
    """Every pandoc citation key in ``text`` (code already masked; HTML comments are skipped).

    A key inside a bracket group spans the group in ``full_span``; an in-text ``@key`` spans
    itself. ``@`` after a word character (an e-mail address), ``\\``, ``/`` or ``.`` is text.
    """
    prose = mask(text, html_comments(text))
    groups = [m.span() for m in _BRACKETS.finditer(prose)]
    citations: list[Citation] = []
    g = 0
    for m in _CITE.finditer(prose):
        name = "braced" if m.group("braced") is not None else "key"
        key = m.group(name)
        while g < len(groups) and groups[g][1] <= m.start():
            g += 1
        if g < len(groups) and groups[g][0] < m.start():
            full = Span(*groups[g])
        else:
            full = Span(m.start(), m.end())
        citations.append(
            Citation(
                key=key,
                span=Span(m.start(name), m.end(name)),
                uri=uri,
                syntax="pandoc",
                full_span=full,
            )
        )
    return citations


def is_cross_reference(citation: Citation) -> bool:
    """``@fig-plot``, ``@sec-intro`` (Quarto) or ``@fig:plot`` (pandoc-crossref): a reference to
    a figure, table, section or equation of the document, written like a citation. Only a key
    no bibliography has is taken for one."""
    return citation.syntax == "pandoc" and _CROSS_REFERENCE.match(citation.key) is not None


def parse_nocite(uri: str, text: str, start: int, end: int) -> list[Citation]:
    """The keys of a front matter's ``nocite:`` value, ``text[start:end]``: pandoc puts them
    in the bibliography without a citation in the text, and ``@*`` every entry (as
    ``\\nocite{*}`` does)."""
    citations = [Citation(key="*", span=Span(m.start() + 1, m.end()), uri=uri, syntax="pandoc",
                          full_span=Span(m.start(), m.end()), wildcard=True)
                 for m in _EVERY_ENTRY.finditer(text, start, end)]
    for m in _CITE.finditer(text, start, end):
        name = "braced" if m.group("braced") is not None else "key"
        citations.append(Citation(key=m.group(name), span=Span(m.start(name), m.end(name)),
                                  uri=uri, syntax="pandoc", full_span=Span(m.start(), m.end())))
    return citations


def mask(text: str, spans: Iterable[Span]) -> str:
    """``text`` with each span's characters replaced by :data:`MASK`, keeping line breaks.

    Offsets stay valid: the result has the same length as ``text``.
    """
    pieces: list[str] = []
    last = 0
    for span in spans:
        pieces.append(text[last : span.start])
        pieces.append(_NOT_NEWLINE.sub(MASK, text[span.start : span.end]))
        last = span.end
    pieces.append(text[last:])
    return "".join(pieces)


def html_comments(text: str) -> list[Span]:
    """Terminated ``<!-- ... -->`` comments; an unterminated one hides nothing."""
    spans: list[Span] = []
    pos = 0
    while (start := text.find("<!--", pos)) != -1:
        end = text.find("-->", start + 4)
        if end == -1:
            break
        spans.append(Span(start, end + 3))
        pos = end + 3
    return spans


def code_regions(text: str, start: int = 0, *, inline: bool = True) -> list[Span]:
    """Fenced code blocks (and, when ``inline``, code spans) from ``start`` on, in order.

    Fences follow CommonMark: three or more backticks or tildes open, the same character at
    least as many times on a line of its own closes, and an unclosed fence runs to the end.
    Any indentation is accepted, since fences inside list items are indented.
    """
    fences = _fences(text, start)
    if not inline:
        return fences
    return sorted(fences + _code_spans(text, start, fences))


def _fences(text: str, start: int) -> list[Span]:
    fences: list[Span] = []
    opening: re.Match[str] | None = None
    for m in _FENCE.finditer(text, start):
        fence, info = m.group("fence"), m.group("info")
        if opening is None:
            if not (fence[0] == "`" and "`" in info):
                opening = m
        elif (
            fence[0] == opening.group("fence")[0]
            and len(fence) >= len(opening.group("fence"))
            and not info.strip()
        ):
            fences.append(Span(opening.start(), m.end()))
            opening = None
    if opening is not None:
        fences.append(Span(opening.start(), len(text)))
    return fences


def _code_spans(text: str, start: int, fences: list[Span]) -> list[Span]:
    """Backtick code spans outside ``fences``; a span never crosses a blank line or a fence.

    Each opener looks up the next run of the same length by bisection, so the pass stays
    O(n log n) however many unmatched backticks the text holds.
    """
    runs: list[tuple[int, int]] = []
    f = 0
    for m in _BACKTICKS.finditer(text, start):
        while f < len(fences) and fences[f].end <= m.start():
            f += 1
        if f < len(fences) and fences[f].start <= m.start():
            continue
        runs.append(m.span())
    by_length: dict[int, list[int]] = {}
    for index, (s, e) in enumerate(runs):
        by_length.setdefault(e - s, []).append(index)
    barriers = sorted(
        [m.start() for m in _BLANK_LINE.finditer(text, start)] + [fence.start for fence in fences]
    )
    spans: list[Span] = []
    i = 0
    while i < len(runs):
        s, e = runs[i]
        if s > 0 and text[s - 1] == "\\":
            i += 1
            continue
        same = by_length[e - s]
        j = bisect.bisect_right(same, i)
        if j < len(same):
            closer = runs[same[j]]
            b = bisect.bisect_right(barriers, s)
            if b == len(barriers) or closer[0] < barriers[b]:
                spans.append(Span(s, closer[1]))
                i = same[j] + 1
                continue
        i += 1
    return spans
