"""Every editor feature asked in process, on a view of a workspace built from a multi-file
fixture (``tests/fixture.py``): hover, completion, fixes, definition, references, rename,
symbols and the diagnostics' content. The pytest-lsp suites (``test_lsp_*.py``) keep the
wire behaviour."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from citelsp.config import Settings
from citelsp.documents import model
from citelsp.documents.works import work_of
from citelsp.lsp.convert import Diagnostics, LineIndexes, lsp_diagnostic, lsp_range
from citelsp.reports.cards import hover_text
from citelsp.reports.markup import Markup
from citelsp.resolution.outcome import Outcome
from citelsp.verdict.reasons import doc_url
from citelsp.workspace import completion, fixes, hover, navigation, symbols
from tests.fixture import Fixture, parse

LIBRARY = """\
%! refs.bib
@article{vaswani2017,
  title = {Attention Is All You Need},
  author = {Vaswani, Ashish and Shazeer, Noam and Parmar, Niki},
  year = {2017},
  doi = {10.5555/attention.1},
}

@book{knuth1984,
  title = {The {\\TeX}book},
  author = {Knuth, Donald E.},
  year = {1984},
}
"""


def fixture(tmp_path: Path, spec: str, **settings) -> Fixture:
    return parse(spec, tmp_path, Settings.from_options(settings) if settings else None)


# --- hover -----------------------------------------------------------------------------------


def test_hover_on_a_citation_names_its_entry_and_the_citation_is_the_range(tmp_path):
    fx = fixture(tmp_path, LIBRARY + """\
%! paper.md
---
bibliography: refs.bib
---
注意力 🙂 [@vas$0wani2017, p. 4]
        ^^^^^^^^^^^
""")
    found = hover.hover(*fx.at())
    assert found is not None and found.key == "vaswani2017"
    assert [("paper.md", fx.text_at(fx.uris["paper.md"], found.span))] == fx.expected
    (entry,) = found.entries
    assert entry.reference.key == "vaswani2017" and entry.result is None and not entry.pending
    text = hover_text(found, Markup())
    assert text.startswith("**vaswani2017** · article")
    assert "*Attention Is All You Need*." in text and "Vaswani" in text
    assert "`10.5555/attention.1`" in text


@pytest.mark.parametrize(("name", "line"), [
    ("paper.tex", "\\citep[see][p.~4]{vaswani2017, kn$0uth1984}"),
    ("paper.md", "{cite:p}`kn$0uth1984`"),
    ("paper.md", "Claim<!--ref:kn$0uth1984--><!--anchor:page:4-->"),
])
def test_hover_in_every_citation_syntax(tmp_path, name, line):
    head = "\\bibliography{refs}" if name.endswith(".tex") else \
        "---\nbibliography: refs.bib\n---"
    fx = fixture(tmp_path, LIBRARY + f"%! {name}\n{head}\n{line}\n")
    found = hover.hover(*fx.at())
    assert found is not None and [e.reference.key for e in found.entries] == ["knuth1984"]
    assert fx.text_at(fx.uris[name], found.span) == "knuth1984"


def test_hover_on_an_entry_shows_it_and_its_key_is_the_range(tmp_path):
    fx = fixture(tmp_path, """\
%! refs.bib
@book{knuth1984,
      ^^^^^^^^^
  title = {The {\\TeX}b$0ook},
}
""")
    found = hover.hover(*fx.at())
    assert found is not None and [e.reference.key for e in found.entries] == ["knuth1984"]
    assert [("refs.bib", fx.text_at(fx.uris["refs.bib"], found.span))] == fx.expected
    assert "*The TeXbook*." in hover_text(found, Markup())


def test_hover_on_a_dangling_citation_says_so_in_plain_text_too(tmp_path):
    fx = fixture(tmp_path, LIBRARY + """\
