"""CSL-JSON and CSL-YAML parsing: what counts as CSL, spans, rendering, broken input."""

import json

import pytest

from citelsp.documents.csl import parse_csl_json, parse_csl_yaml
from citelsp.documents.model import Severity
from citelsp.documents.parse import parse_document

URI = "file:///refs.json"


def at(text, span):
    return text[span.start : span.end]


CSL_ARRAY = """[
  {
    "id": "smith2020",
    "type": "article-journal",
    "title": "深度学习 😀 with \\"quotes\\"",
    "DOI": "10.1000/xyz",
    "author": [{"family": "Smith", "given": "Jane"}, {"literal": "World Health Organization"},
               {"family": "Beethoven", "non-dropping-particle": "van", "given": "L."}],
    "issued": {"date-parts": [[2020, 5, 1]]},
    "volume": 12,
    "ISSN": ["1234-5678", "8765-4321"],
    "container-title": "Journal"
  },
  {"id": 42, "type": "book", "title": "Numbered"}
]"""


def test_csl_json_array_references_and_spans():
    bib = parse_csl_json(URI, CSL_ARRAY)
    assert bib is not None and bib.source_format == "csl-json" and bib.problems == []
    smith, numbered = bib.references
    assert smith.key == "smith2020" and smith.entry_type == "article-journal"
    assert smith.source_format == "csl-json" and smith.uri == URI
    assert at(CSL_ARRAY, smith.key_span) == "smith2020"
    assert (
        at(CSL_ARRAY, smith.span).startswith('{\n    "id"') and at(CSL_ARRAY, smith.span)[-1] == "}"
    )
    assert json.loads(at(CSL_ARRAY, smith.span)) == smith.csl
    assert smith.csl["DOI"] == "10.1000/xyz"
    fields = smith.fields
    assert fields["title"].value == '深度学习 😀 with "quotes"'
    assert at(CSL_ARRAY, fields["title"].span) == '深度学习 😀 with \\"quotes\\"'
    assert fields["doi"].value == "10.1000/xyz"
    assert at(CSL_ARRAY, fields["doi"].span) == "10.1000/xyz"
    assert at(CSL_ARRAY, fields["doi"].name_span) == "DOI"
    assert fields["author"].value == (
        "Smith, Jane and World Health Organization and van Beethoven, L."
    )
    assert at(CSL_ARRAY, fields["author"].span).startswith('[{"family": "Smith"')
    assert fields["issued"].value == "2020-5-1"
    assert at(CSL_ARRAY, fields["issued"].span) == '{"date-parts": [[2020, 5, 1]]}'
    assert fields["volume"].value == "12" and at(CSL_ARRAY, fields["volume"].span) == "12"
    assert fields["issn"].value == "1234-5678, 8765-4321"
    assert numbered.key == "42" and at(CSL_ARRAY, numbered.key_span) == "42"


def test_csl_json_object_with_items():
    text = '{"items": [{"id": "a", "type": "report", "title": "T"}], "meta": {"x": [1]}}'
    bib = parse_csl_json(URI, text)
    assert [r.key for r in bib.references] == ["a"]
    assert at(text, bib.references[0].fields["title"].span) == "T"


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "citelsp", "version": "1.0.0", "dependencies": {"x": "^1"}}',
        '{"compilerOptions": {"strict": true}, "include": ["src"]}',
        '[{"id": 1, "type": "user"}, {"id": 2, "type": "admin"}]',
        '{"items": 3}',
        "[]",
        "[1, 2, 3]",
        '"just a string"',
        "",
        '{"a": 1,}',
        '{\n  // JSONC comment\n  "type": "module", "id": "x"\n}',
    ],
)
def test_other_json_is_not_a_bibliography(text):
    assert parse_csl_json("file:///package.json", text) is None


def test_invalid_csl_json_is_a_problem_and_keeps_earlier_items():
    text = '[\n  {"id": "a", "type": "book"},\n  {"id": "b", "type": "book",, }\n]'
    bib = parse_csl_json(URI, text)
    assert bib is not None
    assert [r.key for r in bib.references] == ["a"]
    (problem,) = bib.problems
    assert problem.code == "MALFORMED_ENTRY" and problem.severity == Severity.ERROR
    assert problem.span.start == text.index(",, }") + 1
    assert "Invalid JSON" in problem.message


