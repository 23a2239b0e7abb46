"""MyST Markdown citations (Jupyter Book, mystmd): the ``{cite}`` roles.

``{cite}`knuth84``` and its variants (``{cite:p}``, ``{cite:t}``, ``{cite:ps}``…) name one
key or several, separated by commas or semicolons, inside what plain Markdown reads as a code
span; so they are read before code spans are masked, outside fenced code.
"""

from __future__ import annotations

import re

from citelsp.documents.model import Citation
from citelsp.spans import Span

_ROLE = re.compile(r"\{cite(?::[A-Za-z]+)?\}`(?P<keys>[^`\n]+)`")
_KEY = re.compile(r"[^\s,;]+")


def parse_myst_roles(uri: str, text: str) -> list[Citation]:
    """Every key of a ``{cite}`` role in ``text`` (fenced code already masked)."""
    if "{cite" not in text:
        return []
    citations = []
    for role in _ROLE.finditer(text):
        full = Span(role.start(), role.end())
        for key in _KEY.finditer(text, role.start("keys"), role.end("keys")):
            citations.append(Citation(key=key.group(), span=Span(key.start(), key.end()),
                                      uri=uri, syntax="myst", full_span=full))
    return citations
