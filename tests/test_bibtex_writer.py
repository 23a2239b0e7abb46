"""What citelsp writes into a .bib reads back as exactly the fields and values it meant, in
citelsp's reader, bibtexparser's and pandoc's (issue 29, items 1 and 2)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import unicodedata

import bibtexparser
import pypandoc
import pytest
from bibtexparser import middlewares
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citelsp.documents.bibtex import parse_bibtex
from citelsp.documents.bibtex_writer import (
    REPLACEMENT,
    UnwritableKey,
    clean_text,
    entry,
    name_list,
    text_value,
    verbatim_value,
    written_form,
)
from citelsp.documents.model import Person
from citelsp.documents.parse import parse_document
from citelsp.documents.text import latex_decode
from citelsp.documents.works import parse_bibtex_names
from citelsp.resolution.asking import Resolution
from citelsp.resolution.identifiers import Identifier, ReferenceIds
from citelsp.resolution.outcome import FieldConflict, Record
from citelsp.verdict.checklist import ChecklistItem, Judgement
from citelsp.workspace.entries import new_entry
from citelsp.workspace.fixes import edit_actions
from citelsp.workspace.snapshot import ReferenceResult

PANDOC = pypandoc.get_pandoc_path()
TEXT_FIELDS = ("title", "journal", "volume", "pages", "note")
PANDOC_FIELDS = {"title": "title", "journal": "container-title", "volume": "volume",
                 "pages": "page", "note": "note"}


def written(values: list[tuple[str, Person]]) -> str:
    """One @article per value: the value in every text field, the person as author after an
    organization named by the value."""
    return "\n".join(entry("article", f"k{i}", [
        *((name, text_value(value)) for name in TEXT_FIELDS),
        ("author", name_list([Person(value, literal=True), person])),
        ("doi", "10.1234/k" + str(i)),
    ]) for i, (value, person) in enumerate(values))


def expected_person(person: Person) -> tuple[str, str]:
    return written_form(person.family), written_form(person.given)


# --- the three readers -----------------------------------------------------------------------

def citelsp_read(text: str) -> list[tuple[str, dict[str, str], list[tuple[str, str, bool]]]]:
    bib = parse_bibtex("file:///w.bib", text)
    assert not bib.problems, bib.problems
    out = []
    for ref in bib.references:
        people, _ = parse_bibtex_names(ref.fields["author"].value)
        out.append((ref.key,
                    {name: latex_decode(f.value) for name, f in ref.fields.items()
                     if name != "author"},
                    [(p.family, p.given, p.literal) for p in people]))
    return out


def bibtexparser_read(text: str) -> list[tuple[str, dict[str, str], list]]:
    library = bibtexparser.parse_string(text, append_middleware=[
        middlewares.SeparateCoAuthors(), middlewares.SplitNameParts(),
        middlewares.LatexDecodingMiddleware()])
    assert not library.failed_blocks
    out = []
    for e in library.entries:
        fields = {f.key: f.value for f in e.fields}
        people = fields.pop("author")
        out.append((e.key, fields, people))
    return out


def pandoc_read(text: str) -> list[dict]:
    run = subprocess.run([PANDOC, "-f", "bibtex", "-t", "csljson"], input=text,
                         capture_output=True, text=True, encoding="utf-8", check=True)
    return json.loads(run.stdout)


_PYLATEXENC = str.maketrans({"\u02c6": "^"})
"""pylatexenc (bibtexparser) reads ``\\textasciicircum`` as U+02C6."""
_MARKUP = re.compile(r"</?(?:sup|sub|i|b|span[^>]*)>")
_SMART = str.maketrans(dict.fromkeys("\u2018\u2019`\u201c\u201d\"", "'"))
"""Pandoc's smart punctuation pairs and curls quotes, single or double as it sees fit."""


def _pandoc_name(name: str) -> str:
    """Pandoc also spaces initials (J.R. → J. R.) and splits particles off the family name."""
    return "".join(name.translate(_SMART).split())


