"""A simulated bibliographic world for benchmarks: one small index served in the real API shapes.

The index knows only real works (it is never told a label). It answers as the public services
do: Crossref ``/works``, OpenAlex ``/works``, Semantic Scholar ``/paper``, the arXiv Atom API,
DataCite ``/dois``, doi.org (doiRA, CSL content negotiation) and the Handle proxy. Coverage
follows the real split: Crossref holds works with a Crossref DOI, DataCite the arXiv DOIs
(every arXiv paper has ``10.48550/arXiv.ID``), OpenAlex and Semantic Scholar everything.
Title search ranks by IDF-weighted token overlap and always returns the top hits, so near
matches come back too, as they do from a real search engine. The batch forms are served as
well: Crossref ``filter=doi:a,doi:b``, OpenAlex ``filter=doi:a|b``, Semantic Scholar
``POST /paper/batch``, arXiv ``id_list=a,b`` (at most ``max_results`` entries, 10 by default,
as arXiv does) and ``/doiRA/a,b``.

    server = SimIndexServer(SimIndex(works), delay=0.2).start()   # 200 ms per answer (optional)
    environ = server.environ(cache_dir)     # CITELSP_<NAME>_BASE_URL for every resolver
    ...
    server.stop()
"""

from __future__ import annotations

import hashlib
import html
import json
import math
import re
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit
from xml.sax.saxutils import escape

from bibtexparser.middlewares.names import (
    parse_single_name_into_parts,
    split_multiple_persons_names,
)
from pylatexenc.latex2text import LatexNodes2Text

ARXIV_DOI_PREFIX = "10.48550/arxiv."
PREFIXES = {
    "crossref": "/crossref",
    "openalex": "/openalex",
    "semantic_scholar": "/semantic_scholar/graph/v1",
    "arxiv": "/arxiv/api/query",
    "doi_registry": "/doi",
    "handle": "/handle",
    "datacite": "/datacite",
    "eutils": "/eutils",
    "dblp": "/dblp",
}
"""Every endpoint citelsp configures, each under its own path on one loopback server."""
_TOKEN = re.compile(r"\w+")
_DBLP_HOMONYM = re.compile(r"\s+\d{4}$")
_ARXIV_NEW = re.compile(r"^(\d{2})(\d{2})\.\d{4,5}$")
_ARXIV_OLD = re.compile(r"^[a-z-]+(?:\.[a-z]{2})?/(\d{2})(\d{2})\d{3}$", re.IGNORECASE)
_ARXIV_URL = re.compile(r"arxiv\.org/(?:abs|pdf)/([\w./-]+?)(?:v\d+)?(?:\.pdf)?$", re.IGNORECASE)
_VERSION = re.compile(r"v\d+$")
_BARE_SPECIAL = re.compile(r"(?<!\\)[&%]")
_latex = LatexNodes2Text(math_mode="text")
OPENALEX_LIST_AUTHORS = 100
"""OpenAlex lists (search, filter) carry at most this many authorships per work."""
FULL_VENUES = {
    "neurips": "Advances in Neural Information Processing Systems",
    "icml": "Proceedings of the {year} International Conference on Machine Learning",
    "iclr": "International Conference on Learning Representations",
    "cvpr": "{year} IEEE/CVF Conference on Computer Vision and Pattern Recognition (CVPR)",
    "iccv": "{year} IEEE/CVF International Conference on Computer Vision (ICCV)",
    "eccv": "Computer Vision – ECCV {year}",
    "aaai": "Proceedings of the AAAI Conference on Artificial Intelligence",
    "acl": "Proceedings of the {year} Annual Meeting of the Association for Computational "
           "Linguistics",
    "naacl": "Proceedings of the {year} Conference of the North American Chapter of the "
             "Association for Computational Linguistics: Human Language Technologies",
    "mach. learn.": "Machine Learning",
    "j. mach. learn. res.": "Journal of Machine Learning Research",
    "trans. mach. learn. res.": "Transactions on Machine Learning Research",
}
"""DBLP's short venue names as the indexes spell the container (``{year}`` filled in)."""


