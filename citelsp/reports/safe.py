"""Text from documents and APIs made safe for a terminal and for Markdown.

A citation key or a title can hold anything: ESC sequences that clear a terminal, BEL, NUL,
Markdown that would become a link or HTML. Every human-facing report passes data through
here; links are built by ``citelsp.links`` and never from data.

Every function here is linear in its input: data is hostile, and a hover waits on it (a
60,000-letter key once took 10 s through a URL pattern that rescanned from every letter).
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Iterator

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_SPECIAL = re.compile(r"[\\`*\[\]|~]|(?<![^\W_])_|_(?![^\W_])|^#")
_BLOCK_START = re.compile(r"^(\d{1,9})([.)])(?=\s|$)|^()([-+=])(?=\s|[-=+ ]*$)")
"""What would start a list, a rule or a heading underline at the start of a line."""
_SCHEME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+.-")
_SPACE = re.compile(r"\s")


def printable(text: str) -> str:
    """``text`` with control and bidi-override characters shown as escapes (``\\x1b``), and
    line breaks as spaces, so it prints as what it is on one line."""
    text = str(text).replace("\n", " ").replace("\t", " ")
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                        else f"\\u{ord(m.group()):04x}", text)


def markdown_text(text: str) -> str:
    """Printable text that Markdown renders as itself, with no stray escapes: the characters
    that could start code, emphasis, a link, an image, HTML, a table cell or a heading are
    escaped (``_`` only outside words), ``&``, ``<`` and ``>`` become entities, and anything
    that looks like a URL becomes inline code, so that no renderer turns it into a link."""
    text = " ".join(printable(text).split())
    out, last = [], 0
    for start, end in url_spans(text):
        out.append(_escape(text[last:start]))
        out.append("`" + text[start:end].replace("`", "'") + "`")
        last = end
    out.append(_escape(text[last:]))
    return _BLOCK_START.sub(lambda m: (m.group(1) or "") + "\\" + (m.group(2) or m.group(4)),
                            "".join(out))


def _escape(text: str) -> str:
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _SPECIAL.sub(lambda m: "\\" + m.group(), text).replace("\\](", "\\]\\(")


def url_spans(text: str) -> Iterator[tuple[int, int]]:
    """Where ``text`` holds something that looks like a URL: a scheme (a letter, then letters,
    digits, ``+.-``) and ``://``, or ``www.``, each with more up to the next space; leftmost
    first, never overlapping (what the pattern ``(?:[A-Za-z][A-Za-z0-9+.-]*://|www\\.)\\S+``
    finds, in one pass instead of a rescan from every letter)."""
    end = 0
    for start in heapq.merge(_scheme_starts(text), _www_starts(text)):
        if start >= end:
            space = _SPACE.search(text, start)
            end = space.start() if space else len(text)
            yield start, end


def _scheme_starts(text: str) -> Iterator[int]:
    """Where each ``scheme://`` followed by a non-space starts: the first letter of the run
    of scheme characters before the ``://`` (runs end at ``:``, so no run is read twice)."""
    found = text.find("://")
    while found >= 0:
        after = found + 3
        if after < len(text) and not text[after].isspace():
            first = found
            while first > 0 and text[first - 1] in _SCHEME_CHARS:
                first -= 1
            while first < found and not (text[first].isascii() and text[first].isalpha()):
                first += 1
            if first < found:
                yield first
        found = text.find("://", found + 1)


def _www_starts(text: str) -> Iterator[int]:
    found = text.find("www.")
    while found >= 0:
        after = found + 4
        if after < len(text) and not text[after].isspace():
            yield found
        found = text.find("www.", found + 1)
