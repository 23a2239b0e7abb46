"""BibTeX / BibLaTeX ``.bib`` text → references with exact key and field spans.

The text is cut into chunks at every line that starts with ``@`` (the recovery point
bibtexparser 2 uses too) and each chunk is tokenized on its own, so a broken entry yields
one MALFORMED_ENTRY problem and never swallows its neighbours. The last parse of each file
is remembered: a re-parse reads only the chunks an edit touched and keeps the Reference
objects of the others, moving those after the edit by one assignment (``SpanBase``).

The tokenizer is hand-written rather than bibtexparser's splitter: the splitter reports only
a start line per block, so every key and field position would have to be found again in a
second pass, and the splitter alone takes as long on the 10,000-entry benchmark (0.5 s) as
this whole parse (see ``bench/bib_parse_speed.py``). The grammar is BibTeX's:
``@type{key, name = value, ...}`` or ``@type(key, ...)``; values are ``{...}``, ``"..."``,
numbers or ``@string`` macros, joined with ``#``; braces inside values are kept as written.
"""

from __future__ import annotations

import bisect
import gc
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import NamedTuple

from citelsp.documents.model import (
    Bibliography,
    Field,
    Problem,
    Reference,
    Severity,
    SpanBase,
)
from citelsp.spans import Span

_HEAD = re.compile(r"@[ \t]*([A-Za-z][\w:-]*)?\s*([{(])?")
_WS = re.compile(r"\s*")
_KEY = re.compile(r"[^\s,{}()\"=#%\\]+")
_FIELD_NAME = _KEY
_NUMBER = re.compile(r"\d+")
_MACRO = re.compile(r"[A-Za-z_][^\s,{}()\"=#%\\]*")
_BRACE = re.compile(r"(?<!\\)[{}]")
_BRACE_OR_PAREN = re.compile(r"(?<!\\)[{}()]")
_BLOCK_START = re.compile(r"@[ \t]*[A-Za-z][\w:-]*\s*[{(]")
_QUOTED = re.compile(r'(?<!\\)[{}"]')
_SIMPLE_FIELD = re.compile(
    r"""\s*([^\s,{}()"=#%\\]+)\s*=\s*(?:"""
    r"""\{((?:[^{}]|(?<=\\)[{}]|(?<!\\)\{(?:[^{}]|(?<=\\)[{}])*(?<!\\)\})*)(?<!\\)\}"""
    r"""|"([^"{}]*)"|(\d+)|([A-Za-z_][^\s,{}()"=#%\\]*))\s*"""
)
"""One field whose value is a single operand with at most one level of inner braces: the
common case, read with one regex call. Anything else goes through the general path."""

MONTH_MACROS: dict[str, str] = {
    "jan": "January", "feb": "February", "mar": "March", "apr": "April",
    "may": "May", "jun": "June", "jul": "July", "aug": "August",
    "sep": "September", "oct": "October", "nov": "November", "dec": "December",
}  # fmt: skip


class _Malformed(Exception):
    def __init__(self, message: str, pos: int) -> None:
        super().__init__(message)
        self.message = message
        self.pos = pos


class _RawField(NamedTuple):
    """A field with chunk-relative offsets; ``value`` is None when macros must be expanded."""

    name: str
    value: str | None
    parts: tuple[tuple[str, bool], ...]
    """Operands of the value expression as (text, is_macro); empty for a plain literal."""
    name_start: int
    name_end: int
    value_start: int
    value_end: int


@dataclass(frozen=True, slots=True)
class _RawBlock:
    """One block of a chunk (offsets relative to the chunk): an entry, an ``@string``, a
    parse error, or something that is not a reference."""

    kind: str
    """"entry", "string", "error" or "ignored" (comments, ``@preamble``, stray ``@``)."""
    start: int = 0
    end: int = 0
    entry_type: str = ""
    key: str = ""
    key_start: int = 0
    key_end: int = 0
    fields: tuple[_RawField, ...] = ()
    message: str = ""
    uses_macros: bool = False


class _Built(NamedTuple):
    reference: Reference
    expansions: tuple[str, ...]
    """The values of the macro-valued fields, in field order, when the reference was built."""


