"""Text from documents and APIs made safe for a terminal and for Markdown.

A citation key or a title can hold anything: ESC sequences that clear a terminal, BEL, NUL,
Markdown that would become a link or HTML. Every human-facing report passes data through
here; links are built by ``citelsp.links`` and never from data.
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_SPECIAL = re.compile(r"[\\`*\[\]|~]|(?<![^\W_])_|_(?![^\W_])|^#")
_BLOCK_START = re.compile(r"^(\d{1,9})([.)])(?=\s|$)|^()([-+=])(?=\s|[-=+ ]*$)")
"""What would start a list, a rule or a heading underline at the start of a line."""
_URL = re.compile(r"(?:[A-Za-z][A-Za-z0-9+.-]*://|www\.)\S+")


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
    for m in _URL.finditer(text):
        out.append(_escape(text[last:m.start()]))
        out.append("`" + m.group().replace("`", "'") + "`")
        last = m.end()
    out.append(_escape(text[last:]))
    return _BLOCK_START.sub(lambda m: (m.group(1) or "") + "\\" + (m.group(2) or m.group(4)),
                            "".join(out))


def _escape(text: str) -> str:
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _SPECIAL.sub(lambda m: "\\" + m.group(), text).replace("\\](", "\\]\\(")
