"""Property-based tests for every parser: never crash, spans inside the text, and the
round trips and equivalences each one promises (issue 13, "Done when").

Each property runs a short budget in the normal suite and a long one with ``-m slow``
(``pytest -m slow tests/test_parser_properties.py``).
"""

from __future__ import annotations

import json
import re
from urllib.parse import quote

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citelsp.documents.bibtex import parse_bibtex
from citelsp.documents.csl import parse_csl_json, parse_csl_yaml
from citelsp.documents.latex import parse_latex
from citelsp.documents.manuscript import front_matter, parse_manuscript
from citelsp.documents.markers import parse_markers
from citelsp.documents.pandoc import code_regions, mask, parse_pandoc

BUDGETS = [60, pytest.param(3000, marks=pytest.mark.slow, id="long")]


def holds(strategy, check, examples: int) -> None:
    """Run ``check`` on ``examples`` values drawn from ``strategy``."""

    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(strategy)
    def run(value):
        check(value)

    run()


def cut(text, span):
    return text[span.start : span.end]


def in_text(text, span):
    assert 0 <= span.start <= span.end <= len(text), (span, len(text))


def pieces(alphabet: list[str], max_size: int = 60):
    """Texts made of grammar pieces and a little random text."""
    piece = st.sampled_from(alphabet) | st.text(max_size=3)
    return st.lists(piece, max_size=max_size).map("".join)


# --- BibTeX ----------------------------------------------------------------------------------

BIB_PIECES = [
    "@", "@article", "@string", "@comment", "@preamble", "@entry", "@misc", "@\n", "{", "}",
    "(", ")", ",", " = ", "=", "#", '"', "%", "\\", "\\\\", "\\{", "\n", "\r\n", "\r", " ",
    "\t", "key", "Key", "title", "author", "year", "doi", "jan", "jn", "2020", "é", "王", "😀",
    "@article{k, title = {T}}\n", '@string{jn = "J"}\n', "@misc{a=b, x = y}\n",
    "@misc{k, note = {see\n@ home}}\n", "title = {a {b} c}", "% c\n",
    "crossref = {k}", "crossref = {K}", "@inproceedings{c, crossref = {k}}\n",
    "@proceedings{k, year = 2020, booktitle = {B}, crossref = {c}}\n",
]  # fmt: skip


def assert_bibtex_well_formed(text, bib):
    for ref in bib.references:
        in_text(text, ref.span)
        assert cut(text, ref.key_span) == ref.key
        assert ref.span.start <= ref.key_span.start <= ref.key_span.end <= ref.span.end
        for field in ref.fields.values():
            in_text(text, field.span)
            assert cut(text, field.name_span).lower() == field.name
        for field in ref.inherited.values():  # the parent's own fields, in the same text
            in_text(text, field.span)
            assert cut(text, field.name_span).lower() == field.name
    for problem in bib.problems:
        in_text(text, problem.span)
        assert problem.message


def snapshot(bib):
    refs = [(r.key, r.entry_type, r.span, r.key_span, r.fields, dict(r.inherited))
            for r in bib.references]
    return refs, bib.problems, bib.macros, bib.undefined


@pytest.mark.parametrize("examples", BUDGETS)
def test_bibtex_never_crashes_and_spans_point_into_the_text(examples):
    def check(text):
        assert_bibtex_well_formed(text, parse_bibtex("file:///p.bib", text))

    holds(pieces(BIB_PIECES), check, examples)


def edits():
    """A text and a list of edits (position fraction, characters deleted, text inserted)."""
    edit = st.tuples(st.floats(0, 1), st.integers(0, 12), pieces(BIB_PIECES, 6))
    return st.tuples(pieces(BIB_PIECES, 40), st.lists(edit, min_size=1, max_size=6))


@pytest.mark.parametrize("examples", BUDGETS)
def test_bibtex_incremental_reparse_equals_a_fresh_parse(examples):
    def check(case):
        text, changes = case
        uri = "file:///incremental.bib"
        bib = parse_bibtex(uri, text)
        for where, deleted, inserted in changes:
            pos = int(where * len(text))
            text = text[:pos] + inserted + text[pos + deleted :]
            bib = parse_bibtex(uri, text, previous=bib)
            assert snapshot(bib) == snapshot(parse_bibtex(uri, text))
            assert_bibtex_well_formed(text, bib)

    holds(edits(), check, examples)