%! paper.md
---
bibliography: refs.bib
---
See [@gh$0ost2020].
""")
    found = hover.hover(*fx.at())
    assert found is not None and found.entries == ()
    assert hover_text(found, Markup()) == \
        "**ghost2020**: not in any bibliography of this manuscript"
    assert hover_text(found, Markup(markdown=False)) == \
        "ghost2020: not in any bibliography of this manuscript"


def test_hover_lists_both_entries_of_a_duplicated_key(tmp_path):
    fx = fixture(tmp_path, """\
%! refs.bib
@misc{twice, title = {First}}
@misc{twice, title = {Second}}
%! paper.md
---
bibliography: refs.bib
---
[@tw$0ice]
""")
    found = hover.hover(*fx.at())
    assert found is not None and len(found.entries) == 2
    text = hover_text(found, Markup())
    assert "*First*." in text and "*Second*." in text and "\n\n---\n\n" in text


def test_hover_shows_the_verdict_verification_left(tmp_path):
    fx = fixture(tmp_path, LIBRARY + """\
%! paper.md
---
bibliography: refs.bib
---
[@vaswani2017$0]
""")
    fx.resolve("vaswani2017", Outcome("crossref", "unmatched", "id", "DOI does not exist",
                                      reason="DOI_REFUTED", refutes_identifier=True))
    found = hover.hover(*fx.at())
    assert found is not None and found.entries[0].result is not None
    text = hover_text(found, Markup())
    assert "**Verification:** refuted" in text and "DOI_REFUTED" in text
    assert "| Crossref | ✘ not matched | id | DOI does not exist |" in text


def test_no_hover_on_nocite_star_or_between_citations(tmp_path):
    fx = fixture(tmp_path, LIBRARY + """\
%! paper.tex
\\bibliography{refs}
\\nocite{*$0}
""")
    assert hover.hover(*fx.at()) is None
    view, doc, _ = fx.at()
    assert hover.hover(view, doc, 0) is None


# --- completion ------------------------------------------------------------------------------


def test_completion_after_at_offers_the_keys_matched_on_key_title_and_authors(tmp_path):
    fx = fixture(tmp_path, LIBRARY + """\
