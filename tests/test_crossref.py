"""BibTeX ``crossref``: what a child takes from its parent, what it never takes, and how the
checks, the verdict and the editor treat parents (``documents/crossref.py``)."""

from __future__ import annotations

from lsprotocol import types

from citelsp.config import Settings
from citelsp.documents.bibtex import parse_bibtex
from citelsp.resolution.identifiers import reference_ids
from citelsp.verdict.placement import verification_problems
from citelsp.workspace import Workspace
from tests.lsp_session import lsp_session, open_file, wait_until
from tests.test_accuracy_e2e import WOLF_AUTHORS, findings, item
from tests.test_engine import verify
from tests.test_lsp_verify import api, env, position_of, verified  # noqa: F401  (fixtures)

URI = "file:///w/refs.bib"

DBLP = """@inproceedings{vaswani,
  author    = {Ashish Vaswani and Noam Shazeer},
  title     = {Attention is All you Need},
  pages     = {5998--6008},
  crossref  = {DBLP:conf/nips/2017},
}

@proceedings{DBLP:conf/nips/2017,
  editor    = {Isabelle Guyon},
  title     = {Advances in Neural Information Processing Systems 30},
  booktitle = {Advances in Neural Information Processing Systems 30: NIPS 2017},
  publisher = {Curran Associates},
  year      = {2017},
  volume    = {30},
  pages     = {7000},
  isbn      = {978-1-5108-6096-4},
  doi       = {10.5555/3295222},
  url       = {https://proceedings.neurips.cc/2017},
  note      = {arXiv:1706.03762 is not this volume's},
}
"""


def refs(text: str) -> dict:
    return {r.key: r for r in parse_bibtex(URI, text).references}


def test_a_child_takes_venue_year_and_publisher_but_never_identifiers_title_or_pages():
    child = refs(DBLP)["vaswani"]
    assert sorted(child.inherited) == ["booktitle", "publisher", "volume", "year"]
    work = child.work
    assert (work.year, work.venue, work.publisher, work.volume) == (
        2017, "Advances in Neural Information Processing Systems 30: NIPS 2017",
        "Curran Associates", "30")
    assert work.title == "Attention is All you Need" and work.pages == "5998–6008"
    assert "doi" not in child.fields and child.value("doi") is None  # own fields unchanged
    ids = reference_ids(child)
    assert ids.doi is None and ids.arxiv is None


def test_the_childs_own_fields_win_and_the_parents_title_fills_booktitle_when_it_has_none():
    text = DBLP.replace("  booktitle = {Advances in Neural Information Processing Systems 30: "
                        "NIPS 2017},\n", "").replace("pages     = {5998--6008},",
                                                     "pages = {1--2}, year = {2018},")
    child = refs(text)["vaswani"]
    assert child.work.year == 2018  # its own
    assert child.work.venue == "Advances in Neural Information Processing Systems 30"
    assert child.inherited["booktitle"].name == "title"  # the parent's title field


def test_parents_are_found_in_any_letter_case_through_chains_and_cycles_stop():
    text = """@inbook{ch, title = {Chapter}, crossref = {Vol}}
@book{vol, title = {Volume One}, crossref = {set}, volume = 1}
@book{set, title = {The Set}, author = {Knuth, Donald E.}, year = 1968, publisher = {AW}}
@article{loop1, title = {L1}, crossref = {loop2}}
@article{loop2, title = {L2}, crossref = {loop1}, journal = {J}, year = 2000}
@article{lost, title = {Lost}, crossref = {nowhere}}
"""
    found = refs(text)
    ch = found["ch"].work
    assert (ch.venue, ch.volume, ch.year, [p.family for p in ch.authors]) == (
        "Volume One", "1", 1968, ["Knuth"])
    assert found["loop1"].work.year == 2000 and found["loop2"].inherited == {}
    assert found["lost"].inherited == {}


def test_an_edit_to_the_parent_relinks_its_children_and_an_edit_elsewhere_keeps_them():
    first = parse_bibtex(URI, DBLP + "@misc{other, title = {Other}}\n")
    child = first.references[0]
    other_edit = parse_bibtex(URI, first.text.replace("{Other}", "{Other!}"), previous=first)
    assert other_edit.references[0] is child  # nothing it depends on changed
    year_edit = parse_bibtex(URI, other_edit.text.replace("{2017}", "{2016}"),
                             previous=other_edit)
    relinked = year_edit.references[0]
    assert relinked is not child and relinked.work.year == 2016
    gone = parse_bibtex(URI, year_edit.text.replace("@proceedings{DBLP:conf/nips/2017",
                                                    "@proceedings{renamed"), previous=year_edit)
    assert gone.references[0].inherited == {} and gone.references[0].work.year is None
    again = parse_bibtex(URI, gone.text, previous=gone)  # an unchanged re-parse is stable
    assert again.references[0] is gone.references[0]


def _workspace(tmp_path, bib: str, cited: str, other_bib: str | None = None):
    (tmp_path / "refs.bib").write_text(bib, encoding="utf-8")
    names = "refs"
    if other_bib is not None:
        (tmp_path / "more.bib").write_text(other_bib, encoding="utf-8")
        names = "refs,more"
    paper = f"See \\cite{{{cited}}}.\n\\bibliography{{{names}}}\n"
    (tmp_path / "paper.tex").write_text(paper, encoding="utf-8")
    ws = Workspace(Settings(), [tmp_path])
    for name in ("refs.bib", "more.bib", "paper.tex"):
        if (tmp_path / name).exists():
            ws.open((tmp_path / name).as_uri(), (tmp_path / name).read_text(encoding="utf-8"))
    return ws, (tmp_path / "refs.bib").as_uri()