@pytest.mark.parametrize("examples", BUDGETS)
def test_bibtex_given_macros_equal_macros_defined_in_front(examples):
    macro = st.tuples(st.sampled_from(["jn", "pub", "x"]), st.text("abc é", max_size=5))

    def check(case):
        text, macros = case
        defined = dict(macros)
        given_ = parse_bibtex("file:///m.bib", text, macros=defined)
        front = "".join(f'@string{{{k} = "{v}"}}\n' for k, v in defined.items())
        inline = parse_bibtex("file:///m.bib", front + text)
        assert [r.fields and {n: f.value for n, f in r.fields.items()}
                for r in given_.references] == [
            r.fields and {n: f.value for n, f in r.fields.items()} for r in inline.references
        ]  # fmt: skip

    holds(st.tuples(pieces(BIB_PIECES), st.lists(macro, max_size=3)), check, examples)


# --- CSL-JSON --------------------------------------------------------------------------------

JSON_SCALARS = st.none() | st.booleans() | st.integers() | st.text(max_size=8)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                  max_size=3),
    max_leaves=8,
)
CSL_ITEMS = st.fixed_dictionaries(
    {"id": st.text(min_size=1, max_size=10) | st.integers(), "type": st.sampled_from(
        ["book", "article-journal", "chapter", "not-a-type"])},
    optional={"title": st.text(max_size=20), "author": JSON_VALUES, "issued": JSON_VALUES,
              "DOI": st.text(max_size=12), "note": JSON_VALUES},
)  # fmt: skip


def _integer(text: str) -> bool:
    """A JSON integer: ASCII digits (``"²".isdigit()`` is true, but no number)."""
    digits = text.removeprefix("-")
    return digits.isascii() and digits.isdigit()


def assert_csl_well_formed(text, bib):
    for ref in bib.references:
        in_text(text, ref.span)
        in_text(text, ref.key_span)
        for field in ref.fields.values():
            in_text(text, field.span)
            in_text(text, field.name_span)
    for problem in bib.problems:
        in_text(text, problem.span)


@pytest.mark.parametrize("examples", BUDGETS)
def test_csl_json_items_round_trip(examples):
    def check(items):
        text = json.dumps(items, indent=1)
        bib = parse_csl_json("file:///c.json", text)
        typed = [i for i in items if i["type"] != "not-a-type"]
        if not typed:
            return
        assert bib is not None
        assert_csl_well_formed(text, bib)
        assert [r.key for r in bib.references] == [str(i["id"]) for i in items if i["id"] != ""]
        for ref in bib.references:
            raw = cut(text, ref.key_span)
            assert json.loads(raw if _integer(raw) else f'"{raw}"') in (
                ref.key, int(ref.key) if _integer(ref.key) else ref.key)

    holds(st.lists(CSL_ITEMS, min_size=1, max_size=4), check, examples)


@pytest.mark.parametrize("examples", BUDGETS)
def test_csl_json_never_crashes_on_broken_json(examples):
    def check(case):
        items, where, junk = case
        text = json.dumps(items)
        pos = int(where * len(text))
        text = text[:pos] + junk + text[pos:]
        bib = parse_csl_json("file:///c.json", text)
        if bib is not None:
            assert_csl_well_formed(text, bib)

    junk = pieces(['"', "{", "}", "[", "]", ",", ":", "\\", "\\ud800", "[" * 50, "1e999"], 5)
    holds(st.tuples(st.lists(CSL_ITEMS, max_size=3), st.floats(0, 1), junk), check, examples)


# --- CSL-YAML front matter -------------------------------------------------------------------


@pytest.mark.parametrize("examples", BUDGETS)
def test_csl_yaml_front_matter_round_trips(examples):
    item = st.fixed_dictionaries(
        {"id": st.builds(str.__add__, st.text("abcxyz", min_size=1, max_size=1),
                         st.text("abcxyz-_:0123456789", max_size=7)),
         "type": st.sampled_from(["book", "article-journal"])},
        optional={"title": st.text(st.characters(blacklist_characters="\x85\u2028\u2029\\[",
                                                 blacklist_categories=("Cs",)), max_size=20)},
    )  # fmt: skip
    # NEL and the Unicode line separators are line breaks to YAML: PyYAML writes them raw
    # in a quoted scalar and reads them back folded to a space. Lone surrogates are replaced
    # on purpose (test_csl.py). Values are Markdown, as in pandoc: a backslash escapes and
    # [text]{.nocase} is text (test_csl.py), so neither is drawn here; an id PyYAML writes
    # plain as 08 is the number 8 to pandoc (test_csl.py), so ids start with a letter.

    def check(items):
        body = yaml.safe_dump({"references": items}, allow_unicode=True)
        text = f"---\n{body}---\n\nText [@x].\n"
        front = front_matter(text)
        if front is None:
            return
        bib = parse_csl_yaml("file:///p.md", text, front.body.start, front.body.end)
        assert_csl_well_formed(text, bib)
        assert [r.key for r in bib.references] == [i["id"] for i in items]
        for ref, source in zip(bib.references, items, strict=True):
            if "title" in source:
                assert ref.csl["title"] == source["title"]

    holds(st.lists(item, max_size=4), check, examples)