class _Chunk(NamedTuple):
    """What one parse learned about a chunk, kept for the next parse of the same file."""

    base: SpanBase
    """The chunk's start in the latest text; every offset below and every span of the
    chunk's references counts from it."""
    length: int
    blocks: tuple[_RawBlock, ...]
    built: tuple[_Built | None, ...]
    """Per block, the Reference built for it (None for other blocks)."""
    references: tuple[Reference, ...]
    strings: bool
    """Whether the chunk defines ``@string`` macros."""
    errors: tuple[_RawBlock, ...]


class _LastParse(NamedTuple):
    text: str
    chunks: list[_Chunk]


_last_parse: dict[str, _LastParse] = {}
"""Per uri, its last parse. A re-parse compares the new text with the last one: the chunks
before the first changed character are kept, those after the last are kept and moved by
the length difference (one assignment to their SpanBase), and only the chunks in between
are read again, reusing any whose text is unchanged. A kept chunk keeps its Reference
objects unless a changed ``@string`` changes their macro expansions."""
_REMEMBERED_FILES = 64


def parse_bibtex(uri: str, text: str) -> Bibliography:
    """Parse a ``.bib`` file. Never raises; every unreadable block becomes a problem.

    References of entries an edit did not touch are the same objects as in the previous
    parse of ``uri``, their spans moved in place: the previous Bibliography reads the new
    offsets too (see ``SpanBase``).
    """
    bib = Bibliography(uri=uri, text=text, source_format="bibtex")
    macros = _Macros()
    last = _last_parse.pop(uri, None)
    with paused_gc():
        if last is None:
            chunks = [_settle(uri, c, macros) for c in _read_chunks(text, 0, len(text), {})]
        else:
            chunks = _reparse(uri, last, text, macros)
        references = bib.references
        for chunk in chunks:
            references += chunk.references
            if chunk.errors:
                bib.problems += _problems(chunk)
    if len(_last_parse) >= _REMEMBERED_FILES:
        _last_parse.pop(next(iter(_last_parse)))
    _last_parse[uri] = _LastParse(text, chunks)
    return bib


def _reparse(uri: str, last: _LastParse, text: str, macros: _Macros) -> list[_Chunk]:
    """The chunks of ``text``, given the last parse: see ``_last_parse``."""
    old, chunks = last.text, last.chunks
    same_start = _common_prefix(old, text)
    same_end = len(old) - _common_suffix(old, text, min(len(old), len(text)) - same_start)
    # Chunks that end before the change keep their text and their boundaries.
    kept_before = max(bisect.bisect_left(chunks, same_start, key=_chunk_start) - 1, 0)
    # Chunks whose whole line, from the line break before it, lies after the change.
    kept_after = bisect.bisect_left(
        chunks,
        True,
        lo=kept_before,
        key=lambda c: old.rfind("\n", 0, c.base.offset) >= same_end,
    )
    before, after = chunks[:kept_before], chunks[kept_after:]
    changed = chunks[kept_before:kept_after]
    for chunk in before:
        if chunk.strings:
            _define_strings(chunk, macros)
    delta = len(text) - len(old)
    start = before[-1].base.offset + before[-1].length if before else 0
    end = after[0].base.offset + delta if after else len(text)
    reusable: dict[str, list[_Chunk]] = {}
    for chunk in changed:
        offset = chunk.base.offset
        reusable.setdefault(old[offset : offset + chunk.length], []).append(chunk)
    if delta:
        for chunk in after:
            chunk.base.offset += delta
    middle = [_settle(uri, c, macros) for c in _read_chunks(text, start, end, reusable)]
    if any(c.strings for c in changed) or any(c.strings for c in middle):
        after = [_settle(uri, c, macros) for c in after]
    return [*before, *middle, *after]


def _chunk_start(chunk: _Chunk) -> int:
    return chunk.base.offset


def _read_chunks(
    text: str, start: int, end: int, reusable: dict[str, list[_Chunk]]
) -> Iterator[_Chunk]:
    """The chunks of ``text[start:end]``, which starts at a chunk or at the text's start;
    a chunk whose text is in ``reusable`` is taken from there (once) and moved."""
    starts = _chunk_starts(text, start, end)
    ends = [*starts[1:], end] if starts else []
    for offset, stop in zip(starts, ends, strict=True):
        chunk_text = text[offset:stop]
        seen = reusable.get(chunk_text)
        if seen:
            chunk = seen.pop()
            chunk.base.offset = offset
            yield chunk
        else:
            blocks = _parse_chunk(chunk_text)
            yield _Chunk(
                base=SpanBase(offset),
                length=stop - offset,
                blocks=blocks,
                built=(None,) * len(blocks),
                references=(),
                strings=any(b.kind == "string" for b in blocks),
                errors=tuple(b for b in blocks if b.kind == "error"),
            )


