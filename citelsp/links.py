"""Every URL the product puts in front of a human, and identifiers placed into URL paths.

Identifiers and titles come from documents and APIs, so they are data an attacker may write:
``10.1234/a>[click](https://evil.example)`` must not end a Markdown link or autolink, and
``10.1234/../../admin`` must not climb out of the route it is put under. Every link is
therefore built here from a fixed https origin on the allowlist plus a
percent-encoded identifier, and checked by ``allowed`` before it is returned; a URL that came
from elsewhere (an API record, a command argument) is only ever shown after ``allowed``.
"""

from __future__ import annotations

import functools
import re
from urllib.parse import quote, quote_plus, unquote, urlsplit

HUMAN_LINK_HOSTS = frozenset(
    {
        "doi.org",
        "hdl.handle.net",
        "arxiv.org",
        "search.crossref.org",
        "openalex.org",
        "www.semanticscholar.org",
        "commons.datacite.org",
        "pubmed.ncbi.nlm.nih.gov",
        "scholar.google.com",
        "dblp.org",
    }
)
"""The only hosts a hover, report or ``window/showDocument`` may send a human to."""

_SEARCHES: dict[str, tuple[str, str]] = {
    "crossref": ("search.crossref.org", "/search/works?q="),
    "openalex": ("openalex.org", "/works?search="),
    "semantic_scholar": ("www.semanticscholar.org", "/search?q="),
    "dblp": ("dblp.org", "/search?q="),
    "google_scholar": ("scholar.google.com", "/scholar?q="),
}
_URL_CHAR = r"[A-Za-z0-9\-._~:/?#@!$&+,;=]"
_URL = re.compile(f"{_URL_CHAR}*(?:%[0-9A-Fa-f]{{2}}{_URL_CHAR}*)*")
"""RFC 3986 characters minus ``'()*[]``: nothing that can end a Markdown link destination,
an autolink or an HTML attribute, and every ``%`` starts an escape. Runs of characters
between escapes, not one alternation per character: three times faster on the tens of
thousands of links a large report checks."""
_HOST_END = re.compile(r"[/?#]")
"""Where ``urlsplit`` ends the host of a URL ``_URL`` accepts (it has no ``[`` or ``\\``)."""
_DECODE_LIMIT = 8


def quote_path(identifier: str) -> str:
    """``identifier`` as URL path segments: ``/`` kept (DOIs and old arXiv ids contain it),
    everything but unreserved characters percent-encoded; round-trips through ``unquote``
    (with ``errors="surrogatepass"``) for every string.

    Encoding cannot keep a dot segment in place (browsers read ``%2E%2E`` as ``..`` too), so
    identifiers with one are refused instead: ``identifiers.is_doi`` and the HTTP client's
    path check both use ``has_dot_segment``."""
    return quote(identifier, safe="/", errors="surrogatepass")


def has_dot_segment(path: str) -> bool:
    """Whether ``path``, percent-decoded as often as a server might, has a ``.`` or ``..``
    segment (``/`` or ``\\`` separated, ``..;x`` included): such a path can climb out of
    its route."""
    for _ in range(_DECODE_LIMIT):
        if any(part.split(";", 1)[0] in (".", "..") for part in re.split(r"[/\\]", path)):
            return True
        decoded = unquote(path, errors="surrogatepass")
        if decoded == path:
            return False
        path = decoded
    return True


def doi_url(doi: str) -> str:
    return _link("doi.org", "/" + quote_path(doi))


def arxiv_url(arxiv_id: str) -> str:
    return _link("arxiv.org", "/abs/" + quote_path(arxiv_id))


def pubmed_url(pmid: str) -> str:
    return _link("pubmed.ncbi.nlm.nih.gov", "/" + quote_path(pmid) + "/")


def pubmed_search_url(term: str) -> str:
    return _link("pubmed.ncbi.nlm.nih.gov", "/?term=" + _quote_query(term))


def semantic_scholar_paper_url(paper_id: str) -> str:
    return _link("www.semanticscholar.org", "/paper/" + quote_path(paper_id))


def title_search_url(site: str, title: str) -> str:
    """A title search for a human on ``site`` (crossref, openalex, semantic_scholar, dblp or
    google_scholar); Google Scholar gets the title as a quoted phrase."""
    host, route = _SEARCHES[site]
    query = _quote_query(title)
    return _link(host, route + (f"%22{query}%22" if site == "google_scholar" else query))


def allowed(url: object) -> str | None:
    """``url`` if a human may be sent there, else ``None``: https, an allowlisted host with no
    userinfo or port, and only characters that cannot end a Markdown link or autolink."""
    if not isinstance(url, str) or not _URL.fullmatch(url):
        return None
    if url.startswith("https://"):  # urlsplit's host, without urlsplit (an index build
        host = _HOST_END.split(url[8:], 1)[0]  # checks every record's link)
    else:
        parts = urlsplit(url)
        host = parts.netloc if parts.scheme == "https" else ""
    return url if host in HUMAN_LINK_HOSTS else None


@functools.lru_cache(maxsize=1024)
def _quote_query(value: str) -> str:
    """Remembered: a report quotes each title for several sites, and ``quote_plus`` is
    slow on text that is not ASCII."""
    return quote_plus(value, safe="", errors="surrogatepass")


def _link(host: str, path: str) -> str:
    """``allowed`` without parsing the URL again: its scheme and host are ours, and a path
    that starts with ``/`` cannot move the host (a report builds tens of thousands)."""
    url = f"https://{host}{path}"
    if host not in HUMAN_LINK_HOSTS or not path.startswith("/") or not _URL.fullmatch(url):
        raise ValueError(f"built a link that is not allowed: {url!r}")
    return url