@pytest.mark.parametrize("examples", BUDGETS)
def test_markdown_with_broken_front_matter_never_crashes(examples):
    yaml_pieces = ["---\n", "references:\n", "- id: a\n", "  type: book\n", "  title: ", ":",
                   "[", "{", "&a ", "*a", "\n", "  - ", "'", '"', "\t", "...\n"]  # fmt: skip

    def check(text):
        manuscript = parse_manuscript("file:///p.md", "---\n" + text, "markdown")
        for problem in manuscript.problems:
            in_text(manuscript.text, problem.span)
        if manuscript.inline is not None:
            assert_csl_well_formed(manuscript.text, manuscript.inline)

    holds(pieces(yaml_pieces, 30), check, examples)


# --- Markers, pandoc, LaTeX ------------------------------------------------------------------

SLUGS = st.from_regex(r"[A-Za-z][A-Za-z0-9_:-]{0,10}", fullmatch=True)
PROSE = st.text(st.characters(blacklist_characters="<>-@[]\\`{}%"), max_size=20)


@pytest.mark.parametrize("examples", BUDGETS)
def test_markers_round_trip_slug_and_anchor(examples):
    words = st.lists(st.text("abcé😀 ,.'", min_size=1, max_size=6), min_size=1, max_size=5)

    def check(case):
        before, slug, quote_words, after = case
        value = " ".join(quote_words)
        marker = f"<!--ref:{slug}--><!--anchor:quote:{quote(value).replace('-', '%2D')}-->"
        text = before + marker + after
        citations, _ = parse_markers("file:///p.md", text)
        (citation,) = citations
        assert citation.key == slug and cut(text, citation.span) == slug
        assert citation.anchor is not None and citation.anchor.value == value

    holds(st.tuples(PROSE, SLUGS, words, PROSE), check, examples)


@pytest.mark.parametrize("examples", BUDGETS)
def test_markers_never_crash(examples):
    marker_pieces = ["<!--", "-->", "ref:", "anchor:", "quote:", "page:", "none", "a", "-",
                     "%2D", "%", " ", "\n", "OK", "CONTAMINATED-X", "<!--ref:a-->"]  # fmt: skip

    def check(text):
        citations, problems = parse_markers("file:///p.md", text)
        for c in citations:
            in_text(text, c.span)
            in_text(text, c.full_span)
            assert cut(text, c.span) == c.key
        for p in problems:
            in_text(text, p.span)

    holds(pieces(marker_pieces), check, examples)


@pytest.mark.parametrize("examples", BUDGETS)
def test_pandoc_citations_round_trip(examples):
    keys = st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,8}", fullmatch=True)

    def check(case):
        parts, cited = case
        text = "".join(f"{p} [@{k}] " for p, k in zip(parts, cited, strict=False))
        if len(parts) > 1 and "".join(parts).count("$") > 1 or code_regions(text, inline=False):
            return  # $…$ is TeX math, a tab-indented line code: no citation (test_pandoc_oracle)
        found = parse_pandoc("file:///p.md", mask(text, code_regions(text)))
        assert [c.key for c in found] == cited[: len(parts)]
        for c in found:
            assert cut(text, c.span) == c.key and cut(text, c.full_span) == f"[@{c.key}]"

    holds(st.tuples(st.lists(PROSE, max_size=4), st.lists(keys, max_size=4)), check, examples)