def _settle(uri: str, chunk: _Chunk, macros: _Macros) -> _Chunk:
    """Define the chunk's ``@string`` macros and build the references that are new or whose
    macro expansions changed; the chunk itself when nothing changed."""
    built: list[_Built | None] = []
    changed = False
    for block, known in zip(chunk.blocks, chunk.built, strict=True):
        kind = block.kind
        if kind == "entry":
            expansions = (
                tuple(macros.expand(f.parts) for f in block.fields if f.value is None)
                if block.uses_macros
                else ()
            )
            if known is None or known.expansions != expansions:
                known = _Built(_reference(uri, block, chunk.base, expansions), expansions)
                changed = True
        elif kind == "string":
            _define(block, macros)
        built.append(known)
    if not changed:
        return chunk
    return chunk._replace(
        built=tuple(built), references=tuple(b.reference for b in built if b is not None)
    )


def _define_strings(chunk: _Chunk, macros: _Macros) -> None:
    for block in chunk.blocks:
        if block.kind == "string":
            _define(block, macros)


def _define(block: _RawBlock, macros: _Macros) -> None:
    for f in block.fields:
        macros.define(f.name, f.value if f.value is not None else macros.expand(f.parts))


def _problems(chunk: _Chunk) -> list[Problem]:
    offset = chunk.base.offset
    return [
        Problem(
            code="MALFORMED_ENTRY",
            span=Span(offset + block.start, offset + block.end),
            message=block.message,
            severity=Severity.ERROR,
            key=block.key or None,
        )
        for block in chunk.errors
    ]


_COMPARE_BLOCK = 1 << 14


def _common_prefix(a: str, b: str) -> int:
    """Length of the common prefix, compared a block at a time (a 2 MB library in < 1 ms)."""
    n, i, step = min(len(a), len(b)), 0, _COMPARE_BLOCK
    while step:
        j = min(i + step, n)
        if i < j and a[i:j] == b[i:j]:
            i = j
        else:
            step //= 2
    return i


def _common_suffix(a: str, b: str, limit: int) -> int:
    """Length of the common suffix, at most ``limit``."""
    la, lb, i, step = len(a), len(b), 0, _COMPARE_BLOCK
    while step:
        j = min(i + step, limit)
        if i < j and a[la - j : la - i] == b[lb - j : lb - i]:
            i = j
        else:
            step //= 2
    return i


@contextmanager
def paused_gc() -> Iterator[None]:
    """Building a large library allocates hundreds of thousands of acyclic objects; letting
    the cyclic collector rescan the heap meanwhile doubles the parse time. The CSL parser
    uses it too."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _chunk_starts(text: str, start: int, end: int) -> list[int]:
    """Offsets in ``[start, end)`` of every ``@`` that starts a line (after spaces or tabs):
    the chunk starts."""
    starts = []
    find = text.find
    at = find("@", start, end)
    while at != -1:
        line_start = text.rfind("\n", 0, at) + 1
        if line_start == at or not text[line_start:at].strip(" \t"):
            starts.append(at)
        at = find("@", at + 1, end)
    return starts


class _Macros:
    """``@string`` definitions so far (month names predefined) and memoized expansions."""

    def __init__(self) -> None:
        self._values = dict(MONTH_MACROS)
        self._expansions: dict[tuple[tuple[str, bool], ...], str] = {}

    def define(self, name: str, value: str) -> None:
        self._values[name] = value
        self._expansions.clear()

    def expand(self, parts: tuple[tuple[str, bool], ...]) -> str:
        """Join ``#`` operands; an undefined macro stays as its name, as bibtexparser does."""
        value = self._expansions.get(parts)
        if value is None:
            get = self._values.get
            value = "".join(
                get(text.lower(), text) if is_macro else text for text, is_macro in parts
            )
            self._expansions[parts] = value
        return value


