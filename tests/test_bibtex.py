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
    (undefined,) = bib.problems
    assert undefined.code == "UNDEFINED_MACRO" and undefined.severity == Severity.WARNING
    assert at(text, undefined.span) == "undefinedmacro" and "undefinedmacro" in undefined.message
    (ref,) = bib.references
    assert ref.value("journal") == "Journal of the ACM Letters"
    assert at(text, ref.fields["journal"].span) == 'jn # " Letters"'
    assert ref.value("month") == "January"
    assert ref.value("publisher") == "ACM" and at(text, ref.fields["publisher"].span) == "acm"
    assert ref.value("note") == ""  # BibTeX and biber read an undefined macro as empty
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
    second = parse_bibtex(uri, edited, previous=first)
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
    bib = parse('@string{jn = "Old"}\n' + body, uri)
    assert bib.references[0].value("journal") == "Old"
    bib = parse_bibtex(uri, '@string{jn = "New"}\n' + body, previous=bib)
    assert bib.references[0].value("journal") == "New"
    bib = parse_bibtex(uri, '@string{jn = "Nou"}\n' + body, previous=bib)
    assert bib.references[0].value("journal") == "Nou"


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
    from citelsp.documents import bibtex_blocks as bibtex

    text = f"@misc{{k,\n  note = {value},\n  year = 1\n}}\n"
    fast = parse(text, "file:///fast.bib").references[0]
    monkeypatch.setattr(bibtex, "_SIMPLE_FIELD", re.compile(r"(?!)"))
    general = parse(text, "file:///general.bib").references[0]
    for name in ("note", "year"):
        assert fast.fields[name] == general.fields[name]
    assert fast.span == general.span


# --- conformance with BibTeX 0.99d and biber 2.18 (issue 11) ------------------------------


def codes(bib):
    return [(p.code, p.severity) for p in bib.problems]


def test_backslash_before_a_closing_brace_does_not_escape_it():
    text = "@misc{a, note = {First line\\\\}, year = 2001}\n@misc{b, title = {B}}\n"
    bib = parse(text)
    assert bib.problems == [] and [r.key for r in bib.references] == ["a", "b"]
    assert bib.references[0].value("note") == "First line\\\\"
    assert bib.references[0].value("year") == "2001"


def test_percent_comment_lines_inside_an_entry_as_biber_reads_them():
    text = (
        "@misc{a,\n"
        "  title = {Half {50%} off}, % trailing comment with } and {\n"
        "% a whole comment line, with a } brace\n"
        "  year = 2000}\n"
    )
    (ref,) = parse(text).references
    assert ref.value("title") == "Half {50%} off" and ref.value("year") == "2000"


def test_a_line_starting_with_at_inside_a_braced_value():
    text = "@misc{a, note = {write to\n@ home or\n  @office}, year = 2001}\n@misc{b}\n"
    bib = parse(text)
    assert bib.problems == [] and [r.key for r in bib.references] == ["a", "b"]
    assert bib.references[0].value("note") == "write to\n@ home or\n  @office"


def test_at_sign_and_entry_type_on_separate_lines():
    text = "@\nmisc{split, title = {Split}}\n@ Article\n  {other, title = {Other}}\n"
    refs = parse(text).references
    assert [(r.key, r.entry_type) for r in refs] == [("split", "misc"), ("other", "article")]
    assert at(text, refs[0].span).startswith("@\nmisc{split")


def test_entries_after_other_text_on_the_same_line():
    text = "Prose first @misc{first, title = {A}}\n@misc{b} and then @book{third, title = {C}}\n"
    bib = parse(text)
    assert [r.key for r in bib.references] == ["first", "b", "third"] and bib.problems == []
    assert at(text, bib.references[2].key_span) == "third"


def test_a_percent_comment_hides_an_entry_as_in_biber():
    assert parse("x % @misc{hidden, title = {H}}\n@misc{shown}\n").references[0].key == "shown"