@dataclass(frozen=True)
class IndexedWork:
    """One real work as the indexes know it (decoded text, lowercase DOI)."""

    work_id: int
    title: str
    authors: tuple[tuple[str, str], ...]
    """(given, family) pairs."""
    year: int | None
    venue: str | None
    is_journal: bool
    doi: str | None
    arxiv_id: str | None

    @property
    def crossref_doi(self) -> str | None:
        """The DOI Crossref registers (arXiv's DOIs are DataCite's)."""
        return self.doi if self.doi and not self.doi.startswith(ARXIV_DOI_PREFIX) else None

    @property
    def arxiv_doi(self) -> str | None:
        return f"{ARXIV_DOI_PREFIX}{self.arxiv_id.lower()}" if self.arxiv_id else None

    def arxiv_month(self) -> str:
        """The first version's month, read from the id (``2204.02311`` → 2022-04)."""
        m = _ARXIV_NEW.match(self.arxiv_id or "") or _ARXIV_OLD.match(self.arxiv_id or "")
        if not m:
            return f"{self.year or 2000:04d}-01"
        yy, mm = int(m.group(1)), int(m.group(2))
        return f"{(1900 if yy >= 91 else 2000) + yy:04d}-{mm:02d}"


# --- building works from BibTeX fields --------------------------------------------------------


def decode(value: str) -> str:
    """LaTeX and HTML entities (DBLP writes ``&apos;`` and ``&amp;``) to plain text as an
    index would store it; a DBLP-style trailing period dropped."""
    for _ in range(3):
        value = html.unescape(value)
    value = _BARE_SPECIAL.sub(r"\\\g<0>", value)  # "&" and "%" are text, not LaTeX
    try:
        text = _latex.latex_to_text(value)
    except Exception:  # pylatexenc is tolerant; a broken value still yields its letters
        text = value.replace("{", "").replace("}", "")
    text = " ".join(text.split())
    return text[:-1] if text.endswith(".") and not text.endswith("..") else text


def people(author_field: str) -> tuple[tuple[str, str], ...]:
    """``A and B`` (either name order) as (given, family); ``others`` and DBLP numbers dropped."""
    found = []
    for name in split_multiple_persons_names(author_field or ""):
        if name.strip().lower() == "others":
            continue
        try:
            parts = parse_single_name_into_parts(_DBLP_HOMONYM.sub("", name.strip()))
        except Exception:  # an unparsable name is kept whole as a family name
            found.append(("", decode(name)))
            continue
        family = decode(" ".join([*parts.von, *parts.last, *parts.jr]))
        if family:
            found.append((decode(" ".join(parts.first)), family))
    return tuple(found)


def arxiv_of(fields: dict[str, str]) -> str | None:
    doi = (fields.get("doi") or "").strip().lower()
    if doi.startswith(ARXIV_DOI_PREFIX):
        return _VERSION.sub("", doi[len(ARXIV_DOI_PREFIX):])
    for name in ("eprint", "url"):
        if m := _ARXIV_URL.search(fields.get(name) or ""):
            return m.group(1)
    if (fields.get("archiveprefix") or "").lower() == "arxiv" and fields.get("eprint"):
        return _VERSION.sub("", fields["eprint"].strip())
    return None