def check_round_trip(values: list[tuple[str, Person]]) -> None:
    text = written(values)
    want = [(f"k{i}", written_form(v), expected_person(p)) for i, (v, p) in enumerate(values)]

    got = citelsp_read(text)
    assert [k for k, _, _ in got] == [k for k, _, _ in want]
    for (key, fields, people), (_, value, person) in zip(got, want, strict=True):
        assert fields == {**dict.fromkeys(TEXT_FIELDS, value), "doi": f"10.1234/{key}"}
        organization = [(value, "", True)] if value else []
        assert people == [*organization, (*person, False)]

    got_bp = bibtexparser_read(text)
    assert [k for k, _, _ in got_bp] == [k for k, _, _ in want]
    for (_key, fields, people), (_, value, _person) in zip(got_bp, want, strict=True):
        assert set(fields) == {*TEXT_FIELDS, "doi"}
        for name in TEXT_FIELDS:
            assert " ".join(fields[name].translate(_PYLATEXENC).split()) == \
                value.translate(_PYLATEXENC)
        assert len(people) == (2 if value else 1)

    got_pd = pandoc_read(text)
    assert [item["id"] for item in got_pd] == [k for k, _, _ in want]
    for item, (key, value, person) in zip(got_pd, want, strict=True):
        assert set(item) <= {"id", "type", "DOI", "author", "title-short",  # from "A: b"
                             *PANDOC_FIELDS.values()}
        assert item["DOI"] == f"10.1234/{key}"
        for name, csl in PANDOC_FIELDS.items():
            assert _pandoc_field(name, item.get(csl, "")) == _pandoc_field(name, value)
        authors = item.get("author", [])
        assert len(authors) == (2 if value else 1)
        assert _name_letters(authors[-1].values()) == _name_letters(person)


def _pandoc_text(text: str) -> str:
    """Pandoc curls quotes (smart punctuation), writes ² as <sup>2</sup> and lowercases BibTeX
    titles: renderings, not misreadings, folded on both sides."""
    text = unicodedata.normalize("NFKC", _MARKUP.sub("", text))
    return " ".join(text.translate(_SMART).split())


def _pandoc_field(name: str, text: str) -> str:
    """... and writes a page range with a hyphen."""
    text = _pandoc_text(text)
    return text.casefold() if name == "title" else \
        text.replace("\u2013", "-") if name == "pages" else text


def _name_letters(parts) -> list[str]:
    """Pandoc also reorders the parts of a name (particles, initials spaced, a comma in a given
    name splits it even in braces, a lone quote mark is dropped): the person keeps every
    other character, none goes elsewhere."""
    letters = "".join(_pandoc_text(p) for p in parts)
    return sorted(letters.replace(" ", "").replace(",", "").replace("'", ""))


# --- properties ------------------------------------------------------------------------------

_NAME_TEXT = st.text(min_size=1).filter(lambda s: written_form(s) != "")
_people = st.builds(Person, family=_NAME_TEXT, given=st.text())
_values = st.lists(st.tuples(st.text(), _people), min_size=1, max_size=12)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_values)
def test_any_values_read_back_as_written(values):
    check_round_trip(values)


@pytest.mark.slow
@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_values)
def test_any_values_read_back_as_written_many(values):
    check_round_trip(values)


# --- the attacks seen (issue 29), through the code that builds the edits ---------------------

ORGANIZATION = "ACME}} , url = {https://evil.example/} , note = {\\input{/etc/passwd}} , x = {{"
HOSTILE = Record(
    source="crossref",
    title="Real title}, doi = {10.6666/evil}, url = {https://evil.example/",
    authors=(Person("Smith}", "Jo}hn"), Person(ORGANIZATION, literal=True)),
    years=(2020,),
    venue="}, zz = {Nature \\} ^^5c~^ #1 @x %y $z & w",
    volume="1}",
    first_page="e1}",
    doi="10.5555/ok.1",
)


