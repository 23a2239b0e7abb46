"""DBLP's ``dblp.xml.gz``: one streaming pass with ``iterparse``, each record element cleared once
read (the file is several GB unpacked).

The file declares ``dblp.dtd``, whose entities (``&uuml;``, ``&eacute;`` …) are the HTML
character entities; they are given to the parser from the standard library's table, so the
DTD is never fetched. DBLP appends a homonym number to author names ("Wei Wang 0003") and a
full stop to titles; both are dropped.
"""

from __future__ import annotations

import html.entities
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator

from citelsp import links
from citelsp.index.readers import READ_ERRORS, Entry, Part, Tally, entries, iso_date, stream
from citelsp.resolution import records as r
from citelsp.resolution.outcome import Record

SOURCE = "dblp"
RECORDS = frozenset(("article", "inproceedings", "proceedings", "book", "incollection",
                     "phdthesis", "mastersthesis", "data"))
"""Publication elements; ``www`` (author pages) and ``person`` are not works."""
_HOMONYM = re.compile(r"\s+\d{4}$")
_CORR = re.compile(r"^abs/(.+)$")
_ARXIV_EE = re.compile(r"^https?://arxiv\.org/abs/(.+?)(?:v\d+)?$", re.IGNORECASE)
ENTITIES = {name: chr(code) for name, code in html.entities.name2codepoint.items()}


def wanted(name: str, since: str | None = None) -> bool:
    return name.endswith((".xml", ".xml.gz"))


def read_part(part: Part, tally: Tally, since: str | None = None) -> Iterator[Entry]:
    yield from entries(_elements(part, tally), _entry, tally)


def _elements(part, tally: Tally) -> Iterator[tuple[str, ET.Element]]:
    parser = ET.XMLParser()
    parser.entity.update(ENTITIES)
    try:
        with stream(part) as body:
            root = None
            for event, element in ET.iterparse(body, events=("start", "end"), parser=parser):
                if root is None:
                    root = element
                elif event == "end" and element.tag in RECORDS:
                    yield f"{part.name} {element.get('key')}", element
                    root.clear()
    except (*READ_ERRORS, ET.ParseError) as exc:
        tally.broken(part.name, f"{type(exc).__name__}: {exc}")


def _entry(element: ET.Element) -> Entry:
    return Entry(parse_record(element), iso_date(element.get("mdate")))


def parse_record(element: ET.Element) -> Record:
    key = element.get("key")
    if not key:
        raise r.BodyError("record without a key")
    title = r.clean_title(_text(element.find("title")))
    if title and title.endswith(".") and not title.endswith(".."):
        title = title[:-1]
    venue = r.text(element.findtext("journal") or element.findtext("booktitle"))
    volume = r.text(element.findtext("volume"))
    ees = [e.text.strip() for e in element.findall("ee") if e.text]
    doi = next((d for d in map(r.doi, ees) if d), None)
    arxiv_id = _arxiv(venue, volume, ees)
    people = element.findall("author") or element.findall("editor")
    return Record(
        source=SOURCE,
        title=title,
        titles=r.title_variants([title] if title else []),
        short_titles=r.main_titles([title] if title else []),
        authors=r.people([_HOMONYM.sub("", _text(p)) for p in people], r.person_from_name),
        years=r.unique([r.year(element.findtext("year"))]),
        venue=venue,
        volume=volume,
        issue=r.text(element.findtext("number")),
        first_page=r.first_page(element.findtext("pages")),
        doi=doi,
        arxiv_id=arxiv_id,
        source_id=key,
        work_type=element.tag,
        is_preprint=arxiv_id is not None or r.is_preprint(None, [venue], doi),
        url=links.doi_url(doi) if doi else None,
    )


def _text(element: ET.Element | None) -> str:
    """An element's text with its markup (``<i>``, ``<sub>``) dropped."""
    return "".join(element.itertext()) if element is not None else ""


def _arxiv(venue: str | None, volume: str | None, ees: list[str]) -> str | None:
    if venue == "CoRR" and volume and (m := _CORR.match(volume)):
        return m.group(1)
    return next((m.group(1) for e in ees if (m := _ARXIV_EE.match(e))), None)
