"""BibTeX / BibLaTeX ``.bib`` text → references with exact key and field spans.

How a file is read. Where BibTeX 0.99d and biber 2.18 agree, as they do:

- blocks are read one after the other; text between them is ignored, and an entry may follow
  other text on the same line. ``@`` and the entry type may be on separate lines
  (``@\\nmisc{…}``, as in ``btxdoc.bib``);
- every brace counts, escaped or not: ``{The set \\{x}`` is unbalanced, ``{First line\\\\}``
  is closed. In ``"…"`` a ``"`` at brace depth 0 ends the value, so ``"G\\"odel"`` is an
  error (write ``"G{\\"o}del"``);
- a braced value may contain a line that starts with ``@``;
- an undefined macro reads as empty, with an UNDEFINED_MACRO warning; ``jan``…``dec`` are
  predefined; macro names ignore case; ``@string`` macros apply from their definition on,
  and a file can be given the macros of the files read before it (``macros=``);
- keys that differ only in case are one key to BibTeX and two to biber: the local checks
  warn (DUPLICATE_KEY).

Where they differ, the choice made here:

- a repeated field: the first value is used (BibTeX; biber keeps the last), with a
  DUPLICATE_FIELD warning;
- ``%`` starts a comment to the end of the line between blocks and between the tokens of an
  entry (biber; BibTeX has no comments, so ``% @article{x, …}`` is an entry to it and a
  ``%`` line inside an entry an error). Inside a value ``%`` is a character;
- a key containing ``=`` is read (BibTeX; biber rejects the entry), with a MALFORMED_ENTRY
  warning;
- a Unicode space between the tokens of an entry (a no-break space before ``=`` or after
  ``@misc``, an ideographic space as indentation) is read as a space, with a MALFORMED_ENTRY
  warning:
  BibTeX 0.99d reads ``title<U+00A0>`` as the name of another field and drops the title,
  and stops with an error at one after a value. In a value it is text;
- after an unreadable block, reading resumes at the next line that starts with ``@``
  (BibTeX and biber resume at the next ``@`` anywhere). A value never runs past a line that
  starts another entry (``@type{`` or ``@type(``): an unclosed brace costs one entry, never
  the rest of the file;
- entries that are not works are left out: bib2gls glossary types (``@entry``, ``@index``,
  ``@symbol``, ``@abbreviation``, ``@dual…``), biblatex ``@xdata``, and entries none of whose
  fields is bibliographic (bib2gls' own types, ``@IEEEtranBSTCTL``, abnTeX2 options).

Incremental re-parse: a BibtexBibliography carries what its parse learned (``chunks``); the
caller passes it back as ``previous`` with the next text of the same document. Only the
chunks an edit touched are read again; the Reference objects of the others are kept and
those after the edit moved by one assignment (``SpanBase``). A chunk is a run of blocks from
a line that starts with ``@`` (or the file's start) to the next such line after its last
block; it records how far its reading looked, so an edit there re-reads it.

The tokenizer (``bibtex_blocks``) is hand-written rather than bibtexparser's splitter: the
splitter reports only a start line per block, so every key and field position would have to
be found again, and it alone takes as long as this whole parse (``bench/bib_parse_speed.py``).
"""

from __future__ import annotations

import bisect
import gc
import itertools
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import NamedTuple

from citelsp.documents import crossref
from citelsp.documents.bibtex_blocks import Note, RawBlock, read_block
from citelsp.documents.model import (
    Bibliography,
    Field,
    Problem,
    Reference,
    Severity,
    SpanBase,
    key_list,
)
from citelsp.spans import Span

_STRONG_HEAD = re.compile(r"@[ \t]*[A-Za-z][\w:.+-]*[ \t]*[{(]")
"""On a line that starts with it, an entry: no value reads past that line."""
_INLINE = re.compile(r"@\s*[A-Za-z][\w:.+-]*\s*[{(]|%")
"""A block start after other text (its ``@`` may end a line, as in ``btxdoc.bib``), or a
``%`` comment that hides the rest of the line."""
_LINE_BREAK = re.compile(r"[\n\r]")

MONTH_MACROS: dict[str, str] = {
    "jan": "January", "feb": "February", "mar": "March", "apr": "April",
    "may": "May", "jun": "June", "jul": "July", "aug": "August",
    "sep": "September", "oct": "October", "nov": "November", "dec": "December",
}  # fmt: skip