def work_from_fields(work_id: int, entry_type: str, fields: dict[str, str], *,
                     full_venues: bool = False) -> IndexedWork | None:
    """A real work from one BibTeX entry's fields (``None`` without a title).

    ``full_venues`` stores the venue as the indexes spell it (``FULL_VENUES``) instead of the
    short name the entry cites, so that venue comparison is exercised as in the real world.
    """
    fields = {k.lower(): v for k, v in fields.items() if isinstance(v, str)}
    title = decode(fields.get("title", ""))
    if not title:
        return None
    year = re.search(r"\d{4}", fields.get("year", ""))
    venue = fields.get("journal") or fields.get("booktitle")
    doi = re.sub(r"^(?:https?://(?:dx\.)?doi\.org/|doi:)", "", (fields.get("doi") or "").strip(),
                 flags=re.IGNORECASE).lower() or None
    arxiv = arxiv_of(fields)
    if doi and doi.startswith(ARXIV_DOI_PREFIX):
        doi = f"{ARXIV_DOI_PREFIX}{arxiv}"
    venue = decode(venue) if venue else None
    if full_venues and venue and (full := FULL_VENUES.get(venue.casefold())):
        venue = full.format(year=year.group(0) if year else "")
    return IndexedWork(
        work_id=work_id,
        title=title,
        authors=people(fields.get("author", "")),
        year=int(year.group(0)) if year else None,
        venue=venue,
        is_journal=entry_type.lower() == "article",
        doi=doi,
        arxiv_id=arxiv,
    )


def title_key(title: str) -> str:
    return " ".join(_TOKEN.findall(title.casefold()))


def real_works(entries: Iterable[tuple[str, dict[str, str]]], *, full_venues: bool = False
               ) -> list[IndexedWork]:
    """One record per real work from (entry type, fields) pairs, in order.

    The same work seen twice (same title, and the same DOI or none) stays one record; its DOI
    and arXiv id are filled from later sightings, and the longest author list wins, as an index
    that merged several sources would have it. The same title with another DOI is another
    record (a preprint and its published version are two records in real indexes too).
    """
    works: list[IndexedWork] = []
    by_title: dict[str, list[int]] = defaultdict(list)
    for entry_type, fields in entries:
        new = work_from_fields(len(works), entry_type, fields, full_venues=full_venues)
        if new is None:
            continue
        same = next((i for i in by_title[title_key(new.title)]
                     if not (works[i].doi and new.doi and works[i].doi != new.doi)), None)
        if same is None:
            by_title[title_key(new.title)].append(len(works))
            works.append(new)
            continue
        old = works[same]
        works[same] = IndexedWork(
            old.work_id, old.title,
            new.authors if len(new.authors) > len(old.authors) else old.authors,
            old.year, old.venue or new.venue, old.is_journal,
            old.doi or new.doi, old.arxiv_id or new.arxiv_id,
        )
    return works


# --- the index ------------------------------------------------------------------------------


class SimIndex:
    """Works by DOI and arXiv id, and a token index for title search."""

    def __init__(self, works: Iterable[IndexedWork]) -> None:
        self.works = list(works)
        self.by_doi: dict[str, IndexedWork] = {}
        self.by_arxiv: dict[str, IndexedWork] = {}
        for work in self.works:
            for doi in (work.doi, work.arxiv_doi):
                if doi:
                    self.by_doi.setdefault(doi, work)
            if work.arxiv_id:
                self.by_arxiv.setdefault(work.arxiv_id.lower(), work)
        self._tokens = [frozenset(_TOKEN.findall(w.title.casefold())) for w in self.works]
        self._postings: dict[str, list[int]] = defaultdict(list)
        df: Counter[str] = Counter()
        for i, tokens in enumerate(self._tokens):
            df.update(tokens)
            for token in tokens:
                self._postings[token].append(i)
        n = max(len(self.works), 1)
        self._idf = {t: math.log(1 + n / c) for t, c in df.items()}

    def doi(self, doi: str) -> IndexedWork | None:
        return self.by_doi.get(doi.strip().lower())

    def arxiv(self, arxiv_id: str) -> IndexedWork | None:
        return self.by_arxiv.get(_VERSION.sub("", arxiv_id.strip()).lower())

    def search(self, query: str, covers: Callable[[IndexedWork], bool], limit: int = 5
               ) -> list[IndexedWork]:
        """The ``limit`` covered works sharing the most query-token weight, best first."""
        query_tokens = frozenset(_TOKEN.findall(query.casefold()))
        scores: dict[int, float] = defaultdict(float)
        for token in query_tokens:
            for i in self._postings.get(token, ()):
                scores[i] += self._idf[token]
        ranked = sorted(
            (i for i in scores if covers(self.works[i])),
            key=lambda i: (-scores[i], len(self._tokens[i] ^ query_tokens), i),
        )
        return [self.works[i] for i in ranked[:limit]]


