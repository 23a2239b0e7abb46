"""arXiv export API (Atom): ``?id_list={id}`` and ``?search_query=ti:"…"``.

An empty feed for an id is ``NotFound`` (the engine asks twice, 3 s apart, before calling
it refuted); arXiv's error feed (an entry titled "Error" from ``arxiv.org/api/errors``,
served with HTTP 400) is ``Malformed``: the id is malformed, which refutes nothing.
The Atom is parsed with ElementTree after refusing any DTD, so no entity can expand.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence

from citelsp import links
from citelsp.config import Settings
from citelsp.resolution import records as r
from citelsp.resolution import terms
from citelsp.resolution.http import HttpClient, HttpResponse
from citelsp.resolution.outcome import Found, Malformed, NotFound, Record, Unreachable

SOURCE = "arxiv"
ATOM = "{http://www.w3.org/2005/Atom}"
ARXIV = "{http://arxiv.org/schemas/atom}"
OPENSEARCH = "{http://a9.com/-/spec/opensearch/1.1/}"
ERROR_ID = "arxiv.org/api/errors"
_DTD = re.compile(rb"<!\s*(?:DOCTYPE|ENTITY)", re.IGNORECASE)
_ABS_URL = re.compile(r"^https?://(?:export\.)?arxiv\.org/abs/", re.IGNORECASE)
_VERSION = re.compile(r"v[0-9]+$")


class ArxivClient:
    """Asks export.arxiv.org/api/query; every method answers, none raises."""

    def __init__(self, http: HttpClient, settings: Settings) -> None:
        self._http = http
        self._settings = settings

    async def by_arxiv_id(self, arxiv_id: str) -> Found | NotFound | Malformed | Unreachable:
        """The entry for ``arxiv_id`` (a versioned id asks for that version)."""
        response = await self._http.get(SOURCE, "", params={"id_list": arxiv_id})
        records = _entries(response, arxiv_id)
        if not isinstance(records, list):
            return records
        if not records:
            return NotFound(f"{SOURCE}: no entry for {arxiv_id}")
        wanted = base_id(arxiv_id).lower()
        matching = tuple(rec for rec in records if (rec.arxiv_id or "").lower() == wanted)
        if not matching:
            return Unreachable(f"arXiv answered {arxiv_id} with another entry")
        return Found(matching[:1])

    async def by_arxiv_ids(self, arxiv_ids: Sequence[str]
                           ) -> dict[str, Found | NotFound] | Malformed | Unreachable:
        """Several ids in one ``?id_list=a,b&max_results=N``; an id without an entry is what
        its single lookup answers (no entry). The ids must have distinct base ids. arXiv's
        error feed for one malformed id refuses the whole list (``Malformed``)."""
        joined = ",".join(arxiv_ids)
        response = await self._http.get(
            SOURCE, "", params={"id_list": joined, "max_results": str(len(arxiv_ids))},
            urgent=True, kind=terms.LIST)
        records = _entries(response, joined)
        if not isinstance(records, list):
            return records
        wanted = {base_id(a).lower(): a for a in arxiv_ids}
        by_id: dict[str, Record] = {}
        for record in records:
            key = (record.arxiv_id or "").lower()
            if key not in wanted or key in by_id:
                return Unreachable("arXiv answered the id list with an entry not asked for")
            by_id[key] = record
        return {a: Found((by_id[k],)) if k in by_id else NotFound(f"{SOURCE}: no entry for {a}")
                for k, a in wanted.items()}

    async def search_title(self, title: str, max_results: int = 5) -> Found | Unreachable:
        """``?search_query=ti:"…"``: the entries, possibly none."""
        phrase = " ".join(title.replace('"', " ").split())
        params = {"search_query": f'ti:"{phrase}"', "max_results": str(max_results)}
        response = await self._http.get(SOURCE, "", params=params, kind=terms.SEARCH)
        if isinstance(response, Unreachable):
            return response
        feed = _feed(response)
        if isinstance(feed, Malformed):
            return Unreachable(f"arXiv refused the title search: {feed.detail}")
        if not isinstance(feed, ET.Element):
            return feed
        try:
            return Found(tuple(parse_entry(e) for e in feed.iter(f"{ATOM}entry")))
        except r.PARSE_ERRORS as exc:
            return r.malformed(SOURCE, exc)


def _entries(response: HttpResponse | Unreachable, asked: str
             ) -> list[Record] | Malformed | Unreachable:
    """The entries of an ``id_list`` answer; a page that reports more results than it carries
    (an empty page sent by mistake, or one cut short) is ``Unreachable``."""
    if isinstance(response, Unreachable):
        return response
    feed = _feed(response)
    if not isinstance(feed, ET.Element):
        return feed
    try:
        records = [parse_entry(e) for e in feed.iter(f"{ATOM}entry")]
        total = r.text(feed.findtext(f"{OPENSEARCH}totalResults"))
    except r.PARSE_ERRORS as exc:
        return r.malformed(SOURCE, exc)
    if total and total.isdigit() and int(total) > len(records):
        return Unreachable(f"arXiv reported {total} results for {asked[:80]} but sent "
                           f"{len(records)}")
    return records


def base_id(arxiv_id: str) -> str:
    """The id without URL or version (``…/abs/hep-th/9901001v2`` → ``hep-th/9901001``)."""
    return _VERSION.sub("", _ABS_URL.sub("", arxiv_id.strip()))


def _feed(response: HttpResponse) -> ET.Element | Malformed | Unreachable:
    """The Atom root, or arXiv's error entry as ``Malformed``, or ``Unreachable``."""
    if response.status not in (200, 400):
        return r.unexpected(SOURCE, response)
    if _DTD.search(response.body):
        return Unreachable("arXiv body declares a DTD; refused")
    try:
        root = ET.fromstring(response.body)
    except ET.ParseError as exc:
        return r.malformed(SOURCE, exc)
    if root.tag != f"{ATOM}feed":
        return Unreachable(f"arXiv body is not an Atom feed ({root.tag[:80]})")
    for entry in root.iter(f"{ATOM}entry"):
        entry_id = entry.findtext(f"{ATOM}id") or ""
        if ERROR_ID in entry_id or (entry.findtext(f"{ATOM}title") or "").strip() == "Error":
            detail = r.text(entry.findtext(f"{ATOM}summary")) or entry_id
            return Malformed(f"arXiv: {detail}")
    if response.status == 400:
        return r.unexpected(SOURCE, response)
    return root


