"""A LaTeX document's own ``thebibliography``: each ``\\bibitem`` as a reference.

arXiv sources carry their bibliography as pasted ``.bbl`` text, and LLM-written papers often
type ``\\bibitem`` lists by hand: the references most in need of a check have no fields,
only formatted text. What is read from an item, and only where the text says it without
doubt (a misread title would make a real work look unfound, a P1; a misread year would be a
conflict):

- identifiers: the first DOI (``doi:10.…``, ``\\doi{…}``, a doi.org URL), a URL, and any
  arXiv id the text names (``arXiv:2312.07559``, an arxiv.org URL);
- the title: ACM's ``\\showarticletitle{…}`` or ``\\bibinfo{title}{…}``; else the second
  ``\\newblock`` part when there are at least three and the first reads as names (BibTeX's
  plain, abbrv, alpha, unsrt, apalike and natbib styles); else the text in ````…''``
  (IEEEtran and other quoting styles); otherwise none (Springer's ``Authors: Title.`` and
  Elsevier's comma-separated styles are too ambiguous), and only the identifiers are checked;
- the year: ACM's ``\\bibinfo{year}``, else the year-like number outside the title and the
  identifiers, when only one value occurs;
- the rest after the title, as ``howpublished``: it says whether the work is a preprint or a
  proceedings paper, and it is never compared as a venue.

Authors are not read: formatted name lists ("A.~Vaswani, N.~Shazeer, and N.~Parmar",
"Vaswani, A., Shazeer, N.:") cannot be split reliably, and a misread list would conflict.
The entry type is ``inproceedings`` when the rest starts with "In", ``article`` when it gives
a volume, issue or pages after an emphasized name, else ``misc``.
"""

from __future__ import annotations

import re

from citelsp.documents.latex import closing_brace, visible_source
from citelsp.documents.model import Bibliography, Field, Reference
from citelsp.spans import Span

_REGION = re.compile(r"\\begin\{thebibliography\}(?P<body>.*?)(?:\\end\{thebibliography\}|\Z)",
                     re.S)
_BIBITEM = re.compile(r"\\bibitem(?![A-Za-z@])")
_KEY = re.compile(r"\s*\{(?P<key>[^{}\s,]+)\}")
_LABELLED_KEY = re.compile(r"\]\s*\{(?P<key>[^{}\s,]+)\}")
_NEWBLOCK = re.compile(r"\\newblock(?![A-Za-z@])")
_QUOTED = re.compile(r"``(?P<title>(?:(?!``|'').){4,}?)[,.]?''", re.S)
_STRAIGHT_QUOTED = re.compile(r'(?<![\\\w])"(?P<title>(?:[^"\\]|\\.){4,300}?)[,.]?(?<!\\)"', re.S)
_APA_DATE = re.compile(r"\((?:1[6-9]\d\d|20\d\d)[a-z]?(?:,[^()]{1,20})?\)\.\s+")
_APA_VENUE = re.compile(r"[.?!]\s+(?:\\textit\{|\\emph\{|\{\\em\b|\{\\it\b|In[\s:])")
_TITLE_DATE = re.compile(r",\s+(?:[A-Z][a-z]+\.?~?\s*)?(?:1[6-9]\d\d|20\d\d)"
                         r"(?:[a-z]|\{\\natexlab\{(?:[^{}]|\{[^{}]*\})*\}\})?\s*$")
"""The date plain-style entries without a venue (``@misc``) print after the title."""
_ACM_TITLE = re.compile(r"\\(?:showarticletitle|bibinfo\{title\})\{")
_ACM_BOOKTITLE = re.compile(r"\\bibinfo\{booktitle\}\{")
_ACM_YEAR = re.compile(r"\\bibinfo\{year\}\{\s*(\d{4})")
_DOI = re.compile(r"10\.\d{4,9}/[^\s{}\\\"<>%]+")
_URL = re.compile(r"\\(?:url|href)\s*\{(?P<url>[^{}\s]+)\}")
_YEAR = re.compile(r"(?<![\d.:/-])(1[6-9]\d\d|20\d\d)[a-z]?(?![\d-]|\.\d)")
_NAMES = re.compile(r",|\band\b|et[~\s]+al|(?:^|[\s~.])[A-Z]\.|~|\(\d{4}[a-z]?\)")
_IN = re.compile(r"[Ii]n\b")
_JOURNAL_CUES = re.compile(r"\\bibinfo\{journal\}|(?:\\emph\{|\\textit\{|\{\\em\b|\{\\it\b)"
                           r"[^{}]*\}.*?(?:\d+\s*(?:\\penalty0\s*)?\(|\d+\s*:|,\s*\d{1,3}\b"
                           r"|\bvol\.|\bvolume\b|\bpp\.|\bpages\b)", re.S)
_TRAILING = ".,;:"
_LEAD = re.compile(r"^(?:[\s.,;:]|\\newblock(?![A-Za-z@]))*")


def parse_bibitems(uri: str, text: str) -> Bibliography | None:
    """The references of the document's ``thebibliography`` environments, or None when it
    has none."""
    source = visible_source(text)
    references: list[Reference] = []
    for region in _REGION.finditer(source):
        body_start, body_end = region.span("body")
        starts = [m.start() for m in _BIBITEM.finditer(source, body_start, body_end)]
        for n, at in enumerate(starts):  # every \bibitem ends the item before it
            end = starts[n + 1] if n + 1 < len(starts) else body_end
            key = _key(source, at + len("\\bibitem"), end)
            if key is not None:
                references.append(_reference(uri, text, source, at, key, end))
    if not references and "\\begin{thebibliography}" not in source:
        return None
    return Bibliography(uri=uri, text=text, source_format="bibitem", references=references)


