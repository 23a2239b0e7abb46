"""Hover: a citation or entry shown as a formatted reference (and, when known, its
verification card), in the client's markup."""

from __future__ import annotations

from lsprotocol import types

from citelsp.documents.model import Person, Reference
from citelsp.lsp.markup import Markup


def short_authors(authors: tuple[Person, ...]) -> str:
    if not authors:
        return ""
    if len(authors) == 1:
        return authors[0].family
    if len(authors) == 2:
        return f"{authors[0].family} and {authors[1].family}"
    return f"{authors[0].family} et al."


def format_reference(ref: Reference, m: Markup) -> str:
    """One entry: authors, year, title, venue, identifiers."""
    work = ref.work
    names = ", ".join(m.text(p.display()) for p in work.authors[:8])
    if len(work.authors) > 8 or work.has_et_al:
        names += ", et al."
    kind = "\\bibitem, read from its text" if work.formatted else ref.entry_type
    parts = [f"{m.bold(m.text(ref.key))} · {m.text(kind)}", ""]
    line = names or m.italic("authors not read" if work.formatted else "no authors")
    if work.year:
        line += f" ({work.year})"
    parts.append(line + ".")
    parts.append(m.italic(m.text(work.title)) + "." if work.title else m.italic(
        "title not told apart" if work.formatted else "no title"))
    venue = ", ".join(m.text(v) for v in (work.venue, work.volume and f"vol. {work.volume}",
                                           work.issue and f"no. {work.issue}",
                                           work.pages and f"pp. {work.pages}") if v)
    if venue:
        parts.append(venue + ".")
    for name in ("doi", "DOI", "eprint", "url", "URL"):
        value = ref.value(name)
        if value:
            parts.append(f"{name}: {m.code(value)}")
    return m.line_break.join(parts)


def lsp_hover(text: str, m: Markup, range_: types.Range | None) -> types.Hover:
    return types.Hover(contents=types.MarkupContent(kind=m.kind, value=text), range=range_)
