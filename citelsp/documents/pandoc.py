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

from citelsp.documents.markdown import scan_blocks
from citelsp.documents.model import Citation
from citelsp.spans import Span

MASK = "\0"
"""Fill for masked text: neither whitespace nor a word character, so no grammar sees through it."""

_KEY = r"(?:\*(?=\w))?\w(?:\w|[:.#$%&+?<>~/-](?=\w)|[:/](?=/))*"
_BRACED = r"(?:[^{}\s]|\{(?:[^{}\s]|\{[^{}\s]*\})*\})+"
_CITE = re.compile(r"(?<![\\/.])@(?:\{(?P<braced>" + _BRACED + r")\}|(?P<key>" + _KEY + r"))")
"""A key as pandoc reads one: a word character (or ``*`` before one) then word characters and
punctuation that a word character follows; or braced, with balanced braces and no space."""
_CROSS_REFERENCE = re.compile(
    r"(?:fig|tbl|lst|eq|sec|tip|nte|wrn|imp|cau|thm|lem|cor|prp|cnj|def|exm|exr|sol|rem)-\w"
    r"|(?:fig|tbl|lst|eq|sec):\w")
"""Quarto's cross-reference kinds (``fig-``, ``thm-``, callouts ``nte-``…) and pandoc-crossref's
(``fig:``)."""
_EVERY_ENTRY = re.compile(r"(?<![\w\\/@.])@\*")
_BRACKETS = re.compile(r"\[(?:[^\[\]\n]|\n(?![ \t]*\r?\n))*\]")
_BACKTICKS = re.compile(r"`+")
_BLANK_LINE = re.compile(r"\n[ \t]*\r?\n")
_NOT_NEWLINE = re.compile(r"[^\r\n]")


def parse_pandoc(uri: str, text: str, examples: Iterable[Span] = ()) -> list[Citation]:
    """Every pandoc citation key in ``text`` (code already masked; HTML comments, math, raw
    HTML and TeX, link targets and titles, and example list labels are skipped).

    A key inside a bracket group spans the group in ``full_span``; an in-text ``@key`` spans
    itself. ``@`` right after a letter or digit (an e-mail address), ``\\``, ``/`` or ``.``
    is text, as in pandoc (``/`` deliberately: pandoc reads ``https://host/@user`` as a
    citation); right after another citation it opens one (``@a@b``). Outside brackets,
    the label of an example list item (``examples``, spans of ``text``) refers to the item.
    """
    examples = list(examples)
    labels = {text[span.start:span.end] for span in examples}
    hidden = html_comments(text) + _outside_keys(text, raw_inline(text))
    prose = mask(text, disjoint(hidden + [Span(s.start - 2, s.end + 1) for s in examples]))
    groups = [m.span() for m in _BRACKETS.finditer(prose)
              if not text.startswith(("(", "{", "["), m.end())]  # a link or a span
    citations: list[Citation] = []
    g = 0
    after_citation = -1
    for m in _CITE.finditer(prose):
        if m.start() > 0 and m.start() != after_citation and _after_word(text[m.start() - 1]):
            continue
        after_citation = m.end()
        name = "braced" if m.group("braced") is not None else "key"
        key = m.group(name)
        while g < len(groups) and groups[g][1] <= m.start():
            g += 1
        if g < len(groups) and groups[g][0] < m.start():
            full = Span(*groups[g])
        elif key in labels:  # (@label) and @label refer to an example list item
            continue
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


def _outside_keys(text: str, spans: list[Span]) -> list[Span]:
    """``spans`` less those that start inside a citation key: pandoc reads left to right, so
    ``@a$b$c`` and ``[@a<b>c]`` cite ``a$b$c`` and ``a<b>c``, not math or an HTML tag."""
    if not spans:
        return spans
    keys = [(m.start(), m.end()) for m in _CITE.finditer(text)]
    starts = [start for start, _ in keys]
    kept: list[Span] = []
    for span in spans:
        k = bisect.bisect_right(starts, span.start) - 1
        if k < 0 or not keys[k][0] < span.start < keys[k][1]:
            kept.append(span)
    return kept


def _after_word(ch: str) -> bool:
    """A letter or digit before ``@``: pandoc reads the ``@`` as part of a word (``_`` is not
    one: ``_@e_`` cites ``e_``)."""
    return ch.isalnum()


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
        if m.start() > start and _after_word(text[m.start() - 1]):
            continue
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


