"""New bibliography entries from a record: what "create the entry from a DOI or arXiv id"
writes, and where. The text is shown to the writer as an edit before it applies."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

import yaml

from citelsp.documents import bibtex_writer as bib
from citelsp.documents.model import Bibliography, Person
from citelsp.resolution.outcome import Record


@dataclass(frozen=True)
class NewEntry:
    uri: str
    """The bibliography the entry is added to."""
    offset: int
    """Where the text goes (code points)."""
    text: str


def new_entry(bibliography: Bibliography, key: str, record: Record) -> NewEntry:
    """``record`` as an entry appended to ``bibliography`` under ``key``."""
    text = bibliography.text
    if bibliography.source_format == "bibtex":
        lead = "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n")
                                                             else "\n\n")
        return NewEntry(bibliography.uri, len(text), lead + _bibtex(key, record))
    if bibliography.source_format == "csl-yaml":
        return _yaml_item(bibliography, _csl(key, record))
    item = json.dumps(_csl(key, record), ensure_ascii=False, indent=2)  # only \n breaks lines
    end = text.rstrip().rfind("]")
    if end < 0:
        raise ValueError("the CSL-JSON bibliography has no closing ']' to add an item before")
    before = text[:end].rstrip()
    separator = ",\n" if not before.endswith("[") else "\n"
    indented = "\n".join("  " + line for line in item.split("\n"))
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
    """The entry as BibTeX, every value through ``bibtex_writer`` (inert whatever a service
    sent); an identifier that cannot be written verbatim is left out."""
    preprint = record.is_preprint or (record.arxiv_id is not None and not record.venue)
    kind = "misc" if preprint or not record.venue else "article"
    fields: list[tuple[str, str | None]] = [
        ("author", bib.name_list(record.authors)),
        ("title", bib.text_value(record.title or "")),
        ("journal", bib.text_value(record.venue or "") if not preprint else None),
        *((name, bib.text_value(str(value or ""))) for name, value in (
            ("year", record.year), ("volume", record.volume), ("number", record.issue),
            ("pages", record.first_page))),
        ("doi", bib.verbatim_value(record.doi or "")),
    ]
    if record.arxiv_id and (eprint := bib.verbatim_value(record.arxiv_id)):
        fields += [("eprint", eprint), ("archivePrefix", "arXiv")]
    return bib.entry(kind, key, [(name, value) for name, value in fields if value])


def _csl(key: str, record: Record) -> dict:
    """The item as CSL; JSON and YAML escape every value, ``clean_text`` keeps line breaks and
    control characters out of the lines the item is indented by."""
    text = bib.clean_text
    item: dict = {"id": key, "type": "article" if record.is_preprint or not record.venue
                  else "article-journal"}
    if record.title:
        item["title"] = text(record.title)
    if record.authors:
        item["author"] = csl_names(record.authors)
    if record.year:
        item["issued"] = {"date-parts": [[record.year]]}
    for name, value in (("container-title", record.venue), ("volume", record.volume),
                        ("issue", record.issue), ("page", record.first_page),
                        ("DOI", record.doi)):
        if value:
            item[name] = text(str(value))
    if record.arxiv_id:
        item["number"] = f"arXiv:{text(record.arxiv_id)}"
    return item


def csl_names(people: Iterable[Person]) -> list[dict]:
    """People as CSL names: an organization as a ``literal``."""
    text = bib.clean_text
    return [{"literal": text(p.family)} if p.literal else
            {"family": text(p.family), "given": text(p.given)} for p in people]