def test_escaped_quote_and_escaped_brace_are_errors_with_a_reason():
    text = (
        '@misc{godel, title = "G\\"odel"}\n'
        "@misc{setx, title = {The set \\{x}}\n"
        "@misc{fine, title = {Fine}}\n"
    )
    bib = parse(text)
    assert [r.key for r in bib.references] == ["fine"]
    godel, setx = bib.problems
    assert (godel.code, godel.severity, godel.key) == ("MALFORMED_ENTRY", Severity.ERROR, "godel")
    assert '\\"' in godel.message and "ends a quoted value" in godel.message
    assert setx.key == "setx" and "count as braces" in setx.message
    assert at(text, setx.span).startswith("@misc{setx")


def test_repeated_field_keeps_the_first_value_and_says_biber_differs():
    text = "@misc{rep, title = {First}, Title = {Second}}\n"
    bib = parse(text)
    assert bib.references[0].value("title") == "First"
    (problem,) = bib.problems
    assert (problem.code, problem.severity, problem.key) == (
        "DUPLICATE_FIELD", Severity.WARNING, "rep"
    )  # fmt: skip
    assert at(text, problem.span) == "Title"
    assert "first value" in problem.message and "biber" in problem.message


def test_undefined_macro_reads_as_empty_with_a_warning():
    text = '@string{known = "K"}\n@misc{und, title = undefinedmacro # { tail}, note = known}\n'
    bib = parse(text)
    ref = bib.references[0]
    assert ref.value("title") == " tail" and ref.value("note") == "K"
    (problem,) = bib.problems
    assert (problem.code, problem.severity, problem.key) == (
        "UNDEFINED_MACRO", Severity.WARNING, "und"
    )  # fmt: skip
    assert at(text, problem.span) == "undefinedmacro # { tail}"
    assert bib.undefined == {"undefinedmacro"} and bib.macros == {"known": "K"}


def test_undefined_macro_in_a_string_definition():
    bib = parse('@string{full = nothing # " Journal"}\n@misc{a, journal = full}\n')
    assert bib.references[0].value("journal") == " Journal"
    assert codes(bib) == [("UNDEFINED_MACRO", Severity.WARNING)]


def test_key_with_equals_sign_is_read_with_a_warning():
    text = "@misc{eq=key, title = {Key with equals}}\n"
    bib = parse(text)
    assert [r.key for r in bib.references] == ["eq=key"]
    (problem,) = bib.problems
    assert (problem.code, problem.severity) == ("MALFORMED_ENTRY", Severity.WARNING)
    assert at(text, problem.span) == "eq=key" and "biber rejects" in problem.message


@pytest.mark.parametrize(
    ("text", "odd"),
    [("@misc{k, title\u00a0= {T}, year = 2020}\n", "\u00a0"),  # simple field
     ("@misc{k, title\u00a0= {T} # { more}, year = 2020}\n", "\u00a0"),  # concatenation
     ("@misc{k,\n\u3000title = {T},\n  year = 2020}\n", "\u3000"),  # indented
     ("@misc{k, title = {T}\u2003, year = 2020}\n", "\u2003"),  # after the value
     ("@misc{k, title =\u00a0{T {a {b {c}}}}, year = 2020}\n", "\u00a0"),  # deep braces
     ("@misc{\u00a0k, title = {T}, year = 2020}\n", "\u00a0"),  # before the key
     ("@misc{k\u202f, title = {T}, year = 2020}\n", "\u202f"),  # after the key
     ("@misc\u00a0{k, title = {T}, year = 2020}\n", "\u00a0"),  # after the type
     ("@\u2009misc {k, title = {T}, year = 2020}\n", "\u2009")],  # after the "@"
)
def test_a_unicode_space_between_tokens_is_read_as_a_space_with_a_warning(text, odd):
    """BibTeX reads ``title<U+00A0>`` as another field's name and drops the title (and a key
    with it as another key), or stops there with an error: citelsp reads the entry, whichever
    path it takes, and says why BibTeX will not."""
    bib = parse(text)
    (ref,) = bib.references
    assert ref.fields["title"].value.startswith("T") and ref.fields["year"].value == "2020"
    (problem,) = bib.problems
    assert (problem.code, problem.severity, problem.key) == (
        "MALFORMED_ENTRY", Severity.WARNING, "k")
    assert at(text, problem.span) == odd
    assert f"(U+{ord(odd):04X}) where BibTeX expects a plain space" in problem.message


