"""New bibliography entries from a record: what "create the entry from a DOI or arXiv id"
writes, and where. The text is shown to the writer as an edit before it applies."""

from __future__ import annotations

import json
from dataclasses import dataclass

import yaml

from citelsp.documents.model import Bibliography
from citelsp.resolution.outcome import Record


@dataclass(frozen=True)
class NewEntry:
    uri: str
    """The bibliography the entry is added to."""
    offset: int
    """Where the text goes (code points)."""
    text: str


def bibtex_text(value: str) -> str:
    """Text safe inside a braced BibTeX value: LaTeX specials escaped, braces balanced."""
    out = []
    for ch in " ".join(value.split()):
        if ch in "&%#_$" or ch in "{}":
            out.append("\\" + ch)
        elif ch == "\\":
            out.append("\\textbackslash{}")
        else:
            out.append(ch)
    return "".join(out)


def new_entry(bibliography: Bibliography, key: str, record: Record) -> NewEntry:
    """``record`` as an entry appended to ``bibliography`` under ``key``."""
    text = bibliography.text
    if bibliography.source_format == "bibtex":
        lead = "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n")
                                                             else "\n\n")
        return NewEntry(bibliography.uri, len(text), lead + _bibtex(key, record))
    if bibliography.source_format == "csl-yaml":
        return _yaml_item(bibliography, _csl(key, record))
    item = json.dumps(_csl(key, record), ensure_ascii=False, indent=2)
    end = text.rstrip().rfind("]")
    if end < 0:
        raise ValueError("the CSL-JSON bibliography has no closing ']' to add an item before")
    before = text[:end].rstrip()
    separator = ",\n" if not before.endswith("[") else "\n"
    indented = "\n".join("  " + line for line in item.splitlines())
    return NewEntry(bibliography.uri, len(before), separator + indented + "\n")


def _yaml_item(bibliography: Bibliography, item: dict) -> NewEntry:
    """``item`` after the last item of a CSL-YAML ``references:`` list, its ``-`` where the
    first item's is."""
    if not bibliography.references:
        raise ValueError("the CSL-YAML bibliography has no item yet to add one after: add "
                         "the first by hand")
    text = bibliography.text
    first = bibliography.references[0].span.start  # the item's first key, after its "- "
    line_start = text.rfind("\n", 0, first) + 1
    dash = text.rfind("-", line_start, first)
    if dash < 0 or text[line_start:dash].strip():
        raise ValueError("the CSL-YAML references are not a block list ('- id: …'): add the "
                         "item by hand")
    indent = " " * (dash - line_start)
    dumped = yaml.safe_dump([item], allow_unicode=True, sort_keys=False, width=10_000)
    lines = "\n".join(indent + line for line in dumped.splitlines())
    return NewEntry(bibliography.uri, bibliography.references[-1].span.end, "\n" + lines)


def _bibtex(key: str, record: Record) -> str:
    preprint = record.is_preprint or (record.arxiv_id is not None and not record.venue)
    kind = "misc" if preprint or not record.venue else "article"
    fields: list[tuple[str, str]] = []
    if record.authors:
        fields.append(("author", " and ".join(
            f"{{{bibtex_text(p.family)}}}" if p.literal else
            bibtex_text(f"{p.family}, {p.given}" if p.given else p.family)
            for p in record.authors)))
    if record.title:
        fields.append(("title", bibtex_text(record.title)))
    if record.venue and not preprint:
        fields.append(("journal", bibtex_text(record.venue)))
    for name, value in (("year", record.year), ("volume", record.volume),
                        ("number", record.issue), ("pages", record.first_page),
                        ("doi", record.doi)):
        if value:
            fields.append((name, bibtex_text(str(value))))
    if record.arxiv_id:
        fields += [("eprint", bibtex_text(record.arxiv_id)), ("archivePrefix", "arXiv")]
    body = "".join(f"  {name} = {{{value}}},\n" for name, value in fields)
    return f"@{kind}{{{key},\n{body}}}\n"


def _csl(key: str, record: Record) -> dict:
    item: dict = {"id": key, "type": "article" if record.is_preprint or not record.venue
                  else "article-journal"}
    if record.title:
        item["title"] = record.title
    if record.authors:
        item["author"] = [{"literal": p.family} if p.literal else
                          {"family": p.family, "given": p.given} for p in record.authors]
    if record.year:
        item["issued"] = {"date-parts": [[record.year]]}
    for name, value in (("container-title", record.venue), ("volume", record.volume),
                        ("issue", record.issue), ("page", record.first_page),
                        ("DOI", record.doi)):
        if value:
            item[name] = value
    if record.arxiv_id:
        item["number"] = f"arXiv:{record.arxiv_id}"
    return item
