"""The link builders (citelsp/links.py): every human-facing URL, whatever the identifier.

Properties, checked with hypothesis over arbitrary text (controls, quotes, brackets, ``%``,
surrogates, dot segments): the URL is https on an allowlisted host, ``allowed`` accepts it,
nothing in it can end a Markdown link or autolink, and the identifier comes back by unquoting.
"""

from __future__ import annotations

import re
from urllib.parse import unquote, unquote_plus, urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from citelsp import links
from citelsp.documents.model import Person
from citelsp.resolution import records
from citelsp.resolution.identifiers import is_doi, normalize_doi
from citelsp.resolution.outcome import Record

ANY_TEXT = st.text(st.characters(exclude_categories=()), max_size=60)
"""Every code point, lone surrogates included (JSON bodies can carry them)."""
HOSTILE_PIECES = st.sampled_from([
    "<", ">", " ", '"', "'", "\\", "(", ")", "[", "]", "%", "%1b", "\x1b", "\x00", "\n", "..",
    "/../", "%2e%2e/", "#", "?", "&", "`", "*", "_", "!", "<https://evil.example/x>",
    "](https://evil.example/x)", "\u202e", "\u2028",
])
IDENTIFIERS = st.lists(st.one_of(ANY_TEXT, HOSTILE_PIECES), max_size=6).map("".join)
MARKDOWN_ENDERS = set("<> \"'\\()[]`") | {chr(c) for c in range(0x20)} | {"\x7f"}
PATH_BUILDERS = [
    (links.doi_url, "https://doi.org/"),
    (links.arxiv_url, "https://arxiv.org/abs/"),
    (links.pubmed_url, "https://pubmed.ncbi.nlm.nih.gov/"),
    (links.semantic_scholar_paper_url, "https://www.semanticscholar.org/paper/"),
]
SEARCH_SITES = ["crossref", "openalex", "semantic_scholar", "google_scholar"]
md = MarkdownIt("commonmark")


def assert_inert(url: str) -> None:
    parts = urlsplit(url)
    assert parts.scheme == "https" and parts.netloc in links.HUMAN_LINK_HOSTS, url
    assert links.allowed(url) == url
    assert not MARKDOWN_ENDERS & set(url), url
    assert re.fullmatch(r"(?:[^%]|%[0-9A-F]{2})*", url), url


def link_targets(markdown: str) -> list[str]:
    """Every href CommonMark (markdown-it, as VS Code uses) would make live in ``markdown``."""
    targets = []
    for block in md.parse(markdown):
        assert block.type not in ("html_block",), markdown
        for token in block.children or ():
            assert token.type != "html_inline", markdown
            if token.type == "link_open":
                targets.append(token.attrGet("href"))
    return targets


@pytest.mark.parametrize(("build", "prefix"), PATH_BUILDERS)
@given(identifier=IDENTIFIERS)
def test_path_links_are_inert_and_round_trip(build, prefix, identifier):
    url = build(identifier)
    assert_inert(url)
    assert url.startswith(prefix)
    path = url[len(prefix):]
    if build is links.pubmed_url:
        path = path.removesuffix("/")
    assert unquote(path, errors="surrogatepass") == identifier


@pytest.mark.parametrize("site", SEARCH_SITES)
@given(title=IDENTIFIERS)
def test_title_searches_are_inert_and_round_trip(site, title):
    url = links.title_search_url(site, title)
    assert_inert(url)
    query = unquote_plus(urlsplit(url).query.split("=", 1)[1], errors="surrogatepass")
    assert query == (f'"{title}"' if site == "google_scholar" else title)


@given(term=IDENTIFIERS)
def test_pubmed_search_is_inert(term):
    assert_inert(links.pubmed_search_url(term))


@given(identifier=IDENTIFIERS)
def test_a_link_in_markdown_or_an_autolink_goes_where_it_was_built_for(identifier):
    url = links.doi_url(identifier)
    assert link_targets(f"[doi]({url})") == [url]
    assert link_targets(f"see <{url}> now") == [url]


@pytest.mark.parametrize("url", [
    "http://doi.org/10.1/x",
    "https://evil.example/x",
    "https://doi.org.evil.example/x",
    "https://user@doi.org/10.1/x",
    "https://doi.org:8443/10.1/x",
    "https://DOI.org/10.1/x",
    "https://doi.org/10.1/x<https://evil.example>",
    "https://doi.org/10.1/x\x1b",
    "https://doi.org/10.1/a b",
    "https://doi.org/10.1/(x)",
    "https://doi.org/10.1/100%",
    "https://doi.org/10.1/%zz",
    "javascript:alert(1)",
    None,
    42,
])
def test_allowed_refuses_what_could_mislead_or_smuggle(url):
    assert links.allowed(url) is None


