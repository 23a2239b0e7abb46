"""What an entry cites, as one stable string: the key results and decisions are stored under.

A resolution depends on the identifiers, title, year and authors (and, for Chinese literature
checked by PubMed coordinates, the journal coordinates too); a human decision on the first
five. Editing anything else (venue, pages) keeps the identity, so stored answers are reused
and only the accuracy checks are recomputed.
"""

from __future__ import annotations

import hashlib
import json

from citelsp.documents.model import Reference, Work
from citelsp.documents.text import fold_name, normalize_title
from citelsp.resolution.chinese_literature import is_applicable
from citelsp.resolution.identifiers import ReferenceIds, reference_ids

_TO_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False).encode
"""``json.dumps`` with these options, without building an encoder for every entry (nor
checking for cycles, which a fresh list of strings cannot have)."""


def _doi(ids: ReferenceIds) -> str:
    """The DOI as cited: a shortDOI stays itself once resolved, so the identity of an entry
    is the same before and after its lookup."""
    if ids.doi is not None:
        return ids.doi.short or ids.doi.value
    return ids.short_doi.value if ids.short_doi is not None else ""


def identity_of(ids: ReferenceIds, work: Work) -> str:
    """A stable hash of what the entry cites: DOI, arXiv id, title, year, author families."""
    parts = [
        _doi(ids),
        ids.arxiv.value if ids.arxiv else "",
        normalize_title(work.title or ""),
        str(work.year or ""),
        [fold_name(p.family) for p in work.authors],
    ]
    return hashlib.sha256(_TO_JSON(parts).encode("utf-8")).hexdigest()[:16]


def reference_identity(ref: Reference) -> str:
    """What a resolution of ``ref`` depends on: ``identity_of`` plus, for Chinese literature
    checked by PubMed coordinates, ``:`` and a hash of the journal, volume, pages and ISSN
    (the part before the ``:`` is what a human decision is keyed by)."""
    work = ref.work
    identity = identity_of(reference_ids(ref), work)
    if is_applicable(work):
        coordinates = (work.venue, work.volume, work.issue, work.pages, work.issn, work.language)
        identity += ":" + hashlib.sha256(repr(coordinates).encode()).hexdigest()[:8]
    return identity