def test_a_parent_of_a_cited_entry_is_no_orphan(tmp_path):
    """Nor what biblatex prints with a cited entry: its ``xref`` and ``related`` entries."""
    more = ("@book{translation, title = {Übersetzung}, related = {original, first}, "
            "xref = {series}}\n@book{original, title = {Original}}\n"
            "@book{first, title = {First}}\n@book{series, title = {Series}}\n")
    ws, bib = _workspace(tmp_path, DBLP + more + "@misc{unused, title = {Unused}}\n",
                         "vaswani,translation")
    orphans = [p.key for p in ws.local_problems(bib) if p.code == "ORPHAN_REFERENCE"]
    assert orphans == ["unused"]


def test_a_crossref_to_no_entry_is_a_warning_on_its_value_unless_a_co_used_file_has_it(tmp_path):
    typo = DBLP.replace("crossref  = {DBLP:conf/nips/2017}", "crossref  = {DBLP:conf/nisp/2017}")
    ws, bib = _workspace(tmp_path, typo, "vaswani")
    (warning,) = [p for p in ws.local_problems(bib) if p.code == "UNDEFINED_CROSSREF"]
    assert typo[warning.span.start:warning.span.end] == "DBLP:conf/nisp/2017"
    assert warning.message.startswith("vaswani: crossref 'DBLP:conf/nisp/2017' names no entry")
    assert warning.severity == 2
    ws, bib = _workspace(tmp_path, typo, "vaswani",
                         other_bib="@proceedings{dblp:conf/NISP/2017, title = {X}}\n")
    assert not [p for p in ws.local_problems(bib) if p.code == "UNDEFINED_CROSSREF"]


# --- verification: the inherited year is checked, and the finding points at it ---------------


def _genome(parent_year: str) -> str:
    """Genome Research 35(3):432–445 (Crossref, recorded), its journal, year and issue
    written once in a @periodical parent."""
    return (
        "@article{wolf,\n  title = {Ancient dog introgression into the Iberian wolf genome may "
        "have facilitated adaptation to human-dominated landscapes},\n"
        f"  author = {{{WOLF_AUTHORS}}},\n  pages = {{432--445}},\n"
        "  doi = {10.1101/gr.279093.124},\n  crossref = {genres35},\n}\n"
        f"@periodical{{genres35,\n  title = {{Genome Res.}},\n  year = {{{parent_year}}},\n"
        "  volume = {35}, number = {3},\n  doi = {10.1101/not-this-paper},\n}\n"
    )


async def test_a_year_taken_from_the_parent_is_checked_and_the_finding_points_at_it(
        api_server, api_settings):
    clean = (await verify(api_settings, _genome("2025")))["wolf"]
    assert clean.judgement.verdict == "true" and item(clean) is None
    text = _genome("2019")
    wrong = (await verify(api_settings, text))["wolf"]
    assert "year" in findings(wrong)
    (year,) = [p for _, p in verification_problems(wrong.reference, wrong.judgement, ())
               if "year" in p.message.lower() and p.related]
    assert text[year.span.start:year.span.end] == "wolf"  # on the entry's key, saying why
    assert year.message.endswith("The year cited is the one its crossref 'genres35' gives.")
    (where,) = year.related
    assert text[where.span.start:where.span.end] == "2019"
    assert where.label == "year, which 'wolf' takes from its crossref 'genres35'"


# --- the editor --------------------------------------------------------------------------------


async def test_the_editor_shows_where_the_wrong_year_is_and_renames_through_crossref(
        tmp_path, env):  # noqa: F811
    root = tmp_path / "ws"
    root.mkdir()
    (root / "refs.bib").write_text(_genome("2019"), encoding="utf-8")
    (root / "paper.tex").write_text("See \\cite{wolf}.\n\\bibliography{refs}\n", encoding="utf-8")
    async with lsp_session(root, env) as lsp:
        bib = open_file(lsp, root / "refs.bib", "bibtex")
        open_file(lsp, root / "paper.tex", "latex")
        await wait_until(lsp, verified(bib, "wolf"))
        shown = lsp.diagnostics[bib]
        assert "ORPHAN_REFERENCE" not in {d.code for d in shown}
        (year,) = [d for d in shown if d.related_information]
        assert year.message.startswith("wolf:") and year.range.start.line == 0
        (related,) = year.related_information
        span = related.location.range
        assert (span.start.line, span.start.character, span.end.character) == (9, 10, 14)
        assert related.message == "year, which 'wolf' takes from its crossref 'genres35'"
        at_crossref = position_of(root / "refs.bib", "genres35")
        where = types.TextDocumentIdentifier(uri=bib)
        prepared = await lsp.text_document_prepare_rename_async(
            types.PrepareRenameParams(text_document=where, position=at_crossref))
        assert (prepared.start.line, prepared.start.character, prepared.end.character) == (
            5, 14, 22)
        result = await lsp.text_document_rename_async(types.RenameParams(
            text_document=where, position=at_crossref, new_name="genomeres35"))
        lines = sorted((e.range.start.line, e.range.start.character, e.range.end.character)
                       for e in result.changes[bib])
        assert lines == [(5, 14, 22), (7, 12, 20)]
