"""Ref markers, anchors and their lint (DESIGN.md §2, §3)."""


import pytest

from citelsp.documents.markers import parse_markers
from citelsp.documents.model import Severity
from citelsp.spans import Span

URI = "file:///paper.md"


def cut(text: str, span: Span) -> str:
    return text[span.start : span.end]


def codes(problems) -> list[str]:
    return [p.code for p in problems]


def test_marker_with_anchor_is_a_citation_with_spans_on_the_text():
    text = "Smith (2024) <!--ref:smith2024--><!--anchor:page:12-14--> said."
    [citation], problems = parse_markers(URI, text)
    assert problems == []
    assert citation.key == "smith2024"
    assert citation.syntax == "marker"
    assert cut(text, citation.span) == "smith2024"
    assert cut(text, citation.full_span) == "<!--ref:smith2024-->"
    assert citation.anchor is not None
    assert (citation.anchor.kind, citation.anchor.value) == ("page", "12-14")
    assert cut(text, citation.anchor.span) == "<!--anchor:page:12-14-->"
    assert citation.anchor_present
    assert citation.status is None


@pytest.mark.parametrize("kind", ["quote", "page", "section", "paragraph"])
def test_every_locator_kind_counts_as_present(kind):
    [citation], problems = parse_markers(URI, f"<!--ref:a--><!--anchor:{kind}:3-->")
    assert problems == []
    assert citation.anchor_present


@pytest.mark.parametrize("gap", [" ", "\n", "\r\n", " \n\t ", "\n\n"])
def test_whitespace_and_newlines_may_separate_marker_and_anchor(gap):
    text = f"x<!--ref:a-->{gap}<!--anchor:section:3.2-->"
    [citation], problems = parse_markers(URI, text)
    assert problems == []
    assert citation.anchor is not None and citation.anchor.value == "3.2"


def test_quote_value_is_url_decoded():
    text = "<!--ref:a--><!--anchor:quote:When%20publishers%20bypass%2Dmoderation%2C%20x-->"
    [citation], problems = parse_markers(URI, text)
    assert problems == []
    assert citation.anchor is not None
    assert citation.anchor.value == "When publishers bypass-moderation, x"


def test_single_hyphen_between_words_is_allowed_in_a_quote():
    [citation], problems = parse_markers(URI, "<!--ref:a--><!--anchor:quote:AI-generated%20text-->")
    assert problems == []
    assert citation.anchor is not None and citation.anchor.value == "AI-generated text"


@pytest.mark.parametrize("slug", ["a", "Smith2024", "r-9-1", "syn-classroom-01", "ns:key_1", "x-"])
def test_slug_grammar_accepts(slug):
    text = f"<!--ref:{slug}--><!--anchor:page:1-->"
    [citation], problems = parse_markers(URI, text)
    assert problems == []
    assert citation.key == slug
    assert cut(text, citation.span) == slug


@pytest.mark.parametrize(
    ("marker", "reason"),
    [
        ("<!--ref:1abc-->", "start with a letter"),
        ("<!--ref:_abc-->", "start with a letter"),
        ("<!--ref:-->", "no slug"),
        ("<!--ref: spaced-->", "no slug"),
        ("<!--ref:a.b-->", "invalid character '.'"),
        ("<!--ref:a/b-->", "invalid character '/'"),
        ("<!--ref:a b-->", "status token"),
        ("<!--ref:a verified-->", "status token"),
    ],
)
def test_malformed_markers_are_errors_on_their_own_span(marker, reason):
    text = f"before <!--ref:good--><!--anchor:page:1--> {marker} after"
    citations, problems = parse_markers(URI, text)
    assert [c.key for c in citations] == ["good"]
    [problem] = problems
    assert problem.code == "MALFORMED_MARKER"
    assert problem.severity == Severity.ERROR
    assert cut(text, problem.span) == marker
    assert reason in problem.message


def test_unterminated_marker_spans_to_the_end_of_its_line_and_hides_nothing():
    text = "a <!--ref:broken and more\r\nthen <!--ref:fine--><!--anchor:page:2-->"
    citations, problems = parse_markers(URI, text)
    assert [c.key for c in citations] == ["fine"]
    [problem] = problems
    assert problem.code == "MALFORMED_MARKER"
    assert cut(text, problem.span) == "<!--ref:broken and more"
    assert "unterminated" in problem.message