# --- response bodies, in each service's documented shape -----------------------------------------


def _name(given: str, family: str) -> str:
    return f"{given} {family}".strip()


def _hex_id(work: IndexedWork, salt: str) -> str:
    return hashlib.sha1(f"{salt}:{work.work_id}".encode()).hexdigest()


def crossref_work(work: IndexedWork, score: float | None = None) -> dict:
    doi = work.crossref_doi
    body = {
        "DOI": doi,
        "URL": f"https://doi.org/{doi}",
        "prefix": doi.split("/", 1)[0],
        "type": "journal-article" if work.is_journal else "proceedings-article",
        "title": [html.escape(work.title, quote=False)],  # Crossref escapes "&" and "<"
        "author": [
            {"given": g, "family": f, "sequence": "first" if i == 0 else "additional",
             "affiliation": []}
            for i, (g, f) in enumerate(work.authors)
        ],
        "container-title": [work.venue] if work.venue else [],
        "issued": {"date-parts": [[work.year]] if work.year else [[None]]},
        "published": {"date-parts": [[work.year]] if work.year else [[None]]},
        "is-referenced-by-count": 0,
    }
    if score is not None:
        body["score"] = score
    return body


def openalex_work(work: IndexedWork, *, in_list: bool = False) -> dict:
    """``in_list``: as a search or filter result, where OpenAlex cuts authorships at 100."""
    doi = work.doi or work.arxiv_doi
    authors = work.authors[:OPENALEX_LIST_AUTHORS] if in_list else work.authors
    source = {"id": f"https://openalex.org/S{work.work_id}", "display_name": work.venue,
              "issn_l": None, "issn": None,
              "type": "journal" if work.is_journal else "conference"} if work.venue else None
    landing = f"https://doi.org/{doi}" if doi else f"https://openalex.org/W{work.work_id + 1}"
    return {
        "id": f"https://openalex.org/W{work.work_id + 1}",
        "doi": f"https://doi.org/{doi}" if doi else None,
        "title": work.title,
        "display_name": work.title,
        "publication_year": work.year,
        "publication_date": f"{work.year}-01-01" if work.year else None,
        "type": "article",
        "ids": {"openalex": f"https://openalex.org/W{work.work_id + 1}"},
        "authorships": [
            {"author_position": "first" if i == 0 else "middle",
             "author": {"id": f"https://openalex.org/A{work.work_id}x{i}",
                        "display_name": _name(g, f)},
             "raw_author_name": _name(g, f), "institutions": []}
            for i, (g, f) in enumerate(authors)
        ],
        "is_authors_truncated": len(authors) < len(work.authors),
        "primary_location": {"landing_page_url": landing, "source": source},
        "biblio": {"volume": None, "issue": None, "first_page": None, "last_page": None},
        "is_retracted": False,
    }


def s2_paper(work: IndexedWork) -> dict:
    paper_id = _hex_id(work, "s2")
    external: dict[str, object] = {"CorpusId": work.work_id + 1}
    if work.crossref_doi:
        external["DOI"] = work.crossref_doi
    if work.arxiv_id:
        external["ArXiv"] = work.arxiv_id
    return {
        "paperId": paper_id,
        "externalIds": external,
        "url": f"https://www.semanticscholar.org/paper/{paper_id}",
        "title": work.title,
        "venue": work.venue or "",
        "publicationVenue": {"id": _hex_id(work, "venue"), "name": work.venue,
                             "type": "journal" if work.is_journal else "conference",
                             "alternate_names": []} if work.venue else None,
        "year": work.year,
        "journal": {"name": work.venue} if work.is_journal and work.venue else None,
        "publicationDate": None,
        "authors": [{"authorId": str(work.work_id * 100 + i), "name": _name(g, f)}
                    for i, (g, f) in enumerate(work.authors)],
    }


