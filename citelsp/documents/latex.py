"""LaTeX citations (``\\cite``-family commands) and bibliography declarations.

A regular-expression scanner rather than pylatexenc: pylatexenc gives the span of a braced
argument but not of each key inside it, has to walk the whole document tree, and needs care
with unbalanced input; citation commands are regular enough to read in one linear pass.
Comments, ``\\iffalse`` passages, ``\\verb`` and verbatim environments are blanked out first,
keeping offsets.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import PurePosixPath

from citelsp.documents.model import Citation, key_list
from citelsp.spans import Span

CITE_COMMANDS = frozenset(
    {
        "cite", "Cite", "citep", "Citep", "citet", "Citet", "citealp", "Citealp",
        "citealt", "Citealt", "citeauthor", "Citeauthor", "citeyear", "citeyearpar",
        "citenum", "citetitle", "Citetitle", "citedate", "citeurl", "fullcite", "footfullcite",
        "parencite", "Parencite", "textcite", "Textcite", "autocite", "Autocite",
        "footcite", "Footcite", "footcitetext", "smartcite", "Smartcite", "supercite",
        "nocite", "citefullauthor", "Citefullauthor", "citefield", "citename", "citelist",
        "citeA", "citeNP", "citeANP", "citeyearNP", "citeN", "fullciteA",
        "fullciteNP", "fullciteANP", "shortcite", "shortciteA", "shortciteNP", "shortciteANP",
        "shortciteN", "possessivecite", "bibentry", "citetalias", "citepalias",
    }
)  # fmt: skip
"""natbib, biblatex, apacite and chicago (``\\citeA``, ``\\shortciteNP``), ``bibentry``;
apacite's prenote in angle brackets (``\\cite<see>[p.~4]{key}``) is read past."""
VOLUME_CITE_COMMANDS = frozenset(
    {
        "volcite", "Volcite", "pvolcite", "Pvolcite", "fvolcite", "Fvolcite", "ftvolcite",
        "svolcite", "Svolcite", "tvolcite", "Tvolcite", "avolcite", "Avolcite",
    }
)  # fmt: skip
"""biblatex's ``\\volcite[prenote]{volume}[pages]{key}``: the key after the volume."""
MULTI_CITE_COMMANDS = frozenset(
    {
        "cites", "Cites", "parencites", "Parencites", "textcites", "Textcites",
        "autocites", "Autocites", "footcites", "footcitetexts", "smartcites", "Smartcites",
        "supercites",
    }
)  # fmt: skip
BIBLIOGRAPHY_COMMANDS = frozenset({"bibliography", "addbibresource", "addglobalbib"})

_VERBATIM_ENVIRONMENTS = ("verbatim", "verbatim*", "Verbatim", "lstlisting", "minted", "comment")

_NAMES = sorted(CITE_COMMANDS | VOLUME_CITE_COMMANDS | MULTI_CITE_COMMANDS
                | BIBLIOGRAPHY_COMMANDS, key=len, reverse=True)
_COMMAND = re.compile(r"\\(?P<name>" + "|".join(_NAMES) + r")(?![A-Za-z@])\*?")
_HIDDEN_PATTERN = (
    r"\\\\|\\%|(?P<comment>%)|(?P<iffalse>\\iffalse(?![A-Za-z@]))"
    r"|(?P<verb>\\verb\*?(?![A-Za-z])|\\lstinline(?![A-Za-z@])(?:\[[^\]\r\n]*\])?"
    r"|\\mintinline(?:\[[^\]\r\n]*\])?\{[^{}\r\n]*\})"
    r"|\\begin\{(?P<env>"
    + "|".join(re.escape(name) for name in _VERBATIM_ENVIRONMENTS)
    + r")\}"
)
_HIDDEN = re.compile(_HIDDEN_PATTERN)
_SHORT_VERB = re.compile(r"\\(?:MakeShortVerb|DefineShortVerb)\*?(?:\[[^\]]*\])?[ \t]*"
                         r"(?:\{\\(?P<braced>[^A-Za-z@\s])\}|\\(?P<bare>[^A-Za-z@\s]))")