def code_regions(text: str, *, inline: bool = True) -> list[Span]:
    """Code blocks, fenced and indented, as pandoc reads them (and, when ``inline``, code
    spans), in order."""
    fences = scan_blocks(text).code
    if not inline:
        return fences
    return sorted(fences + code_spans(text, fences))


def code_spans(text: str, fences: list[Span], start: int = 0) -> list[Span]:
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


def disjoint(spans: list[Span]) -> list[Span]:
    """Spans sorted and merged where they overlap (``mask`` takes them in order, apart)."""
    merged: list[Span] = []
    for span in sorted(spans):
        if merged and span.start <= merged[-1].end:
            merged[-1] = Span(merged[-1].start, max(merged[-1].end, span.end))
        else:
            merged.append(span)
    return merged


_RAW_ELEMENT = re.compile(r"<(pre|script|style|textarea)\b[^>]*>.*?</\1\s*>", re.I | re.S)
_TAG_START = re.compile(r"</?[A-Za-z]")
_HTML_TAG = re.compile(
    r"</?[A-Za-z][A-Za-z0-9-]*(?:\s+[A-Za-z_:][\w.:-]*(?:\s*=\s*(?:\"[^\"]*\"|'[^']*'"
    r"|[^\s\"'=<>`]+))?)*\s*/?>")
_AUTOLINK = re.compile(r"<(?:[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*|[^\s<>@]+@[^\s<>]+)>")
_TEX_ENVIRONMENT = re.compile(r"\\begin\{([A-Za-z*]+)\}.*?\\end\{\1\}", re.S)
_TEX_COMMAND = re.compile(r"(?<!\\)\\[A-Za-z]+\*?")
_TEX_STOP = re.compile(r"(?<!\\)(?:%|#\d|\$)")
"""In an argument, what can make pandoc give up on a command and read the text (a ``%``
comment, a parameter ``#1``, an unbalanced ``$``: ``_tex_stops``)."""
_TEX_NO_ARGUMENTS = frozenset({"LaTeX", "TeX", "ldots", "dots", "today", "newline", "hfill",
                               "vfill"})
_TEX_NO_OPTIONS = frozenset({"emph", "textbf", "textit", "texttt", "textsc", "textrm", "textsf",
                             "textsl", "textup", "textmd", "textnormal", "underline", "url",
                             "href"})
"""Macros pandoc knows, which take no ``[options]`` (or no arguments at all): what follows them
is text again (``\\LaTeX[@lamport]`` cites)."""
_TEX_PARSED = _TEX_NO_OPTIONS | {"section", "subsection", "subsubsection", "paragraph",
                                 "chapter", "footnote", "caption"}
"""Macros whose arguments pandoc parses as TeX rather than passing them through as tokens."""
_TEX_OPTIONS = re.compile(r"[ \t]*(?:\[[^\]\n]*\][ \t]*)*")
_LINK_TARGET = re.compile(
    r"\]\((?:[^()\s]|\([^()\s]*\))*(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^()]*\)))?\s*\)")
_REFERENCE_DEFINITION = re.compile(
    r"^[ ]{0,3}\[(?!\^)[^\]\n]+\]:[ \t]*(?P<target>\S+(?:[ \t]*\n?[ \t]*(?:\"[^\"\n]*\"|'[^'\n]*'"
    r"|\([^()\n]*\)))?)", re.M)
_ATTRIBUTES = re.compile(r"(?<=[\]`\0])\{[^{}\n]*\}|\{[#.=][^{}\n]*\}[ \t]*$|^:{3,}.*$", re.M)
_DOLLARS = re.compile(r"(?<!\\)\$\$?")
_NEW_BLOCK = r"(?![ \t>]*\n)(?![ \t>]*(?:[*+-]|\d{1,9}[.)]|#{1,6})[ \t])"
"""After a newline: not a blank line, nor a list item or header, where a paragraph ends."""
_INLINE_MATH = re.compile(
    r"(?:\\[\s\S]|[^\\$\s]|[ \t]+(?![ \t\n$])|[ \t]*\n" + _NEW_BLOCK + r"(?![ \t]*\$))*")
_DISPLAY_MATH = re.compile(r"(?:\\[\s\S]|\$(?!\$)|[^\\$\n]|\n" + _NEW_BLOCK + r")*")