@pytest.mark.parametrize("examples", BUDGETS)
def test_pandoc_never_crashes(examples):
    md_pieces = ["[", "]", "@", "@key", "-@", ";", ",", "`", "```\n", "~~~", "<!--", "-->",
                 " ", "\n", "p. 4", "{", "}", "\\", "é", "😀"]  # fmt: skip

    def check(text):
        for c in parse_pandoc("file:///p.md", mask(text, code_regions(text))):
            in_text(text, c.span)
            in_text(text, c.full_span)
            assert cut(text, c.span) == c.key

    holds(pieces(md_pieces), check, examples)


@pytest.mark.parametrize("examples", BUDGETS)
def test_latex_citations_round_trip(examples):
    keys = st.lists(st.from_regex(r"[A-Za-z][A-Za-z0-9:_-]{0,8}", fullmatch=True),
                    min_size=1, max_size=4)  # fmt: skip
    command = st.sampled_from(["cite", "citep", "parencite", "textcite", "nocite"])

    def check(case):
        before, name, cited = case
        text = f"{before}\\{name}[p.~4]{{{', '.join(cited)}}} more"
        citations, _ = parse_latex("file:///p.tex", text)
        assert [c.key for c in citations] == cited
        for c in citations:
            assert cut(text, c.span) == c.key

    holds(st.tuples(PROSE, command, keys), check, examples)


@pytest.mark.parametrize("examples", BUDGETS)
def test_latex_never_crashes(examples):
    tex_pieces = ["\\cite", "\\citep", "\\nocite", "\\bibliography", "{", "}", "[", "]", ",",
                  "%", "\\%", "\\\\", "\\verb|x|", "\\begin{verbatim}", "\\end{verbatim}", "*",
                  "a", " ", "\n", "(", ")"]  # fmt: skip

    def check(text):
        citations, _ = parse_latex("file:///p.tex", text)
        for c in citations:
            in_text(text, c.span)
            in_text(text, c.full_span)
            assert cut(text, c.span) == c.key

    holds(pieces(tex_pieces), check, examples)


# --- LaTeX decoding: the common-command path agrees with pylatexenc --------------------------

LATEX_PIECES = [
    '\\"', "\\'", "\\`", "\\^", "\\~", "\\=", "\\.", "\\c ", "\\v", "\\u", "\\H", "\\k",
    "\\r", "\\d", "{", "}", "u", "o", "A", "i", "\\i", "\\ss", "\\o", "\\ae", "\\L", " ",
    "\\-", "\\,", "\\ ", "\\&", "\\%", "\\_", "\\{", "\\}", "\\emph{", "\\textbf{", "\\em ",
    "\\it{}", "--", "---", "~", "e", "x", "é", "王", "&", "%", "#", "^", "_",
    "\\TeX", "\\acro{", "\\TUB ", "[", "]",
    "\\texttt{", "\\ldots", "\\S", "\\/", "-", "\\kern",
]  # fmt: skip


QUOTED_PIECES = [*LATEX_PIECES, "``", "''", "`", "'", "!`", "?`", "\\dots", "\\ldots{}", "\\`",
                 "\\'", "\n", "\n \n", "\t"]
"""With TeX quotes, ellipses and paragraph breaks, which the common path also reads."""


@pytest.mark.parametrize("examples", BUDGETS)
@pytest.mark.parametrize("alphabet", [LATEX_PIECES, QUOTED_PIECES], ids=["latex", "quoted"])
def test_common_latex_path_agrees_with_pylatexenc(examples, alphabet):
    from citelsp.documents import text

    def check(s):
        fast = text._common_latex(s)
        if fast is None or text._LATEX_TRIGGERS.isdisjoint(s) or text._only_grouping(s):
            return  # latex_decode's earlier paths read these
        assert fast == text._pylatexenc_decode(s), s

    holds(pieces(alphabet, 12), check, examples)


PLAIN_PIECES = ["{", "}", "~", "-", "--", "---", "`", "``", "'", "''", "!`", "?`", "!", "?",
                "&", "%", "\\&", "\\%", "\\_", "a", "B", " ", "\n", "\n\n", "\t", "é"]
"""Text without commands: what ``latex_decode`` reads without a parser (ligatures, grouping
braces, ties, character escapes)."""


@pytest.mark.parametrize("examples", BUDGETS)
def test_text_without_commands_decodes_as_pylatexenc_reads_it(examples):
    from citelsp.documents import text

    def check(s):
        if re.search(r"\\[^\W\d_]", s):  # random text made a command (\MF is a logo here)
            return
        assert text.latex_decode.__wrapped__(s) == text._pylatexenc_decode(s), s

    holds(pieces(PLAIN_PIECES, 12), check, examples)