def dblp_hit(work: IndexedWork) -> dict:
    """A hit of DBLP's publication search: its title ends with a period, as DBLP's do."""
    kind = "journals" if work.is_journal else "conf"
    key = f"{kind}/sim/W{work.work_id}"
    info: dict[str, object] = {
        "authors": {"author": [{"@pid": f"sim/{work.work_id}-{i}", "text": _name(g, f)}
                               for i, (g, f) in enumerate(work.authors)]},
        "title": work.title.rstrip(".") + ".",
        "type": "Journal Articles" if work.is_journal else "Conference and Workshop Papers",
        "key": key,
        "url": f"https://dblp.org/rec/{key}",
    }
    if work.year:
        info["year"] = str(work.year)
    if work.venue:
        info["venue"] = work.venue
    if work.crossref_doi:
        info["doi"] = work.crossref_doi
        info["ee"] = f"https://doi.org/{work.crossref_doi}"
    return {"@score": "1", "@id": str(work.work_id), "info": info}


def datacite_doi(work: IndexedWork) -> dict:
    doi = work.arxiv_doi
    return {"data": {"id": doi, "type": "dois", "attributes": {
        "doi": doi, "prefix": "10.48550", "suffix": doi.split("/", 1)[1],
        "identifiers": [{"identifier": work.arxiv_id, "identifierType": "arXiv"}],
        "creators": [{"name": f"{f}, {g}" if g else f, "nameType": "Personal",
                      "givenName": g, "familyName": f} for g, f in work.authors],
        "titles": [{"title": work.title}],
        "publisher": "arXiv",
        "container": {},
        "publicationYear": int(work.arxiv_month()[:4]),
        "types": {"resourceTypeGeneral": "Preprint", "resourceType": "Article"},
        "url": f"https://arxiv.org/abs/{work.arxiv_id}",
    }}}


def csl_item(work: IndexedWork, doi: str) -> dict:
    return {
        "DOI": doi,
        "type": "article-journal" if work.is_journal else "paper-conference",
        "title": work.title,
        "author": [{"given": g, "family": f} for g, f in work.authors],
        "container-title": work.venue or "",
        "issued": {"date-parts": [[work.year]]} if work.year else {},
        "URL": f"https://doi.org/{doi}",
    }


def arxiv_feed(query: str, works: list[IndexedWork], total: int | None = None) -> bytes:
    """An Atom feed of ``works``; ``total`` (default: all of them) is what the query matched,
    as arXiv reports it when ``max_results`` cut the page short."""
    entries = []
    for work in works:
        month = work.arxiv_month()
        authors = "".join(f"<author><name>{escape(_name(g, f))}</name></author>"
                          for g, f in work.authors)
        doi = f"<arxiv:doi>{escape(work.crossref_doi)}</arxiv:doi>" if work.crossref_doi else ""
        entries.append(
            f"<entry><id>http://arxiv.org/abs/{escape(work.arxiv_id)}v1</id>"
            f"<updated>{month}-01T00:00:00Z</updated><published>{month}-01T00:00:00Z</published>"
            f"<title>{escape(work.title)}</title><summary>Simulated.</summary>{authors}{doi}"
            f'<link href="https://arxiv.org/abs/{escape(work.arxiv_id)}v1" rel="alternate" '
            'type="text/html"/></entry>'
        )
    return (
        "<?xml version='1.0' encoding='UTF-8'?>\n"
        '<feed xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" '
        'xmlns:arxiv="http://arxiv.org/schemas/atom" xmlns="http://www.w3.org/2005/Atom">'
        f"<id>https://arxiv.org/api/simulated</id><title>arXiv Query: {escape(query)}</title>"
        f"<opensearch:itemsPerPage>{len(works)}</opensearch:itemsPerPage>"
        f"<opensearch:totalResults>{len(works) if total is None else total}"
        "</opensearch:totalResults>"
        f"<opensearch:startIndex>0</opensearch:startIndex>{''.join(entries)}</feed>"
    ).encode()