def test_unicode_spaces_inside_values_and_comments_are_text():
    text = ("@misc{k,\n  % a comment with\u00a0a no-break space\n"
            "  title = {A\u00a0B},\n  note = \"C\u3000D\"}\n")
    bib = parse(text)
    assert bib.problems == []
    assert bib.references[0].fields["title"].value == "A\u00a0B"


@pytest.mark.parametrize("text", ["@book{title={No key}}\n", "@book{\n  title = {No key}\n}\n"])
def test_entry_that_starts_with_a_field_has_no_key(text):
    bib = parse(text)
    assert bib.references == []
    (problem,) = bib.problems
    assert problem.severity == Severity.ERROR
    assert problem.message == (
        "Citation key missing in @book entry: it starts with the field 'title'."
    )


def test_glossaries_and_tool_data_are_not_references():
    text = (
        "@entry{duck, name = {duck}, description = {a waterbird}}\n"
        "@symbol{pi, name = {\\ensuremath{\\pi}}, description = {pi}}\n"
        "@dualabbreviation{svm, short = {SVM}, long = {support vector machine}}\n"
        "@unit{ampere, unitname = {ampere}, unitsymbol = {A}}\n"
        "@IEEEtranBSTCTL{ctl, CTLuse_url = {yes}}\n"
        "@ABNT-options{abnt-doi=link, abnt-doi = {link}, key = {aaaa}}\n"
        "@xdata{pub, publisher = {P}}\n"
        "@article{real, title = {A work}, title = {Twice}}\n"
        "@misc{bare}\n"
    )
    bib = parse(text)
    assert [r.key for r in bib.references] == ["real", "bare"]
    assert codes(bib) == [("DUPLICATE_FIELD", Severity.WARNING)]


def test_macros_given_from_earlier_files_and_returned():
    first = parse('@string{jn = "Journal"}\n@string{Pub = {P} # jn}\n', "file:///a.bib")
    assert first.macros == {"jn": "Journal", "pub": "PJournal"}
    text = "@misc{a, journal = JN, publisher = pub, note = own}\n@string{own = {O}}\n"
    second = parse_bibtex("file:///b.bib", text, macros=first.macros)
    ref = second.references[0]
    assert (ref.value("journal"), ref.value("publisher"), ref.value("note")) == (
        "Journal", "PJournal", ""
    )  # fmt: skip
    assert second.external == {"jn": "Journal", "pub": "PJournal"}
    assert second.undefined == {"own"}  # used before it is defined, as in BibTeX
    assert second.macros == {"own": "O"} and second.incoming == first.macros


def test_reparse_with_other_given_macros_expands_again():
    uri = "file:///b.bib"
    text = "@misc{plain, title = {T}}\n\n@misc{user, journal = jn}\n"
    bib = parse_bibtex(uri, text)
    assert bib.undefined == {"jn"} and len(bib.problems) == 1
    again = parse_bibtex(uri, text, previous=bib, macros={"jn": "J"})
    plain, user = again.references
    assert plain is bib.references[0] and user.value("journal") == "J"
    assert again.problems == [] and again.external == {"jn": "J"}


def test_a_previous_parse_seeds_one_reparse_only():
    uri = "file:///spent.bib"
    text = "@misc{a, title = {A}}\n\n@misc{z}\n"
    first = parse_bibtex(uri, text)
    second = parse_bibtex(uri, text + "@misc{b}\n", previous=first)
    assert second.references[0] is first.references[0] and first.chunks is None
    third = parse_bibtex(uri, text, previous=first)  # spent: read afresh
    assert third.references[0] is not first.references[0]
    other = parse_bibtex("file:///other.bib", "@misc{a, title = {A}}\n", previous=second)
    assert other.references[0].uri == "file:///other.bib"