%! paper.md
---
bibliography: refs.bib
---
As [@va$0
""")
    found = completion.completions(*fx.at())
    assert found is not None and found.complete
    assert found.items == [completion.Completion(
        "vaswani2017",
        "vaswani2017 Attention Is All You Need Vaswani, Ashish and Shazeer, Noam and Parmar, "
        "Niki 2017")]
    assert fx.text_at(fx.uris["paper.md"], found.span) == "va"


@pytest.mark.parametrize(("name", "line", "typed", "key"), [
    ("paper.tex", "\\cite{vas$0wani2017}", "vas", "vaswani2017"),
    ("paper.tex", "\\volcite{2}{kn$0uth1984, p.~4}", "kn", "knuth1984"),
    ("paper.md", "As [@vas$0wani2017].", "vas", "vaswani2017"),
    ("paper.md", "As @vas$0wani2017.", "vas", "vaswani2017"),
    ("paper.md", "Claim<!--ref:kn$0uth1984 verified-->", "kn", "knuth1984"),
    ("paper.md", "{cite:p}`kn$0uth1984`", "kn", "knuth1984"),
    ("paper.md", "As [@kn$0", "kn", "knuth1984"),
])
def test_completion_inside_a_key_can_replace_the_whole_key(tmp_path, name, line, typed, key):
    header = "\\bibliography{refs}\n" if name.endswith(".tex") else \
        "---\nbibliography: refs.bib\n---\n"
    fx = fixture(tmp_path, LIBRARY + f"%! {name}\n{header}{line}\n")
    found = completion.completions(*fx.at())
    assert found is not None and found.items[0].key == key
    assert fx.text_at(fx.uris[name], found.span) == typed
    whole = line[line.index("$0") - len(typed):].replace("$0", "")
    assert fx.text_at(fx.uris[name], found.replace) == whole[:len(key)]


@pytest.mark.parametrize(("typed", "keys"), [
    ("atten", ["vaswani2017"]), ("Shaz", ["vaswani2017"]), ("texbo", ["knuth1984"]),
    ("donald", ["knuth1984"]), ("1984", ["knuth1984"]), ("ention", []), ("tex", ["knuth1984"]),
])
def test_completion_matches_words_of_the_title_and_authors_as_written(tmp_path, typed, keys):
    fx = fixture(tmp_path, LIBRARY + f"""\
%! paper.tex
\\bibliography{{refs}}
\\cite{{{typed}$0}}
""")
    found = completion.completions(*fx.at())
    assert found is not None and [c.key for c in found.items] == keys and found.complete
    assert fx.text_at(fx.uris["paper.tex"], found.span) == typed


@pytest.mark.parametrize("line", [
    "\\citep[see][p.~4]{$0", "\\cite{knuth1984, $0", "\\volcite{2}{$0"])
def test_completion_in_latex_citation_commands(tmp_path, line):
    fx = fixture(tmp_path, LIBRARY + f"""\
%! paper.tex
\\bibliography{{refs}}
{line}
""")
    found = completion.completions(*fx.at())
    assert found is not None and {c.key for c in found.items} == {"vaswani2017", "knuth1984"}


@pytest.mark.parametrize("line", ["Claim<!--ref:kn$0", "{cite:p}`vaswani2017; kn$0"])
def test_completion_in_ref_markers_and_myst_roles(tmp_path, line):
    fx = fixture(tmp_path, LIBRARY + f"""\
%! paper.md
---
bibliography: refs.bib
---
{line}
""")
    found = completion.completions(*fx.at())
    assert found is not None and [c.key for c in found.items] == ["knuth1984"]


def test_completion_of_csl_keys_inline_references_and_unusual_characters(tmp_path):
    fx = fixture(tmp_path, """\
%! refs.json
[{"id": "doe:2020/x-1", "type": "book", "title": "Überblick der Methoden",
  "author": [{"family": "Doe", "given": "Jane"}], "issued": {"date-parts": [[2020]]}},
 {"id": "müller2021", "type": "article-journal", "title": "基于注意力机制的文本分类研究"}]
%! refs.yaml
references:
- id: lee+kim.2019
  type: book
  title: Graphs
%! paper.md
---
bibliography: [refs.json, refs.yaml]
references:
- id: inline2022
  type: book
  title: Inline Work
---
As [@doe:20$0
""")
    view, doc, offset = fx.at()
    found = completion.completions(view, doc, offset)
    assert found is not None and [c.key for c in found.items] == ["doe:2020/x-1"]
    assert fx.text_at(doc.uri, found.span) == "doe:20"
    everything = completion.completions(view, doc, offset - len("doe:20"))
    assert everything is not None and {c.key for c in everything.items} == {
        "doe:2020/x-1", "müller2021", "lee+kim.2019", "inline2022"}
    text = {c.key: c.filter_text for c in everything.items}
    assert "Überblick" in text["doe:2020/x-1"] and "Inline Work" in text["inline2022"]
    details = completion.details(view, doc, "doe:2020/x-1")
    assert details == completion.Details("Doe (2020)", "Überblick der Methoden\nJane Doe\n2020")
    assert completion.details(view, doc, "müller2021") == completion.Details(
        None, "基于注意力机制的文本分类研究")


def test_completion_details_decode_the_entry_the_writer_looks_at(tmp_path):
    fx = fixture(tmp_path, LIBRARY + """\
%! paper.md
---
bibliography: refs.bib
---
As [@$0
""")
    view, doc, _ = fx.at()
    assert completion.details(view, doc, "vaswani2017") == completion.Details(
        "Vaswani et al. (2017)",
        "Attention Is All You Need\nAshish Vaswani, Noam Shazeer, Niki Parmar\n2017")
    assert completion.details(view, doc, "knuth1984") == completion.Details(
        "Knuth (1984)", "The TeXbook\nDonald E. Knuth\n1984")
    assert completion.details(view, doc, "ghost") is None
    assert completion.details(view, fx.doc("refs.bib"), "knuth1984") is None


def library(entries: int) -> str:
    return "".join(f"@article{{k{i:05d},\n  title = {{Study {i} of {{BERT}}}},\n"
                   f"  author = {{Doe, Jane}},\n  year = {{2020}},\n}}\n" for i in range(entries))


def test_a_large_library_lists_the_first_keys_cited_ones_first_and_says_there_are_more(
        tmp_path):
    keys = [f"k{i:05d}" for i in range(250)]
    fx = fixture(tmp_path, f"""\
%! refs.bib
{library(250)}
%! paper.md
---
bibliography: refs.bib
---
As [@k00200] and [@k00150].
""")
    head = fx.doc("paper.md").text

    def typed(line: str) -> completion.Completions:
        fx.workspace.open(fx.uris["paper.md"], head + line)
        doc = fx.doc("paper.md")
        found = completion.completions(fx.view, doc, len(doc.text))
        assert found is not None
        return found

    found = typed("[@")
    assert [c.key for c in found.items] == ["k00150", "k00200", *keys[:98]]
    assert not found.complete
    for key in keys:  # every key is listed first once typed in full
        assert typed(f"[@{key}").items[0].key == key
    narrowed = typed("\\cite{k001")
    assert [c.key for c in narrowed.items] == ["k00150", *keys[100:150], *keys[151:200]]
    assert [c.key for c in typed("\\cite{k0012").items] == keys[120:130]
    assert typed("\\cite{k0012").complete
    titled = typed("[@stud")  # a title word that 250 entries have: the first 100
    assert [c.key for c in titled.items] == keys[:100] and not titled.complete


def test_the_first_completion_in_a_20000_entry_library_decodes_no_entry(tmp_path, monkeypatch):
    fx = fixture(tmp_path, f"""\
%! refs.bib
{library(20_000)}
%! paper.md
---
bibliography: refs.bib
---
As [@$0
""")
    decoded = []
    monkeypatch.setattr(model, "work_of", lambda ref: decoded.append(ref.key) or work_of(ref))
    view, doc, offset = fx.at()
    found = completion.completions(view, doc, offset)
    assert found is not None and len(found.items) == completion.LIMIT and not found.complete
    fx.workspace.open(doc.uri, doc.text[:offset] + "bert")  # a title word: every entry's
    titled = completion.completions(view, fx.doc(), offset + 4)
    assert titled is not None and len(titled.items) == completion.LIMIT
    assert decoded == []
    assert completion.details(view, doc, "k12345") == completion.Details(
        "Doe (2020)", "Study 12345 of BERT\nJane Doe\n2020")
    assert decoded == ["k12345"]
    detailed = completion.completions(view, doc, offset, detailed=True)  # for Neovim
    assert detailed is not None and detailed.items[0].details == completion.Details(
        "Doe (2020)", "Study 0 of BERT\nJane Doe\n2020")
    assert len(decoded) == 1 + completion.LIMIT


# --- fixes -----------------------------------------------------------------------------------


def test_a_mistyped_key_is_corrected_and_a_doi_key_offers_an_entry(tmp_path):
    fx = fixture(tmp_path, LIBRARY + """\
%! paper.md
---
bibliography: refs.bib
---
[@vaswani2071$0] and [@10.1145/3442188.3445922]
""")
    found = fixes.fixes(*fx.at())
    (meant,) = [f for f in found if f.title.startswith("Did you mean")]
    assert meant.title == "Did you mean 'vaswani2017'?"
    assert "[@vaswani2017] and" in fx.applied(meant.edits, "paper.md")
    assert not any(f.command == fixes.CREATE_ENTRY for f in found)
    view, doc, _ = fx.at()
    by_doi = fixes.fixes(view, doc, doc.text.index("10.1145"))
    assert [(f.command, f.arguments) for f in by_doi if f.command == fixes.CREATE_ENTRY] == [
        (fixes.CREATE_ENTRY, (fx.uris["paper.md"], "10.1145/3442188.3445922",
                              "10.1145/3442188.3445922"))]
    prompted = fixes.fixes(*fx.at(), client_prompts=True)
    assert (fixes.CREATE_ENTRY, (fx.uris["paper.md"], "vaswani2071")) in [
        (f.command, f.arguments) for f in prompted]


def test_a_verified_entry_offers_its_doi_page_and_the_human_decisions_once(tmp_path):
    fx = fixture(tmp_path, """\
%! refs.bib
@article{a, title = {T}, doi = {10.5555/a.1}}
@article{a, title = {T}, doi = {10.5555/a.1}}
%! paper.md
---
bibliography: refs.bib
---
[@a$0]
""")
    fx.resolve("a", Outcome("crossref", "matched", "id", "found"))
    found = fixes.fixes(*fx.at())
    titles = [f.title for f in found]
    assert len(titles) == len(set(titles)), "a key defined twice lists each action once"
    assert fixes.Fix("Open DOI 10.5555/a.1 for a human check", command=fixes.OPEN_URL,
                     arguments=("https://doi.org/10.5555/a.1",)) in found
    decide = [f for f in found if f.command == fixes.DECIDE]
    assert [f.arguments[2] for f in decide] == ["verified", "rejected"]
    assert all(f.arguments[:2] == ("a", fx.view.decision_identity(
        fx.view.references_at(fx.doc(), fx.cursor[1])[0])) for f in decide)


def test_a_unicode_space_between_fields_is_replaced_by_a_plain_one(tmp_path):
    fx = fixture(tmp_path, """\
%! refs.bib
@misc{a, title = {T},\u00a0$0year = {2020}}
""")
    (fix,) = [f for f in fixes.fixes(*fx.at()) if f.edits]
    assert fix.title.startswith("Replace") and fix.title.endswith("with a plain space")
    assert fx.applied(fix.edits, "refs.bib") == "@misc{a, title = {T}, year = {2020}}\n"


# --- definition, references, rename ----------------------------------------------------------


def test_definition_from_a_citation_reaches_the_entry_in_another_file(tmp_path):
    fx = fixture(tmp_path, """\
%! refs.bib
@misc{knuth1984, title = {T}}
      ^^^^^^^^^
%! paper.tex
\\bibliography{refs}
\\cite{vaswani2017,knu$0th1984}
""")
    assert fx.places(navigation.definitions(*fx.at())) == fx.expected


def test_references_from_an_entry_reach_an_unopened_manuscript(tmp_path):
    fx = fixture(tmp_path, """\
%! refs.bib
@misc{knuth$01984, title = {T}}
      ^^^^^^^^^
%! paper.md
---
bibliography: refs.bib
---
[@knuth1984; @other]
  ^^^^^^^^^
%! chapter.tex (closed)
\\bibliography{refs}
\\cite{knuth1984}
      ^^^^^^^^^
""")
    fx.read_workspace()
    found = navigation.references_at(*fx.at(), include_declaration=True)
    assert fx.places(found) == sorted(fx.expected)
    without = navigation.references_at(*fx.at(), include_declaration=False)
    assert ("refs.bib", "knuth1984") not in fx.places(without)


def test_the_workspace_is_read_again_after_a_file_closes_or_changes(tmp_path):
    fx = fixture(tmp_path, """\
%! refs.bib
@misc{knuth$01984, title = {T}}
%! paper.md
---
bibliography: refs.bib
---
[@knuth1984]
%! chapter.tex (closed)
\\bibliography{refs}
\\cite{knuth1984}
""")
    graph = fx.workspace.graph
    assert not graph.workspace_read
    fx.read_workspace()
    assert graph.workspace_read
    fx.workspace.close(fx.uris["paper.md"])
    assert not graph.workspace_read, "the closed manuscript is on disk only now"
    fx.read_workspace()
    found = navigation.references_at(*fx.at(), include_declaration=False)
    assert [name for name, _ in fx.places(found)] == ["chapter.tex", "paper.md"]
    fx.workspace.files_changed([fx.uris["chapter.tex"]])
    assert not graph.workspace_read


def test_rename_edits_every_place_and_refuses_an_invalid_key(tmp_path):
    fx = fixture(tmp_path, """\
%! refs.bib
@misc{knuth1984, title = {T}}
@misc{part, crossref = {knuth1984}}
%! paper.md
---
bibliography: refs.bib
---
[@knu$0th1984]
%! chapter.tex (closed)
\\bibliography{refs}
\\cite{knuth1984}
""")
    fx.read_workspace()
    edits = navigation.rename(*fx.at(), "knuth84")
    assert edits is not None
    assert fx.applied(edits, "refs.bib") == \
        "@misc{knuth84, title = {T}}\n@misc{part, crossref = {knuth84}}\n"
    assert "[@knuth84]" in fx.applied(edits, "paper.md")
    assert {e.uri for e in edits} == set(fx.uris.values())
    with pytest.raises(ValueError, match="not a valid citation key"):
        navigation.rename(*fx.at(), "two words")


def test_prepare_rename_names_the_key_under_the_cursor_and_a_crossref_value(tmp_path):
    fx = fixture(tmp_path, """\
%! refs.bib
@misc{knuth1984, title = {T}}
@misc{part, crossref = { knu$0th1984 }}
                         ^^^^^^^^^
""")
    view, doc, offset = fx.at()
    span = navigation.key_span_at(doc, offset)
    assert span is not None and [("refs.bib", doc.text[span.start:span.end])] == fx.expected
    assert navigation.key_span_at(doc, doc.text.index("title")) is None


# --- symbols ---------------------------------------------------------------------------------


def test_symbols_outline_entries_and_their_fields(tmp_path):
    fx = fixture(tmp_path, LIBRARY)
    found = symbols.symbols(fx.doc("refs.bib"))
    assert [(s.name, s.detail) for s in found] == [
        ("vaswani2017", "@article Attention Is All You Need"),
        ("knuth1984", "@book The {\\TeX}book")]
    assert [f.name for f in found[0].children] == ["title", "author", "year", "doi"]
    text = fx.doc("refs.bib").text
    year = found[1].children[2]
    assert (text[year.selection.start:year.selection.end],
            text[year.span.start:year.span.end]) == ("year", "year = {1984")


def test_a_manuscripts_front_matter_references_are_its_symbols(tmp_path):
    fx = fixture(tmp_path, """\
%! paper.md
---
references:
- id: inline2020
  type: book
  title: Inline
---
[@inline2020]
""")
    assert [s.name for s in symbols.symbols(fx.doc("paper.md"))] == ["inline2020"]


# --- diagnostics -----------------------------------------------------------------------------


def test_diagnostics_place_each_finding_in_the_clients_columns(tmp_path):
    fx = fixture(tmp_path, """\
%! refs.bib
@misc{a, title = {T}}
@misc{a, title = {U}}
%! paper.md
---
bibliography: refs.bib
---
注意力 🙂 [@ghost] [@a]
""")
    uri = fx.uris["paper.md"]
    (dangling,) = [p for p in fx.workspace.problems(uri) if p.code == "DANGLING_CITATION"]
    lines = LineIndexes()

    def range_for(u, span):
        return lsp_range(lines.of(u, fx.doc(fx.name_of(u)).text), span, "utf-16")

    diagnostic = lsp_diagnostic(dangling, range_for(uri, dangling.span), range_for)
    assert (diagnostic.range.start.line, diagnostic.range.start.character,
            diagnostic.range.end.character) == (3, 9, 14)  # 🙂 is two UTF-16 units
    assert diagnostic.severity == types.DiagnosticSeverity.Error
    assert diagnostic.code == "DANGLING_CITATION" and diagnostic.source == "citelsp"
    assert diagnostic.code_description.href == doc_url("DANGLING_CITATION")
    bib = fx.uris["refs.bib"]
    (first, _) = [p for p in fx.workspace.problems(bib) if p.code == "DUPLICATE_KEY"]
    related = lsp_diagnostic(first, range_for(bib, first.span), range_for).related_information
    assert related and related[0].location.uri == bib


def test_a_republication_reuses_the_diagnostics_of_unchanged_lines(tmp_path):
    fx = fixture(tmp_path, """\
%! paper.md
---
bibliography: refs.bib
---
[@one]

[@two]
""")
    uri = fx.uris["paper.md"]
    converter, lines = Diagnostics(), LineIndexes()

    def publish() -> list[types.Diagnostic]:
        doc = fx.doc("paper.md")
        index = lines.of(uri, doc.text)
        return converter.convert(uri, fx.workspace.problems(uri), index, "utf-16",
                                 lambda u, span: lsp_range(index, span, "utf-16"))

    first = publish()
    assert sorted(d.message for d in first if d.code == "DANGLING_CITATION") == [
        "citation key 'one' is not in any bibliography of this manuscript",
        "citation key 'two' is not in any bibliography of this manuscript"]
    fx.workspace.open(uri, fx.doc("paper.md").text.replace("[@one]", "[@one1]"))
    second = publish()
    assert [d for d in second if "'two'" in d.message][0] is \
        [d for d in first if "'two'" in d.message][0]
    assert [d.message for d in second if "one1" in d.message]


# --- a query never reads the disk ------------------------------------------------------------


def test_queries_read_no_file(tmp_path, monkeypatch):
    """Hover on a slug-mapped marker, definition and references, with every disk read made
    to fail: the slug map and the bibliographies were read on the notifications."""
    (tmp_path / "slugs.json").write_text('{"attention-paper": "vaswani2017"}')
    fx = fixture(tmp_path, LIBRARY + """\
%! paper.md
---
bibliography: refs.bib
---
attention<!--ref:attention-pa$0per--><!--anchor:page:4-->
""", slugMap="slugs.json")
    fx.read_workspace()

    def no_disk(*args, **kwargs):
        raise AssertionError("a query read the disk")

    monkeypatch.setattr("citelsp.workspace.corpus.read_bytes", no_disk)
    monkeypatch.setattr("citelsp.workspace.graph.read_document", no_disk)
    monkeypatch.setattr(Path, "stat", no_disk)
    monkeypatch.setattr(Path, "exists", no_disk)
    found = hover.hover(*fx.at())
    assert found is not None and [e.reference.key for e in found.entries] == ["vaswani2017"]
    assert fx.places(navigation.definitions(*fx.at())) == [("refs.bib", "vaswani2017")]
    assert navigation.references_at(*fx.at(), include_declaration=True)
    assert fixes.fixes(*fx.at())


def test_queries_change_nothing_the_workspace_shows(tmp_path):
    """Every feature at every offset of every file: the documents, the links between them
    and what verification was asked stay as the notifications left them."""
    fx = fixture(tmp_path, LIBRARY + """\
%! paper.md
---
bibliography: refs.bib
---
[@vaswani2017; @ghost] {cite}`knuth1984`
%! chapter.tex (closed)
\\bibliography{refs}
\\cite{knuth1984}
""")
    fx.read_workspace()
    ws = fx.workspace

    def state():
        return (ws.corpus.generation, dict(ws.corpus.open), dict(ws.corpus._disk),
                {u: set(m) for u, m in ws.graph._users.items()}, dict(ws.graph._uses),
                ws.graph.workspace_read, dict(ws.verifier._queued), dict(ws.verifier.results))

    before = state()
    for name in ("refs.bib", "paper.md"):
        doc = fx.doc(name)
        for offset in range(len(doc.text) + 1):
            hover.hover(fx.view, doc, offset)
            completion.completions(fx.view, doc, offset)
            fixes.fixes(fx.view, doc, offset, client_prompts=True)
            navigation.definitions(fx.view, doc, offset)
            navigation.references_at(fx.view, doc, offset, include_declaration=True)
            navigation.rename(fx.view, doc, offset, "renamed")
        symbols.symbols(doc)
    assert state() == before