def test_unterminated_marker_stops_at_the_next_comment():
    text = "<!--ref:a <!--ref:b--><!--anchor:page:1-->"
    citations, problems = parse_markers(URI, text)
    assert [c.key for c in citations] == ["b"]
    assert [cut(text, p.span) for p in problems] == ["<!--ref:a "]


def test_each_malformed_marker_gets_its_own_problem():
    text = "<!--ref:1--> <!--ref:ok--><!--anchor:page:1--> <!--ref:2--> <!--ref:3"
    citations, problems = parse_markers(URI, text)
    assert [c.key for c in citations] == ["ok"]
    assert codes(problems) == ["MALFORMED_MARKER"] * 3
    assert [cut(text, p.span) for p in problems] == ["<!--ref:1-->", "<!--ref:2-->", "<!--ref:3"]


def test_finalized_marker_records_its_status():
    text = (
        "<!--ref:smith2024 VERIFIED CONTAMINATED-PREPRINT CONTAMINATED-RETRACTED-->"
        "<!--anchor:page:4-->"
    )
    [citation], problems = parse_markers(URI, text)
    assert problems == []
    assert citation.key == "smith2024"
    assert cut(text, citation.span) == "smith2024"
    assert citation.status == "VERIFIED"
    assert cut(text, citation.full_span).startswith("<!--ref:smith2024 VERIFIED")


def test_status_with_hyphenated_token_and_trailing_space():
    [citation], _ = parse_markers(URI, "<!--ref:a UNVERIFIED-ID --><!--anchor:page:1-->")
    assert citation.status == "UNVERIFIED-ID"


def test_marker_without_anchor_warns_no_locator_on_the_marker():
    text = "claim <!--ref:smith2024--> next sentence."
    [citation], [problem] = parse_markers(URI, text)
    assert citation.anchor is None and not citation.anchor_present
    assert problem.code == "NO_LOCATOR"
    assert problem.severity == Severity.WARNING
    assert problem.key == "smith2024"
    assert cut(text, problem.span) == "<!--ref:smith2024-->"


def test_anchor_kind_none_warns_no_locator():
    text = "<!--ref:a--><!--anchor:none:-->"
    [citation], [problem] = parse_markers(URI, text)
    assert citation.anchor is not None and citation.anchor.kind == "none"
    assert not citation.anchor_present
    assert problem.code == "NO_LOCATOR"
    assert cut(text, problem.span) == "<!--ref:a-->"


def test_anchor_none_without_trailing_colon_is_accepted():
    [citation], problems = parse_markers(URI, "<!--ref:a--><!--anchor:none-->")
    assert codes(problems) == ["NO_LOCATOR"]
    assert citation.anchor is not None and citation.anchor.kind == "none"


def test_anchor_separated_by_text_is_orphan_and_marker_has_no_locator():
    text = "<!--ref:a--> words <!--anchor:page:3-->"
    [citation], problems = parse_markers(URI, text)
    assert citation.anchor is None
    assert codes(problems) == ["NO_LOCATOR", "BAD_ANCHOR"]
    assert "orphan" in problems[1].message
    assert cut(text, problems[1].span) == "<!--anchor:page:3-->"


def test_anchor_without_any_marker_is_orphan():
    text = "see<!--anchor:page:7-->."
    citations, [problem] = parse_markers(URI, text)
    assert citations == []
    assert problem.code == "BAD_ANCHOR"
    assert problem.key is None
    assert cut(text, problem.span) == "<!--anchor:page:7-->"


def test_second_anchor_after_a_marker_is_orphan():
    text = "<!--ref:a--><!--anchor:page:3--><!--anchor:section:2-->"
    [citation], [problem] = parse_markers(URI, text)
    assert citation.anchor is not None and citation.anchor.kind == "page"
    assert problem.code == "BAD_ANCHOR"
    assert cut(text, problem.span) == "<!--anchor:section:2-->"


