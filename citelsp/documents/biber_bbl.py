"""biber's ``.bbl`` (biblatex): the entries of a ``\\refsection``, with the fields biber read.

arXiv sources of biblatex papers ship this file instead of the ``.bib``. Unlike BibTeX's
formatted ``thebibliography``, it keeps the data: ``\\field{title}{…}``, ``\\verb{doi}``,
``\\list{publisher}``, and names split into ``family``/``given``/``prefix``/``suffix``.
So an entry reads as its ``.bib`` entry would, authors included; the names are written back
as a BibTeX name list ("von Neumann, John and {World Health Organization}"), and
``\\true{moreauthor}`` (the ``.bib``'s "and others") ends it in "and others". A subtitle is
joined to the title with ": ", as biblatex prints it.
"""

from __future__ import annotations

import re

from citelsp.documents.latex import closing_brace
from citelsp.documents.model import Bibliography, Field, Reference
from citelsp.spans import Span

_MARK = re.compile(r"\\entry\{(?P<key>[^{}]+)\}\{(?P<type>[^{}]*)\}\{[^{}]*\}|\\endentry")
_FIELD = re.compile(r"\\(?P<kind>field|list|name)\{(?P<name>[^{}]+)\}(?:\{[^{}]*\})*\{")
"""``\\field{name}{value}``, ``\\list{name}{count}{{item}…}``, ``\\name{name}{count}{options}{…}``:
the value is the last group."""
_VERB = re.compile(r"\\verb\{(?P<name>[^{}]+)\}\s*\n\s*\\verb (?P<value>[^\n]*)\n(?:\s*\\verb "
                   r"[^\n]*\n)*?\s*\\endverb")
_PART = re.compile(r"(?P<part>family|given|prefix|suffix)=\{")
_MACROS = re.compile(r"\\bibnamedelim[a-z]|\\bibinitdelim|\\bibrangedash\s?|\\bibrangessep\s?")
_MACRO_TEXT = {"\\bibrangedash": "--", "\\bibrangessep": ", "}
_READ = frozenset({
    "title", "subtitle", "journaltitle", "booktitle", "maintitle", "volume", "number",
    "pages", "year", "publisher", "issn", "isbn", "doi", "url", "eprint", "eprinttype",
    "eprintclass", "howpublished", "note", "language", "langid", "author",
})  # fmt: skip


def is_biber_bbl(text: str) -> bool:
    return "\\refsection{" in text and "\\entry{" in text


def parse_biber_bbl(uri: str, text: str) -> Bibliography:
    """The entries of every ``\\refsection`` (the first of each key)."""
    references: list[Reference] = []
    seen: set[str] = set()
    head: re.Match[str] | None = None
    for m in _MARK.finditer(text):  # one pass: an \entry without \endentry ends at the next
        if head is not None and head.group("key") not in seen:
            seen.add(head.group("key"))
            end = m.end() if m.group("key") is None else m.start()
            references.append(_entry(uri, text, head, end))
        head = m if m.group("key") is not None else None
    if head is not None and head.group("key") not in seen:
        references.append(_entry(uri, text, head, len(text)))
    return Bibliography(uri=uri, text=text, source_format="bbl", references=references)


def _entry(uri: str, text: str, head: re.Match[str], end: int) -> Reference:
    key = head.group("key")
    return Reference(key, uri, "bbl", head.group("type").lower(),
                     Span(head.start("key"), head.end("key")), Span(head.start(), end),
                     _fields(text, head.end(), end))


def _fields(text: str, start: int, end: int) -> dict[str, Field]:
    fields: dict[str, Field] = {}
    sought: set[str] = set()
    for m in _FIELD.finditer(text, start, end):
        name = m.group("name").lower()
        if name not in _READ or name in sought:  # each read field's end is sought once
            continue
        sought.add(name)
        close = closing_brace(text, m.end(), end)
        if close is None:
            continue
        span = Span(m.end(), close)
        if m.group("kind") == "name":
            value = _names(text, m.end(), close, "\\true{moreauthor}" in text[start:end])
        elif m.group("kind") == "list":
            value = " and ".join(_plain(text[a:b]) for a, b in _groups(text, m.end(), close))
        else:
            value = _plain(text[m.end():close])
        fields[name] = Field(name, value, span, Span(m.start("name"), m.end("name")))
    for m in _VERB.finditer(text, start, end):
        name = m.group("name").lower()
        if name in _READ and name not in fields:
            span = Span(m.start("value"), m.end("value"))
            fields[name] = Field(name, m.group("value").strip(), span,
                                 Span(m.start("name"), m.end("name")))
    subtitle = fields.pop("subtitle", None)
    title = fields.get("title")
    if title is not None and subtitle is not None and subtitle.value.strip():
        fields["title"] = Field("title", f"{title.value}: {subtitle.value}", title.span,
                                title.name_span)
    return fields


def _names(text: str, start: int, end: int, more: bool) -> str:
    """A BibTeX name list from biber's name parts: "von Last, Jr, First", an organization
    (family only, braced) kept braced."""
    people = []
    for a, b in _groups(text, start, end):
        groups = _groups(text, a, b)  # {hash=…}{parts}
        if not groups:
            continue
        parts: dict[str, str] = {}
        pa, pb = groups[-1]
        for m in _PART.finditer(text, pa, pb):
            close = closing_brace(text, m.end(), pb)
            if close is not None:
                parts.setdefault(m.group("part"), _plain(text[m.end():close]))
        family = parts.get("family")
        if not family:
            continue
        last = f"{parts['prefix']} {family}" if parts.get("prefix") else family
        if parts.get("given"):
            suffix = f", {parts['suffix']}" if parts.get("suffix") else ""
            people.append(f"{last}{suffix}, {parts['given']}")
        else:
            people.append(last if last.startswith("{") else "{" + last + "}")
    return " and ".join(people + (["others"] if more and people else []))


def _plain(value: str) -> str:
    """biblatex's delimiter macros as the text they stand for."""
    return _MACROS.sub(lambda m: _MACRO_TEXT.get(m.group().rstrip(), " "), value).strip()


def _groups(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The contents of the top-level ``{…}`` groups between ``start`` and ``end``."""
    found = []
    i = start
    while i < end:
        if text[i] == "{":
            close = closing_brace(text, i + 1, end)
            if close is None:
                break
            found.append((i + 1, close))
            i = close + 1
        else:
            i += 1
    return found
