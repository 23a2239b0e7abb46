"""Completion of citation keys after ``@``, ``\\cite{`` (``\\cite<see>[p.~4]{``, ``\\volcite{2}{``),
``<!--ref:`` and MyST's ``{cite}```."""

from __future__ import annotations

import re
from dataclasses import dataclass

from citelsp.documents.model import Manuscript, Person
from citelsp.documents.parse import Document
from citelsp.workspace.view import View

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


@dataclass(frozen=True)
class Completion:
    key: str
    detail: str | None
    """"Vaswani et al. (2017)"."""
    title: str | None
    filter_text: str
    """What the client matches the typed text against: the key and the title."""


def completions(view: View, doc: Document, offset: int) -> list[Completion] | None:
    """The keys of the manuscript's bibliographies that start with the partial key before
    the cursor; None when the cursor is not in a key position (or not in a manuscript)."""
    if not isinstance(doc, Manuscript):
        return None
    line_start = max(doc.text.rfind("\n", 0, offset), doc.text.rfind("\r", 0, offset)) + 1
    prefix = completion_prefix(doc.text[line_start:offset])
    if prefix is None:
        return None
    wanted = prefix.casefold()
    found = []
    for key, ref in view.keys(doc).items():
        if wanted and not key.casefold().startswith(wanted):
            continue
        work = ref.work
        year = f"({work.year})" if work.year else ""
        detail = " ".join(p for p in (short_authors(work.authors), year) if p)
        found.append(Completion(key, detail or None, work.title or None,
                                f"{key} {work.title or ''}"))
    return found


def short_authors(authors: tuple[Person, ...]) -> str:
    if not authors:
        return ""
    if len(authors) == 1:
        return authors[0].family
    if len(authors) == 2:
        return f"{authors[0].family} and {authors[1].family}"
    return f"{authors[0].family} et al."
