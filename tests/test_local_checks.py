"""Local checks (DESIGN.md §3) on parsed documents, without the server."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from citelsp.config import Settings
from citelsp.documents.bibtex import parse_bibtex
from citelsp.documents.model import Severity
from citelsp.workspace import Workspace
from citelsp.workspace.checks import MAX_RELATED, EntryIndex
from citelsp.workspace.navigation import similar_keys
from citelsp.workspace.view import View

BIB = r"""@article{a, title = {Deep {L}earning for Cats}, doi = {10.1000/xyz}, year = 2020,
  author = {M{\"u}ller, Anna}}
@article{b, title = {Deep Learning for Cats}, year = 2020, author = {Anna Müller and Bo Li}}
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


def ws_with(tmp_path: Path, bib: str = BIB, paper: str = PAPER, name: str = "paper.md"
            ) -> tuple[Workspace, str, str]:
    (tmp_path / "refs.bib").write_text(bib, encoding="utf-8")
    (tmp_path / name).write_text(paper, encoding="utf-8")
    ws = Workspace(Settings(), [tmp_path])
    bib_uri = (tmp_path / "refs.bib").resolve().as_uri()
    paper_uri = (tmp_path / name).resolve().as_uri()
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


@pytest.mark.parametrize(("name", "text", "how"), [
    ("paper.md", "See [@smith2020].\n", "name one with bibliography: in its front matter"),
    ("paper.tex", "See \\cite{smith2020}.\n", "name one with \\bibliography{} or "
     "\\addbibresource{}, or its main file with % !TeX root = main.tex")])
def test_a_manuscript_with_no_bibliography_at_all_says_so_on_each_citation(tmp_path, name,
                                                                           text, how):
    (tmp_path / name).write_text(text, encoding="utf-8")
    ws, errors = Workspace.for_paths([tmp_path / name], Settings())
    (dangling,) = by_code(ws.local_problems((tmp_path / name).as_uri()), "DANGLING_CITATION")
    assert dangling.message == ("citation key 'smith2020' is not in any bibliography of this "
                                f"manuscript (it has none: {how})")
    assert errors == [f"{tmp_path / name}: no bibliography found: {how}, or pass --bib FILE"]


def test_a_citation_of_an_entry_that_cannot_be_read_points_at_it(tmp_path):
    """The key is in the bibliography, but its entry is broken: "not in any bibliography"
    would send the writer looking for a missing entry instead of an unclosed brace."""
    bib = BIB + "@article{broken, title = {Unclosed, year = 2020,\n@book{h, title = {H}}\n"
    paper = PAPER.replace("[@missing]", "[@missing; @broken]")
    ws, bib_uri, paper_uri = ws_with(tmp_path, bib, paper)
    dangling = {p.key: p for p in by_code(ws.local_problems(paper_uri), "DANGLING_CITATION")}
    assert set(dangling) == {"missing", "broken"}
    assert dangling["missing"].message.endswith("is not in any bibliography of this manuscript")
    assert dangling["missing"].related == ()
    (malformed,) = [p for p in ws.local_problems(bib_uri)
                    if p.code == "MALFORMED_ENTRY" and p.key == "broken"]
    assert dangling["broken"].message == (
        "citation key 'broken': its entry in refs.bib cannot be read (the MALFORMED_ENTRY "
        "error at line 10)")
    assert [(r.uri, r.span) for r in dangling["broken"].related] == [(bib_uri, malformed.span)]
    assert bib.count("\n", 0, malformed.span.start) + 1 == 10


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
    assert "same title, first author and year" in works["b"]  # LaTeX decoded first
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
    bib = None
    deltas = 0
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
        bib = parse_bibtex(uri, text, previous=bib)  # incremental: the index takes its delta
        deltas += bib.delta is not None
        live.update([bib])
        whole = parse_bibtex(uri, text)
        fresh = EntryIndex()
        fresh.update([whole])
        assert live.problems(bib) == fresh.problems(whole), step
    assert deltas > 30


def test_an_edit_replaces_only_the_entry_it_touched(tmp_path):
    text = "".join(f"@article{{k{i}, title = {{Title {i}}}, doi = {{10.1000/{i}}}}}\n"
                   for i in range(2000))
    uri = (tmp_path / "x.bib").resolve().as_uri()
    first = parse_bibtex(uri, text)
    at = text.index("Title 1000")
    second = parse_bibtex(uri, text[:at] + "A " + text[at:], previous=first)
    assert second.delta is not None and second.delta.base == first.version
    assert [r.key for r in second.delta.gone] == [r.key for r in second.delta.added] == ["k1000"]
    assert second.references[1000] is second.delta.added[0]
    assert all(a is b for a, b in zip(first.references[:1000], second.references, strict=False))


def test_a_keystroke_updates_the_entry_index_by_the_delta(tmp_path):
    """A duplicate typed into a large library shows at once, and removing it clears it, with
    the index updated from the parse's delta (no entry-by-entry comparison)."""
    text = "".join(f"@article{{k{i}, title = {{Title {i}}}, doi = {{10.1000/{i}}}}}\n"
                   for i in range(500))
    ws = Workspace(Settings(), [tmp_path])
    uri = (tmp_path / "x.bib").resolve().as_uri()
    ws.open(uri, text)
    assert not by_code(ws.local_problems(uri), "DUPLICATE_WORK")
    [index] = ws.checks._indexes.values()
    edited = text.replace("doi = {10.1000/7}", "doi = {10.1000/8}")
    doc = ws.open(uri, edited)
    assert doc.delta is not None and len(doc.delta.added) == 1
    assert index._absorbed[uri] is doc  # taken in at the parse, by its delta
    assert [p.key for p in by_code(ws.local_problems(uri), "DUPLICATE_WORK")] == ["k7", "k8"]
    ws.open(uri, text)
    assert not by_code(ws.local_problems(uri), "DUPLICATE_WORK")


def test_placeholder_identifier_is_a_local_warning_on_its_field(tmp_path):
    bib = "@misc{p, title = {Some Preprint}, eprint = {2402.XXXXX}, archivePrefix = {arXiv}}\n"
    ws, bib_uri, _ = ws_with(tmp_path, bib=bib, paper="See [@p].\n")
    [placeholder] = by_code(ws.local_problems(bib_uri), "PLACEHOLDER_IDENTIFIER")
    assert placeholder.severity.name == "WARNING"
    assert bib[placeholder.span.start:placeholder.span.end] == "2402.XXXXX"
    assert "the real arXiv id is missing" in placeholder.message
    assert by_code(ws.local_problems(bib_uri), "INVALID_IDENTIFIER") == []


def local(bib: str) -> list:
    ws = Workspace(Settings())
    uri = "file:///w/refs.bib"
    ws.open(uri, bib)
    return ws.local_problems(uri)


def duplicates(bib: str) -> dict[str, str]:
    return {p.key: p.message for p in by_code(local(bib), "DUPLICATE_WORK")}


def test_recurring_columns_are_not_duplicates():
    bib = "".join(
        f"@article{{cal{i}, title = {{Calendar}}, journal = {{TUGboat}}, year = {1990 + i // 3},"
        f" volume = {{{i // 3}}}, number = {{{i % 3}}}, pages = {{{10 * i}--{10 * i + 2}}}}}\n"
        f"@article{{pres{i}, title = {{From the President}}, author = {{Beeton, Barbara}},"
        f" year = {{{1990 + i}}}}}\n"
        for i in range(9)
    )
    assert duplicates(bib) == {}


def test_same_title_author_and_year_but_other_volume_or_page_is_another_work():
    bib = (
        "@article{v1, title = {Notes}, author = {Knuth, D.}, year = 1990, volume = 1}\n"
        "@article{v2, title = {Notes}, author = {Knuth, D.}, year = 1990, volume = 2}\n"
        "@article{p1, title = {Hints}, author = {Knuth, D.}, year = 1990, pages = {1--2}}\n"
        "@article{p2, title = {Hints}, author = {Knuth, D.}, year = 1990, pages = {7--9}}\n"
        "@article{any, title = {Hints}, author = {Knuth, Donald}, year = 1990}\n"
    )
    found = duplicates(bib)
    assert set(found) == {"p1", "p2", "any"}  # no page on 'any': it may be either
    assert "'any' and 'p1', 'p2'" in found["any"]


def test_isbn_identifies_books_not_their_chapters():
    bib = (
        "@book{b1, title = {TeX}, isbn = {0-201-13447-0}}\n"
        "@book{b2, title = {The TeXbook}, isbn = {978-0-201-13447-6}}\n"
        "@incollection{c1, title = {One}, booktitle = {B}, isbn = {0-201-13447-0}}\n"
        "@incollection{c2, title = {Two}, booktitle = {B}, isbn = {0-201-13447-0}}\n"
    )
    found = duplicates(bib)
    assert set(found) == {"b1", "b2"} and "same ISBN" in found["b1"]


def test_many_copies_name_a_bounded_number_of_others():
    n = 1500
    entry = "@article{{e{}, title = {{Editorial}}, doi = {{10.1000/x}}}}\n"
    bib = "".join(entry.format(i) for i in range(n))
    found = by_code(local(bib), "DUPLICATE_WORK")
    assert len(found) == n
    assert all(len(p.related) == MAX_RELATED for p in found)
    assert f"and {n - 1 - MAX_RELATED} more entries" in found[0].message
    same_key = "".join("@article{dup, title = {T}}\n" for _ in range(n))
    keys = by_code(local(same_key), "DUPLICATE_KEY")
    assert len(keys) == n and all(len(p.related) == MAX_RELATED for p in keys)
    assert keys[0].message == f"key 'dup' is defined {n} times"


def test_keys_that_differ_only_in_case_warn():
    found = by_code(local("@misc{Foo, title = {A}}\n@misc{foo, title = {B}}\n@misc{bar}\n"),
                    "DUPLICATE_KEY")
    assert [(p.key, p.severity) for p in found] == [
        ("Foo", Severity.WARNING), ("foo", Severity.WARNING)
    ]  # fmt: skip
    assert "'foo'" in found[0].message and "biber" in found[0].message
    assert len(found[0].related) == 1


def test_quarto_and_pandoc_crossref_references_are_not_dangling_citations(tmp_path):
    """``@fig-plot`` (Quarto) and ``@sec:intro`` (pandoc-crossref) point into the document,
    not the bibliography; a key of that shape an entry has is still a citation."""
    bib = "@book{fig-entry, title = {A Book Whose Key Looks Like a Figure}}\n"
    paper = ("---\nbibliography: refs.bib\n---\nSee @fig-plot, @tbl-data, [@sec-intro], "
             "@thm-main, @eq:energy, @sec:intro, [@fig-entry] and [@smith].\n")
    ws, bib_uri, paper_uri = ws_with(tmp_path, bib, paper)
    assert [p.key for p in by_code(ws.local_problems(paper_uri), "DANGLING_CITATION")] == [
        "smith"]
    assert {r.key for r in ws.wanted()} == {"fig-entry"}
    only = tmp_path / "only.qmd"
    only.write_text("See @fig-plot and @eq-energy.\n")
    _, errors = Workspace.for_paths([only], Settings())
    assert errors == [], "cross-references alone need no bibliography"


ALIASED = """@article{benguirat2024,
  ids = {ben2024blending, bg24},
  title = {Blending Different Latency Traffic With Beta Mixing},
  author = {Ben Guirat, Iness}, year = {2024},
}
"""


def test_a_latex_citation_of_an_ids_alias_names_its_entry_as_biber_reads_it(tmp_path):
    """Zotero and JabRef keep a renamed entry's old key in biblatex's ``ids``; biber resolves
    ``\\cite{old}`` to the entry, so it is neither dangling nor leaves the entry an orphan."""
    paper = "As shown \\cite{ben2024blending}.\n\\addbibresource{refs.bib}\n"
    ws, bib_uri, tex_uri = ws_with(tmp_path, ALIASED, paper, "paper.tex")
    assert [p.code for p in ws.local_problems(tex_uri)] == []
    assert [p.code for p in ws.local_problems(bib_uri)] == []
    (ref,) = ws.corpus.get(bib_uri).references
    (citation,) = ws.graph.citations_of(ref)
    assert paper[citation.span.start:citation.span.end] == "ben2024blending"


def test_a_pandoc_citation_of_an_ids_alias_is_dangling_and_says_whose_alias_it_is(tmp_path):
    """pandoc's citeproc does not read ``ids`` (jgm/citeproc#158): the citation is missing
    from the output, so it stays an error, with the key to cite instead."""
    paper = "---\nbibliography: refs.bib\n---\nSee [@bg24].\n"
    ws, bib_uri, paper_uri = ws_with(tmp_path, ALIASED, paper)
    (dangling,) = by_code(ws.local_problems(paper_uri), "DANGLING_CITATION")
    assert dangling.message == ("citation key 'bg24' is an alias of 'benguirat2024' (its ids "
                                "field), which only biber reads: cite 'benguirat2024'")
    (where,) = dangling.related
    assert ALIASED[where.span.start:where.span.end] == "ben2024blending, bg24"
    assert similar_keys(View(ws), ws.corpus.get(paper_uri), "bg24")[0] == "benguirat2024"


SETS = r"""@set{stdmodel, entryset = {glashow, weinberg}}
@article{glashow, author = {Glashow, Sheldon}, title = {Partial Symmetries of Weak
  Interactions}, journaltitle = {Nucl. Phys.}, volume = {22}, date = {1961}}
@article{weinberg, author = {Weinberg, Steven}, title = {A Model of Leptons},
  journaltitle = {Phys. Rev. Lett.}, volume = {19}, date = {1967}}
@book{unused, title = {Unused}}
"""


def test_citing_a_biblatex_set_cites_its_members(tmp_path):
    """A @set (or a \\defbibentryset in the document) is no work: its members are what is
    printed, so they are checked and cited, and the set is neither looked up nor dangling."""
    paper = ("\\defbibentryset{pair}{weinberg,glashow}\n"
             "See \\cite{stdmodel} and \\cite{pair}.\n\\addbibresource{refs.bib}\n")
    ws, bib_uri, tex_uri = ws_with(tmp_path, SETS, paper, "paper.tex")
    bib = ws.corpus.get(bib_uri)
    assert [r.key for r in bib.references] == ["glashow", "weinberg", "unused"]
    assert bib.sets == {"stdmodel": ("glashow", "weinberg")}
    assert [p.code for p in ws.local_problems(tex_uri)] == []
    assert [p.key for p in ws.local_problems(bib_uri)] == ["unused"]  # its orphan hint
    cited = {r.key: [paper[c.span.start:c.span.end] for c in ws.graph.citations_of(r)]
             for r in bib.references}
    assert cited == {"glashow": ["stdmodel", "pair"], "weinberg": ["stdmodel", "pair"],
                     "unused": []}
