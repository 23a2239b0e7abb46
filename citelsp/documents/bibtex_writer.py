"""BibTeX text that citelsp writes into a writer's ``.bib`` (a created entry, verified
metadata, an added DOI): every value reads back as exactly one field with the intended value,
in BibTeX, biber, pandoc, bibtexparser and citelsp's own reader.

Values come from services that anyone who deposits metadata can fill, so nothing in them may
stay live: BibTeX counts every brace, escaped or not (``\\}`` closes a field), and TeX reads
``^^5c`` as a backslash, ``~`` as a tie, ``\\input`` as a command. Hence:

- every character that means something to TeX is written as a command that prints it
  (``\\textbackslash{}``, ``\\textasciicircum{}``, ``\\textasciitilde{}``, ``\\&`` …), ligatures
  (``--``, ``''``) are broken with ``{}``;
- a brace is written ``\\{`` or ``\\}`` only when it has its partner, so the braces stay balanced
  in order; a brace without one cannot be written in a way every reader decodes, and becomes
  U+FFFD (the edit shows it);
- runs of whitespace (newlines too) become one space; control characters, lone surrogates and
  bidirectional overrides become U+FFFD;
- identifiers and URLs are verbatim fields to biblatex (``\\_`` would stay a backslash there):
  they are written as they are, or not at all when they hold a brace, a backslash, ``%`` or
  whitespace;
- each name of a name list is written so that ``and`` or a comma inside it cannot split it:
  an organization is wholly braced, a part of a personal name that holds ``,``, the word
  ``and`` or anything but letters, digits, spaces, ``.``, ``'`` and ``-`` is braced, a
  family name alone gets an empty given name (``Plato, {}``).

``written_form`` is what a value reads back as; the round trip is proved by
``tests/test_bibtex_writer.py``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from citelsp.documents.model import Person

REPLACEMENT = "\ufffd"
"""What a character that cannot be written becomes."""

_ESCAPES = {
    "\\": "\\textbackslash{}", "^": "\\textasciicircum{}", "~": "\\textasciitilde{}",
    "&": "\\&", "%": "\\%", "$": "\\$", "#": "\\#", "_": "\\_",
}  # fmt: skip
_LIGATURES = frozenset({"--", "``", "''", "!`", "?`", "<<", ">>", ",,"})
"""Pairs TeX (and pandoc, pylatexenc, citelsp) would join into one character."""
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_UNSAFE_VERBATIM = re.compile(r"[{}\\%\s]")
_UNSAFE_KEY = re.compile(r"[\s\"#%'(),={}\\~]")
_SPLITS_NAMES = re.compile(r"(?:^|\s)and(?:\s|$)|,|\bet\.?\s+al\.?$", re.IGNORECASE)
"""In a part of a name: what would split the list or the name, or end it as "et al."."""
_PLAIN_NAME = re.compile(r"[\w\s.'\u2019-]*")
"""A part of a name that needs no braces (pandoc drops a name with ``=`` unless braced)."""


class UnwritableKey(ValueError):
    """A citation key that BibTeX or biber would read as something else."""


def clean_text(value: str) -> str:
    """Whitespace runs (line breaks too) as one space, ends stripped; control characters,
    surrogates and bidirectional overrides as U+FFFD. What every format citelsp writes
    (BibTeX, CSL-JSON, CSL-YAML) makes of a value from a service."""
    out = []
    for ch in " ".join(value.split()):
        category = unicodedata.category(ch)
        out.append(REPLACEMENT if category in ("Cc", "Cs") or ch in _BIDI_CONTROLS else ch)
    return "".join(out)


def _partnered_braces(value: str) -> set[int]:
    """Positions of the braces that have a partner, matched in order as BibTeX matches
    them."""
    opened: list[int] = []
    paired: set[int] = set()
    for i, ch in enumerate(value):
        if ch == "{":
            opened.append(i)
        elif ch == "}" and opened:
            paired.update((opened.pop(), i))
    return paired


def written_form(value: str) -> str:
    """What ``text_value(value)`` reads back as: ``value`` with whitespace collapsed and what
    cannot be written (see the module) replaced by U+FFFD."""
    value = clean_text(value)
    paired = _partnered_braces(value)
    return "".join(REPLACEMENT if ch in "{}" and i not in paired else ch
                   for i, ch in enumerate(value))


def text_value(value: str) -> str:
    """``value`` as the inside of a braced field value (``title = {…}``): inert, balanced,
    and decoding to ``written_form(value)``."""
    value = clean_text(value)
    paired = _partnered_braces(value)
    out: list[str] = []
    previous = ""
    for i, ch in enumerate(value):
        if previous + ch in _LIGATURES:
            out.append("{}")
        if ch in "{}":
            out.append("\\" + ch if i in paired else REPLACEMENT)
        else:
            out.append(_ESCAPES.get(ch, ch))
        previous = ch
    return "".join(out)


def verbatim_value(value: str) -> str | None:
    """An identifier or URL as the inside of a braced field, written as it is (biblatex reads
    ``doi``, ``eprint`` and ``url`` verbatim); ``None`` when it cannot be written safely."""
    value = value.strip()
    if not value or _UNSAFE_VERBATIM.search(value) or not value.isprintable():
        return None
    return value


def name_list(people: Iterable[Person]) -> str:
    """People as the inside of a braced ``author``/``editor`` field, ``von Last, First`` each,
    an organization wholly braced."""
    return " and ".join(_name(p) for p in people if written_form(p.family))


def _name(person: Person) -> str:
    family = _name_part(person.family)
    if person.literal:
        return "{" + text_value(person.family) + "}"
    # "van Gogh" alone reads as given "van", family "Gogh", "others" as et al., and pandoc
    # drops some one-word names: an empty given name says it is all family
    return f"{family}, {_name_part(person.given) if person.given.strip() else '{}'}"


def _name_part(part: str) -> str:
    text = text_value(part)
    plain = written_form(part)
    if _SPLITS_NAMES.search(plain) or not _PLAIN_NAME.fullmatch(plain):
        return "{" + text + "}"
    return text


def entry_key(key: str) -> str:
    """``key`` when BibTeX and biber both read it as the whole key; else ``UnwritableKey``."""
    if not key or _UNSAFE_KEY.search(key) or not key.isprintable():
        raise UnwritableKey(f"the key {key!r} cannot be written in a .bib file (it holds a space, "
                            "a brace, a comma or another character BibTeX or biber reads "
                            "otherwise): cite the work under a plain key")
    return key


def entry(kind: str, key: str, fields: Iterable[tuple[str, str]]) -> str:
    """An entry from ready-made field insides (``text_value``, ``verbatim_value``,
    ``name_list``)."""
    body = "".join(f"  {name} = {{{value}}},\n" for name, value in fields)
    return f"@{kind}{{{entry_key(key)},\n{body}}}\n"
