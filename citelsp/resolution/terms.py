"""The services' published terms (2026), per request class: pacing lanes and concurrency.

A request is of one of three classes: a single record by identifier (``SINGLE``), a list or
filter (``LIST``: the batch lookups), or a search (``SEARCH``: the title searches). Services
meter the classes differently, so each class rides in a *lane* of its origin: the pacer spaces
each lane on its own and the HTTP client keeps at most ``concurrency`` of a lane's requests
open at once. ``minIntervalMs`` (settings) is the spacing of single-record lookups; the other
lanes are spaced in the proportion the service documents, so a user with a higher quota or a
test server (``minIntervalMs: 0``) scales every lane at once.

Sources, checked December 2026 (docs/services.md gives the figures and addresses):
- Crossref, since 2025-12-01: public pool 5 single records/s and 1 list or query/s, one request
  at a time; polite pool (a ``mailto``) 10/s and 3/s, three at a time per class.
- DataCite: 500 requests per 5 minutes anonymous, 1,000 with a ``mailto``.
- arXiv: one request every 3 s, one connection at a time.
- OpenAlex (100 requests/s), Semantic Scholar (1 request/s with a key), DBLP (a second or two
  between requests), doi.org and NCBI: one lane for every class.
"""

from __future__ import annotations

from dataclasses import dataclass

SINGLE = "single"
LIST = "list"
SEARCH = "search"
CLASSES = (SINGLE, LIST, SEARCH)
ALL = ""
"""The lane of a service that paces every class alike."""


@dataclass(frozen=True)
class Lane:
    """Where a request of one class rides: its lane's name, its spacing as a multiple of the
    endpoint's ``minIntervalMs``, and how many of its requests may be open at once."""

    name: str = ALL
    factor: float = 1.0
    concurrency: int | None = None


_CROSSREF_POLITE = {SINGLE: Lane("single", 1.0, 3), LIST: Lane("list", 10 / 3, 3)}
"""10 single records/s (``minIntervalMs`` 100), 3 lists or queries/s; 3 at a time each."""
_CROSSREF_PUBLIC = {SINGLE: Lane("single", 2.0, 1), LIST: Lane("list", 10.0, 1)}
"""5 single records/s, 1 list or query/s; one request at a time each."""
_ARXIV = Lane(ALL, 1.0, 1)


def lane(endpoint: str, kind: str, *, identified: bool) -> Lane:
    """The lane of a ``kind`` request to ``endpoint``; ``identified`` when a ``mailto`` goes
    with it (Crossref's polite pool, DataCite's identified rate)."""
    if endpoint == "crossref":
        table = _CROSSREF_POLITE if identified else _CROSSREF_PUBLIC
        return table[SINGLE if kind == SINGLE else LIST]
    if endpoint == "datacite":
        return Lane(ALL, 1.0 if identified else 2.0)
    if endpoint == "arxiv":
        return _ARXIV
    return Lane()


def lanes(endpoint: str, *, identified: bool) -> dict[str, Lane]:
    """Every lane of ``endpoint`` by name."""
    return {(found := lane(endpoint, kind, identified=identified)).name: found
            for kind in CLASSES}