def entries_read(text: str) -> list[tuple[str, dict[str, str]]]:
    """(key, {field: value}) as each reader sees it; every reader must agree on the keys and
    field names."""
    ours = [(ref.key, {n: f.value for n, f in ref.fields.items()})
            for ref in parse_bibtex("file:///w.bib", text).references]
    theirs = [(e.key, {f.key: f.value for f in e.fields})
              for e in bibtexparser.parse_string(text).entries]
    assert [(k, set(f)) for k, f in ours] == [(k, set(f)) for k, f in theirs]
    return ours


def test_a_hostile_record_makes_a_clean_entry_with_its_own_values():
    bib = parse_document("file:///w/refs.bib", "@misc{old, title = {Old}}\n")
    text = bib.text + new_entry(bib, "new", HOSTILE).text
    (_, _), (key, fields) = entries_read(text)
    assert key == "new"
    assert set(fields) == {"author", "title", "journal", "year", "volume", "pages", "doi"}
    assert fields["doi"] == "10.5555/ok.1"
    assert latex_decode(fields["title"]) == written_form(HOSTILE.title)
    assert latex_decode(fields["journal"]) == written_form(HOSTILE.venue)
    assert latex_decode(fields["volume"]) == "1" + REPLACEMENT
    people, _ = parse_bibtex_names(fields["author"])
    assert people == (Person("Smith" + REPLACEMENT, "Jo" + REPLACEMENT + "hn"),
                      Person(written_form(ORGANIZATION), literal=True))
    (item,) = [i for i in pandoc_read(text) if i["id"] == "new"]
    assert item["DOI"] == "10.5555/ok.1" and "URL" not in item and "note" not in item
    assert item["author"][1] == {"literal": written_form(ORGANIZATION)}


def test_two_depositor_fields_cannot_give_the_entry_their_doi_and_url():
    """Issue 29: a title that closes itself, sets doi and url and opens a quoted value, and a
    venue that closes that value and the entry, made a clean entry (no problem reported)
    with the attacker's DOI and URL when braces were escaped as \\{ and \\}."""
    record = Record(source="crossref", authors=(Person("Smith", "J"),), years=(2020,),
                    title='T}, doi = "10.6666/evil", url = "https://evil.example/", x = "{',
                    venue='}"', volume="1", doi="10.5555/ok.1")
    bib = parse_document("file:///w/refs.bib", "")
    text = new_entry(bib, "new", record).text
    assert not parse_bibtex("file:///w/refs.bib", text).problems
    ((key, fields),) = entries_read(text)
    assert set(fields) == {"author", "title", "journal", "year", "volume", "doi"}
    assert fields["doi"] == "10.5555/ok.1"
    assert latex_decode(fields["title"]) == written_form(record.title)
    (item,) = pandoc_read(text)
    assert item["DOI"] == "10.5555/ok.1" and "URL" not in item


def test_an_identifier_that_cannot_be_written_verbatim_is_left_out():
    bib = parse_document("file:///w/refs.bib", "")
    record = Record(source="crossref", title="T", doi="10.5555/x},url={https://evil.example/")
    text = new_entry(bib, "new", record).text
    assert entries_read(text) == [("new", {"title": "T"})]
    assert verbatim_value("10.1000/a_b%") is None and verbatim_value("10.1000/a_b") == "10.1000/a_b"


@pytest.mark.parametrize("key", ["a,b", "a b", "a}b", "a{b", "", "a=b", 'a"b', "a%b", "a\\b"])
def test_a_key_bibtex_would_misread_is_refused(key):
    bib = parse_document("file:///w/refs.bib", "")
    with pytest.raises(UnwritableKey):
        new_entry(bib, key, HOSTILE)


CITED = """@article{cited,
  author = {Doe, Jane},
  title = "Quoted title",
  journal = jmlr,
  volume = {2},
  year = 2019,
}
"""