def _key(source: str, pos: int, end: int) -> re.Match[str] | None:
    """The ``{key}`` after ``\\bibitem`` and its optional ``[label]``: the first ``]{key}``
    (natbib's labels nest braces, ``[Zhao et~al.(2021{\\natexlab{{}})]``, and BibTeX may
    leave them unbalanced)."""
    while pos < end and source[pos].isspace():
        pos += 1
    if pos < end and source[pos] == "[":
        return _LABELLED_KEY.search(source, pos, end)
    return _KEY.match(source, pos, end)


def _reference(uri: str, text: str, source: str, at: int, item: re.Match[str], end: int
               ) -> Reference:
    start = item.end()
    while end > start and source[end - 1].isspace():
        end -= 1
    fields: dict[str, Field] = {}
    taken: list[Span] = []
    doi = _first_doi(text, source, start, end)
    if doi is not None:
        fields["doi"] = _field("doi", text, doi)
        taken.append(doi)
    for m in _URL.finditer(source, start, end):
        if "doi.org/" not in m.group("url"):
            fields["url"] = _field("url", text, Span(m.start("url"), m.end("url")))
            taken.append(Span(m.start("url"), m.end("url")))
            break
    title, rest = _title(source, start, end)
    if title is not None:
        fields["title"] = _field("title", text, title)
        taken.append(title)
    year = _year(source, start, end, taken)
    if year is not None:
        fields["year"] = _field("year", text, year)
    if rest is not None and rest.end > rest.start:
        fields["howpublished"] = _field("howpublished", text, rest)
    entry_type = _entry_type(source[rest.start : rest.end]) if rest is not None else "misc"
    key_span = Span(item.start("key"), item.end("key"))
    return Reference(item.group("key"), uri, "bibitem", entry_type, key_span,
                     Span(at, end), fields)


def _field(name: str, text: str, span: Span) -> Field:
    """A field read from the item's text: its value is the text there, its name span the
    same (the text names no field)."""
    return Field(name, text[span.start : span.end], span, span)


def _first_doi(text: str, source: str, start: int, end: int) -> Span | None:
    """The first DOI in the item, its trailing punctuation left out; None when BibTeX broke
    its line with ``%`` (the rest is on the next line and the DOI cannot be trusted)."""
    m = _DOI.search(source, start, end)
    if m is None or text.startswith("%", m.end()):
        return None
    value = m.group().rstrip(_TRAILING)
    while value.endswith(")") and value.count("(") < value.count(")"):
        value = value[:-1].rstrip(_TRAILING)
    return Span(m.start(), m.start() + len(value))


def _title(source: str, start: int, end: int) -> tuple[Span | None, Span | None]:
    """The title's span and the span of what follows it (the venue and the rest); the
    whole item as the rest when no title can be told."""
    whole = _trimmed(source, start, end)
    acm = _ACM_TITLE.search(source, start, end) or _ACM_BOOKTITLE.search(source, start, end)
    if acm is not None:  # a book's title is its booktitle
        close = closing_brace(source, acm.end(), end)
        if close is not None:
            return _trimmed(source, acm.end(), close), _trimmed(source, close + 1, end)
        return None, whole
    marks = [m for m in _NEWBLOCK.finditer(source, start, end)]
    if len(marks) >= 2 and _names(source[start : marks[0].start()]):
        title = _trimmed(source, marks[0].end(), marks[1].start())
        if (date := _TITLE_DATE.search(source, title.start, title.end)) is not None:
            title = _trimmed(source, title.start, date.start())  # plain's "Title, 2026."
        if title.end > title.start:
            return title, _trimmed(source, marks[1].end(), end)
    quoted = _QUOTED.search(source, start, end) or _STRAIGHT_QUOTED.search(source, start, end)
    if quoted is not None:
        title = _trimmed(source, quoted.start("title"), quoted.end("title"))
        return title, _trimmed(source, quoted.end(), end)
    dated = _APA_DATE.search(source, start, end)
    if dated is not None and (venue := _APA_VENUE.search(source, dated.end(), end)):
        title = _trimmed(source, dated.end(), venue.start() + 1)
        if title.end > title.start:
            return title, _trimmed(source, venue.start() + 1, end)
    return None, whole


def _names(text: str) -> bool:
    """Whether the part before the first ``\\newblock`` reads as authors (so the next part
    is the title): initials, commas, "and", "et al.", a tie, a (year); or a short run of
    capitalized words ("Ashish Vaswani.")."""
    if _NAMES.search(text):
        return True
    words = text.strip().rstrip(".").split()
    return 0 < len(words) <= 4 and all(w[:1].isupper() for w in words)


def _trimmed(source: str, start: int, end: int) -> Span:
    """``start:end`` without surrounding spaces and trailing ``.``/``,`` (a title's own
    ``?`` or ``!`` stays)."""
    while start < end and source[start].isspace():
        start += 1
    while end > start and (source[end - 1].isspace() or source[end - 1] in ".,"):
        end -= 1
    return Span(start, end)


def _year(source: str, start: int, end: int, taken: list[Span]) -> Span | None:
    """ACM's ``\\bibinfo{year}``, else the one year-like value outside ``taken``."""
    acm = _ACM_YEAR.search(source, start, end)
    if acm is not None:
        return Span(acm.start(1), acm.end(1))
    found = [m for m in _YEAR.finditer(source, start, end)
             if not any(s.start <= m.start() < s.end for s in taken)]
    if not found or len({m.group(1) for m in found}) > 1:
        return None
    return Span(found[-1].start(1), found[-1].end(1))


def _entry_type(rest: str) -> str:
    rest = _LEAD.sub("", rest)
    if _IN.match(rest):
        return "inproceedings"
    if _JOURNAL_CUES.match(rest):
        return "article"
    return "misc"
