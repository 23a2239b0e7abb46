"""The local index: snapshot files as publishers ship them (written from the recorded bodies)
→ one SQLite file → works by identifier and by title (DESIGN.md §12)."""

from __future__ import annotations

import dataclasses
import gzip
import json
import xml.etree.ElementTree as ET

import pytest

from citelsp.index.build import IndexFileError, IndexWriter, Subset
from citelsp.index.query import IndexOpenError, LocalIndexes
from citelsp.index.readers import Tally, read_parts
from citelsp.index.readers import arxiv as arxiv_reader
from citelsp.resolution.arxiv import parse_entry
from citelsp.resolution.crossref import parse_work as crossref_work
from tests.apiserver import FIXTURES
from tests.snapshots import (
    ATOM,
    arxiv_papers,
    crossref_works,
    datacite_records,
    jsonl,
    openalex_works,
    write_gz,
    write_snapshots,
)


def build(path, sources, *, fresh=True, subset=None, workers=None):
    writer = IndexWriter(path, fresh=fresh)
    subset = subset or Subset()
    loaded = {name: writer.add(name, where, subset=subset, workers=workers)
              for name, where in sources.items()}
    writer.close()
    return loaded


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    root = tmp_path_factory.mktemp("index")
    sources = write_snapshots(root / "snapshots")
    loaded = build(root / "works.sqlite", sources)
    index = LocalIndexes.open([root / "works.sqlite"])
    yield index, loaded
    index.close()


def test_every_snapshot_format_is_read(full):
    index, loaded = full
    assert {s: (n.kept, n.tally.malformed, n.tally.unreadable) for s, n in loaded.items()} == {
        "openalex": (len(openalex_works()), 0, 0),
        "crossref": (len(crossref_works()), 0, 0),
        "datacite": (len(datacite_records()), 0, 0),
        "arxiv": (len(arxiv_papers()), 0, 0),
        "dblp": (20, 0, 0),
    }
    labels = {s.source: s.label for s in index.snapshots}
    assert labels["openalex"] == "OpenAlex snapshot 2025-09"  # the newest updated_date folder
    assert labels["dblp"] == "DBLP snapshot 2025-06"


def test_a_doi_in_several_sources_gives_each_source_record(full):
    index, _ = full
    hits = index.by_doi("https://doi.org/10.1016/J.ADDR.2015.01.008")
    assert sorted(h.record.source for h in hits) == ["crossref", "dblp", "openalex"]
    body = json.loads((FIXTURES / "crossref/10.1016_j.addr.2015.01.008.json").read_text())
    crossref = next(h.record for h in hits if h.record.source == "crossref")
    assert crossref == crossref_work(body["message"])  # the service parser's very Record


def test_arxiv_snapshot_records_equal_the_export_api_records(full):
    index, _ = full
    root = ET.fromstring((FIXTURES / "arxiv/id_1605.08386.xml").read_bytes())
    api = parse_entry(next(root.iter(f"{ATOM}entry")))
    [hit] = index.by_arxiv("arXiv:1605.08386v1")
    assert hit.snapshot.label.startswith("arXiv snapshot 20")
    assert dataclasses.replace(hit.record, source_id=api.source_id) == api


def test_dblp_entities_markup_and_homonym_numbers(tmp_path):
    xml = ('<?xml version="1.0" encoding="ISO-8859-1"?>\n<!DOCTYPE dblp SYSTEM "dblp.dtd">\n'
           '<dblp><inproceedings mdate="2024-03-01" key="conf/x/M24"><author>J&uuml;rgen '
           'M&ouml;ller 0002</author><title>On <i>k</i>-means &amp; friends.</title>'
           "<pages>10-20</pages><year>2024</year><booktitle>ICML</booktitle>"
           "<ee>https://arxiv.org/abs/2401.00001v2</ee></inproceedings>"
           '<www key="homepages/x"><author>Someone</author><title>Home Page</title></www></dblp>')
    write_gz(tmp_path / "dblp.xml.gz", xml.encode("latin-1"))
    build(tmp_path / "i.sqlite", {"dblp": tmp_path / "dblp.xml.gz"})
    index = LocalIndexes.open([tmp_path / "i.sqlite"])
    [hit] = index.by_arxiv("2401.00001")
    record = hit.record
    assert (record.title, record.authors[0].family, record.authors[0].given) == (
        "On k-means & friends", "Möller", "Jürgen")
    assert (record.venue, record.first_page, record.years, record.work_type) == (
        "ICML", "10", (2024,), "inproceedings")
    assert index.snapshots[0].works == 1  # the homepage is no work