@pytest.mark.parametrize("closing", ["]", "}"])
def test_a_trailing_comma_is_named_and_marked(closing):
    """The commonest hand-edit slip: JSON's own message ("Expecting value") points past it."""
    text = ('[\n  {"id": "a", "type": "book"},\n  {"id": "b", "type": "book", "title": "T"},\n]'
            if closing == "]" else '[{"id": "a", "type": "book", "title": "T", }]')
    bib = parse_csl_json(URI, text)
    (problem,) = bib.problems
    assert problem.span.start == text.rindex(",")
    assert problem.message == (f"Invalid JSON: a comma before '{closing}' (JSON allows no "
                               "trailing comma).")


def test_byte_order_mark_is_skipped():
    bib = parse_csl_json(URI, '\ufeff[{"id": "a", "type": "book"}]')
    assert [r.key for r in bib.references] == ["a"] and bib.problems == []


def test_truncated_csl_json_does_not_crash():
    text = CSL_ARRAY[: len(CSL_ARRAY) // 2]
    bib = parse_csl_json(URI, text)
    assert bib is not None and len(bib.problems) == 1
    assert bib.problems[0].span.start <= len(text)


def test_item_without_id_is_a_problem_and_others_parse():
    text = '[{"type": "book", "title": "Anonymous"}, {"id": "ok", "type": "book"}]'
    bib = parse_csl_json(URI, text)
    assert [r.key for r in bib.references] == ["ok"]
    (problem,) = bib.problems
    assert problem.code == "MALFORMED_ENTRY" and "id" in problem.message
    assert at(text, problem.span).startswith('{"type": "book"')


def test_large_csl_json():
    items = [{"id": f"k{i}", "type": "article-journal", "title": f"T {i}"} for i in range(10_000)]
    text = json.dumps(items, indent=1)
    bib = parse_csl_json(URI, text)
    assert len(bib.references) == 10_000
    last = bib.references[-1]
    assert at(text, last.key_span) == "k9999" and at(text, last.fields["title"].span) == "T 9999"


FRONT_MATTER = """---
title: "Paper"
references:
- id: doe2020
  type: article-journal
  title: 'Quoted: 中文 😀 title'
  issued: 2020-01-02
  author:
  - family: Doe
    given: Jane
  note: "citelsp:manual"
- id: "roe"
  type: book
  issued:
    date-parts: [[1999]]
- type: book
  title: no id
- just a string
---
Body text citing [@doe2020].
"""


def front_matter_body(text):
    start = text.index("\n") + 1
    return start, text.index("\n---", start) + 1


def test_csl_yaml_front_matter_spans():
    start, end = front_matter_body(FRONT_MATTER)
    bib = parse_csl_yaml("file:///paper.md", FRONT_MATTER, start, end)
    assert bib.source_format == "csl-yaml" and bib.text == FRONT_MATTER
    doe, roe = bib.references
    assert doe.key == "doe2020" and at(FRONT_MATTER, doe.key_span) == "doe2020"
    assert doe.source_format == "csl-yaml" and doe.entry_type == "article-journal"
    assert doe.csl["issued"] == "2020-01-02"  # dates stay strings
    assert doe.csl["author"] == [{"family": "Doe", "given": "Jane"}]
    title = doe.fields["title"]
    assert title.value == "Quoted: 中文 😀 title"
    assert at(FRONT_MATTER, title.span) == title.value
    assert at(FRONT_MATTER, title.name_span) == "title"
    assert doe.fields["author"].value == "Doe, Jane"
    assert at(FRONT_MATTER, doe.fields["author"].span) == "- family: Doe\n    given: Jane"
    assert at(FRONT_MATTER, doe.span).startswith("id: doe2020")
    assert at(FRONT_MATTER, roe.key_span) == "roe"
    assert roe.fields["issued"].value == "1999"
    assert len(bib.problems) == 2
    assert all(p.code == "MALFORMED_ENTRY" for p in bib.problems)
    assert at(FRONT_MATTER, bib.problems[0].span).startswith("type: book")
    assert at(FRONT_MATTER, bib.problems[1].span) == "just a string"


def test_csl_yaml_without_references():
    text = "---\ntitle: x\n---\n"
    assert parse_csl_yaml("u", text, 4, 13).references == []


def test_broken_csl_yaml_is_a_problem():
    text = "---\nreferences:\n- id: a\n  title: [unclosed\n- id: b\n---\n"
    start, end = front_matter_body(text)
    bib = parse_csl_yaml("file:///paper.md", text, start, end)
    assert bib.references == []
    (problem,) = bib.problems
    assert problem.code == "MALFORMED_ENTRY" and problem.message.startswith("Invalid YAML")
    assert start <= problem.span.start < end


@pytest.mark.parametrize("fences", [("", ""), ("---\n", "...\n"), ("---\n", "---\n")])
def test_a_csl_yaml_file_is_a_bibliography_with_or_without_fences(fences):
    """pandoc's ``--bibliography refs.yaml``: a ``references:`` list, as its converters write
    it (fenced like front matter) or bare."""
    opening, closing = fences
    text = (f"{opening}references:\n- id: doe2020\n  type: article-journal\n"
            f"  title: 'Quoted: title'\n- id: roe\n  type: book\n{closing}")
    bib = parse_document("file:///refs.yaml", text)
    assert bib.source_format == "csl-yaml" and not bib.problems
    doe, roe = bib.references
    assert at(text, doe.key_span) == "doe2020" and at(text, roe.key_span) == "roe"
    assert doe.fields["title"].value == "Quoted: title" == at(text, doe.fields["title"].span)


@pytest.mark.parametrize("name", ["mkdocs.yml", "environment.yaml", "refs.yaml"])
def test_yaml_without_references_is_not_a_bibliography(name):
    """A project's configuration files are not read as YAML at all."""
    text = "site_name: x\nnav:\n  - references: refs.md\n  - [unclosed\n"
    assert parse_document(f"file:///{name}", text) is None


def test_a_broken_csl_yaml_file_is_a_problem():
    text = "references:\n- id: a\n  title: [unclosed\n- id: b\n"
    bib = parse_document("file:///refs.yml", text)
    (problem,) = bib.problems
    assert problem.code == "MALFORMED_ENTRY" and problem.message.startswith("Invalid YAML")


# --- hostile JSON: deep nesting, lone surrogates (issue 13, item 5) --------------------------


def test_json_nested_deeper_than_the_stack_is_a_problem_not_a_crash():
    deep = "[" * 5000 + "]" * 5000
    text = '[{"id": "a", "type": "book", "note": ' + deep + "}]"
    bib = parse_csl_json(URI, text)
    (problem,) = bib.problems
    assert problem.code == "MALFORMED_ENTRY" and "nested too deeply" in problem.message
    assert parse_csl_json("file:///w/package.json", '{"a": ' + deep + "}") is None


def test_values_nested_past_the_csl_depth_are_dropped_with_a_warning():
    text = '[{"id": "a", "type": "book", "title": "T", "note": ' + "[" * 40 + "]" * 40 + "}]"
    bib = parse_csl_json(URI, text)
    (ref,) = bib.references
    assert "note" not in ref.fields and "note" not in ref.csl and ref.value("title") == "T"
    assert [p.severity for p in bib.problems] == [Severity.WARNING]


def test_lone_surrogate_in_a_title_is_replaced_with_a_warning():
    text = (
        '[{"id": "a", "type": "book", "title": "Bad \\ud800 title",'
        ' "author": [{"family": "X\\udc00"}]}]'
    )
    bib = parse_csl_json(URI, text)
    (ref,) = bib.references
    assert ref.value("title") == "Bad \ufffd title" and ref.csl["title"] == "Bad \ufffd title"
    assert ref.work.authors[0].family == "X\ufffd"
    assert [p.code for p in bib.problems] == ["MALFORMED_ENTRY", "MALFORMED_ENTRY"]
    assert all(p.severity == Severity.WARNING for p in bib.problems)
    assert text[bib.problems[0].span.start : bib.problems[0].span.end] == "Bad \\ud800 title"


def test_check_reports_hostile_json_and_goes_on(tmp_path, capsys, monkeypatch):
    from citelsp.cli import main

    monkeypatch.setenv("CITELSP_CACHE_DIR", str(tmp_path / "cache"))
    deep = tmp_path / "deep.json"
    deep.write_text('[{"id": "d", "type": "book", "note": ' + "[" * 3000 + "]" * 3000 + "}]")
    bad = tmp_path / "bad.json"
    bad.write_text('[{"id": "s", "type": "article-journal", "title": "A \\udfff B"}]')
    good = tmp_path / "good.bib"
    good.write_text("@book{g, title = {Good}}\n")
    code = main(["check", "--offline", "--fail-on", "never", str(deep), str(bad), str(good)])
    out = capsys.readouterr().out
    assert code == 0
    assert "deep.json" in out and "nested too deeply" in out
    assert "bad.json" in out and "surrogate" in out
    assert "good.bib" in out
    out.encode("utf-8")


# --- CSL-YAML as pandoc writes and reads it (issue 24) ----------------------------------------


@pytest.mark.parametrize(("written", "key"), [
    ("timmory\\_\\_justice_1950", "timmory__justice_1950"), ("'q\\_r'", "q_r"),
    ("0017", "17"), ("1e3", "1000"), ("0x10", "16"), ("3.10", "3.1"), ("1_000", "1_000"),
    ("2019-01-01", "2019-01-01"), ("'0017'", "0017"), (".5", ".5")])
def test_a_csl_yaml_id_is_typed_and_unescaped_as_pandoc_reads_it(written, key):
    """pandoc writes ids as Markdown (``timmory\\_\\_justice``) and types plain YAML scalars
    with YAML 1.2's core schema before it reads them as text."""
    text = f"---\nreferences:\n- id: {written}\n  type: book\n  title: T\n---\n"
    (reference,) = parse_csl_yaml("file:///p.md", text, 4, text.index("\n---\n", 4)).references
    assert reference.key == key


def test_csl_yaml_values_are_markdown():
    text = ("---\nreferences:\n- id: a\n  type: article-journal\n"
            "  title: '[Bottom-up]{.nocase} design of \\\"x\\\"'\n  DOI: 10.1000/a\\<b\\>\n---\n")
    (reference,) = parse_csl_yaml("file:///p.md", text, 4, text.index("\n---\n", 4)).references
    assert reference.csl["title"] == 'Bottom-up design of "x"'
    assert reference.csl["DOI"] == "10.1000/a<b>"


def test_items_without_a_type_are_read_with_a_hint():
    """pandoc reads CSL-JSON items that have no ``type``; a file of them is a bibliography,
    each such item with a Hint, while JSON that describes no works stays ignored."""
    bib = parse_csl_json(URI, '[{"id": "a", "title": "T", "author": [{"family": "X"}]},\n'
                              ' {"id": "b", "type": "book", "title": "B"}]')
    assert [(r.key, r.entry_type) for r in bib.references] == [("a", ""), ("b", "book")]
    (hint,) = bib.problems
    assert hint.severity == Severity.HINT and "without a \"type\"" in hint.message
    assert at(bib.text, hint.span) == "a"
    assert parse_csl_json(URI, '[{"id": 1, "name": "user"}]') is None


LAUGHS = "l0: &l0 [\"lol lol lol lol\"]\n" + "".join(
    f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]\n" for i in range(1, 10))


@pytest.mark.timeout(60)
def test_yaml_aliases_that_multiply_are_refused_and_other_references_read():
    text = LAUGHS + """references:
- id: bomb
  type: article-journal
  title: Bomb
  author: *l9
- &good
  id: good
  type: article-journal
  title: A Real Title
  author: [{family: Smith, given: A}]
- *good
- &loop
  id: loop
  type: book
  note: [*loop]
- id: team
  type: article-journal
  title: Shared authors
  author: *l1
"""
    bib = parse_csl_yaml("file:///paper.md", text, 0, len(text))
    assert [r.key for r in bib.references] == ["good", "team"]
    messages = [(p.severity, text[p.span.start:p.span.end].split("\n")[0], p.message)
                for p in bib.problems]
    assert [m[:2] for m in messages] == [
        (Severity.ERROR, "id: bomb"), (Severity.WARNING, "&good"), (Severity.ERROR, "&loop")]
    assert "expands through YAML aliases" in messages[0][2]
    assert "repeated through a YAML alias" in messages[1][2]