def test_allowed_keeps_clean_links_on_every_host():
    for host in links.HUMAN_LINK_HOSTS:
        url = f"https://{host}/a/b%20c?q=x+y&r=1#top"
        assert links.allowed(url) == url


def test_reserved_characters_in_a_doi_are_encoded_and_slashes_kept():
    assert links.quote_path("10.1000/a<b>#c?d;e f") == "10.1000/a%3Cb%3E%23c%3Fd%3Be%20f"
    assert links.quote_path("10.1002/(SICI)1097-4636") == "10.1002/%28SICI%291097-4636"
    assert links.quote_path("10.1/100%") == "10.1/100%25"


@pytest.mark.parametrize(("path", "dotted"), [
    ("/works/10.1234/../../admin", True),
    ("/works/10.1234/%2e%2e/%2E%2E/admin", True),
    ("/works/10.1234/%252e%252e/admin", True),
    ("/works/10.1234/..%5C..%5Cadmin", True),
    ("/works/10.1234/..;x/admin", True),
    ("/works/10.1234/./x", True),
    ("/works/10.1234/...", False),
    ("/works/10.1234/a..b/.hidden", False),
    ("/works/10.1002/%28sici%29.3.0.co%3B2-l", False),
])
def test_dot_segments_are_found_however_often_encoded(path, dotted):
    assert links.has_dot_segment(path) is dotted


# --- identifiers that cannot be DOIs (DESIGN.md §2, issue 13 items 1 and 7) --------------------


@pytest.mark.parametrize("raw", [
    "10.1234/x%1b<https://evil.example/esc>",
    "10.1234/x\x1b[2J",
    "10.1234/\u202eevil",
    "10.1234/../../admin",
    "10.1234/%2e%2e/%2e%2e/admin",
    "10.1234/a/./b",
])
def test_dois_with_control_characters_or_dot_segments_are_invalid(raw):
    assert normalize_doi(raw) is None


@pytest.mark.parametrize("raw", [
    "10.1002/(SICI)1097-4636(199706)35:4<453::AID-JBM6>3.0.CO;2-L",
    "10.1234/a>[click](https://evil.example/phish)",
    "10.1234/<script>alert(1)</script>",
    "10.48550/arXiv.1706.03762",
    "10.1000/ΑΒΓ.中文",
])
def test_odd_but_printable_dois_stay_valid(raw):
    """Valid DOIs may hold any printable character: encoding, not refusal, keeps them inert."""
    assert normalize_doi(raw) == raw.lower()
    assert_inert(links.doi_url(raw.lower()))


@pytest.mark.parametrize("api_doi", [
    "10.1234/x\x1b<https://evil.example/esc>",
    "https://doi.org/10.1234/x\u0007",
    "10.1234/../../admin",
    "10.1234",
])
def test_an_api_doi_that_cannot_be_a_doi_is_dropped(api_doi):
    assert records.doi(api_doi) is None
    assert records.doi("https://doi.org/10.1234/ABC") == "10.1234/abc"


@given(doi=IDENTIFIERS)
def test_an_accepted_doi_is_printable_and_stays_in_its_route(doi):
    if is_doi(doi):
        assert doi.isprintable() and not links.has_dot_segment(doi)


# --- hover cards built from hostile records -----------------------------------------------------


def test_record_line_makes_only_allowlisted_links():
    from citelsp.reports.cards import record_line
    from citelsp.reports.markup import Markup

    record = Record(
        source="crossref",
        title="Click [here](https://evil.example/t) <img src=x onerror=alert(1)>",
        authors=(Person("Mallory <script>", "Eve"),),
        doi="10.1234/x\x1b<https://evil.example/esc>",
        arxiv_id="1706.03762)](https://evil.example/a",
    )
    line = record_line(record, Markup())
    targets = link_targets(line)
    assert len(targets) == 2
    assert all(links.allowed(t) and urlsplit(t).netloc in ("doi.org", "arxiv.org")
               for t in targets)
    assert "evil.example" not in "".join(urlsplit(t).netloc for t in targets)


URL_BY_CHARACTER = re.compile(r"(?:[A-Za-z0-9\-._~:/?#@!$&+,;=]|%[0-9A-Fa-f]{2})*")
"""The allowed URL text as its definition reads: one character or one escape at a time."""


@given(st.lists(st.one_of(IDENTIFIERS, st.sampled_from(["%", "%2", "%2f", "%G1", "a", "/"])),
                max_size=8).map("".join))
def test_the_url_pattern_accepts_what_its_definition_does(text):
    assert bool(links._URL.fullmatch(text)) == bool(URL_BY_CHARACTER.fullmatch(text))
