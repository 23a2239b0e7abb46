"""Crossref's public data file: JSON Lines of work objects (the ``message`` of ``/works/{doi}``),
or the older ``.json.gz`` files of ``{"items": […]}``; a folder, the tar as shipped, or a file."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from citelsp.index.readers import Entry, Part, Tally, iso_date, read_json
from citelsp.index.readers import json_files as wanted  # noqa: F401 (the files it reads)
from citelsp.resolution import records as r
from citelsp.resolution.crossref import parse_work

SOURCE = "crossref"


def read_part(part: Part, tally: Tally, since: str | None = None) -> Iterator[Entry]:
    return read_json(part, tally, _entry, "items")


def _entry(work: Any) -> Entry:
    work = r.mapping(work, "work")
    stamp = r.mapping(work.get("indexed") or work.get("deposited") or {}, "indexed")
    return Entry(parse_work(work), iso_date(stamp.get("date-time")))