def raw_inline(text: str) -> list[Span]:
    """What pandoc reads in running text but never as citations: TeX math (``$…$``,
    ``$$…$$``), raw HTML tags and ``<pre>``/``<script>`` elements, autolinks, raw TeX
    commands with their arguments and environments, link targets and titles, and
    attributes. Unsorted."""
    spans: list[Span] = []
    if "$" in text:
        spans += _math(text)
    if "<" in text:
        spans += [Span(*m.span()) for m in _RAW_ELEMENT.finditer(text) if _raw(m)]
        spans += [Span(*m.span()) for m in _HTML_TAG.finditer(text)]
        spans += [Span(*m.span()) for m in _AUTOLINK.finditer(text)]
    if "\\" in text:
        spans += [Span(*m.span()) for m in _TEX_ENVIRONMENT.finditer(text)]
        spans += _tex_commands(text)
    if "](" in text:
        spans += [Span(m.start() + 1, m.end()) for m in _LINK_TARGET.finditer(text)]
    if "]:" in text:
        spans += [Span(*m.span("target")) for m in _REFERENCE_DEFINITION.finditer(text)]
    if "{" in text or ":::" in text:
        spans += [Span(*m.span()) for m in _ATTRIBUTES.finditer(text)]
    return spans


def _tex_stops(text: str, start: int, end: int, *, parsed: bool) -> bool:
    """A ``%`` stops TeX anywhere; in the argument of a macro pandoc parses (``\\emph``,
    ``\\section``), so do ``#1`` and an odd ``$``. Other macros pass through as tokens."""
    found = [m.group() for m in _TEX_STOP.finditer(text, start, end)]
    if not parsed:
        return "%" in found
    dollars = found.count("$")
    return len(found) > dollars or dollars % 2 == 1


def _raw(element: re.Match[str]) -> bool:
    """A ``<pre>`` element is raw unless a ``<`` in it opens a tag that no ``>`` closes
    before the next ``<`` (pandoc's HTML reader then takes the end tag into that tag, and
    reads the content as Markdown)."""
    if element.group(1).lower() != "pre":
        return True
    inner = element.group(0)
    return all(-1 < inner.find(">", m.end()) < _next(inner, "<", m.end())
               for m in _TAG_START.finditer(inner))


def _next(text: str, sub: str, start: int) -> int:
    at = text.find(sub, start)
    return len(text) if at == -1 else at


def _math(text: str) -> list[Span]:
    """``$…$`` and ``$$…$$`` as pandoc's tex_math_dollars reads them: ``$`` opens before a
    non-space and closes after one, not before a digit; neither crosses a blank line."""
    spans: list[Span] = []
    pos = 0
    for m in _DOLLARS.finditer(text):
        if m.start() < pos:
            continue
        display = m.end() - m.start() == 2
        if not display and (m.end() == len(text) or text[m.end()].isspace()):
            continue
        body = (_DISPLAY_MATH if display else _INLINE_MATH).match(text, m.end())
        close = body.end()
        closer = "$$" if display else "$"
        if (close > m.end() and text.startswith(closer, close)
                and not text[close + len(closer):close + len(closer) + 1].isdigit()):
            spans.append(Span(m.start(), close + len(closer)))
            pos = close + len(closer)
    return spans


def _tex_commands(text: str) -> list[Span]:
    """Raw TeX commands with their ``[options]`` (after spaces, as TeX skips them) and the
    ``{arguments}`` right after them, which pandoc passes through unread."""
    from citelsp.documents.latex import closing_brace  # TeX braces only when needed

    spans: list[Span] = []
    pos = 0
    for m in _TEX_COMMAND.finditer(text):
        if m.start() < pos:
            continue
        name = m.group()[1:]
        if name in _TEX_NO_ARGUMENTS:
            spans.append(Span(m.start(), m.end()))
            pos = m.end()
            continue
        end = m.end() if name in _TEX_NO_OPTIONS else _TEX_OPTIONS.match(text, m.end()).end()
        if _tex_stops(text, m.end(), end, parsed=False):
            continue
        while text.startswith("{", end):
            close = closing_brace(text, end + 1, len(text))
            if close is None or _tex_stops(text, end, close, parsed=name in _TEX_PARSED):
                break  # TeX would stop here: pandoc reads text
            end = close + 1
        spans.append(Span(m.start(), end))
        pos = end
    return spans