@pytest.mark.parametrize(
    "hostile",
    ["@" * 400_000, "@{" * 200_000, "@\n" * 100_000, "x @a{" * 80_000, "% @a{b}\n" * 50_000,
     "@misc{a, note = {" + "\n@ x" * 50_000, "@misc{a, title = {x}}" * 20_000],
    ids=["ats", "at-braces", "at-lines", "inline-heads", "comments", "unclosed", "one-line"],
)
@pytest.mark.timeout(60)
def test_hostile_text_is_read_without_crashing(hostile):
    bib = parse(hostile)
    for p in bib.problems:
        assert 0 <= p.span.start < p.span.end <= len(hostile)
    for r in bib.references:
        assert at(hostile, r.key_span) == r.key


def test_reparse_keeps_the_macros_of_untouched_chunks_after_the_edit():
    """Found by the long property run: the kept chunks' @string macros were not returned."""
    uri = "file:///kept.bib"
    text = '@article{k, title = {T}}\n@string{jn = "J"}\n'
    bib = parse_bibtex(uri, text)
    assert parse_bibtex(uri, text[1:], previous=bib).macros == {"jn": "J"}


def test_a_biblatex_set_is_no_work_and_lists_its_members_across_edits():
    text = "@set{s, entryset = { a,b ,}}\n@article{a, title = {A}}\n@article{b, title = {B}}\n"
    bib = parse_bibtex("file:///s.bib", text)
    assert [r.key for r in bib.references] == ["a", "b"] and not bib.problems
    assert bib.sets == {"s": ("a", "b")}
    edited = parse_bibtex("file:///s.bib", text.replace("{B}", "{Bee}"), previous=bib)
    assert edited.sets == {"s": ("a", "b")}  # kept from the untouched chunk
    changed = parse_bibtex("file:///s.bib", edited.text.replace(" a,b ,", "b"), previous=edited)
    assert changed.sets == {"s": ("b",)}


def doubling_macros(levels: int, seed: str = "Word word ") -> str:
    """``@string`` macros each ten times the one before: the last is 10**levels seeds."""
    text = f'@string{{m0 = "{seed}"}}\n'
    for i in range(1, levels + 1):
        text += f"@string{{m{i} = " + " # ".join([f"m{i - 1}"] * 10) + "}\n"
    return text


@pytest.mark.timeout(60)
def test_macros_that_multiply_themselves_are_bounded_and_other_entries_read():
    text = (doubling_macros(7) + '@string{jmlr = "Journal of Machine Learning Research"}\n'
            + "".join(f"@article{{k{i}, title = m7, note = m2 # m2}}\n" for i in range(2000))
            + "@article{good, title = {A Real Title}, journal = jmlr, month = jan}\n")
    bib = parse(text)
    refs = by_key(bib)
    good = refs["good"].fields
    assert (good["journal"].value, good["month"].value) == (
        "Journal of Machine Learning Research", "January")
    expanded = sum(len(f.value) for r in bib.references for f in r.fields.values())
    assert expanded <= 16 * len(text), "no file expands past 16 times its size"
    refused = [p for p in bib.problems if p.code == "MALFORMED_ENTRY"]
    assert refused and all(p.severity == Severity.ERROR and "reads as empty" in p.message
                           for p in refused)
    assert at(text, refused[0].span) == " # ".join(["m1"] * 10)  # the first @string too big


@pytest.mark.timeout(60)
def test_a_long_join_of_a_macro_is_refused_before_it_is_made():
    """``m # m # …`` a thousand times in one entry: the entry is ~4,000 characters, so at most
    64,000 may come out; the 900,000 it asks for are never joined."""
    text = ('@string{m = "' + "x" * 900 + '"}\n@string{s = "A Real Title"}\n'
            '@article{big, title = ' + " # ".join(["m"] * 1000) + ", year = 2020}\n"
            "@article{other, title = s # {: a subtitle}}\n")
    bib = parse(text)
    big, other = by_key(bib)["big"], by_key(bib)["other"]
    assert big.fields["title"].value == "" and big.fields["year"].value == "2020"
    assert other.fields["title"].value == "A Real Title: a subtitle"
    (problem,) = bib.problems
    assert problem.key == "big" and at(text, problem.span).startswith("m # m")
    assert "expands through @string macros to 900,000 characters" in problem.message