# --- routing -----------------------------------------------------------------------------------

Reply = tuple[int, str, bytes]
JSON = "application/json"


def _json(status: int, body: object, content_type: str = JSON) -> Reply:
    return status, content_type, json.dumps(body).encode()


def _first(query: dict[str, list[str]], name: str) -> str:
    return (query.get(name) or [""])[0]


class Router:
    """Request (endpoint, path, query, Accept) → reply, from one ``SimIndex``."""

    def __init__(self, index: SimIndex) -> None:
        self.index = index

    def reply(self, endpoint: str, path: str, query: dict[str, list[str]], accept: str) -> Reply:
        handler = getattr(self, endpoint, None)
        reply = handler(path, query, accept) if handler else None
        return reply or _json(404, {"error": f"simulated index: no route for {endpoint} {path}"})

    def crossref(self, path: str, query: dict, _accept: str) -> Reply | None:
        if path.startswith("/works/"):
            work = self.index.doi(path[len("/works/"):])
            if work is None or work.crossref_doi != path[len("/works/"):].lower():
                return 404, "text/plain", b"Resource not found."
            return _json(200, {"status": "ok", "message-type": "work",
                               "message-version": "1.0.0", "message": crossref_work(work)})
        if path == "/works" and _first(query, "filter").startswith("doi:"):
            return self.crossref_batch(query)
        if path == "/works" and "query.title" in query:
            rows = int(_first(query, "rows") or 20)
            hits = self.index.search(_first(query, "query.title"),
                                     lambda w: w.crossref_doi is not None, rows)
            items = [crossref_work(w, score=float(rows - i)) for i, w in enumerate(hits)]
            return _json(200, {"status": "ok", "message-type": "work-list",
                               "message-version": "1.0.0",
                               "message": {"facets": {}, "total-results": len(items),
                                           "items": items, "items-per-page": rows,
                                           "query": {"start-index": 0, "search-terms": None}}})
        return None

    def crossref_batch(self, query: dict) -> Reply:
        """``filter=doi:A,doi:B``: a work list of the DOIs Crossref has, at most ``rows``."""
        dois = [part[len("doi:"):].lower() for part in _first(query, "filter").split(",")
                if part.startswith("doi:")]
        rows = int(_first(query, "rows") or 20)
        works = [w for d in dict.fromkeys(dois)
                 if (w := self.index.doi(d)) is not None and w.crossref_doi == d]
        items = [crossref_work(w) for w in works[:rows]]
        return _json(200, {"status": "ok", "message-type": "work-list",
                           "message-version": "1.0.0",
                           "message": {"facets": {}, "total-results": len(works),
                                       "items": items, "items-per-page": rows,
                                       "query": {"start-index": 0, "search-terms": None}}})

    def openalex(self, path: str, query: dict, _accept: str) -> Reply | None:
        if path.lower().startswith("/works/doi:"):
            work = self.index.doi(path[len("/works/doi:"):])
            if work is None:
                return 404, "text/html; charset=utf-8", b"<!doctype html><title>404</title>"
            return _json(200, openalex_work(work))
        if path == "/works" and _first(query, "filter").startswith("doi:"):
            values = _first(query, "filter")[len("doi:"):].split("|")
            per_page = int(_first(query, "per-page") or 25)
            bare = [re.sub(r"^https?://doi\.org/", "", v.strip(), flags=re.IGNORECASE)
                    for v in values]
            works = list({id(w): w for d in bare if (w := self.index.doi(d)) is not None
                          }.values())
            return _json(200, {"meta": {"count": len(works), "page": 1, "per_page": per_page},
                               "results": [openalex_work(w) for w in works[:per_page]]})
        if path == "/works" and "search" in query:
            per_page = int(_first(query, "per-page") or 25)
            hits = self.index.search(_first(query, "search"), lambda w: True, per_page)
            return _json(200, {"meta": {"count": len(hits), "page": 1, "per_page": per_page},
                               "results": [openalex_work(w, in_list=True) for w in hits]})
        return None

    def semantic_scholar(self, path: str, query: dict, _accept: str) -> Reply | None:
        if path == "/paper/batch":
            return _json(405, {"error": "use POST for /paper/batch"})
        if path == "/paper/search":
            limit = int(_first(query, "limit") or 10)
            hits = self.index.search(_first(query, "query"), lambda w: True, limit)
            if not hits:
                return _json(200, {"total": 0, "offset": 0})
            return _json(200, {"total": len(hits), "offset": 0,
                               "data": [s2_paper(w) for w in hits]})
        if path.startswith("/paper/"):
            paper_id = path[len("/paper/"):]
            scheme, _, value = paper_id.partition(":")
            work = (self.index.doi(value) if scheme.upper() == "DOI"
                    else self.index.arxiv(value) if scheme.lower() == "arxiv" else None)
            if work is None:
                return _json(404, {"error": f"Paper with id {paper_id} not found"})
            return _json(200, s2_paper(work))
        return None

    def dblp(self, path: str, query: dict, _accept: str) -> Reply | None:
        if path != "/search/publ/api":
            return None
        hits = self.index.search(_first(query, "q"), lambda w: True,
                                 int(_first(query, "h") or 30))
        found: dict[str, object] = {"@total": str(len(hits)), "@computed": str(len(hits)),
                                    "@sent": str(len(hits)), "@first": "0"}
        if hits:  # DBLP sends no "hit" at all when nothing is found
            found["hit"] = [dblp_hit(w) for w in hits]
        return _json(200, {"result": {"query": _first(query, "q"),
                                      "status": {"@code": "200", "text": "OK"},
                                      "hits": found}})

    def post(self, endpoint: str, path: str, body: bytes) -> Reply:
        """``POST /paper/batch`` (Semantic Scholar): one paper or null per id, in order."""
        if endpoint != "semantic_scholar" or path != "/paper/batch":
            return _json(404, {"error": f"simulated index: no POST route for {endpoint} {path}"})
        try:
            ids = json.loads(body)["ids"]
        except (ValueError, KeyError, TypeError):
            return _json(400, {"error": "body must be {\"ids\": [...]}"})
        answers = []
        for paper_id in ids:
            scheme, _, value = str(paper_id).partition(":")
            work = (self.index.doi(value) if scheme.upper() == "DOI"
                    else self.index.arxiv(value) if scheme.lower() == "arxiv" else None)
            answers.append(s2_paper(work) if work is not None else None)
        return _json(200, answers)

    def arxiv(self, path: str, query: dict, _accept: str) -> Reply | None:
        if path not in ("", "/"):
            return None
        if "id_list" in query:
            works = [w for raw in _first(query, "id_list").split(",")
                     if (w := self.index.arxiv(raw)) is not None]
            shown = works[:int(_first(query, "max_results") or 10)]
            return 200, "application/atom+xml", arxiv_feed(_first(query, "id_list"), shown,
                                                          total=len(works))
        phrase = _first(query, "search_query")
        if phrase.startswith("ti:"):
            limit = int(_first(query, "max_results") or 10)
            hits = self.index.search(phrase[3:].strip('"'), lambda w: w.arxiv_id is not None,
                                     limit)
            return 200, "application/atom+xml", arxiv_feed(phrase, hits)
        return None

    def datacite(self, path: str, _query: dict, _accept: str) -> Reply | None:
        if not path.startswith("/dois/"):
            return None
        doi = path[len("/dois/"):].lower()
        work = self.index.doi(doi)
        if work is None or work.arxiv_doi != doi:
            return _json(404, {"errors": [{"status": "404", "title":
                                           "The resource you are looking for doesn't exist."}]})
        return _json(200, datacite_doi(work), "application/vnd.api+json")

    def doi_registry(self, path: str, _query: dict, accept: str) -> Reply | None:
        if path.startswith("/doiRA/"):
            return _json(200, [{"DOI": prefix, "RA": "DataCite" if prefix == "10.48550"
                                else "Crossref"} for prefix in path[len("/doiRA/"):].split(",")])
        doi = path.lstrip("/")
        work = self.index.doi(doi)
        if work is None:
            return 404, "text/html; charset=utf-8", b"<html><body>DOI Not Found</body></html>"
        if "citationstyles.csl+json" not in accept:
            return None
        return _json(200, csl_item(work, doi.lower()), "application/vnd.citationstyles.csl+json")

    def handle(self, path: str, _query: dict, _accept: str) -> Reply | None:
        if not path.startswith("/api/handles/"):
            return None
        doi = path[len("/api/handles/"):]
        if self.index.doi(doi) is None:
            return _json(404, {"responseCode": 100, "handle": doi})
        return _json(200, {"responseCode": 1, "handle": doi, "values": [
            {"index": 1, "type": "URL", "data": {"format": "string",
                                                 "value": f"https://example.org/{doi}"}}]})


