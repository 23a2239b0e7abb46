"""Manuscripts by language: front matter, markers, pandoc and LaTeX together."""


import pytest

from citelsp.documents.manuscript import front_matter, language_for_path, parse_manuscript
from citelsp.spans import Span

URI = "file:///paper.md"


def cut(text: str, span: Span) -> str:
    return text[span.start : span.end]


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("paper.md", "markdown"),
        ("a/b.markdown", "markdown"),
        ("x.qmd", "markdown"),
        ("x.rmd", "markdown"),
        ("x.Rmd", "markdown"),
        ("thesis.tex", "latex"),
        ("x.ltx", "latex"),
        ("x.latex", "latex"),
        ("vignette.Rnw", "latex"),
        ("notes.txt", "plaintext"),
        ("refs.bib", None),
        ("data.json", None),
        ("README", None),
    ],
)
def test_language_for_path(path, language):
    assert language_for_path(path) == language


MARKDOWN = """---
title: "A paper: with @at in YAML"
bibliography:
  - refs.bib
  - more.json
---

Prose (Smith, 2020)<!--ref:smith2020--><!--anchor:page:4--> and [see @doe99, p. 2].

```
<!--ref:in-code--> @in_code [@in_code]
```

Inline `<!--ref:inline-->` and `@inline`; mail me@example.com. <!--ref:9bad-->
"""


def test_markdown_reads_front_matter_markers_and_pandoc_in_order():
    m = parse_manuscript(URI, MARKDOWN, "markdown")
    assert m.uri == URI and m.text == MARKDOWN
    assert m.bibliography_paths == ["refs.bib", "more.json"]
    assert [(c.key, c.syntax) for c in m.citations] == [
        ("at", "pandoc"),
        ("smith2020", "marker"),
        ("doe99", "pandoc"),
    ]
    assert [cut(MARKDOWN, c.span) for c in m.citations] == ["at", "smith2020", "doe99"]
    assert [(p.code, cut(MARKDOWN, p.span)) for p in m.problems] == [
        ("MALFORMED_MARKER", "<!--ref:9bad-->")
    ]
    assert m.inline is None


def test_bibliography_as_a_single_string():
    text = "---\nbibliography: refs.bib\n...\n@a"
    m = parse_manuscript(URI, text, "markdown")
    assert m.bibliography_paths == ["refs.bib"]
    assert [c.key for c in m.citations] == ["a"]


def test_a_yaml_block_after_a_blank_line_is_metadata_like_the_front_matter():
    """pandoc reads YAML metadata blocks anywhere after a blank line; a later block's field
    replaces an earlier one's."""
    text = ("\n---\nbibliography: refs.bib\ntitle: On @a\n---\n\nText @b.\n\n"
            "---\ntitle: On @c\nabstract: |\n  See @d and `@code`.\nnote_: '@ignored'\n...\n")
    assert front_matter(text) is None
    m = parse_manuscript(URI, text, "markdown")
    assert m.bibliography_paths == ["refs.bib"]
    assert [(c.key, cut(text, c.span)) for c in m.citations] == [
        ("b", "b"), ("c", "c"), ("d", "d")]


def test_a_paragraph_between_rules_is_not_metadata():
    text = "Text\n\n---\nnot: [yaml\n---\n\n@a\n"
    m = parse_manuscript(URI, text, "markdown")
    assert [c.key for c in m.citations] == ["a"] and m.problems == []


def test_rule_followed_by_a_blank_line_is_not_front_matter():
    assert front_matter("---\n\ntext @a\n---\n") is None


def test_unclosed_front_matter_is_prose():
    text = "---\ntitle: x\n@a"
    assert front_matter(text) is None
    assert [c.key for c in parse_manuscript(URI, text, "markdown").citations] == ["a"]


def test_front_matter_spans_with_bom_and_crlf():
    text = "\ufeff---\r\nbibliography: r.bib\r\n---\r\nbody"
    front = front_matter(text)
    assert front is not None
    assert cut(text, front.body) == "bibliography: r.bib\r\n"
    assert text[front.span.end :] == "body"
    assert parse_manuscript(URI, text, "markdown").bibliography_paths == ["r.bib"]


