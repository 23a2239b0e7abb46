"""Pandoc citations and the Markdown code they skip (DESIGN.md §2)."""

import pytest

from citelsp.documents.pandoc import MASK, code_regions, html_comments, mask, parse_pandoc
from citelsp.spans import Span

URI = "file:///paper.md"


def cut(text: str, span: Span) -> str:
    return text[span.start : span.end]


def cited(text: str) -> list[tuple[str, str, str]]:
    """(key, text at span, text at full_span) for each citation, after masking code."""
    prose = mask(text, code_regions(text))
    return [(c.key, cut(text, c.span), cut(text, c.full_span)) for c in parse_pandoc(URI, prose)]


def test_bracketed_citation_spans_key_and_group():
    text = "As shown [@smith2020]."
    [citation] = parse_pandoc(URI, text)
    assert citation.key == "smith2020"
    assert citation.syntax == "pandoc"
    assert cut(text, citation.span) == "smith2020"
    assert cut(text, citation.full_span) == "[@smith2020]"


def test_group_with_prefix_locator_and_several_keys():
    text = "Known [see @doe99, p. 4; also @roe2001, ch. 2]."
    group = "[see @doe99, p. 4; also @roe2001, ch. 2]"
    assert cited(text) == [("doe99", "doe99", group), ("roe2001", "roe2001", group)]


def test_suppress_author():
    assert cited("Smith says [-@smith04].") == [("smith04", "smith04", "[-@smith04]")]


def test_in_text_citation_spans_itself():
    assert cited("@smith04 says so.") == [("smith04", "smith04", "@smith04")]


def test_in_text_citation_with_locator_group_after_it():
    text = "@smith04 [p. 33] says."
    assert cited(text) == [("smith04", "smith04", "@smith04")]


@pytest.mark.parametrize(
    ("written", "key"),
    [
        ("@doe.", "doe"),
        ("@doe:2020,", "doe:2020"),
        ("@a.b.c;", "a.b.c"),
        ("@Doe-Smith_2020?", "Doe-Smith_2020"),
        ("@1984orwell)", "1984orwell"),
        ("@_private", "_private"),
        ("@x#1$2%3&4+5?6<7>8~9/10", "x#1$2%3&4+5?6<7>8~9/10"),
        ("@http://example.org/x", "http://example.org/x"),
        ("@müller2020", "müller2020"),
        ("@张三2020。", "张三2020"),
    ],
)
def test_key_grammar_keeps_internal_punctuation_and_drops_trailing(written, key):
    text = f"See {written} here"
    [(found, at_span, _)] = cited(text)
    assert found == key
    assert at_span == key


def test_braced_key_takes_any_characters_but_space_with_balanced_braces():
    text = "See [@{Doe,J.(2020)!}, p. 1] and @{a{b}c}, not @{a b} or @{}."
    [(key, at_span, full), (nested, _, _)] = cited(text)
    assert key == at_span == "Doe,J.(2020)!"
    assert full == "[@{Doe,J.(2020)!}, p. 1]"
    assert nested == "a{b}c"


@pytest.mark.parametrize(
    "text",
    [
        "write to user@example.com today",
        "first.last@example.org",
        "me+tag@mail.example.com",
        "escaped \\@notakey",
        "https://medium.com/@someone/post",
        "a lone @ sign",
        "@-dash",
        "@.",
    ],
)
def test_text_that_is_not_a_citation(text):
    assert cited(text) == []


def test_inline_code_is_not_a_citation():
    text = "Use `@decorator` and ``@a `b` c`` but cite @real."
    assert [k for k, _, _ in cited(text)] == ["real"]


def test_fenced_code_is_not_a_citation():
    text = "before @a\n```python\n@decorator\n[@b]\n```\nafter @c\n\n~~~~\n@d\n~~~\n@e\n~~~~\n@f\n"
    assert [k for k, _, _ in cited(text)] == ["a", "c", "f"]


def test_a_fence_does_not_interrupt_a_paragraph():
    """pandoc reads ``~~~`` right after a line of text as text (a backtick "fence" there is
    a code span, as it is in pandoc)."""
    text = "after @c\n~~~~\n@d\n~~~~\n"
    assert [k for k, _, _ in cited(text)] == ["c", "d"]


def test_unclosed_fence_is_text():
    """pandoc reads a fence nobody closes as a line of text (CommonMark would run it to the
    end)."""
    text = "@a\n~~~\n@b\n"
    assert [k for k, _, _ in cited(text)] == ["a", "b"]


def test_shorter_closing_fence_does_not_close():
    text = "````\n@a\n```\n@b\n````\n@c"
    assert [k for k, _, _ in cited(text)] == ["c"]


def test_backtick_fence_info_with_backtick_is_inline_code_not_a_fence():
    text = "```x``` @a\n@b"
    assert [k for k, _, _ in cited(text)] == ["a", "b"]


def test_indented_and_quoted_fences_count():
    text = "1. item\n\n    ```\n    @a\n    ```\n> ```\n> @b\n> ```\n@c"
    assert [k for k, _, _ in cited(text)] == ["c"]


def test_crlf_fences():
    text = "@a\r\n```\r\n@b\r\n```\r\n@c\r\n"
    assert [(k, s) for k, s, _ in cited(text)] == [("a", "a"), ("c", "c")]


def test_code_span_does_not_cross_a_blank_line():
    text = "a `tick\n\n@key and `x`"
    assert [k for k, _, _ in cited(text)] == ["key"]


def test_escaped_backtick_opens_no_code_span():
    text = "\\`not code @a `code @b`"
    assert [k for k, _, _ in cited(text)] == ["a"]


