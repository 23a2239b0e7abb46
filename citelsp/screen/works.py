"""A reference as a worker on another machine needs it, and the work it names.

A resolution reads only an entry's key, type, format, field values (and a CSL item as
parsed), never its place in a file: that much travels as JSON, and a worker rebuilds from it
a ``Reference`` whose work, identifiers and identity are those of the original.
"""

from __future__ import annotations

from citelsp.documents.model import Field, Reference
from citelsp.documents.text import normalize_title
from citelsp.resolution.identifiers import reference_ids
from citelsp.resolution.identity import reference_identity
from citelsp.spans import Span

_NOWHERE = Span(0, 0)


def portable(ref: Reference) -> dict:
    """What a resolution of ``ref`` reads, as JSON data (fields in their order: the first of
    two spellings of a name wins)."""
    return {
        "key": ref.key,
        "uri": ref.uri,
        "format": ref.source_format,
        "type": ref.entry_type,
        "fields": [[f.name, f.value] for f in ref.fields.values()],
        "inherited": [[name, f.value] for name, f in ref.inherited.items()],
        "csl": ref.csl,
    }


def reference_from(data: dict) -> Reference:
    """The inverse of ``portable``: a reference placed nowhere in any file."""
    ref = Reference(data["key"], data["uri"], data["format"], data["type"], _NOWHERE, _NOWHERE,
                    {name: _field(name, value) for name, value in data["fields"]},
                    data.get("csl"))
    inherited = {name: _field(name, value) for name, value in data.get("inherited") or ()}
    return ref.with_inherited(inherited) if inherited else ref


def _field(name: str, value: str) -> Field:
    return Field(name, value, _NOWHERE, _NOWHERE)


def work_key(ref: Reference) -> str:
    """The work an entry names, for one job per work across every submission: its DOI, else
    its arXiv id, else its normalized title, else the entry's own identity. Entries of one
    work that differ in what they cite (title spelling, authors, year) are resolved in the
    same job, each by its own identity (``reference_identity``)."""
    ids = reference_ids(ref)
    if ids.doi is not None:
        return f"doi:{ids.doi.value}"
    if ids.arxiv is not None:
        return f"arxiv:{ids.arxiv.value}"
    title = normalize_title(ref.work.title or "")
    return f"title:{title}" if title else f"entry:{reference_identity(ref)}"
