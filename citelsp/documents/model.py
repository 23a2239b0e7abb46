"""The values every parser produces: references, citations, anchors and problems.

Spans are code-point offsets into the document text (see ``citelsp.spans``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from functools import cached_property
from types import MappingProxyType
from typing import Literal

from citelsp.documents.works import Person, Work, work_of
from citelsp.spans import Span

__all__ = [
    "Anchor", "Bibliography", "Citation", "Field", "Location", "Manuscript", "Person",
    "Problem", "Reference", "Severity", "SpanBase", "Work", "key_list",
]

SourceFormat = Literal["bibtex", "csl-json", "csl-yaml", "bibitem", "bbl"]
PRINTED = frozenset({"bibitem", "bbl"})
"""Bibliographies as the document prints them (its ``thebibliography``, a ``.bbl``): every
entry is in the output, and the text is generated or formatted, never edited by citelsp."""
CitationSyntax = Literal["marker", "pandoc", "latex", "myst"]


def key_list(value: str) -> tuple[str, ...]:
    """The keys a comma-separated list names (biblatex's ``ids``, ``related`` and
    ``entryset``, ``\\defbibentryset``'s members), empty items dropped."""
    return tuple(key for part in value.split(",") if (key := part.strip()))


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
    label: str | None = None
    """What is there, where a finding's own key does not say it ("also 'key'")."""


@dataclass(frozen=True)
class Problem:
    """A finding about a document: a parse error or a local check."""

    code: str
    span: Span
    message: str
    severity: Severity
    key: str | None = None
    related: tuple[Location, ...] = ()
    priority: str | None = None
    """Checklist priority (P0–P3) for verification findings; None for local checks."""
    on_citation: bool = False
    """A reference's finding repeated where it is cited (the entry carries the original)."""


class SpanBase:
    """Where a parsed entry starts in the current text of its document.

    A parser stores an entry's spans relative to the entry's start and shares one SpanBase
    between the Reference and its Fields, so when an edit before the entry moves it, one
    assignment to ``offset`` moves every span while the Reference object, and everything
    cached on it or keyed by it, survives. A Bibliography snapshot that shares a Reference
    with a later parse of the same document therefore reads the later offsets: only the
    latest snapshot of a document is meant to be read.
    """

    __slots__ = ("offset",)

    def __init__(self, offset: int = 0) -> None:
        self.offset = offset

    def __repr__(self) -> str:
        return f"SpanBase({self.offset})"


_ABSOLUTE = SpanBase()
"""The base of spans given as absolute offsets; never moved."""


class Field:
    """One field of an entry as written: macros expanded and ``#`` joined, LaTeX not decoded.

    Immutable and compared by value. ``span`` (the value) and ``name_span`` read as absolute
    code-point spans; they are kept relative to a ``SpanBase`` (see there), and ``Field(name,
    value, span, name_span)`` takes them absolute.
    """

    __slots__ = ("_name", "_value", "_base", "_start", "_end", "_name_start", "_name_end")

    def __init__(self, name: str, value: str, span: Span, name_span: Span) -> None:
        self._name, self._value, self._base = name, value, _ABSOLUTE
        self._start, self._end = span.start, span.end
        self._name_start, self._name_end = name_span.start, name_span.end

    @classmethod
    def relative(
        cls,
        base: SpanBase,
        name: str,
        value: str,
        start: int,
        end: int,
        name_start: int,
        name_end: int,
    ) -> Field:
        """A field whose offsets count from ``base.offset``; builds no Span up front."""
        self = cls.__new__(cls)
        self._name, self._value, self._base = name, value, base
        self._start, self._end, self._name_start, self._name_end = start, end, name_start, name_end
        return self

    @property
    def name(self) -> str:
        return self._name

    @property
    def value(self) -> str:
        return self._value

    @property
    def span(self) -> Span:
        offset = self._base.offset
        return Span(offset + self._start, offset + self._end)

    @property
    def name_span(self) -> Span:
        offset = self._base.offset
        return Span(offset + self._name_start, offset + self._name_end)

    def _identity(self) -> tuple[str, str, Span, Span]:
        return self._name, self._value, self.span, self.name_span

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Field):
            return NotImplemented
        return self._identity() == other._identity()

    def __hash__(self) -> int:
        return hash(self._identity())

    def __repr__(self) -> str:
        return (
            f"Field(name={self._name!r}, value={self._value!r}, span={self.span!r}, "
            f"name_span={self.name_span!r})"
        )


