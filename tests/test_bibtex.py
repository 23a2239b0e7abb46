"""BibTeX parsing: fields, macros, spans, recovery from broken entries, edits."""

import re

import pytest

from citelsp.documents.bibtex import parse_bibtex
from citelsp.documents.model import Severity

URI = "file:///refs.bib"


def at(text, span):
    return text[span.start : span.end]


def parse(text, uri=URI):
    return parse_bibtex(uri, text)


def by_key(bib):
    return {r.key: r for r in bib.references}


def test_entry_fields_types_and_spans():
    text = (
        "@Article{Smith2020,\n"
        '  Author = {M{\\"u}ller, Hans and {World Health Organization}},\n'
        '  title = "A {BERT} study",\n'
        "  year = 2020,\n"
        "  doi = {10.1000/a\\_b}\n"
        "}\n"
    )
    bib = parse(text)
    assert bib.source_format == "bibtex" and bib.problems == []
    (ref,) = bib.references
    assert ref.key == "Smith2020" and ref.entry_type == "article"
    assert ref.source_format == "bibtex" and ref.uri == URI
    assert at(text, ref.key_span) == "Smith2020"
    assert at(text, ref.span) == text.rstrip("\n")
    assert list(ref.fields) == ["author", "title", "year", "doi"]
    author = ref.fields["author"]
    assert author.value == 'M{\\"u}ller, Hans and {World Health Organization}'
    assert at(text, author.span) == author.value
    assert at(text, author.name_span) == "Author"
    assert ref.value("title") == "A {BERT} study"
    assert at(text, ref.fields["title"].span) == "A {BERT} study"
    assert ref.value("year") == "2020" and at(text, ref.fields["year"].span) == "2020"
    assert ref.value("doi") == "10.1000/a\\_b"
    assert ref.span_of("doi") == ref.fields["doi"].span
    assert ref.span_of("missing") == ref.key_span


def test_string_macros_months_and_concatenation():
    text = (
        '@string{acm = "ACM"}\n'
        "@STRING(jn = {Journal of the } # acm)\n"
        "@article{a,\n"
        '  journal = jn # " Letters",\n'
        "  month = jan,\n"
        "  publisher = acm,\n"
        "  note = undefinedmacro,\n"
        '  title = {Part } # "one" # { and two}\n'
        "}\n"
    )
    bib = parse(text)
    assert bib.problems == []
    (ref,) = bib.references
    assert ref.value("journal") == "Journal of the ACM Letters"
    assert at(text, ref.fields["journal"].span) == 'jn # " Letters"'
    assert ref.value("month") == "January"
    assert ref.value("publisher") == "ACM" and at(text, ref.fields["publisher"].span) == "acm"
    assert ref.value("note") == "undefinedmacro"
    assert ref.value("title") == "Part one and two"
    assert at(text, ref.fields["title"].span) == '{Part } # "one" # { and two}'


def test_nested_braces_quotes_and_parentheses():
    text = (
        "@misc(paren, title = {Has ) paren}, year = {2000})\n"
        "@book{deep, title = {A {Very {Deeply {Nested}}} Title}, "
        'note = "He said {"}hi{"} and {\\"o}"}\n'
        '@article{empty, title = {}, note = ""}\n'
        "@misc{nofields}\n"
    )
    bib = parse(text)
    assert bib.problems == []
    refs = by_key(bib)
    assert refs["paren"].value("title") == "Has ) paren"
    assert at(text, refs["paren"].span).endswith("{2000})")
    assert refs["deep"].value("title") == "A {Very {Deeply {Nested}}} Title"
    assert refs["deep"].value("note") == 'He said {"}hi{"} and {\\"o}'
    assert refs["empty"].value("title") == "" and refs["empty"].value("note") == ""
    assert at(text, refs["empty"].fields["title"].span) == ""
    assert refs["nofields"].fields == {}


def test_comments_preamble_and_stray_at_are_not_references():
    text = (
        "% line comment @article{fake, title={x}}\n"
        "Free text before entries, an email like x@example.org.\n"
        '@preamble{"\\newcommand{\\noop}[1]{}"}\n'
        "@comment{@article{commented, title = {x}}}\n"
        "@Comment jabref-meta: databaseType:bibtex;\n"
        "@article{real, title = {Real}}\n"
    )
    bib = parse(text)
    assert [r.key for r in bib.references] == ["real"]
    assert bib.problems == []