class _Expansion(NamedTuple):
    value: str
    undefined: tuple[str, ...]
    external: tuple[str, ...]
    """Names taken from the macros the file was given."""
    refused: int = 0
    """The length it would have had, when that was over its block's allowance (then
    ``value`` is empty); 0 otherwise."""


EXPANSION_RATIO = 16
"""An entry's macro-valued fields, or an ``@string``'s definitions, may expand to at most this
many times the length of the block's own text. Real expansions are shorter than their block
(a journal's name, a month); macros defined from macros multiply themselves (1.46 MB of input
once became a 439 MB report), and under this bound no file expands past 16 times its size."""


class _Built(NamedTuple):
    reference: Reference
    expansions: tuple[_Expansion, ...]
    """The expansions of the macro-valued fields, in field order, when it was built."""
    notes: tuple[Note, ...]


@dataclass(slots=True, eq=False)
class _Chunk:
    """What one parse learned about a chunk, kept for the next parse of the same document.
    What depends on macros (from ``built`` on) is updated in place by ``_settle``: a chunk
    belongs to the latest parse only (the previous one gives up its ``chunks``)."""

    base: SpanBase
    """The chunk's start in the latest text; every offset below and every span of the
    chunk's references counts from it."""
    length: int
    read: int
    """How far reading looked: the chunk is read again when an edit starts before this."""
    head: int
    """Length up to the first line after its start that starts with ``@``: reuse key."""
    tail: int
    """Where its last block ends (at least 1): it ends at the first line-start ``@`` after."""
    strong: bool
    """Whether it starts at a line that starts an entry (no earlier chunk reads past it)."""
    blocks: tuple[RawBlock, ...]
    strings: bool
    """Whether the chunk defines ``@string`` macros."""
    notes: tuple[Note, ...]
    """Problems found while reading the blocks (errors, repeated fields, keys with ``=``)."""
    built: list[_Built | None]
    """Per block, the Reference built for it (None for other blocks)."""
    references: tuple[Reference, ...] = ()
    macro_notes: tuple[Note, ...] = ()
    """Problems of macro expansion (undefined macros), as of the last settle."""
    external: frozenset[str] = frozenset()
    undefined: frozenset[str] = frozenset()
    crossrefs: bool = False
    """Whether an entry of the chunk names a ``crossref`` parent."""
    sets: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Its biblatex ``@set`` entries: (key, member keys)."""


class EntryDelta(NamedTuple):
    """The entries an incremental parse replaced: every other entry of the parse it started
    from is the same object in this one. Indexes over entries update by it instead of
    comparing the whole library."""

    base: int
    """The ``version`` of the parse it starts from."""
    gone: tuple[Reference, ...]
    added: tuple[Reference, ...]


_VERSIONS = itertools.count(1)


@dataclass(eq=False)
class BibtexBibliography(Bibliography):
    """A parsed ``.bib`` file, with its macros and what the next parse of it can reuse."""

    macros: dict[str, str] = field(default_factory=dict)
    """The ``@string`` macros this file defines (names lowercased), for the files after it."""
    incoming: dict[str, str] = field(default_factory=dict)
    """The macros it was given (defined by the files before it)."""
    external: dict[str, str] = field(default_factory=dict)
    """The given macros it used, name → value."""
    undefined: frozenset[str] = frozenset()
    """Macro names it used that nothing defined."""
    chunks: list[_Chunk] | None = field(default=None, repr=False)
    """For the next parse of this document; None once a re-parse has used it."""
    version: int = field(default_factory=lambda: next(_VERSIONS))
    """Which parse this is (unique in the process)."""
    delta: EntryDelta | None = None
    """What changed since the parse it was made from, when only the entries the edit
    touched were built again (None after a full parse, or when macros or crossref parents
    changed entries elsewhere)."""


def parse_bibtex(
    uri: str,
    text: str,
    *,
    previous: BibtexBibliography | None = None,
    macros: Mapping[str, str] | None = None,
) -> BibtexBibliography:
    """Parse a ``.bib`` file. Never raises; every unreadable block becomes a problem.

    ``macros`` are ``@string`` macros defined before this file (by the bibliographies listed
    before it). With ``previous``, the last parse of the same document, only what the edit
    touched is read again: references of untouched entries are the same objects, their spans
    moved in place, so only the latest snapshot is meant to be read (see ``SpanBase``). A
    previous parse can seed one re-parse; it is spent after that.
    """
    incoming = {name.lower(): value for name, value in (macros or {}).items()}
    bib = BibtexBibliography(uri=uri, text=text, source_format="bibtex", incoming=incoming)
    state = _Macros(incoming)
    old = previous.chunks if previous is not None and previous.uri == uri else None
    delta: EntryDelta | None = None
    with paused_gc():
        if old:
            previous.chunks = None
            chunks, replaced = _reparse(uri, previous.text, old, text, state,
                                        previous.incoming != incoming)
            if replaced is not None:
                delta = EntryDelta(previous.version, *replaced)
        else:
            chunks = []
            for chunk in _Reader(text).chunks(0):  # each settled while its text is in cache
                _settle(uri, chunk, state)
                chunks.append(chunk)
        references = bib.references
        external: set[str] = set()
        undefined: set[str] = set()
        for chunk in chunks:
            references += chunk.references
            if chunk.sets:
                for key, members in chunk.sets:
                    bib.sets.setdefault(key, members)
            if chunk.notes or chunk.macro_notes:
                bib.problems += _problems(chunk)
            if chunk.external:
                external |= chunk.external
            if chunk.undefined:
                undefined |= chunk.undefined
        if any(c.crossrefs for c in chunks):
            linked = _link_crossrefs(chunks, references)
            if linked is not references:
                bib.references, delta = linked, None
    bib.delta = delta
    bib.macros = state.defined
    if not references:
        bib.other_types = tuple(dict.fromkeys(b.entry_type or b.kind for c in chunks
                                              for b in c.blocks if b.kind in ("data", "string")))
    bib.external = {name: incoming[name] for name in sorted(external)}
    bib.undefined = frozenset(undefined)
    bib.chunks = chunks
    return bib


def _reparse(
    uri: str, old: str, chunks: list[_Chunk], text: str, macros: _Macros, resettle: bool
) -> tuple[list[_Chunk], tuple[tuple[Reference, ...], tuple[Reference, ...]] | None]:
    """The chunks of ``text`` given those of ``old``: the chunks whose reading ended before
    the first changed character are kept; from there chunks are read again (reusing any
    whose text is unchanged) until a chunk boundary lands on the start of an old chunk after
    the last changed character, from which on the old chunks are kept, moved. Also the
    references replaced and those built instead, when the entries outside the chunks read
    again are the same objects (their macros did not change)."""
    same_start = _common_prefix(old, text)
    same_end = len(old) - _common_suffix(old, text, min(len(old), len(text)) - same_start)
    delta = len(text) - len(old)
    first = _first_touched(chunks, same_start)
    before = chunks[:first]
    for chunk in before:
        if resettle:
            _settle(uri, chunk, macros)
        elif chunk.strings:
            _define_strings(chunk, macros)
    after = bisect.bisect_left(chunks, same_end, lo=first + 1, key=_chunk_start)
    pool: dict[str, list[_Chunk]] = {}
    replaced = [r for chunk in chunks[first:after] for r in chunk.references]
    pooled = after
    for chunk in chunks[first:after]:
        start = chunk.base.offset
        pool.setdefault(old[start : start + chunk.head], []).append(chunk)
    reader = _Reader(text)
    middle: list[_Chunk] = []
    pos = chunks[first].base.offset
    landed = len(chunks)
    while pos < len(text) or not (middle or before):
        while after < len(chunks) and chunks[after].base.offset + delta < pos:
            after += 1
        if after < len(chunks) and chunks[after].base.offset + delta == pos and middle:
            landed = after
            break
        chunk = _reused(pool, old, reader, pos) or reader.chunk(pos)
        _settle(uri, chunk, macros)
        middle.append(chunk)
        pos += chunk.length
        if not chunk.length:
            break
    kept = chunks[landed:]
    if delta:
        for chunk in kept:
            chunk.base.offset += delta
    strings_changed = any(c.strings for c in chunks[first:landed]) or any(
        c.strings for c in middle
    )
    for chunk in kept:
        if resettle or strings_changed:
            _settle(uri, chunk, macros)
        elif chunk.strings:
            _define_strings(chunk, macros)
    if resettle or strings_changed:
        return [*before, *middle, *kept], None
    replaced += [r for chunk in chunks[pooled:landed] for r in chunk.references]
    built = [r for chunk in middle for r in chunk.references]
    old_ids, new_ids = set(map(id, replaced)), set(map(id, built))
    return [*before, *middle, *kept], (tuple(r for r in replaced if id(r) not in new_ids),
                                       tuple(r for r in built if id(r) not in old_ids))


def _first_touched(chunks: list[_Chunk], same_start: int) -> int:
    """Index of the first chunk to read again: the one holding the first changed character,
    or an earlier one whose reading looked past it (back to a chunk that starts an entry)."""
    i = max(bisect.bisect_left(chunks, same_start, key=_chunk_start) - 1, 0)
    first = i
    for j in range(i - 1, -1, -1):
        chunk = chunks[j]
        if chunk.base.offset + chunk.read > same_start:
            first = j
        if chunk.strong:
            break
    return first


def _reused(pool: dict[str, list[_Chunk]], old: str, reader: _Reader, pos: int) -> _Chunk | None:
    """An old chunk whose text, as far as its reading looked, is the text at ``pos``."""
    if not pool:
        return None
    text = reader.text
    candidates = pool.get(text[pos : reader.line_at(pos + 1)])
    if not candidates:
        return None
    for i, chunk in enumerate(candidates):
        start, read, length = chunk.base.offset, chunk.read, chunk.length
        if start + read > len(old):
            # It ran to the old text's end: the same if its text recurs and, read here, it
            # would end where the next line starts with "@".
            if read > length + 1 or _ends_in_error(chunk):
                continue
            if old[start : start + length] != text[pos : pos + length]:
                continue
            if reader.line_at(pos + chunk.tail) != pos + length:
                continue
        elif old[start : start + read] != text[pos : pos + read]:
            continue
        del candidates[i]
        chunk.base.offset = pos
        return chunk
    return None


def _ends_in_error(chunk: _Chunk) -> bool:
    return bool(chunk.blocks) and chunk.blocks[-1].kind == "error"


def _chunk_start(chunk: _Chunk) -> int:
    return chunk.base.offset


class _Reader:
    """Cuts a text into chunks, one after the other. The next line-start ``@`` and the next
    entry line are searched once and remembered while they lie ahead, so reading a text
    takes time linear in its length, whatever its lines hold."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._line = (-1, -1)
        self._strong = (-1, -1, -1)

    def chunks(self, pos: int) -> Iterator[_Chunk]:
        while pos < len(self.text) or pos == 0:
            chunk = self.chunk(pos)
            yield chunk
            if not chunk.length:
                return
            pos += chunk.length

    def line_at(self, pos: int) -> int:
        """The first ``@`` at or after ``pos`` that starts a line (the text's end if none)."""
        lo, found = self._line
        if lo <= pos <= found:
            return found
        found = self._next_line_at(pos)
        self._line = (pos, found)
        return found

    def _next_line_at(self, pos: int) -> int:
        text, find = self.text, self.text.find
        at = find("@", pos)
        while at != -1:
            i = at
            while i and text[i - 1] in " \t":
                i -= 1
            if not i or text[i - 1] in "\n\r":
                return at
            at = find("@", at + 1)
        return len(text)

    def entry_line_after(self, pos: int) -> tuple[int, int]:
        """The ``@`` of the first line at or after ``pos`` that starts an entry, and the end
        of that entry's head (the text's end, and one past it, if none)."""
        lo, at, end = self._strong
        if lo <= pos <= at:
            return at, end
        text, match = self.text, _STRONG_HEAD.match
        at = self.line_at(pos)
        while at < len(text) and (m := match(text, at)) is None:
            at = self._next_line_at(at + 1)
        end = m.end() if at < len(text) else len(text) + 1
        self._strong = (pos, at, end)
        return at, end

    def inline_block(self, pos: int, limit: int) -> int | None:
        """The first ``@type{`` in ``[pos, limit)`` that no ``%`` comment hides."""
        text = self.text
        while True:
            m = _INLINE.search(text, pos, limit)
            if m is None:
                return None
            if m.group(0) != "%":
                return m.start()
            line_break = _LINE_BREAK.search(text, m.end(), limit)
            if line_break is None:
                return None
            pos = line_break.end()

    def chunk(self, start: int) -> _Chunk:
        """Read the chunk starting at ``start`` (a line-start ``@`` or the text's start)."""
        text = self.text
        head = self.line_at(start + 1)
        end = head
        read = tail = start + 1
        base = SpanBase(start)
        blocks: list[RawBlock] = []
        at = start if text.startswith("@", start) else self.inline_block(start, end)
        while at is not None:
            limit, limit_end = self.entry_line_after(at + 1)
            block = read_block(text, at, limit, base)
            if block.kind == "error":
                read = max(read, limit_end)
                end = self.line_at(at + 1)
                if block.end > end - start:
                    block = _clamped(block, end - start)
                blocks.append(block)
                break
            blocks.append(block)
            block_end = tail = start + block.end
            read = max(read, block_end)
            if block_end > end:
                end = self.line_at(block_end)
            at = self.inline_block(block_end, end)
        read = max(read, end + 1)  # one past the text's end: more text would change it
        notes = [n for b in blocks for n in _notes(b)]
        return _Chunk(  # positional, as it is built for every block of a library
            base, end - start, read - start, head - start, max(tail - start, 1),
            _STRONG_HEAD.match(text, start) is not None, tuple(blocks),
            any(b.kind == "string" for b in blocks), tuple(notes), [None] * len(blocks),
        )  # fmt: skip