def test_apply_verified_metadata_writes_inert_values_whatever_the_delimiters():
    """The author list with the organization of issue 29, a venue and title that end other
    values: into braced, quoted and bare values."""
    bib = parse_document("file:///w/refs.bib", "@string{jmlr = {JMLR}}\n" + CITED)
    (ref,) = bib.references
    judgement = Judgement(citation_key="cited", verdict="true", outcomes={}, item=None,
                          findings=[], matched=HOSTILE, conflicts=tuple(
                              FieldConflict(f, "", "") for f in
                              ("author", "title", "venue", "volume", "year")))
    result = ReferenceResult(ref, Resolution("cited", ReferenceIds(), {}), judgement)
    found = dict(edit_actions(ref, result, bib.text))
    edits = found["Apply verified metadata from crossref to 'cited'"]
    text = bib.text
    for _, span, new in sorted(edits, key=lambda e: e[1].start, reverse=True):
        text = text[:span.start] + new + text[span.end:]
    (key, fields), = entries_read(text)
    assert set(fields) == {"author", "title", "journal", "volume", "year"}
    assert latex_decode(fields["title"]) == written_form(HOSTILE.title)
    assert latex_decode(fields["journal"]) == written_form(HOSTILE.venue)
    assert parse_bibtex_names(fields["author"])[0][1] == \
        Person(written_form(ORGANIZATION), literal=True)
    (item,) = pandoc_read(text)
    assert "URL" not in item and "note" not in item and "DOI" not in item
    assert found["Add DOI 10.5555/ok.1 to 'cited'"][0][2] == ",\n  doi = {10.5555/ok.1}"


@pytest.mark.parametrize(("cited", "written"), [
    ("doi = {10.5555/wrong.1}", "doi = {10.5555/ok.1}"),
    ("url = {https://doi.org/10.5555/wrong.1}", "url = {https://doi.org/10.5555/ok.1}"),
    ('doi = "10.5555/wrong.1"', "doi = {10.5555/ok.1}"),
])
def test_the_matched_works_doi_replaces_the_cited_one_in_the_form_it_was_cited(cited, written):
    bib = parse_document("file:///w/refs.bib",
                         f"@article{{cited,\n  title = {{T}},\n  {cited},\n}}\n")
    (ref,) = bib.references
    item = ChecklistItem("cited", "P0", "DOI_TITLE_MISMATCH", "false", "", [], [], "")
    judgement = Judgement(citation_key="cited", verdict="true", outcomes={}, item=item,
                          findings=[], matched=HOSTILE)
    ids = ReferenceIds(doi=Identifier("doi", "10.5555/wrong.1", cited.split()[0], ""))
    result = ReferenceResult(ref, Resolution("cited", ids, {}), judgement)
    (_, span, new), = dict(edit_actions(ref, result, bib.text))[
        "Replace the cited DOI with the matched work's 10.5555/ok.1"]
    assert written in bib.text[:span.start] + new + bib.text[span.end:]


def test_csl_entries_keep_line_breaks_and_controls_out_of_the_lines_they_are_indented_by():
    record = Record(source="crossref", title="a\u2028b\x85c\x1bd", venue="V",
                    authors=(Person("X\u2029", "Y"),))
    json_bib = parse_document("file:///w/refs.json", '[{"id": "a", "type": "book"}]')
    text = json_bib.text[:(e := new_entry(json_bib, "new", record)).offset] + e.text + \
        json_bib.text[e.offset:]
    (_, new) = parse_document("file:///w/refs.json", text).references
    assert new.csl["title"] == "a b c" + REPLACEMENT + "d" and new.csl["author"] == [
        {"family": "X", "given": "Y"}]


# --- CSL-JSON and CSL-YAML items --------------------------------------------------------------