# --- the server --------------------------------------------------------------------------------


def route_request(router: Router, raw_path: str, posted: bytes | None, accept: str
                  ) -> tuple[str | None, Reply]:
    """The endpoint a request path belongs to and the router's reply (``posted``: a POST body)."""
    parts = urlsplit(raw_path)
    path = unquote(parts.path)
    endpoint = next((name for name, prefix in PREFIXES.items()
                     if path == prefix or path.startswith(prefix + "/")), None)
    if endpoint is None:
        return None, _json(404, {"error": "unknown endpoint"})
    rest = path[len(PREFIXES[endpoint]):]
    if posted is not None:
        return endpoint, router.post(endpoint, rest, posted)
    return endpoint, router.reply(endpoint, rest, parse_qs(parts.query, keep_blank_values=True),
                                  accept)


def write_reply(handler: BaseHTTPRequestHandler, reply: Reply,
                headers: dict[str, str] | None = None) -> None:
    status, content_type, body = reply
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(body)))
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(body)


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:
        self._serve(None)

    def do_POST(self) -> None:
        self._serve(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

    def _serve(self, posted: bytes | None) -> None:
        if self.server.delay > 0:
            time.sleep(self.server.delay)
        endpoint, reply = route_request(self.server.router, self.path, posted,
                                        self.headers.get("Accept", ""))
        self.server.count(endpoint, reply[0])
        write_reply(self, reply)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
        """Silent: a benchmark run sends thousands of requests."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256

    def __init__(self, router: Router, delay: float = 0.0) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.router = router
        self.delay = delay
        """Seconds every request waits before it is answered (a slow service)."""
        self.requests: Counter[tuple[str | None, int]] = Counter()
        self._lock = threading.Lock()

    def count(self, endpoint: str | None, status: int) -> None:
        with self._lock:
            self.requests[(endpoint, status)] += 1


class SimIndexServer:
    """The index over loopback HTTP; ``start()`` it, ``stop()`` it, or use ``with``."""

    def __init__(self, index: SimIndex, *, delay: float = 0.0) -> None:
        """``delay`` seconds pass before every answer, as from a slow or distant service."""
        self.index = index
        self._httpd = _Server(Router(index), delay)
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def requests(self) -> Counter[tuple[str | None, int]]:
        """Requests served, by (endpoint, status)."""
        return self._httpd.requests

    def environ(self, cache_dir: str) -> dict[str, str]:
        """The environment that points every citelsp resolver here, unpaced."""
        env = {"CITELSP_CACHE_DIR": cache_dir}
        for name, prefix in PREFIXES.items():
            env[f"CITELSP_{name.upper()}_BASE_URL"] = self.base_url + prefix
            env[f"CITELSP_{name.upper()}_MIN_INTERVAL_MS"] = "0"
        return env

    def start(self) -> SimIndexServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> SimIndexServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
