"""Completion of citation keys after ``@``, ``\\cite{`` (``\\cite<see>[p.~4]{``, ``\\volcite{2}{``),
``<!--ref:`` and MyST's ``{cite}```."""

from __future__ import annotations

import re

from lsprotocol import types

from citelsp.documents.model import Manuscript, Reference
from citelsp.lsp.hover import short_authors
from citelsp.workspace.graph import CitationGraph

TRIGGER_CHARACTERS = ["@", "{", ",", ":", "`"]

_CONTEXTS = (
    re.compile(r"(?<![\w.])@(?P<prefix>[\w:.#$%&+?<>~/-]*)$"),
    re.compile(r"\\(?![A-Za-z]*volcite)[A-Za-z]*cite[A-Za-z]*\*?(?:<[^<>]*>)?"
               r"(?:\[[^\]]*\]){0,2}\{(?:[^}]*,)?\s*(?P<prefix>[^,}\s]*)$"),
    re.compile(r"\\[A-Za-z]*volcite\*?(?:\[[^\]]*\])?\{[^{}]*\}(?:\[[^\]]*\])?"
               r"\{\s*(?P<prefix>[^,}\s]*)$"),
    re.compile(r"<!--ref:(?P<prefix>[A-Za-z0-9_:-]*)$"),
    re.compile(r"\{cite(?::[A-Za-z]+)?\}`(?:[^`]*[,;])?\s*(?P<prefix>[^`,;\s]*)$"),
)


def completion_prefix(line_before_cursor: str) -> str | None:
    """The partial key before the cursor, or None when the cursor is not in a key position."""
    for pattern in _CONTEXTS:
        if m := pattern.search(line_before_cursor):
            return m.group("prefix")
    return None


def complete_keys(graph: CitationGraph, manuscript: Manuscript, prefix: str
                  ) -> types.CompletionList:
    items = []
    wanted = prefix.casefold()
    for key, ref in graph.keys(manuscript).items():
        if wanted and not key.casefold().startswith(wanted):
            continue
        items.append(completion_item(key, ref))
    return types.CompletionList(is_incomplete=False, items=items)


def completion_item(key: str, ref: Reference) -> types.CompletionItem:
    work = ref.work
    year = f"({work.year})" if work.year else ""
    detail = " ".join(p for p in (short_authors(work.authors), year) if p)
    return types.CompletionItem(
        label=key,
        kind=types.CompletionItemKind.Reference,
        detail=detail or None,
        documentation=work.title or None,
        filter_text=f"{key} {work.title or ''}",
        insert_text=key,
    )