def _reference(
    uri: str, block: _RawBlock, base: SpanBase, expansions: tuple[str, ...]
) -> Reference:
    expanded = iter(expansions)
    fields: dict[str, Field] = {}
    relative_field = Field.relative
    for name, value, _, name_start, name_end, value_start, value_end in block.fields:
        if value is None:
            value = next(expanded)
        if name not in fields:  # BibTeX keeps the first of repeated fields
            fields[name] = relative_field(
                base, name, value, value_start, value_end, name_start, name_end
            )
    return Reference.relative(
        base,
        block.key,
        uri,
        "bibtex",
        block.entry_type,
        block.key_start,
        block.key_end,
        block.start,
        block.end,
        fields,
    )


def _parse_chunk(chunk: str) -> tuple[_RawBlock, ...]:
    """The blocks of a chunk: the one its line-start ``@`` opens, then any further
    ``@type{`` on the lines it spans. An error ends the chunk: where the broken block ends
    is unknown, and the next line-start ``@`` is where reading resumes."""
    blocks = [_parse_block(chunk, 0)]
    while blocks[-1].kind != "error":
        head = _BLOCK_START.search(chunk, blocks[-1].end)
        if head is None:
            break
        blocks.append(_parse_block(chunk, head.start()))
    return tuple(blocks)


def _parse_block(chunk: str, start: int) -> _RawBlock:
    try:
        return _Tokenizer(chunk).block(start)
    except _Malformed as e:
        line_end = chunk.find("\n", max(e.pos, start))
        end = min(len(chunk) if line_end == -1 else line_end, len(chunk.rstrip()))
        head = _HEAD.match(chunk, start)
        key = None
        if head.group(2):
            key = _KEY.match(chunk, _WS.match(chunk, head.end()).end())
        return _RawBlock(
            kind="error",
            start=start,
            end=max(end, start + 1),
            key=key.group(0) if key else "",
            message=e.message,
        )