"""doc's and fancyvrb's short verbatim: after ``\\MakeShortVerb{\\|}``, ``|\\cite{x}|`` is code."""
_CONDITIONAL = re.compile(r"\\(if[A-Za-z@]*|else|fi)(?![A-Za-z@])")
_GAP = re.compile(r"[ \t]*(?:\r?\n[ \t]*)?")
_BRACED = r"\{(?:[^{}\\]|\\.|\{(?:[^{}\\]|\\.)*\})*\}"
_OPTIONAL = re.compile(r"\[(?:[^\[\]{}\\]|\\.|" + _BRACED + r")*\]", re.S)
_PARENTHESISED = re.compile(r"\((?:[^(){}\\]|\\.|" + _BRACED + r")*\)", re.S)
_KEYS = re.compile(r"\{(?P<keys>[^{}]*)\}")
_ANGLED = re.compile(r"<[^<>{}\r\n]*>")
_ITEM = re.compile(r"[^,\s]+(?:\s+[^,\s]+)*")
_NOT_NEWLINE = re.compile(r"[^\r\n]")
_MAGIC_ROOT = re.compile(r"^[ \t]*%[ \t]*![ \t]*TEX[ \t]+root[ \t]*=[ \t]*(\S(?:[^\r\n]*\S)?)",
                         re.IGNORECASE | re.MULTILINE)
_INPUT = re.compile(r"\\(?:input|include|subfile)[ \t]*\{(?P<file>[^{}\r\n]+)\}"
                    r"|\\(?:sub)?import\*?[ \t]*\{(?P<folder>[^{}\r\n]*)\}[ \t]*"
                    r"\{(?P<name>[^{}\r\n]+)\}")
_NEWCITES = re.compile(r"\\newcites[ \t]*\{([^{}]+)\}")
_DEFSET = re.compile(r"\\defbibentryset[ \t]*\{([^{}]+)\}[ \t]*\{([^{}]*)\}")
_SUBFILES = re.compile(r"\\documentclass[ \t]*\[([^\]\r\n]+)\][ \t]*\{subfiles\}")


def parse_latex(uri: str, text: str) -> tuple[list[Citation], list[str]]:
    """Citations (one per key) and bibliography paths as written (``.bib`` added to
    ``\\bibliography`` names that lack it)."""
    source = visible_source(text)
    citations: list[Citation] = []
    paths: list[str] = []
    for m in _commands(source):
        name = m.group("name")
        if name in BIBLIOGRAPHY_COMMANDS:
            paths.extend(_bibliography(source, m.end(), name))
        else:
            citations.extend(_citations(uri, source, m, name))
    return citations, paths


def _commands(source: str) -> Iterator[re.Match[str]]:
    """The citation and bibliography commands, in order; with multibib's
    ``\\newcites{sec}{Title}``, also ``\\citesec``, ``\\nocitesec`` and ``\\bibliographysec``
    (named as the commands they stand for)."""
    suffixes = [suffix for m in _NEWCITES.finditer(source)
                for suffix in key_list(m.group(1)) if suffix.isalpha()]
    if not suffixes:
        yield from _COMMAND.finditer(source)
        return
    extra = re.compile(r"\\(?P<name>cite|nocite|bibliography)(?:" + "|".join(
        sorted(set(suffixes), key=len, reverse=True)) + r")(?![A-Za-z@])\*?")
    found = {m.start(): m for m in extra.finditer(source)}
    found.update((m.start(), m) for m in _COMMAND.finditer(source))  # \\citep stays natbib's
    yield from (found[start] for start in sorted(found))


def document_root(text: str) -> str | None:
    """The main file this one is part of, as written: the ``% !TEX root =`` comment the
    LaTeX editors share, else the ``subfiles`` class option (``.tex`` added to a name
    without a suffix)."""
    found = _MAGIC_ROOT.search(text) or _SUBFILES.search(text)
    if found is None:
        return None
    root = found.group(1).strip()
    return root if PurePosixPath(root.replace("\\", "/")).suffix else root + ".tex"