def test_malformed_lines_are_skipped_counted_and_reported(tmp_path):
    works = openalex_works()[:3]
    lines = jsonl(works[:1]) + b'{"id": "https://openalex.org/W1", "title": \n' + \
        b'{"no id": true}\n' + jsonl(works[1:])
    write_gz(tmp_path / "works/updated_date=2025-01-01/part_000.gz", lines)
    loaded = build(tmp_path / "i.sqlite", {"openalex": tmp_path / "works"})["openalex"]
    assert (loaded.kept, loaded.tally.malformed) == (3, 2)
    assert "part_000.gz line 2: skipped" in loaded.tally.problems[0]
    [snapshot] = LocalIndexes.open([tmp_path / "i.sqlite"]).snapshots
    assert (snapshot.works, snapshot.malformed) == (3, 2)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_truncated_gzip_is_reported_and_the_other_files_still_read(tmp_path, workers):
    works = crossref_works()
    whole = gzip.compress(jsonl(works[:40]))
    (tmp_path / "crossref").mkdir()
    (tmp_path / "crossref/0.jsonl.gz").write_bytes(whole[: len(whole) // 2])
    write_gz(tmp_path / "crossref/1.jsonl.gz", jsonl(works[40:45]))
    loaded = build(tmp_path / "i.sqlite", {"crossref": tmp_path / "crossref"},
                   workers=workers)["crossref"]
    assert loaded.tally.unreadable == 1
    assert "0.jsonl.gz: unreadable from here on (EOFError" in loaded.tally.problems[-1]
    assert 5 < loaded.kept < 45  # what came before the cut, and all of the next file


def test_an_update_replaces_a_changed_record_and_adds_newer_folders(tmp_path):
    works = openalex_works()
    first, changed = works[0], dict(works[0], title="A Corrected Title Of The Work")
    write_gz(tmp_path / "works/updated_date=2025-01-01/part_000.gz", jsonl(works[:5]))
    build(tmp_path / "i.sqlite", {"openalex": tmp_path / "works"})
    write_gz(tmp_path / "works/updated_date=2025-03-01/part_000.gz",
             jsonl([changed, *works[5:8]]))
    loaded = build(tmp_path / "i.sqlite", {"openalex": tmp_path / "works"}, fresh=False)
    assert (loaded["openalex"].kept, loaded["openalex"].replaced) == (4, 1)  # only the new folder
    index = LocalIndexes.open([tmp_path / "i.sqlite"])
    [hit] = index.by_doi(first["doi"])
    assert hit.record.title == "A Corrected Title Of The Work"
    assert hit.snapshot.label == "OpenAlex snapshot 2025-03" and hit.snapshot.works == 8
    assert [h.record.title for h in index.by_title("A corrected title of the work")][:1] == [
        "A Corrected Title Of The Work"]
    assert not any(h.record.source_id == hit.record.source_id
                   for h in index.by_title(first["title"]))


def test_titles_found_exactly_and_by_their_words(full):
    index, _ = full
    exact = index.by_title("HEAT-BATH random walks with Markov bases")
    assert exact[0].record.arxiv_id == "1605.08386"
    near = index.by_title("heat bath random walks")  # every word in it: a candidate
    assert [h.record.arxiv_id for h in near] == ["1605.08386"]
    assert index.by_title("heat bath random walks on graphs") == []  # "graphs" is not in it
    assert index.by_title("A title no snapshot has ever held, surely") == []


def test_subsets_by_year_and_venue(tmp_path):
    sources = {"crossref": write_gz(tmp_path / "c.jsonl.gz", jsonl(crossref_works()))}
    recent = build(tmp_path / "y.sqlite", sources, subset=Subset(years=(2020, 2030)))
    assert 0 < recent["crossref"].kept < len(crossref_works())
    venue = crossref_works()[0]["container-title"][0]
    one = build(tmp_path / "v.sqlite", sources, subset=Subset(venues=frozenset({venue.lower()})))
    assert one["crossref"].kept >= 1
    assert LocalIndexes.open([tmp_path / "v.sqlite"]).indexes[0].venue(venue)


def test_not_an_index(tmp_path):
    (tmp_path / "x.sqlite").write_text("hello")
    with pytest.raises(IndexOpenError):
        LocalIndexes.open([tmp_path / "x.sqlite"])
    with pytest.raises(IndexOpenError):
        LocalIndexes.open([tmp_path / "missing.sqlite"])
    with pytest.raises(IndexFileError):
        IndexWriter(tmp_path / "missing.sqlite", fresh=False)


def test_arxiv_reader_reads_kaggle_lines(tmp_path):
    path = tmp_path / "arxiv.json"
    path.write_bytes(jsonl(arxiv_papers()[:2]) + b"not json\n")
    tally = Tally()
    assert len(list(read_parts(arxiv_reader, path, tally))) == 2 and tally.malformed == 1


def test_an_interrupted_update_leaves_the_index_as_it_was(tmp_path, monkeypatch):
    from citelsp.index import build as build_module

    works = openalex_works()
    write_gz(tmp_path / "works/updated_date=2025-01-01/part_000.gz", jsonl(works[:5]))
    build(tmp_path / "i.sqlite", {"openalex": tmp_path / "works"})
    write_gz(tmp_path / "works/updated_date=2025-03-01/part_000.gz",
             jsonl([dict(w, title="Changed") for w in works[:8]]))
    real_rows, calls = build_module._rows, []

    def failing(entries, subset):
        rows = real_rows(entries, subset)
        calls.append(len(rows))
        if len(calls) == 2:
            raise KeyboardInterrupt
        return rows

    monkeypatch.setattr(build_module, "BATCH", 3)
    monkeypatch.setattr(build_module, "_rows", failing)
    writer = IndexWriter(tmp_path / "i.sqlite", fresh=False)
    # a rollback journal: without one SQLite's rollback is undefined once pages are written
    assert writer.db.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    with pytest.raises(KeyboardInterrupt):
        writer.add("openalex", tmp_path / "works", workers=1)
    writer.abandon()
    index = LocalIndexes.open([tmp_path / "i.sqlite"])
    assert index.snapshots[0].works == 5
    assert index.by_doi(works[0]["doi"])[0].record.title != "Changed"


@pytest.mark.parametrize("workers", [1, 2])
def test_a_tar_as_crossref_ships_it(tmp_path, workers):
    """The public data file is a tar of gzip files of ``{"items": […]}``: read as shipped,
    member by member, by one process or several (a few members ahead, never all at once)."""
    import io
    import tarfile

    works = crossref_works()
    with tarfile.open(tmp_path / "crossref.tar", "w") as archive:
        for n in range(0, len(works), 20):
            data = gzip.compress(json.dumps({"items": works[n:n + 20]}).encode())
            info = tarfile.TarInfo(f"April 2025 Public Data File/{n}.json.gz")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    loaded = build(tmp_path / "i.sqlite", {"crossref": tmp_path / "crossref.tar"},
                   workers=workers)["crossref"]
    assert (loaded.kept, loaded.tally.malformed) == (len(works), 0)
    index = LocalIndexes.open([tmp_path / "i.sqlite"])
    assert index.by_doi(works[-1]["DOI"])[0].record.source == "crossref"
