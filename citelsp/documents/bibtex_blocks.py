"""The grammar of one BibTeX block (``@type{key, name = value, ...}``, ``@string``,
``@comment``, ``@preamble``), read from a given ``@`` with offsets relative to a base.

``bibtex.py`` decides where blocks start and which are kept across edits; this module only
reads one block and says how far it looked. The reading rules, and where BibTeX and biber
differ, are listed in ``bibtex.py``'s docstring.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import NamedTuple

from citelsp.documents.model import Field, Severity, SpanBase

_HEAD_SPLIT = re.compile(r"@\s*([A-Za-z][\w:.+-]*)\s*([{(])")
"""``@``, the type and the delimiter, possibly on separate lines (``@\\nmisc{``)."""
_HEAD = re.compile(r"@[ \t]*([A-Za-z][\w:.+-]*)?[ \t]*([{(])?")
_WS = re.compile(r"(?:\s|%[^\n\r]*)*")
"""Whitespace and ``%`` comments to the end of the line (biber reads them inside entries).
Unicode spaces included: they are read as spaces, with a warning (``_ODD_SPACE``)."""
_ODD_SPACE = re.compile(r"[^\S \t\n\r\f\v]")
"""A space that is not ASCII whitespace (no-break, ideographic, em space…): BibTeX reads it
as part of a name or stops at it (``title<U+00A0>= {…}`` silently loses the title)."""
_ODD_SPACE_IN_WS = re.compile(r"(?:[ \t\n\r\f\v]++|%[^\n\r]*+)*+([^\S \t\n\r\f\v])")
"""The first ``_ODD_SPACE`` in a stretch ``_WS`` skips, outside its comments."""
_KEY = re.compile(r"[^\s,{}()\"#%\\]+")
_FIELD_NAME = re.compile(r"[^\s,{}()\"=#%\\]+")
_NUMBER = re.compile(r"\d+")
_MACRO = re.compile(r"[A-Za-z_][^\s,{}()\"=#%\\]*")
_BRACE = re.compile(r"[{}]")
_BRACE_OR_PAREN = re.compile(r"[{}()]")
_QUOTED = re.compile(r'[{}"]')
_LINE_END = re.compile(r"[\n\r]")
_SPACES = r"[ \t\n\r\f\v]*+(?:%[^\n\r]*+[ \t\n\r\f\v]*+)*+"
"""``_WS`` as a piece of a larger pattern, ASCII spaces only: possessive, so it skips exactly
what ``_WS`` does there. A Unicode space leaves the field to the paths that warn of it."""
_SPACED_KEY = re.compile(_SPACES + r"""([^\s,{}()"#%\\]++)?""" + _SPACES)
"""The citation key, if any, with the spaces and comments before and after it."""
_SPACED_BRACED_KEY = re.compile(_SPACES + r"""([^\s,{}"#%\\]++)?""" + _SPACES)
"""The same in an entry delimited by braces, where a key may hold ``(`` and ``)`` (BibTeX and
biber read ``@article{smith(2020),``; Better BibTeX writes such keys)."""
_NESTED = r"(?:[^{}]++|\{(?:[^{}]++|\{[^{}]*+\})*+\})*+"
"""Text whose braces are balanced and nested at most two deep."""
_OPERAND = (
    r"""(?:\{(""" + _NESTED + r""")\}|"((?:[^"{}]++|\{""" + _NESTED + r"""\})*+)"|(\d++)"""
    r"""|([A-Za-z_][^\s,{}()"=#%\\]*+))"""
)
"""One operand: group 2 braced, 3 quoted, 4 number, 5 macro (the groups of a field match)."""
_SIMPLE_FIELD = re.compile(
    _SPACES + r"""([^\s,{}()"=#%\\]++)""" + _SPACES + "=" + _SPACES + _OPERAND + _SPACES
)
"""A field whose value is one operand with braces nested at most three deep, with the spaces
and comments around it: what the general path would read, in one regex call, for nearly
every field. The quantifiers are possessive: a backtracking repeat kept state per character
(900 MB for a 5 MB title)."""
_SPACED_FIELD = re.compile(
    r"""\s*([^\s,{}()"=#%\\]+)\s*=\s*(?:"""
    r"""\{((?:[^{}]++|\{[^{}]*+\})*+)\}"""
    r"""|"([^"{}]*)"|(\d+)|([A-Za-z_][^\s,{}()"=#%\\]*))\s*"""
)
"""One simple field whose spaces may include Unicode ones (U+00A0), which ``_SIMPLE_FIELD``
does not skip: read as the general path reads it, and warned of (``_ODD_SPACE``)."""

_ESCAPE_HINT = " (a backslash does not escape a brace: \\{ and \\} count as braces)"

GLOSSARY_TYPES = frozenset({
    "entry", "index", "indexplural", "symbol", "number", "abbreviation", "acronym",
    "bibtexentry", "contributor", "progenitor", "compoundset", "xdata",
})  # fmt: skip
"""Entry types that are not works: bib2gls glossary entries and biblatex ``@xdata``
containers. With the ``dual``, ``tertiary`` and ``spawn`` families below."""
_GLOSSARY_PREFIXES = ("dual", "tertiary", "spawn")

WORK_TYPES = frozenset({
    "article", "book", "booklet", "conference", "inbook", "incollection", "inproceedings",
    "manual", "mastersthesis", "misc", "phdthesis", "proceedings", "techreport", "unpublished",
    "online", "electronic", "www", "report", "thesis", "collection", "mvbook", "mvcollection",
    "mvproceedings", "mvreference", "reference", "inreference", "periodical", "suppbook",
    "suppcollection", "suppperiodical", "patent", "dataset", "software", "bookinbook",
    "standard", "artwork", "audio", "image", "jurisdiction", "legal", "legislation", "letter",
    "movie", "music", "performance", "review", "video",
})  # fmt: skip
"""BibTeX's and biblatex's entry types: always works, whatever their fields."""

BIBLIOGRAPHIC_FIELDS = frozenset({
    "author", "editor", "translator", "title", "subtitle", "booktitle", "maintitle",
    "journal", "journaltitle", "eventtitle", "year", "date", "month", "publisher",
    "institution", "school", "organization", "howpublished", "doi", "eprint", "isbn", "issn",
    "url", "volume", "number", "pages", "chapter", "note", "crossref", "xref", "series",
    "edition", "address", "location",
})  # fmt: skip
"""An entry of another type with fields but none of these (bib2gls ``@unit{…, unitname =
…}``, IEEEtran's ``@IEEEtranBSTCTL``, abnTeX2's ``@ABNT-options``) is data for another
tool, not a work."""


class Malformed(Exception):
    def __init__(self, message: str, pos: int) -> None:
        super().__init__(message)
        self.message = message
        self.pos = pos


class Note(NamedTuple):
    """A finding about a block, relative to its chunk's base."""

    code: str
    severity: Severity
    start: int
    end: int
    message: str
    key: str | None = None


class RawField(NamedTuple):
    """A field whose value names macros, to be expanded; offsets relative to the chunk's base.
    A field whose value is literal is read as a ``Field`` straight away."""

    name: str
    parts: tuple[tuple[str, bool], ...]
    """Operands of the value expression as (text, is_macro)."""
    name_start: int
    name_end: int
    value_start: int
    value_end: int


class RawBlock(NamedTuple):
    """One block, relative to its chunk's base: an entry, an ``@string``, a parse error,
    data that is not a work (``"data"``), or something ignored."""

    kind: str
    """"entry", "data", "string", "error" or "ignored" (comments, ``@preamble``, a stray ``@``)."""
    start: int = 0
    end: int = 0
    entry_type: str = ""
    key: str = ""
    key_start: int = 0
    key_end: int = 0
    fields: tuple[Field | RawField, ...] = ()
    """In the order written; a ``Field``'s spans count from the chunk's ``SpanBase``."""
    names: tuple[str, ...] = ()
    """The fields' names, lowercased."""
    message: str = ""
    macro_fields: tuple[RawField, ...] = ()
    """The fields whose values name macros, in order (also in ``fields``)."""
    notes: tuple[Note, ...] = ()


def read_block(text: str, at: int, limit: int, span_base: SpanBase) -> RawBlock:
    """The block whose ``@`` is at ``at``, read no further than ``limit`` (the next line that
    starts another entry), with offsets relative to ``span_base``. Never raises: an
    unreadable block is an ``"error"`` block whose span runs from its ``@`` to the end of the
    line where reading failed."""
    base = span_base.offset
    try:
        return _Tokenizer(text, limit, span_base).block(at)
    except Malformed as e:
        pos = max(min(e.pos, limit - 1), at)
        line_end = _LINE_END.search(text, pos, limit)
        end = line_end.start() if line_end else _rstripped(text, pos, limit)
        head = _HEAD_SPLIT.match(text, at, limit) or _HEAD.match(text, at, limit)
        key = None
        if head.group(2):
            key = _KEY.match(text, _WS.match(text, head.end(), limit).end(), limit)
        return RawBlock(
            kind="error",
            start=at - base,
            end=max(end, at + 1) - base,
            key=key.group(0) if key else "",
            message=e.message,
        )


def is_unicode_space(c: str) -> bool:
    """A space that is not ASCII whitespace (``_ODD_SPACE``)."""
    return _ODD_SPACE.fullmatch(c) is not None


def space_name(c: str, *, capital: bool = False) -> str:
    """``a no-break space (U+00A0)``."""
    name = unicodedata.name(c, "").lower() or "space character"
    article = "an" if name[0] in "aeiou" else "a"
    return f"{article.capitalize() if capital else article} {name} (U+{ord(c):04X})"


def _rstripped(text: str, start: int, end: int) -> int:
    while end > start and text[end - 1].isspace():
        end -= 1
    return end


@lru_cache(maxsize=4096)
def _lowered(name: str) -> str:
    """A field name lowercased, one string per name: a library repeats a few names."""
    return name.lower()


def is_glossary_type(entry_type: str) -> bool:
    return entry_type in GLOSSARY_TYPES or entry_type.startswith(_GLOSSARY_PREFIXES)


class _Tokenizer:
    """Reads one block from its ``@``; ``n`` bounds every look."""

    def __init__(self, text: str, limit: int, span_base: SpanBase) -> None:
        self.s = text
        self.n = limit
        self.span_base = span_base
        self.base = span_base.offset
        self.closing = "}"
        self.macro_fields: list[RawField] = []
        """The fields read so far whose values name macros."""
        self.odd_space: int | None = None
        """Where the first Unicode space between tokens is (``_ODD_SPACE``)."""

    def skip_ws(self, pos: int) -> int:
        end = _WS.match(self.s, pos, self.n).end()
        if end > pos and self.odd_space is None and (
                odd := _ODD_SPACE_IN_WS.match(self.s, pos, end)) is not None:
            self.odd_space = odd.start(1)
        return end

    def block(self, start: int) -> RawBlock:
        s, n, base = self.s, self.n, self.base
        head = _HEAD_SPLIT.match(s, start, n) or _HEAD.match(s, start, n)
        entry_type, opener = head.group(1, 2)
        if entry_type is None and opener is None:  # a stray "@"
            return RawBlock(kind="ignored", start=start - base, end=head.end() - base)
        if entry_type is None:
            raise Malformed("Entry type missing after '@'.", head.end() - 1)
        lowered = entry_type.lower()
        if lowered == "comment" and opener is None:  # "@comment" outside braces: a word
            return RawBlock(kind="ignored", start=start - base, end=head.end(1) - base)
        if opener is None:
            raise Malformed(f"Expected '{{' or '(' after '@{entry_type}'.", head.end(1))
        self.closing = ")" if opener == "(" else "}"
        if lowered in ("comment", "preamble"):
            end = self.skip_group(head.end() - 1)
            return RawBlock(kind="ignored", start=start - base, end=end - base)
        if lowered == "string":
            fields, _, end = self.fields(self.skip_ws(head.end()))
            return RawBlock(
                kind="string",
                start=start - base,
                end=end - base,
                fields=fields,
                macro_fields=tuple(self.macro_fields),
            )
        if head.end() - start > len(entry_type) + 2:  # spaced out: a Unicode space is noted
            self.skip_ws(self.skip_ws(start + 1) + len(entry_type))
        return self.entry(start, lowered, head.end())

    def skip_group(self, pos: int) -> int:
        """End of the comment or preamble whose delimiter opens at ``pos``: its closing
        delimiter at brace depth 0, or the limit when there is none."""
        depth = 0
        for m in _BRACE_OR_PAREN.finditer(self.s, pos + 1, self.n):
            c = m.group(0)
            if depth == 0 and c == self.closing:
                return m.end()
            if c == "{":
                depth += 1
            elif c == "}":
                depth = max(depth - 1, 0)
        return self.n

    def entry(self, start: int, entry_type: str, pos: int) -> RawBlock:
        s, n, base, closing = self.s, self.n, self.base, self.closing
        key = (_SPACED_BRACED_KEY if closing == "}" else _SPACED_KEY).match(s, pos, n)
        text, after = key.group(1), key.end()
        key_start, key_end = key.span(1)
        if after < n and _ODD_SPACE.match(s, after):  # a Unicode space by the key: skipped
            after = self.skip_ws(pos)  # as between fields, which notes it for the warning
            found = _KEY.match(s, after, n)
            if found is not None:
                text, (key_start, key_end) = found.group(), found.span()
                after = self.skip_ws(found.end())
        if text is None:
            raise Malformed(f"Citation key missing in @{entry_type} entry.", after)
        follows = s[after] if after < n else ""
        if follows not in (",", closing):
            if "=" in text or follows == "=":
                field = text.split("=", 1)[0]
                raise Malformed(
                    f"Citation key missing in @{entry_type} entry: it starts with the field "
                    f"'{field}'.",
                    key_start,
                )
            raise Malformed(f"Expected ',' after citation key '{text}'.", after)
        if follows == closing:
            fields, names, end = (), (), after + 1
        else:
            fields, names, end = self.fields(after + 1)
        kind = "entry" if _is_work(entry_type, names) else "data"
        notes = self.notes(text, key_start, key_end, fields, names) if kind == "entry" else ()
        return RawBlock(  # positional: a class called with keywords builds a dict
            kind, start - base, end - base, entry_type, text, key_start - base, key_end - base,
            fields, names, "", tuple(self.macro_fields), notes,
        )  # fmt: skip

    def fields(self, pos: int) -> tuple[tuple[Field | RawField, ...], tuple[str, ...], int]:
        """``name = value`` pairs up to the closing delimiter; returns them, their names and
        the end."""
        s, closing, n = self.s, self.closing, self.n
        out: list[Field | RawField] = []
        names: list[str] = []
        while True:
            pos, closed = self.simple_fields(pos, out, names)
            if closed:
                return tuple(out), tuple(names), pos
            pos = self.skip_ws(pos)
            if pos >= n:
                raise Malformed(self.unclosed(out), n - 1)
            if s[pos] == closing:
                return tuple(out), tuple(names), pos + 1
            name = _FIELD_NAME.match(s, pos, n)
            if name is None:
                raise Malformed(f"Expected a field name, found '{s[pos]}'.", pos)
            pos = self.skip_ws(name.end())
            if pos >= n or s[pos] != "=":
                raise Malformed(f"Expected '=' after field name '{name.group(0)}'.", pos)
            field, pos = self.value(name, self.skip_ws(pos + 1))
            out.append(field)
            names.append(field.name)
            if pos >= n:
                raise Malformed(self.unclosed(out), n - 1)
            if s[pos] == ",":
                pos += 1
            elif s[pos] != closing:
                raise Malformed(
                    f"Expected ',' or '{closing}' after field '{name.group(0)}'"
                    f"{_quote_hint(s, self.value_span(field))}.",
                    pos,
                )

    def simple_fields(self, pos: int, out: list[Field | RawField], names: list[str]
                      ) -> tuple[int, bool]:
        """Reads the fields from ``pos`` on that ``_SIMPLE_FIELD`` or ``_SPACED_FIELD`` match
        (nearly all), one regex call and no other call but the Field's each; returns where
        it stopped and whether that is past the closing delimiter."""
        s, closing, n, base, span_base = self.s, self.closing, self.n, self.base, self.span_base
        simple, spaced, relative = _SIMPLE_FIELD.match, _SPACED_FIELD.match, Field.relative
        while True:
            m = simple(s, pos, n)
            if m is None or (after := m.end()) >= n or (c := s[after]) != "," and c != closing:
                m = spaced(s, pos, n)
                if m is None or (after := m.end()) >= n or (c := s[after]) != "," and c != closing:
                    return pos, False
                if self.odd_space is None:  # the Unicode space that sent it here, outside the value
                    start, end = m.regs[m.lastindex]
                    found = _ODD_SPACE.search(s, pos, start) or _ODD_SPACE.search(s, end, after)
                    self.odd_space = found.start() if found is not None else None
            group = m.lastindex  # 2 braced, 3 quoted, 4 number, 5 macro
            regs = m.regs
            name_start, name_end = regs[1]
            start, end = regs[group]
            name = _lowered(s[name_start:name_end])
            if group == 5:
                field: Field | RawField = RawField(
                    name, ((s[start:end], True),), name_start - base, name_end - base,
                    start - base, end - base,
                )  # fmt: skip
                self.macro_fields.append(field)
            else:
                field = relative(span_base, name, s[start:end], start - base, end - base,
                                 name_start - base, name_end - base)  # fmt: skip
            out.append(field)
            names.append(name)
            pos = after + 1
            if c == closing:
                return pos, True

    def value_span(self, field: Field | RawField) -> tuple[int, int]:
        """Where a field's value is in the text."""
        if isinstance(field, Field):
            return field.span.start, field.span.end
        return field.value_start + self.base, field.value_end + self.base

    def notes(self, key: str, key_start: int, key_end: int, fields: tuple[Field | RawField, ...],
              names: tuple[str, ...]) -> tuple[Note, ...]:
        """Readable but doubtful: a key with ``=`` (biber rejects it), a repeated field, a
        Unicode space between tokens (BibTeX does not read it as one)."""
        if "=" not in key and len(set(names)) == len(names) and self.odd_space is None:
            return ()
        base = self.base
        notes = []
        if self.odd_space is not None:
            at = self.odd_space
            notes.append(Note(
                "MALFORMED_ENTRY", Severity.WARNING, at - base, at + 1 - base,
                f"{space_name(self.s[at], capital=True)} where BibTeX expects a plain space: "
                "it does not read it as one, so it misreads the entry type, the key or a field "
                "here (citelsp reads it as a space). Replace it with a plain space.",
                key,
            ))  # fmt: skip
        if "=" in key:
            notes.append(Note(
                "MALFORMED_ENTRY", Severity.WARNING, key_start - base, key_end - base,
                f"The key '{key}' contains '=': BibTeX reads it, but biber rejects the entry. "
                "If it was meant as a field, the entry has no key.",
                key,
            ))  # fmt: skip
        seen: set[str] = set()
        for field, name in zip(fields, names, strict=True):
            if name in seen:
                if isinstance(field, Field):
                    start, end = field.name_span.start - base, field.name_span.end - base
                else:
                    start, end = field.name_start, field.name_end
                notes.append(Note(
                    "DUPLICATE_FIELD", Severity.WARNING, start, end,
                    f"Field '{name}' is repeated: the first value is used, as BibTeX does "
                    "(biber uses the last one).",
                    key,
                ))  # fmt: skip
            seen.add(name)
        return tuple(notes)

    def unclosed(self, fields: list[Field | RawField]) -> str:
        message = f"Entry not closed: missing '{self.closing}' before the next entry."
        if fields:
            last = fields[-1]
            message += f" Check the braces and quotes of field '{last.name}'"
            start, end = self.value_span(last)
            value = self.s[start:end]
            message += f"{_ESCAPE_HINT}." if "\\{" in value or "\\}" in value else "."
        return message

    def value(self, name: re.Match[str], pos: int) -> tuple[Field | RawField, int]:
        """One ``#``-joined value expression starting at ``pos``; returns it and the offset
        after it (whitespace skipped). A single delimited operand's span excludes the
        delimiters; a concatenation or macro spans the whole expression."""
        s, n, base = self.s, self.n, self.base
        parts: list[tuple[str, bool]] = []
        expression_start = inner_start = inner_end = pos
        while True:
            if pos >= n:
                raise Malformed(f"Value missing for field '{name.group(0)}'.", n - 1)
            c = s[pos]
            if c == "{" or c == '"':
                end = self.delimited(pos, name.group(0))
                parts.append((s[pos + 1 : end - 1], False))
                inner_start, inner_end = pos + 1, end - 1
            elif (m := _NUMBER.match(s, pos, n) or _MACRO.match(s, pos, n)) is not None:
                end = m.end()
                parts.append((m.group(0), not c.isdigit()))
                inner_start, inner_end = pos, end
            else:
                raise Malformed(f"Value missing for field '{name.group(0)}'.", pos)
            after = self.skip_ws(end)
            if after < n and s[after] == "#":
                pos = self.skip_ws(after + 1)
                continue
            break
        single = len(parts) == 1
        value_start = (inner_start if single else expression_start) - base
        value_end = (inner_end if single else end) - base
        name_start, name_end = name.start() - base, name.end() - base
        if any(is_macro for _, is_macro in parts):
            field: Field | RawField = RawField(
                name.group(0).lower(), tuple(parts), name_start, name_end, value_start, value_end
            )
            self.macro_fields.append(field)
        else:
            field = Field.relative(
                self.span_base, name.group(0).lower(), "".join(text for text, _ in parts),
                value_start, value_end, name_start, name_end,
            )  # fmt: skip
        return field, after

    def delimited(self, pos: int, field: str) -> int:
        """End (exclusive) of the ``{...}`` or ``"..."`` operand opening at ``pos``. Every
        brace counts, escaped or not, and a ``"`` at depth 0 ends a quoted operand even after
        a backslash: BibTeX and biber both read values so."""
        s = self.s
        quoted = s[pos] == '"'
        depth = 0
        for m in (_QUOTED if quoted else _BRACE).finditer(s, pos + 1 if quoted else pos, self.n):
            c = m.group(0)
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0 and not quoted:
                    return m.end()
                if depth < 0:
                    break
            elif depth == 0:
                return m.end()
        closer = '"' if quoted else "}"
        hint = ""
        if s.find("\\{", pos, self.n) != -1 or s.find("\\}", pos, self.n) != -1:
            hint = _ESCAPE_HINT
        raise Malformed(f"Unbalanced braces in field '{field}': missing '{closer}'{hint}.", pos)


def _quote_hint(s: str, value_span: tuple[int, int]) -> str:
    """Why a quoted value ended early: ``"G\\"odel"`` ends at the ``\\"``."""
    end = value_span[1]
    if s[end : end + 1] == '"' and s[end - 1 : end] == "\\":
        return ': \\" ends a quoted value; write {\\"o} or brace the whole value'
    return ""


def _is_work(entry_type: str, names: tuple[str, ...]) -> bool:
    if entry_type in WORK_TYPES:
        return True
    if is_glossary_type(entry_type) or entry_type == "set":  # a set's members are the works
        return False
    return not names or not BIBLIOGRAPHIC_FIELDS.isdisjoint(names)
