"""Completion of citation keys after ``@``, ``\\cite{`` (``\\cite<see>[p.~4]{``, ``\\volcite{2}{``),
``<!--ref:`` and MyST's ``{cite}```.

A writer's whole library may be one 20,000-entry file, so an answer decodes nothing: it lists
at most ``LIMIT`` keys, matched on the key and on the words of the title and authors as
written (LaTeX commands and braces dropped by a regex, not decoded), and says when more
matched so that the editor asks again as the writer types. The authors, year, title and venue
of the one key the writer looks at are decoded by ``details`` (LSP's completionItem/resolve),
or, for an editor that never asks for them so, for each key listed (``detailed``).
"""

from __future__ import annotations

import bisect
import re
import weakref
from dataclasses import dataclass

from citelsp.documents.model import Bibliography, Manuscript, Person, Reference
from citelsp.documents.parse import Document
from citelsp.spans import Span
from citelsp.workspace.view import View

TRIGGER_CHARACTERS = ["@", "{", ",", ":", "`"]
LIMIT = 100
"""The most keys one answer lists: a client filters them as the writer types, and asks again
when the answer said it was incomplete."""

_LATEX_KEY_REST = re.compile(r"[^,}\s]*")
_CONTEXTS = (
    (re.compile(r"(?<![\w.])@(?P<prefix>[\w:.#$%&+?<>~/-]*)$"),
     re.compile(r"(?:\w|[:.#$%&+?<>~/-](?=\w))*")),  # inner punctuation, as pandoc reads keys
    (re.compile(r"\\(?![A-Za-z]*volcite)[A-Za-z]*cite[A-Za-z]*\*?(?:<[^<>]*>)?"
                r"(?:\[[^\]]*\]){0,2}\{(?:[^}]*,)?\s*(?P<prefix>[^,}\s]*)$"), _LATEX_KEY_REST),
    (re.compile(r"\\[A-Za-z]*volcite\*?(?:\[[^\]]*\])?\{[^{}]*\}(?:\[[^\]]*\])?"
                r"\{\s*(?P<prefix>[^,}\s]*)$"), _LATEX_KEY_REST),
    (re.compile(r"<!--ref:(?P<prefix>[A-Za-z0-9_:-]*)$"), re.compile(r"[A-Za-z0-9_:-]*")),
    (re.compile(r"\{cite(?::[A-Za-z]+)?\}`(?:[^`]*[,;])?\s*(?P<prefix>[^`,;\s]*)$"),
     re.compile(r"[^`,;\s]*")),
)
"""Where a key is typed: the text before the cursor, and the rest of the key after it."""


def _key_at(text: str, offset: int) -> tuple[str, int] | None:
    """The partial key before ``offset`` and where the key it starts ends (the rest of a key
    the cursor is in); None when ``offset`` is not in a key position."""
    line_start = max(text.rfind("\n", 0, offset), text.rfind("\r", 0, offset)) + 1
    before = text[line_start:offset]
    for pattern, rest in _CONTEXTS:
        if m := pattern.search(before):
            return m.group("prefix"), rest.match(text, offset).end()
    return None


@dataclass(frozen=True)
class Details:
    """What is shown beside the key the writer looks at."""

    detail: str | None
    """"Vaswani et al. (2017)"."""
    documentation: str | None
    """Title, authors, and venue with year, one a line (plain text)."""


@dataclass(frozen=True)
class Completion:
    key: str
    filter_text: str
    """What the client matches the typed text against: the key, then the title, authors and
    year as written (commands and braces dropped)."""
    details: Details | None = None
    """Only when asked for ``detailed``."""


@dataclass(frozen=True)
class Completions:
    items: list[Completion]
    """Exact key first, then keys the manuscript already cites, other keys that start with
    the typed text, and keys whose title or authors have a word that does; each group by key."""
    span: Span
    """The typed text the chosen key replaces."""
    replace: Span
    """The typed text and the rest of the key the cursor is in: what the key replaces when
    the writer's editor is set to replace the word."""
    complete: bool
    """Every match is listed; False when more than ``LIMIT`` matched."""


def completions(view: View, doc: Document, offset: int, *, detailed: bool = False
                ) -> Completions | None:
    """The keys of the manuscript's bibliographies that match the partial key before the
    cursor, each with its ``details`` when ``detailed`` (at most ``LIMIT`` entries decoded);
    None when the cursor is not in a key position (or not in a manuscript)."""
    if not isinstance(doc, Manuscript) or (found := _key_at(doc.text, offset)) is None:
        return None
    prefix, key_end = found
    wanted = prefix.casefold()
    libraries = [_library(b) for b in view.graph.bibliographies(doc)]
    cited = {c.key for c in doc.citations}
    rank: dict[str, int] = {}
    complete = True
    for lib in libraries:  # each library's first LIMIT + 1 in key order hold the first LIMIT
        keys = lib.starting(wanted)
        for key in keys[:LIMIT + 1]:
            rank.setdefault(key, 0 if key.casefold() == wanted else 2)
        if len(keys) > LIMIT:
            complete = False
            rank.update((k, 2) for k in cited.intersection(keys) if k not in rank)
    for key in cited.intersection(rank):
        rank[key] = min(rank[key], 1)
    if wanted and complete:
        if len(rank) < LIMIT:
            for lib in libraries:
                found, more = lib.with_word(wanted, LIMIT + 1)
                complete = complete and not more
                rank.update((k, 3) for k in found if k not in rank)
        else:
            complete = False  # title and author words not searched
    listed = sorted(rank, key=lambda k: (rank[k], k.casefold(), k))[:LIMIT]
    firsts: dict[str, Reference] = {}
    for lib in libraries:
        for key in listed:
            if key not in firsts and (ref := lib.first.get(key)) is not None:
                firsts[key] = ref
    texts = _filter_texts([firsts[k] for k in listed])
    items = [Completion(k, t, _details(firsts[k]) if detailed else None)
             for k, t in zip(listed, texts, strict=True)]
    start = offset - len(prefix)
    return Completions(items, Span(start, offset), Span(start, key_end),
                       complete and len(rank) <= LIMIT)