def test_several_blocks_on_one_line():
    text = (
        '@comment{x} @string{v = "Vol"} @article{one, title = {1}, note = v} '
        '@preamble("(") @book{two, title = {2}} % mail me@example.org\n'
    )
    bib = parse(text)
    assert bib.problems == []
    one, two = bib.references
    assert (one.key, one.value("note"), two.key) == ("one", "Vol", "two")
    assert at(text, one.span) == "@article{one, title = {1}, note = v}"
    assert at(text, two.span) == "@book{two, title = {2}}"
    assert at(text, two.fields["title"].span) == "2"


def test_duplicate_keys_are_all_returned():
    text = "@article{dup, title = {One}}\n@book{dup, title = {Two}}\n"
    refs = parse(text).references
    assert [(r.key, r.value("title")) for r in refs] == [("dup", "One"), ("dup", "Two")]
    assert at(text, refs[1].key_span) == "dup" and refs[1].key_span.start > refs[0].span.end


def test_repeated_field_keeps_the_first():
    (ref,) = parse("@article{a, title = {First}, title = {Second}}").references
    assert ref.value("title") == "First"


BROKEN = [
    (
        "unbalanced braces",
        "@article{broken,\n  title = {Unbalanced {braces},\n  year = {2021},\n}\n",
    ),
    ("missing key", "@book{,\n  title = {No key}\n}\n"),
    ("key is a field", "@book{\n  title = {No key}\n}\n"),
    ("no comma after key", "@book{nocomma\n  title = {x}}\n"),
    ("missing equals", "@article{noeq,\n  title {x}\n}\n"),
    ("missing comma between fields", "@article{nosep,\n  title = {x}\n  year = {2020}\n}\n"),
    ("no delimiter", "@article nobrace,\n  title = {x}\n"),
    ("no type", "@{notype, title = {x}}\n"),
    ("unterminated quote", '@article{q,\n  title = "never closed\n}\n'),
    ("value missing", "@article{v,\n  title = ,\n}\n"),
    ("unclosed at end of file", "@article{eof,\n  title = {x},\n"),
]


@pytest.mark.parametrize(("label", "broken"), BROKEN, ids=[b[0] for b in BROKEN])
def test_broken_entry_is_one_problem_and_spares_neighbours(label, broken):
    before = "@article{before,\n  title = {Before}\n}\n\n"
    after = "\n@article{after,\n  title = {After},\n  year = 1999\n}\n"
    text = before + broken + after
    bib = parse(text)
    assert [r.key for r in bib.references] == ["before", "after"], label
    (problem,) = bib.problems
    assert problem.code == "MALFORMED_ENTRY" and problem.severity == Severity.ERROR
    assert problem.message
    start = len(before)
    assert problem.span.start == start
    first_line = broken.split("\n", 1)[0]
    assert at(text, problem.span).startswith(first_line)
    assert problem.span.end <= start + len(broken)
    ref = by_key(bib)["after"]
    assert at(text, ref.key_span) == "after"
    assert at(text, ref.fields["title"].span) == "After"
    assert at(text, ref.fields["year"].span) == "1999"


def test_every_broken_entry_gets_its_own_problem():
    text = "".join(b for _, b in BROKEN) + "@misc{ok, title = {Fine}}\n"
    bib = parse(text)
    assert [r.key for r in bib.references] == ["ok"]
    assert len(bib.problems) == len(BROKEN)
    assert len({p.span.start for p in bib.problems}) == len(BROKEN)


def test_broken_entry_problem_names_its_key():
    bib = parse("@article{broken,\n  title = {x\n}\n")
    assert bib.problems[0].key == "broken"
    assert "title" in bib.problems[0].message


def test_crlf_line_endings():
    text = "@article{crlf,\r\n  title = {Windows\r\n  lines},\r\n  year = {2020}\r\n}\r\n"
    (ref,) = parse(text).references
    assert at(text, ref.key_span) == "crlf"
    assert ref.value("title") == "Windows\r\n  lines"
    assert at(text, ref.fields["year"].span) == "2020"
    assert at(text, ref.span).endswith("}")


def test_non_ascii_spans_are_code_points():
    text = (
        "% 中文注释 😀\n"
        "@article{王2021,\n  title = {深度学习 😀 研究},\n  author = {王, 小明}\n}\n"
        "@article{next, title = {Ü}}\n"
    )
    refs = by_key(parse(text))
    assert at(text, refs["王2021"].key_span) == "王2021"
    assert at(text, refs["王2021"].fields["title"].span) == "深度学习 😀 研究"
    assert at(text, refs["王2021"].fields["author"].span) == "王, 小明"
    assert at(text, refs["next"].fields["title"].span) == "Ü"