def entry_sets(text: str) -> dict[str, tuple[str, ...]]:
    """biblatex's dynamic sets, ``\\defbibentryset{name}{key1,key2}``: name → member keys
    (citing the name cites the members)."""
    return {m.group(1).strip(): key_list(m.group(2))
            for m in _DEFSET.finditer(visible_source(text))}


def closing_brace(text: str, start: int, end: int) -> int | None:
    """The index of the ``}`` that closes a group opened just before ``start`` (every brace
    counts, as in BibTeX's output), or None before ``end``."""
    depth = 1
    for i in range(start, end):
        ch = text[i]
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i
    return None


def latex_inputs(text: str) -> list[str]:
    """The files ``text`` inputs, includes, or imports (``subfiles``, ``import``), as written,
    relative to its own folder."""
    found = []
    for m in _INPUT.finditer(visible_source(text)):
        if m.group("file") is not None:
            found.append(m.group("file").strip())
        else:
            found.append(m.group("folder").strip().rstrip("/") + "/" + m.group("name").strip())
    return found


def visible_source(text: str) -> str:
    """``text`` with comments, ``\\iffalse`` passages, ``\\verb`` and ``\\lstinline``
    arguments, short verbatim and verbatim environments blanked by spaces (line breaks
    kept), so offsets stay those of ``text``."""
    hidden: list[tuple[int, int]] = []
    cursor = 0
    line_end = -1  # the end of the line of the last \verb, found once per line
    unclosed = False  # an \iffalse ran to the end: later ones are not looked at again
    pattern, short_from = _HIDDEN, len(text)
    if "ShortVerb" in text and (declared := list(_SHORT_VERB.finditer(text))):
        chars = "".join(re.escape(m.group("braced") or m.group("bare")) for m in declared)
        pattern = re.compile(_HIDDEN_PATTERN + f"|(?P<short>[{chars}])")
        short_from = declared[0].end()
    for m in pattern.finditer(text):
        if m.start() < cursor:
            continue
        if m.group("comment") is not None:
            end = text.find("\n", m.start())
            cursor = len(text) if end == -1 else end
        elif m.group("iffalse") is not None:
            end = None if unclosed else _end_of_false_branch(text, m.end())
            if end is None:  # never closed, and so no later one either: hide nothing
                unclosed = True
                continue
            cursor = end
        elif m.group("env") is not None:
            closing = "\\end{" + m.group("env") + "}"
            end = text.find(closing, m.end())
            cursor = len(text) if end == -1 else end + len(closing)
        elif m.group("verb") is not None or m.lastgroup == "short" and m.start() >= short_from:
            if line_end < m.end():
                line_end = text.find("\n", m.end())
                line_end = len(text) if line_end == -1 else line_end
            if m.lastgroup == "short":  # |code|: the character that opened it closes it
                end = text.find(m.group(), m.end(), line_end)
            elif m.end() == line_end:
                continue
            else:  # \verb|code|, \lstinline{code}
                delimiter = text[m.end()]
                end = text.find("}" if delimiter == "{" else delimiter, m.end() + 1, line_end)
            if end == -1:
                continue
            cursor = end + 1
        else:
            continue
        hidden.append((m.start(), cursor))
    pieces: list[str] = []
    last = 0
    for start, end in hidden:
        pieces.append(text[last:start])
        pieces.append(_NOT_NEWLINE.sub(" ", text[start:end]))
        last = end
    pieces.append(text[last:])
    return "".join(pieces)