def _notes(block: RawBlock) -> tuple[Note, ...]:
    if block.kind == "error":
        return (Note("MALFORMED_ENTRY", Severity.ERROR, block.start, block.end, block.message,
                     block.key or None),)  # fmt: skip
    return block.notes


def _clamped(block: RawBlock, end: int) -> RawBlock:
    return RawBlock(kind=block.kind, start=block.start, end=max(end, block.start + 1),
                    key=block.key, message=block.message)  # fmt: skip


def _settle(uri: str, chunk: _Chunk, macros: _Macros) -> None:
    """Define the chunk's ``@string`` macros and build the references that are new or whose
    macro expansions changed."""
    built = chunk.built
    changed = False
    known_sets = bool(chunk.sets)  # a set's members name no macros: read once
    sets: list[tuple[str, tuple[str, ...]]] = []
    string_notes: list[Note] = []
    external: set[str] = set()
    undefined: set[str] = set()
    expands = False
    for i, block in enumerate(chunk.blocks):
        kind = block.kind
        if kind == "entry":
            expansions: tuple[_Expansion, ...] = ()
            if block.macro_fields:
                expands = True
                expansions = macros.expand_all(block)
            known = built[i]
            if known is None or known.expansions != expansions:
                built[i] = _build(uri, block, chunk.base, expansions)
                changed = True
        elif kind == "string":
            expands = True
            string_notes += _define(block, macros, external, undefined)
        elif kind == "data" and block.entry_type == "set" and not known_sets:
            sets.append((block.key, _members(block)))
    if sets:
        chunk.sets = tuple(sets)
    if changed:
        chunk.references = tuple(b.reference for b in built if b is not None)
        chunk.crossrefs = any("crossref" in r.fields for r in chunk.references)
    if not expands:  # nothing here depends on macros
        return
    macro_notes: list[Note] = []
    for b in built:
        if b is not None and b.expansions:
            macro_notes += b.notes
            for e in b.expansions:
                if e.external:
                    external.update(e.external)
                if e.undefined:
                    undefined.update(e.undefined)
    chunk.macro_notes = tuple(macro_notes + string_notes)
    chunk.external = frozenset(external)
    chunk.undefined = frozenset(undefined)


