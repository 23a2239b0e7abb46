"""DataCite's public data file: JSON:API DOI objects (``{"id", "type": "dois", "attributes"}``,
what ``/dois/{doi}`` answers inside ``data``), one per line, in ``dois/updated_YYYY-MM/``
folders (2024 on) or per-prefix files (2023); a folder, the tar as shipped, or a file."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from citelsp.index.readers import Entry, Part, Tally, iso_date, read_json
from citelsp.index.readers import json_files as wanted  # noqa: F401 (the files it reads)
from citelsp.resolution import records as r
from citelsp.resolution.datacite import parse_doi

SOURCE = "datacite"


def read_part(part: Part, tally: Tally, since: str | None = None) -> Iterator[Entry]:
    return read_json(part, tally, _entry, "data")


def _entry(obj: Any) -> Entry | None:
    """A findable DOI's record; a registered or draft one (not public) is passed over."""
    obj = r.mapping(obj, "record")
    data = r.mapping(obj.get("data"), "data") if "data" in obj else obj
    attributes = r.mapping(data.get("attributes"), "attributes")
    if attributes.get("state") not in (None, "findable"):
        return None
    return Entry(parse_doi({"data": data}), iso_date(attributes.get("updated")))
