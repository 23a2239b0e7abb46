"""Every escaper, whatever the text: Markdown text renders as the text itself (no link,
image, HTML, emphasis or code that the data wrote), plain text and the terminal report carry
no control characters. Property-based (hypothesis); a long run with ``-m slow``."""

from __future__ import annotations

import html
import re
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from citelsp.reports.markup import Markup
from citelsp.reports.safe import markdown_text, printable, url_spans

GFM = MarkdownIt("commonmark").enable(["table", "strikethrough", "linkify"])
HOSTILE = st.one_of(
    st.text(),
    st.text(alphabet="[]()<>!*_`~|#&\\:/.\n\x1b\x07\u202e wwwhtps", max_size=60),
    st.sampled_from([
        "[click](command:citelsp.decide)", "<img src=x onerror=alert(1)>", "**bold**",
        "https://evil.example/x", "www.evil.example", "![i](https://evil.example/i.png)",
        "<https://evil.example>", "&lt;script&gt;", "a\\](b)", "`code`", "~~gone~~",
        "# heading", "| a | b |", "\x1b[2J\x07", "x_y_z and _e_",
    ]),
)


def rendered(markdown: str) -> str:
    return GFM.render(markdown)


def visible(markdown: str) -> str:
    """The text a reader sees once the Markdown is rendered."""
    return html.unescape(re.sub(r"<[^>]+>", "", rendered(markdown))).strip()


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(HOSTILE)
def test_markdown_text_renders_as_inert_text(text):
    out = rendered(markdown_text(text))
    for tag in ("<a ", "<img", "<script", "<em>", "<strong>", "<code>", "<s>", "<del>",
                "<h1", "<table"):
        if tag == "<code>" and "`" in markdown_text(text):
            continue  # URLs are written as inline code on purpose: inert, not a link
        assert tag not in out, (text, out)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=80))
def test_markdown_text_shows_what_was_written(text):
    shown = visible(markdown_text(text))
    expected = " ".join(printable(text).split())
    assert shown.replace("`", "") == expected.replace("`", "'") or "`" in text or \
        "://" in text or "www." in text


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_printable_has_no_control_characters(text):
    out = printable(text)
    assert not re.search(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]", out)


@settings(max_examples=300, deadline=None)
@given(HOSTILE)
def test_plain_text_markup_is_printable_and_writes_no_syntax(text):
    plain = Markup(markdown=False)
    out = plain.text(text)
    assert not re.search(r"[\x00-\x1f\x7f-\x9f]", out)
    assert plain.bold(out) == out and plain.italic(out) == out


@pytest.mark.slow
@settings(max_examples=20_000, deadline=None)
@given(HOSTILE)
def test_markdown_text_long_run(text):
    test_markdown_text_renders_as_inert_text.hypothesis.inner_test(text)


URL_PATTERN = re.compile(r"(?:[A-Za-z][A-Za-z0-9+.-]*://|www\.)\S+")
"""What ``url_spans`` finds, as the pattern it replaced (quadratic on a long word: kept here
as the specification, on inputs small enough for it)."""
URLISH = st.text(alphabet="a1+.-:/w x\tZ_`é", max_size=80)


@settings(max_examples=1000, deadline=None)
@given(st.one_of(URLISH, HOSTILE))
def test_url_spans_find_what_the_url_pattern_finds(text):
    assert list(url_spans(text)) == [m.span() for m in URL_PATTERN.finditer(text)]


HOSTILE_SHAPES = {
    "one long word": lambda n: "a" * n,
    "scheme characters": lambda n: "a1+.-" * (n // 5),
    "schemes without a body": lambda n: "a://" * (n // 4),
    "www without a body": lambda n: "www." * (n // 4),
    "one long URL": lambda n: "https://" + "a" * n,
    "many URLs": lambda n: "http://a " * (n // 9),
    "markup": lambda n: "*_[`|~" * (n // 6),
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("shape", HOSTILE_SHAPES)
def test_a_megabyte_of_hostile_text_is_escaped(shape):
    """Before url_spans, 60,000 letters took 10 s and a megabyte would take hours."""
    text = HOSTILE_SHAPES[shape](1_000_000)
    assert markdown_text(text) and printable(text) and Markup(markdown=False).text(text)


@pytest.mark.slow
@pytest.mark.parametrize("shape", HOSTILE_SHAPES)
def test_escaping_time_grows_linearly(shape):
    """CPU time for 800,000 characters against 100,000 (bench/escaping_bench.py prints the
    figures): linear is 8, quadratic 64; 24 leaves room for a busy machine."""
    def cost(n: int) -> float:
        text = HOSTILE_SHAPES[shape](n)
        best = float("inf")
        for _ in range(3):
            started = time.process_time()
            markdown_text(text)
            best = min(best, time.process_time() - started)
        return max(best, 1e-4)
    assert cost(800_000) / cost(100_000) < 24