CSL_FILES = {"file:///w/refs.json": '[\n  {"id": "a", "type": "book"}\n]\n',
             "file:///w/refs.yaml": "references:\n- id: a\n  type: book\n"}


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=1), _people)
def test_csl_items_read_back_as_written(value, person):
    """JSON and YAML escape every value; what is left to prove is that indenting the item
    never changes one (a U+2028 or NEL is a line break to ``splitlines``, and to YAML)."""
    record = Record(source="crossref", title=value, venue=value, volume=value,
                    authors=(person, Person(value, literal=True)), years=(2020,))
    want = clean_text(value)
    for uri, text in CSL_FILES.items():
        bib = parse_document(uri, text)
        new = new_entry(bib, "new", record)
        written = parse_document(uri, text[:new.offset] + new.text + text[new.offset:])
        assert [r.key for r in written.references] == ["a", "new"]
        item = written.references[1].csl
        if not want:
            continue
        assert (item["title"], item["container-title"], item["volume"]) == (want,) * 3
        assert item["author"] == [{"family": clean_text(person.family),
                                   "given": clean_text(person.given)}, {"literal": want}]


@pytest.mark.skipif(not (shutil.which("biber") and shutil.which("bibtex")),
                    reason="no biber and BibTeX (.ci/run installs TeX Live)")
def test_biber_and_bibtex_read_the_hostile_entries_as_written(tmp_path):
    values = [(HOSTILE.title, Person("Smith}", "Jo}hn")), (ORGANIZATION, Person("van Gogh", "V")),
              ("a \\ ^^5c ~ {b} }x{ $ & % # _ -- '' \"q\" @c", Person("=", ""))]
    (tmp_path / "in.bib").write_text(written(values), encoding="utf-8")
    subprocess.run(["biber", "--tool", "--output-format=bibtex", "--output-file=out.bib",
                    "in.bib"], cwd=tmp_path, capture_output=True, check=True, timeout=120)
    out = bibtexparser.parse_string((tmp_path / "out.bib").read_text(encoding="utf-8"))
    assert [e.key for e in out.entries] == ["k0", "k1", "k2"]
    for e in out.entries:  # biber's own names: journaltitle, and the year it was not given
        assert {f.key.lower() for f in e.fields} == {"title", "journaltitle", "volume",
                                                     "pages", "note", "author", "doi"}
        assert e["DOI"] == "10.1234/" + e.key
    (tmp_path / "t.aux").write_text("\\relax\n\\citation{*}\n\\bibstyle{plain}\n\\bibdata{in}\n")
    subprocess.run(["bibtex", "t"], cwd=tmp_path, capture_output=True, timeout=120)
    log = (tmp_path / "t.blg").read_text(encoding="utf-8", errors="replace")
    assert "error message" not in log and "I was expecting" not in log
    assert (tmp_path / "t.bbl").read_text(encoding="utf-8").count("\\bibitem{") == 3


def test_a_cited_short_doi_gets_no_second_doi_field():
    """An entry whose shortDOI doi.org could not resolve (an outage) and whose title matched:
    no "Add DOI" (it would write a second ``doi`` field); one the Handle System refuted (P0)
    is replaced by the matched work's DOI, in its field."""
    bib = parse_document("file:///w/refs.bib", "@article{cited,\n  title = {T},\n"
                                                "  doi = {10/zz9},\n}\n")
    (ref,) = bib.references
    ids = ReferenceIds(short_doi=Identifier("short_doi", "10/zz9", "doi", "10/zz9"))
    judgement = Judgement(citation_key="cited", verdict="true", outcomes={}, item=None,
                          findings=[], matched=HOSTILE)
    result = ReferenceResult(ref, Resolution("cited", ids, {}), judgement)
    assert not any("DOI" in title for title, _ in edit_actions(ref, result, bib.text))
    item = ChecklistItem("cited", "P0", "DOI_REFUTED", "false", "", [], [], "")
    refuted = ReferenceResult(ref, Resolution("cited", ids, {}), Judgement(
        citation_key="cited", verdict="false", outcomes={}, item=item, findings=[],
        matched=HOSTILE))
    (_, span, new), = dict(edit_actions(ref, refuted, bib.text))[
        "Replace the cited DOI with the matched work's 10.5555/ok.1"]
    assert "doi = {10.5555/ok.1}" in bib.text[:span.start] + new + bib.text[span.end:]
