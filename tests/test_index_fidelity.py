"""What a build stores is what the record parsers give, whatever makes the build fast.

The index keeps the service parsers' Records (the services' API objects are the snapshots'
objects): a faster build (collector thresholds, parsing processes, quicker helpers) must
store the very same rows. Every row of an index built from the snapshot-format fixtures is
compared with the parsers' output on the same objects, for one process and for several, and
the helpers' quick paths with their definitions over every name the fixtures hold.
"""

from __future__ import annotations

import re
import sqlite3
from collections import Counter
from urllib.parse import urlsplit

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from citelsp import links
from citelsp.documents.works import is_preprint_venue, names_preprint_server
from citelsp.index.build import READERS, IndexWriter, encode, work_key
from citelsp.index.keys import identifier_keys, record_title_keys, venue_names
from citelsp.index.readers import Tally, read_parts
from citelsp.resolution.crossref import parse_work as crossref_work
from citelsp.resolution.identifiers import doi_prefix
from citelsp.resolution.openalex import parse_work as openalex_work
from tests.apiserver import FIXTURES
from tests.snapshots import crossref_works, openalex_works, write_snapshots


@pytest.fixture(scope="module")
def snapshots(tmp_path_factory):
    return write_snapshots(tmp_path_factory.mktemp("fidelity") / "snapshots")


def expected(snapshots) -> dict[str, list]:
    """Each table as the record parsers' output makes it, in build order: the last copy of
    a work read twice kept (as ``close`` keeps it)."""
    entries = [(source, e) for source, path in snapshots.items()
               for e in read_parts(READERS[source], path, Tally())]
    last = {(s, work_key(e.record)): n for n, (s, e) in enumerate(entries)}
    kept = [(s, e.record) for n, (s, e) in enumerate(entries)
            if last[(s, work_key(e.record))] == n]
    venues = Counter((name, s) for s, r in kept
                     for name in {r.venue, *r.venue_aliases} - {None, ""})
    return {
        "works": [(s, work_key(r), r.title, encode(r)) for s, r in kept],
        "ids": sorted((k, s, work_key(r)) for s, r in kept for k in identifier_keys(r)),
        "title_keys": sorted((k, s, work_key(r)) for s, r in kept for k in record_title_keys(r)),
        "venues": sorted((n, s, c) for (n, s), c in venues.items()),
        "venue_names": sorted((n, v, s, c) for (n, v, s), c in Counter(
            (*pair, s) for s, r in kept for pair in venue_names(r)).items()),
        "prefixes": sorted({doi_prefix(r.doi) for s, r in kept
                            if s in ("crossref", "datacite") and r.doi}),
    }


def stored(path) -> dict[str, list]:
    db = sqlite3.connect(path)
    try:
        return {
            "works": db.execute("SELECT source, key, title, record FROM works ORDER BY id")
            .fetchall(),
            "ids": sorted(db.execute("SELECT i.key, w.source, w.key FROM ids i JOIN works w ON "
                                     "w.id = i.work").fetchall()),
            "title_keys": sorted(db.execute("SELECT t.key, w.source, w.key FROM title_keys t "
                                            "JOIN works w ON w.id = t.work").fetchall()),
            "venues": sorted(db.execute("SELECT name, source, works FROM venues").fetchall()),
            "venue_names": sorted(db.execute("SELECT * FROM venue_names").fetchall()),
            "prefixes": sorted(p for (p,) in db.execute("SELECT prefix FROM prefixes")),
        }
    finally:
        db.close()


@pytest.mark.parametrize("workers", [1, 2])
def test_every_stored_row_is_the_record_parsers_output(snapshots, tmp_path, workers):
    writer = IndexWriter(tmp_path / "i.sqlite", fresh=True)
    for source, path in snapshots.items():
        writer.add(source, path, workers=workers)
    writer.close()
    want = expected(snapshots)
    assert len(want["works"]) > 250 and want["venue_names"]
    assert stored(tmp_path / "i.sqlite") == want


def test_the_readers_give_the_service_parsers_records(snapshots):
    """The OpenAlex and Crossref readers add nothing to the service parsers: the stored
    record is the one a ``/works`` answer gives."""
    read = {s: [e.record for e in read_parts(READERS[s], snapshots[s], Tally())]
            for s in ("openalex", "crossref")}
    assert read["openalex"] == [openalex_work(w) for w in openalex_works()]
    assert read["crossref"] == [crossref_work(w) for w in crossref_works()]


def _fixture_venues() -> list[str]:
    """Every venue the recorded records name, and every journal and booktitle cited in the
    fixtures' bibliographies."""
    records = [openalex_work(w) for w in openalex_works()] + [
        crossref_work(w) for w in crossref_works()]
    cited = [m.group(2) for path in FIXTURES.parent.rglob("*.bib")
             for m in _VENUE_FIELD.finditer(path.read_text(encoding="utf-8", errors="replace"))]
    return sorted({n for r in records for n in (r.venue, *r.venue_aliases) if n} | {*cited})


_VENUE_FIELD = re.compile(r"^\s*(journal|booktitle)\s*=\s*[{\"]([^}\"]+)", re.I | re.M)


def test_preprint_venue_quick_path_over_every_fixture_venue():
    venues = _fixture_venues()
    assert len(venues) > 200
    assert [is_preprint_venue(v) for v in venues] == [names_preprint_server(v) for v in venues]
    assert any(map(is_preprint_venue, venues))  # the fixtures hold preprint servers too


@given(st.text(alphabet=st.sampled_from("arXiv bioRxiv CoRR SSRN preprints org Research "
                                        "Square ＡｒＸｉｖ é&-.:()0123"), max_size=40))
@example("ａｒｘｉｖ")  # fullwidth: folds to "arxiv", so never answered by the ASCII path
@example("Proc. of the Workshop on Preprints")
def test_preprint_venue_quick_path_equals_its_definition(venue):
    assert is_preprint_venue(venue) == names_preprint_server(venue)


def _allowed_by_urlsplit(url: object) -> str | None:
    """``links.allowed`` as first written: the host as ``urlsplit`` reads it."""
    if not isinstance(url, str) or not links._URL.fullmatch(url):
        return None
    parts = urlsplit(url)
    ok = parts.scheme == "https" and parts.netloc in links.HUMAN_LINK_HOSTS
    return url if ok else None


@given(st.builds(lambda scheme, host, rest: scheme + host + rest,
                 st.sampled_from(["https://", "HTTPS://", "http://", "https:", "", "https:///"]),
                 st.sampled_from([*links.HUMAN_LINK_HOSTS, "evil.example", "doi.org:443",
                                  "user@doi.org", "doi.org.evil.example", ""]),
                 st.text(alphabet=st.sampled_from("/?#@:.%2Fab[]\\ "), max_size=12)))
@example("https://doi.org?x=/evil.example")
@example("https://doi.org#@evil.example/")
def test_allowed_quick_host_equals_urlsplit(url):
    assert links.allowed(url) == _allowed_by_urlsplit(url)
