"""The values every parser produces: references, citations, anchors and problems.

Spans are code-point offsets into the document text (see ``citelsp.spans``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from functools import cached_property
from typing import Literal

from citelsp.spans import Span

SourceFormat = Literal["bibtex", "csl-json", "csl-yaml"]
CitationSyntax = Literal["marker", "pandoc", "latex"]


class Severity(IntEnum):
    """How loudly a finding is shown; the numbers match LSP's DiagnosticSeverity."""

    ERROR = 1
    WARNING = 2
    INFORMATION = 3
    HINT = 4


@dataclass(frozen=True)
class Location:
    uri: str
    span: Span


@dataclass(frozen=True)
class Problem:
    """A finding about a document: a parse error or a local check (DESIGN.md §3)."""

    code: str
    span: Span
    message: str
    severity: Severity
    key: str | None = None
    related: tuple[Location, ...] = ()
    priority: str | None = None
    """Checklist priority (P0–P3) for verification findings; None for local checks."""


@dataclass(frozen=True)
class Person:
    """One name. ``literal`` marks an organization (braced in BibTeX, CSL ``literal``)."""

    family: str
    given: str = ""
    literal: bool = False

    def display(self) -> str:
        if self.literal or not self.given:
            return self.family
        return f"{self.given} {self.family}"


@dataclass(frozen=True)
class Field:
    """One field of an entry as written: macros expanded and ``#`` joined, LaTeX not decoded."""

    name: str
    value: str
    span: Span
    name_span: Span


@dataclass(frozen=True)
class Work:
    """What a reference claims about the work it cites, decoded for comparison and display."""

    title: str | None = None
    authors: tuple[Person, ...] = ()
    year: int | None = None
    venue: str | None = None
    volume: str | None = None
    issue: str | None = None
    pages: str | None = None
    publisher: str | None = None
    url: str | None = None
    issn: tuple[str, ...] = ()
    language: str | None = None
    manual: bool = False
    has_et_al: bool = False


@dataclass(eq=False)
class Reference:
    """One bibliography entry (BibTeX entry or CSL item)."""

    key: str
    uri: str
    source_format: SourceFormat
    entry_type: str
    key_span: Span
    span: Span
    fields: dict[str, Field]
    csl: dict | None = None
    """The CSL item as parsed, for CSL sources (names and dates stay structured)."""

    def field(self, name: str) -> Field | None:
        return self.fields.get(name)

    def value(self, name: str) -> str | None:
        f = self.fields.get(name)
        return f.value if f is not None else None

    @cached_property
    def work(self) -> Work:
        """Decoded lazily: a large library is never decoded up front."""
        from citelsp.documents.works import work_of

        return work_of(self)

    def span_of(self, name: str | None) -> Span:
        """The span a diagnostic about field ``name`` goes on (the key when absent)."""
        if name is not None and (f := self.fields.get(name)) is not None:
            return f.span
        return self.key_span


@dataclass(frozen=True)
class Anchor:
    """``<!--anchor:KIND:VALUE-->`` after a ref marker; ``value`` is URL-decoded."""

    kind: str
    value: str
    span: Span

    @property
    def present(self) -> bool:
        return self.kind in ("quote", "page", "section", "paragraph")


@dataclass(frozen=True)
class Citation:
    """One occurrence of a cited key in a manuscript."""

    key: str
    span: Span
    """Span of the key (or slug) itself."""
    uri: str
    syntax: CitationSyntax
    full_span: Span
    """Span of the whole marker or command, for ranges that cover the citation."""
    anchor: Anchor | None = None
    status: str | None = None
    """The finalized status token of ``<!--ref:slug STATUS ...-->``."""
    wildcard: bool = False
    """``\\nocite{*}``: cites every entry of the bibliography."""

    @property
    def anchor_present(self) -> bool:
        return self.anchor is not None and self.anchor.present


@dataclass
class Bibliography:
    """A parsed bibliography file (or a manuscript's front-matter ``references:``)."""

    uri: str
    text: str
    source_format: SourceFormat
    references: list[Reference] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


@dataclass
class Manuscript:
    """A parsed manuscript: its citations and where it says its bibliography is."""

    uri: str
    text: str
    citations: list[Citation] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    bibliography_paths: list[str] = field(default_factory=list)
    """Paths as written in front matter, ``\\bibliography`` or ``\\addbibresource``."""
    inline: Bibliography | None = None
    """CSL-YAML ``references:`` in the front matter."""
