"""Hover: a citation or entry shown as a formatted reference (and, when known, its verification).

Every string that came from a document or an API is escaped: a hover must never render a
link, image, HTML or ``command:`` URI that the data smuggled in.
"""

from __future__ import annotations

import re

from lsprotocol import types

from citelsp.documents.model import Person, Reference

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~<>&\"'=:])")


def escape(text: str) -> str:
    """Markdown- and HTML-inert text: every special character backslash-escaped or entity-coded."""
    text = " ".join(str(text).split())
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MD_SPECIAL.sub(lambda m: m.group(1) if m.group(1) in "&" else "\\" + m.group(1), text)


def short_authors(authors: tuple[Person, ...]) -> str:
    if not authors:
        return ""
    if len(authors) == 1:
        return authors[0].family
    if len(authors) == 2:
        return f"{authors[0].family} and {authors[1].family}"
    return f"{authors[0].family} et al."


def format_reference(ref: Reference) -> str:
    """Markdown for one entry: authors, year, title, venue, identifiers, where it is defined."""
    work = ref.work
    names = ", ".join(escape(p.display()) for p in work.authors[:8])
    if len(work.authors) > 8 or work.has_et_al:
        names += ", et al."
    parts = [f"**{escape(ref.key)}** · {escape(ref.entry_type)}", ""]
    line = names or "_no authors_"
    if work.year:
        line += f" ({work.year})"
    parts.append(line + ".")
    parts.append(f"*{escape(work.title)}*." if work.title else "_no title_")
    venue = ", ".join(escape(v) for v in (work.venue, work.volume and f"vol. {work.volume}",
                                           work.issue and f"no. {work.issue}",
                                           work.pages and f"pp. {work.pages}") if v)
    if venue:
        parts.append(venue + ".")
    for name in ("doi", "DOI", "eprint", "url", "URL"):
        value = ref.value(name)
        if value:
            parts.append(f"{name}: `{_code(value)}`")
    return "  \n".join(parts)


def _code(value: str) -> str:
    """Inline code cannot contain a backtick run; drop them instead of escaping."""
    return " ".join(value.replace("`", "'").split())


def lsp_hover(markdown: str, range_: types.Range | None) -> types.Hover:
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=markdown),
        range=range_,
    )
