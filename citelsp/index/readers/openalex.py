"""OpenAlex snapshot: ``…/works/updated_date=YYYY-MM-DD/part_000.gz``, JSON Lines of Work objects
(the objects ``/works`` answers). Folders are read in name order, which is date order, so
that a newer copy of a work replaces an older one; ``since`` reads only the folders after a
date (``index update``)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from citelsp.index.readers import Entry, Part, Tally, entries, iso_date, unwrapped
from citelsp.resolution.openalex import parse_work

SOURCE = "openalex"
_OTHER = frozenset(("authors", "sources", "institutions", "topics", "domains", "fields",
                    "subfields", "publishers", "funders", "concepts", "awards", "merged_ids",
                    "parquet", "legacy-data"))
"""Folders of a whole snapshot that hold no works (other entities, the Parquet copy)."""
_FOLDER = re.compile(r"(?:^|/)updated_date=(\d{4}-\d{2}-\d{2})/")


def folder_date(name: str) -> str | None:
    """The ``updated_date`` of a part file's folder, or None outside that layout."""
    m = _FOLDER.search(name)
    return m.group(1) if m else None


def wanted(name: str, since: str | None = None) -> bool:
    """A works part file (not a manifest, another entity or the Parquet copy), of a folder
    after ``since`` when one is given."""
    folders = name.split("/")[:-1]
    if name.endswith(".parquet") or name.rsplit("/", 1)[-1].startswith("manifest") \
            or _OTHER.intersection(folders):
        return False
    date = folder_date(name)
    return since is None or date is None or date > since


def read_part(part: Part, tally: Tally, since: str | None = None) -> Iterator[Entry]:
    date = folder_date(part.name)

    def parse(work) -> Entry:
        return Entry(parse_work(work), date or iso_date(work.get("updated_date")))

    yield from entries(unwrapped(part, tally, "results"), parse, tally)
