"""arXiv's metadata snapshot (Kaggle ``arxiv-metadata-oai-snapshot.json``): JSON Lines of
``{"id", "title", "authors", "authors_parsed", "journal-ref", "doi", "versions", …}``.

This is not the Atom the export API answers, so it has its own reading, made to give the
Record ``resolution.arxiv.parse_entry`` gives for the same paper: the first version's year,
venue "arXiv" with the journal reference as an alias, a preprint.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from citelsp import links
from citelsp.documents.text import latex_decode
from citelsp.index.readers import Entry, Part, Tally, iso_date, read_json
from citelsp.index.readers import json_files as wanted  # noqa: F401 (the files it reads)
from citelsp.resolution import records as r
from citelsp.resolution.arxiv import SOURCE, base_id
from citelsp.resolution.outcome import Record

_YEAR = re.compile(r"\b(1[89]\d\d|2\d\d\d)\b")


def read_part(part: Part, tally: Tally, since: str | None = None) -> Iterator[Entry]:
    return read_json(part, tally, _entry)


def _entry(obj: Any) -> Entry:
    obj = r.mapping(obj, "paper")
    return Entry(parse_paper(obj), iso_date(obj.get("update_date")))


def parse_paper(paper: dict) -> Record:
    arxiv_id = base_id(r.text(paper.get("id")) or "")
    if not arxiv_id:
        raise r.BodyError("paper without an id")
    versions = r.items(paper.get("versions"), "versions")
    title = r.clean_title(paper.get("title"))
    journal_ref = r.text(paper.get("journal-ref"))
    first = r.mapping(versions[0], "version").get("created") if versions else None
    first_year = _YEAR.search(first) if isinstance(first, str) else None
    return Record(
        source=SOURCE,
        title=title,
        titles=r.title_variants([title] if title else []),
        short_titles=r.main_titles([title] if title else []),
        authors=_authors(paper),
        years=r.unique([int(first_year.group(1))] if first_year else []),
        venue="arXiv",
        venue_aliases=r.unique([journal_ref]),
        doi=r.doi((r.text(paper.get("doi")) or "").split(" ")[0]),
        arxiv_id=arxiv_id,
        source_id=f"{arxiv_id}v{len(versions)}" if versions else arxiv_id,
        work_type="preprint",
        is_preprint=True,
        url=links.arxiv_url(arxiv_id),
    )


def _authors(paper: dict):
    """``authors_parsed`` ([family, given, suffix] each, LaTeX accents and all), else the
    ``authors`` string split at commas and "and"."""
    parsed = paper.get("authors_parsed")
    if isinstance(parsed, list) and parsed:
        return r.people(parsed, _parsed)
    names = re.split(r",\s*|\s+and\s+", latex_decode(r.text(paper.get("authors")) or ""))
    return r.people([n for n in names if n.strip()], r.person_from_name)


def _parsed(entry: Any):
    entry = r.items(entry, "author")
    family = latex_decode(r.text(entry[0]) or "") if entry else ""
    given = latex_decode(r.text(entry[1]) or "") if len(entry) > 1 else ""
    return r.person(family, given)