def _end_of_false_branch(text: str, pos: int) -> int | None:
    """Where the text ``\\iffalse`` skips ends: at its ``\\else`` or ``\\fi``, past nested
    conditionals (a common way to comment out a passage); None when it is never closed."""
    depth = 1
    for m in _CONDITIONAL.finditer(text, pos):
        word = m.group(1)
        if word == "fi":
            depth -= 1
        elif word == "else":
            if depth == 1:
                return m.start()
        elif word != "iff":  # \iff is the math symbol, not a conditional
            depth += 1
        if depth == 0:
            return m.start()
    return None


def _citations(uri: str, source: str, command: re.Match[str], name: str) -> list[Citation]:
    pos = command.end()
    groups: list[re.Match[str]] = []
    if name in MULTI_CITE_COMMANDS:
        pos = _arguments(_PARENTHESISED, source, pos)
        while True:
            pos = _arguments(_OPTIONAL, source, pos)
            keys = _KEYS.match(source, _GAP.match(source, pos).end())
            if keys is None:
                break
            groups.append(keys)
            pos = keys.end()
    else:
        if (angled := _ANGLED.match(source, _GAP.match(source, pos).end())) is not None:
            pos = angled.end()  # apacite's <prenote>
        if name in VOLUME_CITE_COMMANDS:
            volume = _KEYS.match(source, _GAP.match(source, _arguments(_OPTIONAL, source, pos))
                                 .end())
            if volume is None:
                return []
            pos = volume.end()
        keys = _KEYS.match(source, _GAP.match(source, _arguments(_OPTIONAL, source, pos)).end())
        if keys is not None and name == "citefield":
            keys = _field_first(source, keys)
        if keys is not None:
            groups.append(keys)
    if not groups:
        return []
    full = Span(command.start(), groups[-1].end())
    citations: list[Citation] = []
    for group in groups:
        for item in _ITEM.finditer(source, group.start("keys"), group.end("keys")):
            key = item.group()
            if "#" in key or "\\" in key:
                continue  # a macro parameter in a definition, or a macro: not a key as written
            wildcard = key == "*"
            if wildcard and name != "nocite":
                continue
            citations.append(
                Citation(
                    key=key,
                    span=Span(item.start(), item.end()),
                    uri=uri,
                    syntax="latex",
                    full_span=full,
                    wildcard=wildcard,
                )
            )
    return citations


def _field_first(source: str, first: re.Match[str]) -> re.Match[str]:
    """The argument of ``\\citefield`` that holds the key: biblatex writes
    ``\\citefield{key}[format]{field}``, jurabib ``\\citefield{field}{key}``; a first argument
    that names a field, followed by another, is jurabib's."""
    if first.group("keys").strip().casefold() not in _FIELD_NAMES:
        return first
    second = _KEYS.match(source, _GAP.match(source, first.end()).end())
    return first if second is None else second


_FIELD_NAMES = frozenset({
    "title", "subtitle", "shorttitle", "author", "shortauthor", "editor", "year", "date",
    "journal", "journaltitle", "booktitle", "publisher", "address", "location", "volume",
    "number", "pages", "edition", "series", "note", "url", "doi", "isbn", "issn", "month",
    "institution", "school", "organization", "howpublished", "type", "chapter", "language",
    "abstract", "keywords", "eprint", "annote", "translator", "titleaddon", "addendum",
})  # fmt: skip
"""BibTeX and biblatex field names: what jurabib's ``\\citefield`` names first."""


def _arguments(pattern: re.Pattern[str], source: str, pos: int) -> int:
    """Position after up to two optional arguments (pre- and postnote) matching ``pattern``."""
    for _ in range(2):
        m = pattern.match(source, _GAP.match(source, pos).end())
        if m is None:
            break
        pos = m.end()
    return pos


def _bibliography(source: str, pos: int, name: str) -> list[str]:
    pos = _arguments(_OPTIONAL, source, pos)
    group = _KEYS.match(source, _GAP.match(source, pos).end())
    if group is None:
        return []
    value = group.group("keys").strip()
    if name != "bibliography":
        return [value] if value else []
    names = [item.group() for item in _ITEM.finditer(value)]
    return [n if n.lower().endswith(".bib") else n + ".bib" for n in names]