class _Tokenizer:
    """Reads one block of a chunk, from its ``@``; text between blocks is comment."""

    def __init__(self, chunk: str) -> None:
        self.s = chunk
        self.closing = "}"

    def skip_ws(self, pos: int) -> int:
        return _WS.match(self.s, pos).end()

    def block(self, start: int) -> _RawBlock:
        s = self.s
        head = _HEAD.match(s, start)
        entry_type, opener = head.group(1), head.group(2)
        if entry_type is None and opener is None:
            return _RawBlock(kind="ignored", start=start, end=head.end())  # a stray "@"
        if entry_type is None:
            raise _Malformed("Entry type missing after '@'.", head.end() - 1)
        entry_type = entry_type.lower()
        if entry_type == "comment" and opener is None:
            return _RawBlock(kind="ignored", start=start, end=len(s))  # "@comment" line
        if opener is None:
            raise _Malformed(f"Expected '{{' or '(' after '@{head.group(1)}'.", head.end(1))
        self.closing = ")" if opener == "(" else "}"
        if entry_type in ("comment", "preamble"):
            return _RawBlock(kind="ignored", start=start, end=self.skip_group(head.end() - 1))
        pos = self.skip_ws(head.end())
        if entry_type == "string":
            fields, end = self.fields(pos)
            return _RawBlock(
                kind="string", start=start, end=end, fields=fields, uses_macros=_uses(fields)
            )
        return self.entry(start, entry_type, pos)

    def skip_group(self, pos: int) -> int:
        """End of the comment or preamble whose delimiter opens at ``pos``: its closing
        delimiter at brace depth 0, or the chunk's end when there is none."""
        depth = 0
        for m in _BRACE_OR_PAREN.finditer(self.s, pos + 1):
            c = m.group(0)
            if depth == 0 and c == self.closing:
                return m.end()
            if c == "{":
                depth += 1
            elif c == "}":
                depth = max(depth - 1, 0)
        return len(self.s)

    def entry(self, start: int, entry_type: str, pos: int) -> _RawBlock:
        s = self.s
        key = _KEY.match(s, pos)
        if key is None:
            raise _Malformed(f"Citation key missing in @{entry_type} entry.", pos)
        after = self.skip_ws(key.end())
        if after < len(s) and s[after] == "=":
            raise _Malformed(f"Citation key missing in @{entry_type} entry.", key.start())
        if after < len(s) and s[after] == self.closing:
            fields, end = (), after + 1
        elif after < len(s) and s[after] == ",":
            fields, end = self.fields(after + 1)
        else:
            raise _Malformed(f"Expected ',' after citation key '{key.group(0)}'.", after)
        return _RawBlock(
            kind="entry",
            start=start,
            entry_type=entry_type,
            key=key.group(0),
            key_start=key.start(),
            key_end=key.end(),
            end=end,
            fields=fields,
            uses_macros=_uses(fields),
        )

    def fields(self, pos: int) -> tuple[tuple[_RawField, ...], int]:
        """``name = value`` pairs up to the closing delimiter; returns them and the end."""
        s, closing, n = self.s, self.closing, len(self.s)
        out: list[_RawField] = []
        while True:
            simple = _SIMPLE_FIELD.match(s, pos)
            if simple is not None and (after := simple.end()) < n and s[after] in (",", closing):
                out.append(_simple_field(simple))
                if s[after] == closing:
                    return tuple(out), after + 1
                pos = after + 1
                continue
            pos = self.skip_ws(pos)
            if pos >= n:
                raise _Malformed(self.unclosed(out), n - 1)
            if s[pos] == closing:
                return tuple(out), pos + 1
            name = _FIELD_NAME.match(s, pos)
            if name is None:
                raise _Malformed(f"Expected a field name, found '{s[pos]}'.", pos)
            pos = self.skip_ws(name.end())
            if pos >= n or s[pos] != "=":
                raise _Malformed(f"Expected '=' after field name '{name.group(0)}'.", pos)
            field, pos = self.value(name, self.skip_ws(pos + 1))
            out.append(field)
            if pos >= n:
                raise _Malformed(self.unclosed(out), n - 1)
            if s[pos] == ",":
                pos += 1
            elif s[pos] != closing:
                raise _Malformed(f"Expected ',' or '{closing}' after field '{name.group(0)}'.", pos)

    def unclosed(self, fields: list[_RawField]) -> str:
        message = f"Entry not closed: missing '{self.closing}' before the next entry."
        if fields:
            message += f" Check the braces and quotes of field '{fields[-1].name}'."
        return message

    def value(self, name: re.Match[str], pos: int) -> tuple[_RawField, int]:
        """One ``#``-joined value expression starting at ``pos``; returns it and the offset
        after it (whitespace skipped). A single delimited operand's span excludes the
        delimiters; a concatenation or macro spans the whole expression."""
        s, n = self.s, len(self.s)
        parts: list[tuple[str, bool]] = []
        expression_start = inner_start = inner_end = pos
        while True:
            if pos >= n:
                raise _Malformed(f"Value missing for field '{name.group(0)}'.", n - 1)
            c = s[pos]
            if c == "{" or c == '"':
                end = self.delimited(pos, name.group(0))
                parts.append((s[pos + 1 : end - 1], False))
                inner_start, inner_end = pos + 1, end - 1
            elif (m := _NUMBER.match(s, pos) or _MACRO.match(s, pos)) is not None:
                end = m.end()
                parts.append((m.group(0), not c.isdigit()))
                inner_start, inner_end = pos, end
            else:
                raise _Malformed(f"Value missing for field '{name.group(0)}'.", pos)
            after = self.skip_ws(end)
            if after < n and s[after] == "#":
                pos = self.skip_ws(after + 1)
                continue
            break
        single = len(parts) == 1
        literal = all(not is_macro for _, is_macro in parts)
        field = _RawField(
            name=name.group(0).lower(),
            value="".join(text for text, _ in parts) if literal else None,
            parts=() if literal else tuple(parts),
            name_start=name.start(),
            name_end=name.end(),
            value_start=inner_start if single else expression_start,
            value_end=inner_end if single else end,
        )
        return field, after

    def delimited(self, pos: int, field: str) -> int:
        """End (exclusive) of the ``{...}`` or ``"..."`` operand opening at ``pos``."""
        s = self.s
        quoted = s[pos] == '"'
        depth = 0
        for m in (_QUOTED if quoted else _BRACE).finditer(s, pos + 1 if quoted else pos):
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
        raise _Malformed(f"Unbalanced braces in field '{field}': missing '{closer}'.", pos)


def _simple_field(m: re.Match[str]) -> _RawField:
    """A field matched by ``_SIMPLE_FIELD``: group 2 braced, 3 quoted, 4 number, 5 macro."""
    group = m.lastindex
    text = m.group(group)
    start, end = m.span(group)
    is_macro = group == 5
    return _RawField(
        m.group(1).lower(),
        None if is_macro else text,
        ((text, True),) if is_macro else (),
        m.start(1),
        m.end(1),
        start,
        end,
    )


def _uses(fields: tuple[_RawField, ...]) -> bool:
    return any(f.value is None for f in fields)
