"""Local checks (DESIGN.md §3) on parsed documents, without the server."""

from __future__ import annotations

import random
from pathlib import Path

from citelsp.config import Settings
from citelsp.documents.bibtex import parse_bibtex
from citelsp.workspace import Workspace
from citelsp.workspace.local_checks import EntryIndex

BIB = r"""@article{a, title = {Deep {L}earning for Cats}, doi = {10.1000/xyz}, year = 2020}
@article{b, title = {Deep Learning for Cats}, year = 2021}
@article{c, title = {Another Work}, doi = {https://doi.org/10.1000/XYZ.}}
@article{a, title = {Repeated Key}}
@article{d, title = {Bad Identifier}, doi = {not-a-doi}}
@article{e, title = {Preprint}, eprint = {2101.00001}, archivePrefix = {arXiv}}
@misc{f, title = {Same Preprint}, url = {https://arxiv.org/abs/2101.00001v2}}
@book{g, title = {Never Cited}}
"""

PAPER = """---
bibliography: refs.bib
---
See [@a; @b] and [@missing] and <!--ref:c--><!--anchor:page:4-->.
"""


def ws_with(tmp_path: Path, bib: str = BIB, paper: str = PAPER) -> tuple[Workspace, str, str]:
    (tmp_path / "refs.bib").write_text(bib, encoding="utf-8")
    (tmp_path / "paper.md").write_text(paper, encoding="utf-8")
    ws = Workspace(Settings(), [tmp_path])
    bib_uri = (tmp_path / "refs.bib").resolve().as_uri()
    paper_uri = (tmp_path / "paper.md").resolve().as_uri()
    ws.open(bib_uri, bib)
    ws.open(paper_uri, paper)
    return ws, bib_uri, paper_uri


def by_code(problems, code):
    return [p for p in problems if p.code == code]


def test_dangling_citation_on_the_key(tmp_path):
    ws, _, paper_uri = ws_with(tmp_path)
    dangling = by_code(ws.local_problems(paper_uri), "DANGLING_CITATION")
    assert [p.key for p in dangling] == ["missing"]
    assert PAPER[dangling[0].span.start:dangling[0].span.end] == "missing"


def test_duplicate_keys_on_every_occurrence_with_related_locations(tmp_path):
    ws, bib_uri, _ = ws_with(tmp_path)
    dups = by_code(ws.local_problems(bib_uri), "DUPLICATE_KEY")
    assert len(dups) == 2 and {p.key for p in dups} == {"a"}
    assert all(len(p.related) == 1 for p in dups)
    assert all(BIB[p.span.start:p.span.end] == "a" for p in dups)


def test_duplicate_works_by_doi_title_and_arxiv(tmp_path):
    ws, bib_uri, _ = ws_with(tmp_path)
    works = {p.key: p.message for p in by_code(ws.local_problems(bib_uri), "DUPLICATE_WORK")}
    assert "same DOI" in works["c"]  # DOI case and prefix/punctuation do not hide it
    assert "same title" in works["b"]  # LaTeX braces decoded before comparing
    assert "same arXiv id" in works["e"] and "same arXiv id" in works["f"]


def test_invalid_identifier_on_its_field(tmp_path):
    ws, bib_uri, _ = ws_with(tmp_path)
    invalid = by_code(ws.local_problems(bib_uri), "INVALID_IDENTIFIER")
    assert [p.key for p in invalid] == ["d"]
    assert BIB[invalid[0].span.start:invalid[0].span.end] == "not-a-doi"


def test_orphans_only_once_a_manuscript_using_the_bibliography_is_open(tmp_path):
    ws, bib_uri, paper_uri = ws_with(tmp_path)
    orphans = {p.key for p in by_code(ws.local_problems(bib_uri), "ORPHAN_REFERENCE")}
    assert orphans == {"d", "e", "f", "g"}
    ws.close(paper_uri)
    assert not by_code(ws.local_problems(bib_uri), "ORPHAN_REFERENCE")


def test_nocite_star_cites_everything(tmp_path):
    tex = "\\nocite{*}\n\\bibliography{refs}\n"
    (tmp_path / "paper.tex").write_text(tex, encoding="utf-8")
    ws, bib_uri, paper_uri = ws_with(tmp_path)
    ws.close(paper_uri)
    ws.open((tmp_path / "paper.tex").resolve().as_uri(), tex)
    assert not by_code(ws.local_problems(bib_uri), "ORPHAN_REFERENCE")


def test_slug_map_resolves_markers(tmp_path):
    paper = "<!--ref:the-cat-paper--><!--anchor:quote:cats-->\n"
    (tmp_path / "refs.bib").write_text(BIB, encoding="utf-8")
    ws = Workspace(Settings(slug_map={"the-cat-paper": "b"}), [tmp_path])
    ws.open((tmp_path / "refs.bib").resolve().as_uri(), BIB)
    uri = (tmp_path / "paper.md").resolve().as_uri()
    ws.open(uri, paper)
    assert not by_code(ws.local_problems(uri), "DANGLING_CITATION")


def test_incremental_index_matches_a_fresh_one_after_random_edits(tmp_path):
    rng = random.Random(7)
    entries = [f"@article{{k{i % 40}, title = {{Title {i % 25}}}, doi = {{10.1000/{i % 30}}}}}"
               for i in range(60)]
    text = "\n".join(entries) + "\n"
    uri = (tmp_path / "x.bib").resolve().as_uri()
    live = EntryIndex()
    for step in range(40):
        lines = text.splitlines()
        row = rng.randrange(len(lines))
        action = rng.choice(["type", "delete", "duplicate", "remove"])
        if action == "type":
            col = rng.randrange(len(lines[row]))
            lines[row] = lines[row][:col] + rng.choice("ab1{}") + lines[row][col:]
        elif action == "delete" and len(lines[row]) > 1:
            col = rng.randrange(len(lines[row]))
            lines[row] = lines[row][:col] + lines[row][col + 1:]
        elif action == "duplicate":
            lines.insert(row, lines[row])
        elif len(lines) > 2:
            del lines[row]
        text = "\n".join(lines) + "\n"
        bib = parse_bibtex(uri, text)
        live.update(bib.references)
        fresh = EntryIndex()
        fresh.update(bib.references)
        assert live.problems(bib) == fresh.problems(bib), step


def test_placeholder_identifier_is_a_local_warning_on_its_field(tmp_path):
    bib = "@misc{p, title = {Some Preprint}, eprint = {2402.XXXXX}, archivePrefix = {arXiv}}\n"
    ws, bib_uri, _ = ws_with(tmp_path, bib=bib, paper="See [@p].\n")
    [placeholder] = by_code(ws.local_problems(bib_uri), "PLACEHOLDER_IDENTIFIER")
    assert placeholder.severity.name == "WARNING"
    assert bib[placeholder.span.start:placeholder.span.end] == "2402.XXXXX"
    assert "the real arXiv id is missing" in placeholder.message
    assert by_code(ws.local_problems(bib_uri), "INVALID_IDENTIFIER") == []