class Reference:
    """One bibliography entry (BibTeX entry or CSL item), compared by identity.

    ``key_span`` and ``span`` read as absolute code-point spans; like the spans of its
    fields they are kept relative to a ``SpanBase`` shared with the fields, so a BibTeX
    re-parse moves an entry that an edit shifted without building it again (see SpanBase).
    The constructor takes them absolute.
    """

    key: str
    uri: str
    source_format: SourceFormat
    entry_type: str
    fields: dict[str, Field]
    csl: dict | None
    """The CSL item as parsed, for CSL sources (names and dates stay structured)."""
    inherited: Mapping[str, Field] = MappingProxyType({})
    """Fields taken from the entry its ``crossref`` names, by the name they have here (the
    parent's own Field objects, so their spans lie in the parent); ``fields`` wins."""

    def __init__(
        self,
        key: str,
        uri: str,
        source_format: SourceFormat,
        entry_type: str,
        key_span: Span,
        span: Span,
        fields: dict[str, Field],
        csl: dict | None = None,
    ) -> None:
        self.key = key
        self.uri = uri
        self.source_format = source_format
        self.entry_type = entry_type
        self.fields = fields
        self.csl = csl
        self._base = _ABSOLUTE
        self._key_start, self._key_end = key_span.start, key_span.end
        self._start, self._end = span.start, span.end

    @classmethod
    def relative(
        cls,
        base: SpanBase,
        key: str,
        uri: str,
        source_format: SourceFormat,
        entry_type: str,
        key_start: int,
        key_end: int,
        start: int,
        end: int,
        fields: dict[str, Field],
    ) -> Reference:
        """A reference whose offsets count from ``base.offset`` (its fields' base too)."""
        self = cls.__new__(cls)
        self.key = key
        self.uri = uri
        self.source_format = source_format
        self.entry_type = entry_type
        self.fields = fields
        self.csl = None
        self._base = base
        self._key_start, self._key_end = key_start, key_end
        self._start, self._end = start, end
        return self

    @property
    def key_span(self) -> Span:
        offset = self._base.offset
        return Span(offset + self._key_start, offset + self._key_end)

    @property
    def span(self) -> Span:
        offset = self._base.offset
        return Span(offset + self._start, offset + self._end)

    @property
    def start(self) -> int:
        """``span.start`` without building the Span (ordering 20,000 entries by it)."""
        return self._base.offset + self._start

    def with_inherited(self, inherited: Mapping[str, Field]) -> Reference:
        """This entry, as a new object, with ``inherited`` from its crossref parent: a new
        object, because what is cached on or keyed by the old one read the old fields."""
        other = Reference.relative(self._base, self.key, self.uri, self.source_format,
                                   self.entry_type, self._key_start, self._key_end,
                                   self._start, self._end, self.fields)
        if inherited:
            other.inherited = MappingProxyType(dict(inherited))
        return other

    def __repr__(self) -> str:
        return (
            f"Reference(key={self.key!r}, uri={self.uri!r}, entry_type={self.entry_type!r}, "
            f"span={self.span!r})"
        )

    def field(self, name: str) -> Field | None:
        return self.fields.get(name)

    def value(self, name: str) -> str | None:
        f = self.fields.get(name)
        return f.value if f is not None else None

    @cached_property
    def work(self) -> Work:
        """Decoded lazily: a large library is never decoded up front."""
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
    sets: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """biblatex ``@set`` entries: key → the member keys its ``entryset`` lists. A set is not
    a work (it is not in ``references``); citing it cites its members."""
    other_types: tuple[str, ...] = ()
    """When no entry is a work: the types of what the file holds instead (``string`` for
    BibTeX macros, ``entry`` and ``symbol`` for a bib2gls glossary…), so a file of macros or
    glossary entries is told apart from one that is not a bibliography at all."""


@dataclass
class Manuscript:
    """A parsed manuscript: its citations and where it says its bibliography is."""

    uri: str
    text: str
    citations: list[Citation] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    bibliography_paths: list[str] = field(default_factory=list)
    """Paths as written in front matter, ``\\bibliography`` or ``\\addbibresource``."""
    bibliography_listed: bool = False
    """Whether front matter writes ``bibliography:`` as a list: Quarto then adds these to
    its project's instead of replacing them."""
    inline: Bibliography | None = None
    """CSL-YAML ``references:`` in the front matter."""
    sets: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """biblatex dynamic sets it defines (``\\defbibentryset``): name → member keys."""
    root: str | None = None
    """The main file of a LaTeX document this one is part of, as written
    (``% !TEX root = ../main.tex``, ``\\documentclass[../main.tex]{subfiles}``)."""
