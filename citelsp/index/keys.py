"""The keys a work is found by: its identifiers, and its title under every normalization a
title search compares by, so that an exact title is one B-tree probe away.

Build and query compute keys with these same functions; a key that collides (two titles with
one 64-bit hash) only adds a candidate, which matching then examines like any other.
"""

from __future__ import annotations

from hashlib import blake2b

from citelsp.documents.text import (
    has_han,
    normalize_cn_title,
    normalize_title,
    normalize_title_acronym,
    plain_title,
)
from citelsp.documents.works import venue_key
from citelsp.resolution.arxiv import base_id
from citelsp.resolution.identifiers import normalize_arxiv
from citelsp.resolution.outcome import Record
from citelsp.resolution.records import doi as clean_doi


def doi_key(doi: str) -> str | None:
    bare = clean_doi(doi)
    return f"doi:{bare}" if bare else None


def arxiv_key(arxiv_id: str) -> str:
    """``arxiv:`` and the id without prefix, URL or version (every version is one work)."""
    return f"arxiv:{base_id(normalize_arxiv(arxiv_id) or arxiv_id).lower()}"


def identifier_keys(record: Record) -> set[str]:
    """``doi:…``, ``arxiv:…`` and the source's own id (``dblp:conf/…``, ``openalex:W…``)."""
    keys = {f"{record.source}:{record.source_id}"} if record.source_id else set()
    if record.doi:  # already bare and lowercased by the parser
        keys.add(f"doi:{record.doi}")
    if record.arxiv_id:
        keys.add(arxiv_key(record.arxiv_id))
    return keys


def title_keys(title: str) -> set[int]:
    """Hashes of ``title`` as ``titles_equal`` and ``cn_titles_equal`` compare it."""
    if has_han(title):
        forms = {normalize_cn_title(plain_title(title))}
    else:
        forms = {normalize_title(title), normalize_title_acronym(title)}
    return {_hash(form) for form in forms if form}


def record_title_keys(record: Record) -> set[int]:
    """The keys of every full title variant (a title search compares full titles)."""
    keys: set[int] = set()
    for title in {record.title, *record.titles} - {None}:
        keys |= title_keys(title)
    return keys


def venue_names(record: Record) -> set[tuple[str, str]]:
    """(name, other name) for each other name the record gives its venue (an abbreviation, a
    series), both ways round: pairs that say two names are one venue (``venue_key`` forms).
    A preprint's are not (an arXiv journal reference names another venue than "arXiv")."""
    if not record.venue_aliases or record.is_preprint or not record.venue or not (
            venue := venue_key(record.venue)):
        return set()
    return {pair for alias in record.venue_aliases
            if (name := venue_key(alias)) and name != venue
            for pair in ((name, venue), (venue, name))}


def _hash(form: str) -> int:
    """A stable signed 64-bit hash (Python's ``hash`` changes from one process to the next)."""
    return int.from_bytes(blake2b(form.encode(), digest_size=8).digest(), "big", signed=True)