def _link_crossrefs(chunks: list[_Chunk], references: list[Reference]) -> list[Reference]:
    """The references with what their crossref parents give them (``crossref.link``); the
    chunks keep the new objects, so the next parse starts from them."""
    linked = [c for c in chunks if c.crossrefs]
    changed = crossref.link(references, [r for c in linked for r in c.references
                                         if "crossref" in r.fields])
    if not changed:
        return references
    for chunk in linked:
        chunk.built = [b if b is None or b.reference not in changed
                       else b._replace(reference=changed[b.reference]) for b in chunk.built]
        chunk.references = tuple(b.reference for b in chunk.built if b is not None)
    return [changed.get(r, r) for r in references]


def _members(block: RawBlock) -> tuple[str, ...]:
    """The keys a ``@set`` block's ``entryset`` lists."""
    for name, f in zip(block.names, block.fields, strict=True):
        if name == "entryset" and isinstance(f, Field):
            return key_list(f.value)
    return ()


def _define_strings(chunk: _Chunk, macros: _Macros) -> None:
    for block in chunk.blocks:
        if block.kind == "string":
            _define(block, macros, set(), set())


def _define(block: RawBlock, macros: _Macros, external: set[str], undefined: set[str]
            ) -> list[Note]:
    notes = []
    expansions = iter(macros.expand_all(block))
    for f in block.fields:
        if isinstance(f, Field):
            macros.define(f.name, f.value)
            continue
        expansion = next(expansions)
        external.update(expansion.external)
        undefined.update(expansion.undefined)
        notes += _expansion_notes(f.value_start, f.value_end, expansion, None)
        macros.define(f.name, expansion.value)
    return notes