def test_html_comments_are_skipped_but_unterminated_ones_hide_nothing():
    text = "<!-- draft: @hidden --> @shown <!-- open @also"
    assert [k for k, _, _ in cited(text)] == ["shown", "also"]
    assert [cut(text, s) for s in html_comments(text)] == ["<!-- draft: @hidden -->"]


def test_bracket_group_does_not_cross_a_blank_line():
    text = "[see\n\n@a]"
    assert cited(text) == [("a", "a", "@a")]


def test_nested_brackets_keep_the_inner_group():
    text = "[see [@a; @b] and more]"
    assert [f for _, _, f in cited(text)] == ["[@a; @b]", "[@a; @b]"]


def test_spans_are_code_points_after_astral_characters():
    text = "😀 𝔘𝔫𝔦 [@ключ2020, p. 3] ✓ @後"
    assert cited(text) == [
        ("ключ2020", "ключ2020", "[@ключ2020, p. 3]"),
        ("後", "後", "@後"),
    ]


def test_mask_keeps_length_and_line_breaks():
    text = "ab\r\ncd"
    masked = mask(text, [Span(1, 5)])
    assert masked == "a" + MASK + "\r\n" + MASK + "d"
    assert len(masked) == len(text)


def test_code_regions_with_and_without_code_spans():
    text = "`x`\n\n```\ny\n```\n"
    assert code_regions(text) == [Span(0, 3), Span(5, 14)]
    assert code_regions(text, inline=False) == [Span(5, 14)]


@pytest.mark.parametrize(
    "hostile",
    [
        "".join("`" * k + " x " for k in range(1, 1500)),
        "`" * 1_000_000,
        "[" * 1_000_000,
        "[@a " * 200_000,
        "@" * 1_000_000,
        "<!--" * 200_000,
        "```\n" * 200_000,
        "@{" * 400_000,
    ],
    ids=[
        "backtick-lengths",
        "backticks",
        "brackets",
        "open-groups",
        "ats",
        "comments",
        "fences",
        "braces",
    ],
)
@pytest.mark.timeout(120)
def test_hostile_input_is_read_without_crashing(hostile):
    """Growth with size is measured by ``bench/parser_scaling.py`` (a wall-clock bound here
    failed under load); this checks what the reading yields. The timeout only stops a hang."""
    found = cited(hostile)
    assert all(key == at_span and key in at_full for key, at_span, at_full in found)
    if hostile.startswith("[@a "):
        assert {key for key, _, _ in found} == {"a"}
    else:
        assert found == []


# --- nocite: pandoc's uncited bibliography entries -------------------------------------------


@pytest.mark.parametrize("value", ['"@a, @{b.c}"', "|\n  @a\n  @{b.c}", "[\"@a\", \"@{b.c}\"]"])
def test_nocite_keys_are_citations_where_they_are_written(value):
    from citelsp.documents.manuscript import parse_manuscript

    text = f"---\ntitle: x\nnocite: {value}\nbibliography: refs.bib\n---\nText [@d].\n"
    found = parse_manuscript("file:///p.md", text, "markdown").citations
    assert [(c.key, text[c.span.start:c.span.end], c.wildcard) for c in found] == [
        ("a", "a", False), ("b.c", "b.c", False), ("d", "d", False)]


def test_nocite_every_entry_is_a_wildcard_citation(tmp_path):
    """``nocite: "@*"`` prints the whole bibliography: every entry is checked, and none is
    an orphan."""
    from citelsp.config import Settings
    from citelsp.workspace import Workspace

    (tmp_path / "refs.bib").write_text("@book{a, title = {A}}\n@book{b, title = {B}}\n")
    paper = tmp_path / "p.md"
    paper.write_text("---\nbibliography: refs.bib\nnocite: '@*'\n---\nNo citations.\n")
    workspace, errors = Workspace.for_paths([paper], Settings())
    (citation,) = workspace.corpus.get(paper.as_uri()).citations
    assert citation.wildcard and errors == []
    assert sorted(r.key for r in workspace.wanted()) == ["a", "b"]
    bib = (tmp_path / "refs.bib").as_uri()
    assert not [p for p in workspace.local_problems(bib) if p.code == "ORPHAN_REFERENCE"]


def test_a_backtick_fence_ends_a_paragraph_a_tilde_fence_does_not():
    text = "para\n```\n@a\n\n@b\n```\n@c\n\npara\n~~~\n@d\n~~~\n"
    assert [k for k, _, _ in cited(text)] == ["c", "d"]


def test_a_bare_div_fence_closes_the_div_after_a_paragraph():
    """Inside a fenced div, a ``:::`` line ends the paragraph and the div; outside one it is
    text, and a fence after it is text too."""
    text = "::: {.note}\ntext\n:::\n```\n@a\n```\n\nword\n:::\n~~~\n@b\n~~~\n"
    assert [k for k, _, _ in cited(text)] == ["b"]


def test_macros_pandoc_knows_take_no_options():
    text = r"\LaTeX[@a] \emph[@b]{x} \foo[@c]{x} \ldots{} [@d]"
    assert [k for k, _, _ in cited(text)] == ["a", "b", "d"]


def test_only_a_comment_stops_a_macro_pandoc_passes_through():
    r"""``\foo{@a#1}`` and ``\foo[@b#0]{x}`` are raw TeX to pandoc; ``\emph{@c#1}``, whose
    argument pandoc parses, is not, and ``%`` stops either."""
    text = r"\foo{@a#1} \foo[@b#0]{x} \emph{@c#1} \foo{@d%x}"
    assert [k for k, _, _ in cited(text)] == ["c#1", "d%x"]