def test_entry_indented_and_trailing_comment_text():
    text = "  @article{indented, title = {x}} trailing words\n"
    (ref,) = parse(text).references
    assert at(text, ref.span) == "@article{indented, title = {x}}"


def test_value_with_escaped_brace_and_at_sign():
    text = "@misc{esc, title = {Set \\{x\\} at LeQua @ {CLEF}}, year = 2020}\n"
    (ref,) = parse(text).references
    assert ref.value("title") == "Set \\{x\\} at LeQua @ {CLEF}"
    assert ref.value("year") == "2020"


def generated_library(n):
    return "".join(
        f"@article{{key{i},\n  author = {{Author{i}, A.}},\n  title = {{Title {{{i}}}}},\n"
        f"  journal = jn,\n  year = {{20{i % 30:02d}}},\n}}\n\n"
        for i in range(n)
    )


def test_large_library_and_reparse_after_one_character_edit():
    uri = "file:///large.bib"
    text = '@string{jn = "Journal"}\n' + generated_library(10_000)
    first = parse(text, uri)
    assert len(first.references) == 10_000 and first.problems == []
    edit = text.index("Title {5000}")
    edited = text[:edit] + "X" + text[edit:]
    second = parse(edited, uri)
    assert len(second.references) == 10_000 and second.problems == []
    for ref in (second.references[0], second.references[4999], second.references[5000]):
        assert at(edited, ref.key_span) == ref.key
        assert at(edited, ref.fields["title"].span) == ref.value("title")
        assert ref.value("journal") == "Journal"
    assert second.references[5000].value("title") == "XTitle {5000}"
    assert second.references[-1].value("title") == "Title {9999}"
    assert at(edited, second.references[-1].fields["year"].span) == "2009"
    # untouched entries are the same objects: those before the edit as they were, those
    # after it moved by one in place; the edited entry is built anew
    assert second.references[0] is first.references[0]
    assert second.references[9000] is first.references[9000]
    assert at(edited, second.references[9000].span).startswith("@article{key9000,")
    assert second.references[5000] is not first.references[5000]


def test_reparse_follows_macro_changes():
    uri = "file:///macros.bib"
    body = "@article{a, journal = jn}\n"
    assert parse('@string{jn = "Old"}\n' + body, uri).references[0].value("journal") == "Old"
    assert parse('@string{jn = "New"}\n' + body, uri).references[0].value("journal") == "New"
    unchanged_offset = '@string{jn = "Nou"}\n' + body
    assert parse(unchanged_offset, uri).references[0].value("journal") == "Nou"


def test_same_text_under_two_uris_keeps_each_uri():
    text = "@article{a, title = {x}}\n"
    assert parse(text, "file:///one.bib").references[0].uri == "file:///one.bib"
    assert parse(text, "file:///two.bib").references[0].uri == "file:///two.bib"


@pytest.mark.parametrize(
    "garbage",
    ["", "@", "@@@@", "}{}{", "@article{", "@article{a,", "@article{a, title", '@string{x = "'],
)
def test_garbage_never_raises(garbage):
    bib = parse(garbage)
    assert bib.references == []


TRICKY_VALUES = [
    "{plain}",
    '"quoted"',
    "{one {level} deep}",
    "{two {levels {deep}}}",
    '{M{\\"u}ller}',
    "{escaped \\{ brace \\}}",
    '"quote with {braces}"',
    '"quote with {"} inside"',
    "2020",
    "jan",
    'jan # " 1st"',
    "{a} # {b}",
    "{}",
    '""',
    "{multi\n  line}",
]


@pytest.mark.parametrize("value", TRICKY_VALUES)
def test_single_regex_fast_path_agrees_with_general_path(value, monkeypatch):
    from citelsp.documents import bibtex

    text = f"@misc{{k,\n  note = {value},\n  year = 1\n}}\n"
    fast = parse(text, "file:///fast.bib").references[0]
    monkeypatch.setattr(bibtex, "_SIMPLE_FIELD", re.compile(r"(?!)"))
    general = parse(text, "file:///general.bib").references[0]
    for name in ("note", "year"):
        assert fast.fields[name] == general.fields[name]
    assert fast.span == general.span