@pytest.mark.parametrize(
    "yaml_body",
    ["title: [unclosed\n", "a: b\n  c: : d\n", "x: \0\n", "[" * 3000 + "\n", "key: 'open\n"],
    ids=["flow", "mapping", "nul", "deep", "quote"],
)
def test_broken_yaml_is_one_malformed_entry_and_the_body_still_parses(yaml_body):
    text = f"---\n{yaml_body}---\nBody [@a].\n"
    m = parse_manuscript(URI, text, "markdown")
    [problem] = m.problems
    assert problem.code == "MALFORMED_ENTRY"
    assert "front matter" in problem.message
    assert 0 <= problem.span.start < problem.span.end <= text.index("Body")
    assert [c.key for c in m.citations] == ["a"]


def test_broken_yaml_problem_points_at_the_error_line():
    text = "---\ntitle: ok\nbad: : x\n---\n"
    [problem] = parse_manuscript(URI, text, "markdown").problems
    assert cut(text, problem.span) in {": x", "bad: : x"}


def test_references_in_front_matter_become_the_inline_bibliography():
    pytest.importorskip("citelsp.documents.csl")
    text = "---\nreferences:\n  - id: doe99\n    type: book\n    title: A Book\n---\n[@doe99]\n"
    m = parse_manuscript(URI, text, "markdown")
    assert m.inline is not None
    assert [r.key for r in m.inline.references] == ["doe99"]
    assert [c.key for c in m.citations] == ["doe99"]


def test_no_references_key_means_no_inline_bibliography():
    m = parse_manuscript(URI, "---\ntitle: x\n---\n", "markdown")
    assert m.inline is None


def test_latex_reads_commands_only():
    text = "% <!--ref:x-->\n<!--ref:y--> @z \\cite{a,b}\n\\bibliography{refs}\n"
    m = parse_manuscript("file:///p.tex", text, "latex")
    assert [(c.key, c.syntax) for c in m.citations] == [("a", "latex"), ("b", "latex")]
    assert m.bibliography_paths == ["refs.bib"]
    assert m.problems == []


def test_plaintext_reads_markers_only_and_skips_fences():
    text = (
        "@a [@b] \\cite{c} <!--ref:d--><!--anchor:page:1-->\n~~~\n<!--ref:e-->\n~~~\n`<!--ref:f-->`"
    )
    m = parse_manuscript("file:///p.txt", text, "plaintext")
    assert [(c.key, c.syntax) for c in m.citations] == [("d", "marker"), ("f", "marker")]
    assert [p.code for p in m.problems] == ["NO_LOCATOR"]


def test_unknown_language_reads_as_plaintext():
    m = parse_manuscript("file:///p", "<!--ref:a--><!--anchor:page:1--> @b", "rst")
    assert [c.key for c in m.citations] == ["a"]


def test_markers_in_fenced_code_are_not_linted():
    text = "```\n<!--ref:1bad-->\n<!--anchor:bogus:x-->\n<!--ref:unterminated\n```\n"
    m = parse_manuscript(URI, text, "markdown")
    assert m.citations == []
    assert m.problems == []


def test_crlf_and_non_ascii_before_citations():
    text = (
        "---\r\ntitle: 論文\r\n---\r\n"
        "中文 😀 (李, 2020)<!--ref:li2020-->\r\n"
        "<!--anchor:quote:%E5%BC%95%E6%96%87-->\r\n"
        "见 [@王2021]。\r\n"
    )
    m = parse_manuscript(URI, text, "markdown")
    assert [cut(text, c.span) for c in m.citations] == ["li2020", "王2021"]
    assert m.citations[0].anchor is not None
    assert m.citations[0].anchor.value == "引文"
    assert m.problems == []


def test_two_thousand_citations_are_all_found():
    """Speed is measured in bench/parser_scaling.py and bench/parse_bench.py, not here."""
    paragraph = (
        "Lorem ipsum dolor sit amet (Smith, 2020)<!--ref:smith2020-->"
        "<!--anchor:quote:Deep%20learning%20works--> and more text [see @doe2019, p. 4; @roe]"
        " with `code` too.\n\n"
    )
    text = "---\ntitle: T\nbibliography: refs.bib\n---\n" + paragraph * 667
    m = parse_manuscript(URI, text, "markdown")
    assert len(m.citations) == 2001


@pytest.mark.timeout(60)
@pytest.mark.parametrize("language", ["markdown", "latex", "plaintext"])
def test_a_megabyte_of_marker_openings_in_every_language(language):
    """The timeout only catches a hang; bench/parser_scaling.py shows the growth is linear."""
    text = "<!--ref:" * 125_000
    m = parse_manuscript(URI, text, language)
    assert m.citations == []