def parse_entry(entry: ET.Element) -> Record:
    """One Atom ``<entry>``; its ``<published>`` is the first version's date."""
    entry_id = r.text(entry.findtext(f"{ATOM}id"))
    if not entry_id or not _ABS_URL.match(entry_id):
        raise r.BodyError(f"entry id {entry_id!r} is not an arXiv abstract URL")
    versioned = _ABS_URL.sub("", entry_id)
    arxiv_id = base_id(versioned)
    title = r.clean_title(entry.findtext(f"{ATOM}title"))
    journal_ref = r.shown(entry.findtext(f"{ARXIV}journal_ref"))
    return Record(
        source=SOURCE,
        title=title,
        titles=r.title_variants([title] if title else []),
        short_titles=r.main_titles([title] if title else []),
        authors=r.people([a.findtext(f"{ATOM}name") for a in entry.findall(f"{ATOM}author")],
                         r.person_from_name),
        years=r.unique([r.year(entry.findtext(f"{ATOM}published"))]),
        venue="arXiv",
        venue_aliases=r.unique([journal_ref]),
        doi=r.doi(entry.findtext(f"{ARXIV}doi")),
        arxiv_id=arxiv_id,
        source_id=versioned,
        work_type="preprint",
        is_preprint=True,
        url=links.arxiv_url(arxiv_id),
    )