def test_anchor_after_a_malformed_marker_is_not_also_orphan():
    text = "<!--ref:9x--><!--anchor:page:3-->"
    citations, problems = parse_markers(URI, text)
    assert citations == []
    assert codes(problems) == ["MALFORMED_MARKER"]


@pytest.mark.parametrize(
    ("anchor", "reason"),
    [
        ("<!--anchor:figure:3-->", "unknown anchor kind 'figure'"),
        ("<!--anchor:Quote:x-->", "unknown anchor kind 'Quote'"),
        ("<!--anchor:page:-->", "empty value"),
        ("<!--anchor:page-->", "empty value"),
        ("<!--anchor:quote:%20-->", "empty value"),
        ("<!--anchor:quote:a--b-->", "%2D"),
        ("<!--anchor:quote:trailing--->", "%2D"),
        ("<!--anchor:quote:" + "%20".join(["w"] * 26) + "-->", "26 words"),
    ],
)
def test_bad_anchors_warn_on_the_anchor_with_the_marker_key(anchor, reason):
    text = f"<!--ref:smith-->{anchor}"
    [citation], problems = parse_markers(URI, text)
    [problem] = [p for p in problems if p.code == "BAD_ANCHOR"]
    assert problem.severity == Severity.WARNING
    assert problem.key == "smith"
    assert reason in problem.message
    assert cut(text, problem.span) == anchor
    assert citation.key == "smith"


def test_quote_of_exactly_25_words_is_fine():
    quote = "%20".join(["w"] * 25)
    _, problems = parse_markers(URI, f"<!--ref:a--><!--anchor:quote:{quote}-->")
    assert problems == []


def test_unterminated_anchor_is_bad_anchor_and_not_no_locator():
    text = "<!--ref:a--><!--anchor:page:3\nnext line"
    [citation], [problem] = parse_markers(URI, text)
    assert citation.anchor is None
    assert problem.code == "BAD_ANCHOR"
    assert "unterminated" in problem.message
    assert cut(text, problem.span) == "<!--anchor:page:3"


def test_other_html_comments_are_ignored():
    text = "<!-- a note --> <!--references--> <!--ref:a--><!--anchor:page:1-->"
    citations, problems = parse_markers(URI, text)
    assert [c.key for c in citations] == ["a"]
    assert problems == []


def test_spans_are_code_points_after_non_ascii_text():
    text = "模型达到 0.61 NDS 🎉<!--ref:nds-table--><!--anchor:quote:NDS%200.61-->。"
    [citation], problems = parse_markers(URI, text)
    assert problems == []
    assert cut(text, citation.span) == "nds-table"
    assert citation.span.start == text.index("nds-table")


def test_crlf_text():
    text = "line one\r\nclaim<!--ref:a-->\r\n<!--anchor:page:2-->\r\n<!--ref:b-->\r\n"
    citations, problems = parse_markers(URI, text)
    assert [c.key for c in citations] == ["a", "b"]
    assert citations[0].anchor is not None
    assert codes(problems) == ["NO_LOCATOR"]
    assert cut(text, problems[0].span) == "<!--ref:b-->"


@pytest.mark.parametrize(
    ("hostile", "found"),
    [
        ("<!--ref:" * 100_000, 100_000),
        ("<!--anchor:" * 80_000, 80_000),
        ("<!--" * 200_000, 0),
        ("<!--ref:a-->" + " " * 1_000_000, 2),
        ("\0" * 500_000 + "<!--ref:a--><!--anchor:page:1-->", 1),
        ("<!--ref:" + "a" * 1_000_000, 1),
    ],
    ids=["refs", "anchors", "comments", "spaces", "nul", "long-slug"],
)
@pytest.mark.timeout(60)
def test_hostile_input_never_hangs_or_raises(hostile, found):
    """The timeout only catches a hang; bench/parser_scaling.py shows the growth is linear."""
    citations, problems = parse_markers(URI, hostile)
    assert len(citations) + len(problems) == found


def test_many_unterminated_markers_each_get_one_problem():
    text = "<!--ref:" * 1000
    citations, problems = parse_markers(URI, text)
    assert citations == []
    assert len(problems) == 1000
    assert all(cut(text, p.span) == "<!--ref:" for p in problems)
