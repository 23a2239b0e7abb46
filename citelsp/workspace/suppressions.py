"""``% citelsp: ignore CODE`` and ``<!-- citelsp: ignore CODE -->``: a writer silencing a
diagnostic where it stands.

A comment applies to problems on its own line and on the next line (a comment on a line of
its own silences the line below); in a bibliography it also applies to the whole entry it
stands in or directly precedes. Without codes it silences every code there. Codes switched
off for the whole workspace (``citelsp.rules``, ``--ignore``) are filtered by the caller.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from citelsp.documents.model import Bibliography, Problem
from citelsp.documents.parse import Document
from citelsp.spans import LineIndex, Span

_DIRECTIVE = re.compile(r"(?:%|<!--)[ \t]*citelsp:[ \t]*ignore\b([^\n]*)")
_CODE = re.compile(r"[A-Z][A-Z0-9_]+")
ALL = "*"


@dataclass(frozen=True)
class Suppressions:
    lines: dict[int, frozenset[str]]
    """Line → codes silenced on it (``ALL``: every code)."""
    entries: tuple[tuple[Span, frozenset[str]], ...]
    """Bibliography entries' spans → codes silenced anywhere in them."""
    index: LineIndex | None

    def hides(self, problem: Problem) -> bool:
        codes: set[str] = set()
        if self.index is not None and self.lines:
            codes |= self.lines.get(self.index.position(problem.span.start)[0], frozenset())
        for span, silenced in self.entries:
            if span.start <= problem.span.start < max(span.end, span.start + 1):
                codes |= silenced
        return ALL in codes or problem.code in codes


NONE = Suppressions({}, (), None)


def suppressions(doc: Document) -> Suppressions:
    """The ignore comments of ``doc`` (cheap when it has none)."""
    text = doc.text
    if "citelsp:" not in text:
        return NONE
    index = LineIndex(text)
    lines: dict[int, set[str]] = {}
    found: list[tuple[int, frozenset[str]]] = []
    for m in _DIRECTIVE.finditer(text):
        codes = frozenset(_CODE.findall(m.group(1).split("-->")[0])) or frozenset({ALL})
        line = index.position(m.start())[0]
        for silenced in (line, line + 1):
            lines.setdefault(silenced, set()).update(codes)
        found.append((m.start(), codes))
    entries: list[tuple[Span, frozenset[str]]] = []
    if isinstance(doc, Bibliography) and found:
        next_directive = 0  # both in text order: one sweep
        for ref in sorted(doc.references, key=lambda r: r.span.start):
            span = ref.span
            silenced: set[str] = set()
            while next_directive < len(found) and found[next_directive][0] < span.end:
                silenced |= found[next_directive][1]
                next_directive += 1
            if silenced:
                entries.append((span, frozenset(silenced)))
    return Suppressions({k: frozenset(v) for k, v in lines.items()}, tuple(entries), index)