def details(view: View, doc: Document, key: str) -> Details | None:
    """The decoded authors, year, title and venue of ``key`` in the manuscript's
    bibliographies (the first entry with it); None when it has none."""
    if not isinstance(doc, Manuscript):
        return None
    graph = view.graph
    ref = next((refs[0] for b in graph.bibliographies(doc)
                if (refs := graph.key_index(b).get(key))), None)
    return None if ref is None else _details(ref)


def _details(ref: Reference) -> Details:
    work = ref.work
    year = f"({work.year})" if work.year else ""
    detail = " ".join(p for p in (short_authors(work.authors), year) if p)
    names = ", ".join(p.display() for p in work.authors[:3])
    if names and (len(work.authors) > 3 or work.has_et_al):
        names += " et al."
    venue = ", ".join(p for p in (work.venue, str(work.year) if work.year else None) if p)
    lines = [p for p in (work.title, names, venue) if p]
    return Details(detail or None, "\n".join(lines) or None)


def short_authors(authors: tuple[Person, ...]) -> str:
    if not authors:
        return ""
    if len(authors) == 1:
        return authors[0].family
    if len(authors) == 2:
        return f"{authors[0].family} and {authors[1].family}"
    return f"{authors[0].family} et al."


# --- what completion reads of a bibliography ---------------------------------------------------


class _Library:
    """One parse of a bibliography as completion reads it: its keys in order, and (built on
    the first search that needs them) the folded words of every entry."""

    def __init__(self, bib: Bibliography) -> None:
        self.first: dict[str, Reference] = {}
        for r in bib.references:
            self.first.setdefault(r.key, r)
        self._keys = sorted(self.first, key=str.casefold)
        self._folded = [k.casefold() for k in self._keys]
        self._words: list[str] | None = None
        """The folded filter text of each entry, in key order (strings only:
        20,000 tuples cost a garbage collection of the whole workspace)."""

    def starting(self, wanted: str) -> list[str]:
        """The keys that start with ``wanted`` (casefolded), in key order."""
        lo = bisect.bisect_left(self._folded, wanted)
        hi = bisect.bisect_left(self._folded, wanted + "\U0010ffff", lo) if wanted else len(
            self._keys)
        return self._keys[lo:hi]

    def with_word(self, wanted: str, most: int) -> tuple[list[str], bool]:
        """The first ``most`` keys, in key order, of entries whose title, authors or year
        have a word that starts with ``wanted`` (or whose key has a part after ``_``, ``-``
        or ``:`` that does), and whether there are more."""
        if self._words is None:
            refs = [self.first[k] for k in self._keys]
            self._words = _folded(_filter_texts(refs, collapse=False))
        found: list[str] = []
        for key, text in zip(self._keys, self._words, strict=True):
            at = text.find(wanted)
            while at >= 0:
                if at == 0 or not text[at - 1].isalnum():
                    if len(found) == most:
                        return found, True
                    found.append(key)
                    break
                at = text.find(wanted, at + 1)
        return found, False


_LIBRARIES: dict[int, _Library] = {}
"""Per parse of a bibliography, dropped with it: a memo that changes no answer."""


def _library(bib: Bibliography) -> _Library:
    lib = _LIBRARIES.get(id(bib))
    if lib is None:
        lib = _LIBRARIES[id(bib)] = _Library(bib)
        weakref.finalize(bib, _LIBRARIES.pop, id(bib), None)
    return lib


_COMMAND = re.compile(r"\\(?:[A-Za-z]+\*?\s*(?=\{)|['\"^`~=.])?")
"""What is dropped of LaTeX: a command before its argument (``\\emph{``, ``\\v{``) and an
accent, else the backslash alone (``\\&`` is ``&``, ``{\\TeX}book`` is ``TeXbook``)."""
_SEPARATOR = "\x00"
_AUTHOR_CHARS = 100
"""Authors as written, this far: the first few names (a client matches the first 128
characters of a filter text)."""


def _filter_texts(refs: list[Reference], *, collapse: bool = True) -> list[str]:
    """Key, title, authors and year of each entry as written, commands and braces dropped:
    one regex pass over all of them joined, because a 20,000-entry library is searched at
    once and decoding took a second."""
    raws = []
    for r in refs:
        f = r.fields
        title, author = f.get("title"), f.get("author")
        year = f.get("year") or f.get("date") or f.get("issued")
        raws.append(f"{r.key} {title.value if title else ''} "
                    f"{author.value[:_AUTHOR_CHARS] if author else ''} "
                    f"{year.value if year else ''}")
    joined = _SEPARATOR.join(raws)
    if joined.count(_SEPARATOR) != len(raws) - 1:  # a separator in the text itself
        joined = _SEPARATOR.join(r.replace(_SEPARATOR, " ") for r in raws)
    if "\\" in joined:
        joined = _COMMAND.sub("", joined)
    joined = joined.replace("{", "").replace("}", "").replace("\n", " ").replace("\r", " ")
    texts = joined.split(_SEPARATOR) if raws else []
    return [" ".join(t.split()) for t in texts] if collapse else texts


def _folded(texts: list[str]) -> list[str]:
    return _SEPARATOR.join(texts).casefold().split(_SEPARATOR) if texts else []