def _expansion_notes(start: int, end: int, expansion: _Expansion, key: str | None
                     ) -> list[Note]:
    notes = [
        Note("UNDEFINED_MACRO", Severity.WARNING, start, end,
             f"Macro '{name}' is not defined: it reads as empty, as in BibTeX and biber.", key)
        for name in expansion.undefined
    ]  # fmt: skip
    if expansion.refused:
        notes.append(Note(
            "MALFORMED_ENTRY", Severity.ERROR, start, end,
            f"This value expands through @string macros to {expansion.refused:,} characters, "
            f"more than {EXPANSION_RATIO} times the length of its "
            f"{'entry' if key else '@string'}: it reads as empty (macros that repeat macros "
            "multiply the file).", key))  # fmt: skip
    return notes


def _problems(chunk: _Chunk) -> list[Problem]:
    offset = chunk.base.offset
    notes = chunk.notes + chunk.macro_notes if chunk.macro_notes else chunk.notes
    return [
        Problem(code=n.code, span=Span(offset + n.start, offset + n.end), message=n.message,
                severity=n.severity, key=n.key)
        for n in sorted(notes, key=lambda n: n.start)
    ]  # fmt: skip


class _Macros:
    """``@string`` definitions so far, the macros given from earlier files, the month
    names, and memoized expansions."""

    def __init__(self, incoming: dict[str, str]) -> None:
        self.incoming = incoming
        self.defined: dict[str, str] = {}
        self._expansions: dict[tuple[tuple[str, bool], ...], _Expansion] = {}

    def define(self, name: str, value: str) -> None:
        self.defined[name] = value
        self._expansions.clear()

    def expand_all(self, block: RawBlock) -> tuple[_Expansion, ...]:
        """The expansions of a block's macro-valued fields, within the block's allowance
        (``EXPANSION_RATIO``): one that would pass it is refused, and reads as empty."""
        room = EXPANSION_RATIO * (block.end - block.start)
        expansions = []
        for f in block.macro_fields:
            expansion = self.expand(f.parts, room)
            room -= len(expansion.value)
            expansions.append(expansion)
        return tuple(expansions)

    def expand(self, parts: tuple[tuple[str, bool], ...], room: int) -> _Expansion:
        """Join ``#`` operands; an undefined macro reads as empty. Nothing longer than
        ``room`` is joined (the join itself could fill memory)."""
        expansion = self._expansions.get(parts)
        if expansion is None:
            values: list[str] = []
            undefined: list[str] = []
            external: list[str] = []
            for text, is_macro in parts:
                if not is_macro:
                    values.append(text)
                    continue
                name = text.lower()
                if name in self.defined:
                    values.append(self.defined[name])
                elif name in self.incoming:
                    values.append(self.incoming[name])
                    external.append(name)
                elif name in MONTH_MACROS:
                    values.append(MONTH_MACROS[name])
                else:
                    undefined.append(name)
            length = sum(map(len, values))
            if length > room:  # not memoized: another block may have the room
                return _Expansion("", tuple(undefined), tuple(external), length)
            expansion = _Expansion("".join(values), tuple(undefined), tuple(external))
            self._expansions[parts] = expansion
        elif len(expansion.value) > room:
            return expansion._replace(value="", refused=len(expansion.value))
        return expansion


def _build(uri: str, block: RawBlock, base: SpanBase, expansions: tuple[_Expansion, ...]
           ) -> _Built:
    """The Reference of an entry block, given the expansions of its ``macro_fields``."""
    fields = dict(zip(block.names, block.fields, strict=True))
    if len(fields) < len(block.fields):  # BibTeX keeps the first of repeated fields
        fields = {}
        for name, f in zip(block.names, block.fields, strict=True):
            fields.setdefault(name, f)
    notes: list[Note] = []
    for f, expansion in zip(block.macro_fields, expansions, strict=True):
        if expansion.undefined or expansion.refused:
            notes += _expansion_notes(f.value_start, f.value_end, expansion, block.key)
        if fields[f.name] is f:
            fields[f.name] = Field.relative(base, f.name, expansion.value, f.value_start,
                                            f.value_end, f.name_start, f.name_end)  # fmt: skip
    reference = Reference.relative(
        base, block.key, uri, "bibtex", block.entry_type, block.key_start, block.key_end,
        block.start, block.end, fields,
    )  # fmt: skip
    return _Built(reference, expansions, tuple(notes))


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
