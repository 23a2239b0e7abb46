"""Correct entries written from real recorded records grade clean; wrong ones are caught.

Every work in ``fixtures/real`` (response bodies that Crossref, OpenAlex, DataCite, arXiv and
Semantic Scholar really sent, recorded by other projects' test suites;
``fixtures/real/MANIFEST.md``) becomes the
CSL-JSON entry a careful author would write from the record as the service shows it: the title
as displayed (entities decoded, inline markup dropped), every author, the publication year (never
a deposit date), venue, volume, pages and DOI. citelsp resolves it against sources that serve the
record as its own parser reads it from the body, and must grade it with no P0 and no P1.
Deliberately wrong variants (a co-author left out, a title word changed, the year three years
early, the Crossref deposit year where it is more than a year from every publication year, an
invented DOI or arXiv id) must each get a P0 or P1.

The entry is written from the raw JSON here, not from citelsp's parsed record, so that a field
citelsp reads differently from the service (a year from ``created``, an entity left in a venue)
shows up as a false P1 on a correct entry.
"""

from __future__ import annotations

import asyncio
import html
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from citelsp.documents.bibtex import parse_bibtex
from citelsp.documents.csl import parse_csl_json
from citelsp.documents.model import Person, Work
from citelsp.resolution import arxiv, crossref, datacite, openalex, semantic_scholar
from citelsp.resolution.asking import Context
from citelsp.resolution.lookups import SEMANTIC_SCHOLAR_BATCH
from citelsp.resolution.outcome import Agency, Found, Handle, NotFound, Record, Unreachable
from citelsp.resolution.records import person_from_name
from citelsp.resolution.resolve import resolve_reference
from citelsp.verdict.accuracy import accuracy_conflicts
from citelsp.verdict.judge import judge

REAL = Path(__file__).resolve().parent.parent / "fixtures" / "real"
_TAG = re.compile(r"<[^>]*>")


def displayed(value: Any) -> str:
    """What a reader sees of a field: entities decoded (however often escaped), tags dropped."""
    if isinstance(value, list):
        value = next((v for v in value if isinstance(v, str) and v.strip()), "")
    text = str(value or "")
    for _ in range(4):
        text = html.unescape(text)
    return " ".join(_TAG.sub("", text).split())


def _first_year(*dates: Any) -> int | None:
    for d in dates:
        parts = (d or {}).get("date-parts") or [[]]
        if parts and parts[0] and isinstance(parts[0][0], int):
            return parts[0][0]
    return None


def _name(name: str, *, family_first: bool = False) -> dict:
    """How the author writes a display name: an organization (a consortium) as a literal."""
    if name.split()[-1] in ("Consortium", "Collaboration", "Group", "Team", "Investigators"):
        return {"literal": name}
    if family_first:
        family, _, given = name.partition(", ")
    else:
        given, _, family = name.rpartition(" ")
    return {"family": family, "given": given}


@dataclass
class Written:
    """A work as the careful author cites it, and what may be varied to make it wrong."""

    key: str
    service: str
    record: Record
    item: dict
    deposit_year: int | None = None
    record_years: tuple[int, ...] = ()
    variants: dict[str, dict] = field(default_factory=dict)


_CROSSREF_TYPES = {"journal-article": "article-journal", "proceedings-article": "paper-conference",
                   "book-chapter": "chapter", "book": "book", "posted-content": "article",
                   "dataset": "dataset", "report": "report", "dissertation": "thesis"}


def _crossref(work: dict) -> tuple[dict, int | None, tuple[int, ...]] | None:
    title = displayed(work.get("title"))
    if not title:
        return None
    subtitle = displayed(work.get("subtitle"))
    year = _first_year(work.get("issued"), work.get("published-print"),
                       work.get("published-online"), work.get("published"))
    kind = _CROSSREF_TYPES.get(work.get("type", ""), "article-journal")
    item: dict[str, Any] = {
        "type": kind, "title": f"{title}: {subtitle}" if subtitle else title,
        "author": [{"family": displayed(a["family"]), "given": displayed(a.get("given"))}
                   if a.get("family") else {"literal": displayed(a.get("name"))}
                   for a in work.get("author") or [] if a.get("family") or a.get("name")],
        "DOI": work["DOI"],
    }
    if year:
        item["issued"] = {"date-parts": [[year]]}
    venue = displayed(work.get("container-title"))
    if venue and kind not in ("book", "report", "thesis"):
        item["container-title"] = venue
    for key in ("volume", "page"):
        if work.get(key):
            item[key] = displayed(work[key])
    years = tuple(y for y in (_first_year(work.get(k)) for k in (
        "issued", "published-print", "published-online", "published")) if y)
    return item, _first_year(work.get("created")), years


_OPENALEX_TYPES = {"article": "article-journal", "preprint": "article", "book-chapter": "chapter",
                   "book": "book", "dataset": "dataset", "dissertation": "thesis"}


def _openalex(work: dict) -> tuple[dict, int | None, tuple[int, ...]] | None:
    title = displayed(work.get("title") or work.get("display_name"))
    if not title:
        return None
    authors = []
    for authorship in work.get("authorships") or []:
        name = displayed((authorship.get("author") or {}).get("display_name"))
        if name:
            authors.append(_name(name))
    item: dict[str, Any] = {
        "type": _OPENALEX_TYPES.get(work.get("type", ""), "article-journal"),
        "title": title, "author": authors,
    }
    if work.get("doi"):
        item["DOI"] = re.sub(r"^https?://doi\.org/", "", work["doi"])
    if work.get("publication_year"):
        item["issued"] = {"date-parts": [[work["publication_year"]]]}
    source = ((work.get("primary_location") or {}).get("source") or {})
    if source.get("display_name") and source.get("type") != "repository":
        item["container-title"] = displayed(source["display_name"])
    biblio = work.get("biblio") or {}
    if biblio.get("volume"):
        item["volume"] = biblio["volume"]
    if biblio.get("first_page"):
        last = biblio.get("last_page")
        item["page"] = f"{biblio['first_page']}-{last}" if last else biblio["first_page"]
    return item, None, ((work["publication_year"],) if work.get("publication_year") else ())


_DATACITE_TYPES = {"Dataset": "dataset", "Software": "software",
                   "JournalArticle": "article-journal", "Text": "article", "Preprint": "article"}


def _datacite(data: dict) -> tuple[dict, int | None, tuple[int, ...]] | None:
    attributes = data["attributes"]
    titles = attributes.get("titles") or []
    mains = [displayed(t.get("title")) for t in titles if not t.get("titleType")]
    subs = [displayed(t.get("title")) for t in titles if t.get("titleType") == "Subtitle"]
    if not mains or not mains[0]:
        return None
    authors = []
    for creator in attributes.get("creators") or []:
        if creator.get("nameType") == "Organizational":
            authors.append({"literal": displayed(creator.get("name"))})
        elif creator.get("familyName"):
            authors.append({"family": displayed(creator["familyName"]),
                            "given": displayed(creator.get("givenName"))})
        elif creator.get("name"):
            authors += [_name(part.strip(), family_first=True)
                        for part in displayed(creator["name"]).split(";")]
    kind = (attributes.get("types") or {}).get("resourceTypeGeneral", "")
    item: dict[str, Any] = {
        "type": _DATACITE_TYPES.get(kind, "article"),
        "title": f"{mains[0]}: {subs[0]}" if subs else mains[0],
        "author": authors, "DOI": attributes.get("doi") or data["id"],
    }
    year = attributes.get("publicationYear")
    if year:
        item["issued"] = {"date-parts": [[int(year)]]}
    container = displayed((attributes.get("container") or {}).get("title"))
    if container:
        item["container-title"] = container
    return item, None, ((int(year),) if year else ())


_S2_TYPES = {"JournalArticle": "article-journal", "Conference": "paper-conference",
             "Book": "book", "BookSection": "chapter", "Dataset": "dataset"}


def _semantic_scholar(paper: dict) -> tuple[dict, int | None, tuple[int, ...]] | None:
    """A Semantic Scholar paper as its reader cites it: the venue shown (``venue``, else the
    journal's name), the journal's volume and pages, the DOI or, without one, the arXiv id."""
    title = displayed(paper.get("title"))
    if not title:
        return None
    kinds = [_S2_TYPES[t] for t in paper.get("publicationTypes") or [] if t in _S2_TYPES]
    item: dict[str, Any] = {
        "type": kinds[0] if kinds else "article-journal", "title": title,
        "author": [_name(displayed(a["name"])) for a in paper.get("authors") or []
                   if displayed(a.get("name"))],
    }
    if paper.get("year"):
        item["issued"] = {"date-parts": [[paper["year"]]]}
    journal = paper.get("journal") or {}
    venue = displayed(paper.get("venue")) or displayed(journal.get("name"))
    if venue:
        item["container-title"] = venue
    if journal.get("volume"):
        item["volume"] = journal["volume"].strip()
    if journal.get("pages"):
        item["page"] = re.sub(r"\s+", "", journal["pages"])
    external = paper.get("externalIds") or {}
    if external.get("DOI"):
        item["DOI"] = external["DOI"]
    elif external.get("ArXiv"):
        item["URL"] = f"https://arxiv.org/abs/{external['ArXiv']}"
    return item, None, ((paper["year"],) if paper.get("year") else ())


_ATOM = "{http://www.w3.org/2005/Atom}"


def _arxiv(entry: ET.Element) -> tuple[dict, int | None, tuple[int, ...]] | None:
    arxiv_id = re.sub(r"v\d+$", "", (entry.findtext(f"{_ATOM}id") or "").rsplit("/abs/", 1)[-1])
    authors = []
    for name in (a.findtext(f"{_ATOM}name") or "" for a in entry.findall(f"{_ATOM}author")):
        authors.append(_name(" ".join(name.split())))
    year = int((entry.findtext(f"{_ATOM}published") or "0")[:4])
    item = {"type": "article", "title": displayed(entry.findtext(f"{_ATOM}title")),
            "author": authors, "issued": {"date-parts": [[year]]},
            "container-title": f"arXiv preprint arXiv:{arxiv_id}",
            "URL": f"https://arxiv.org/abs/{arxiv_id}"}
    return item, None, (year,)


def _bodies(service: str) -> list[tuple[str, dict]]:
    return [(p.name, json.loads(p.read_text())) for p in sorted((REAL / service).glob("*.json"))]


def _papers(body: Any) -> list[dict]:
    """The papers of a Semantic Scholar body: one paper, a search's or a citation list's
    ``data`` (each ``citingPaper`` or ``citedPaper``), or a ``/paper/batch`` list."""
    if isinstance(body, list):
        return [p for p in body if p]
    if "paperId" in body:
        return [body]
    return [row.get("citingPaper") or row.get("citedPaper") or row for row in body["data"]]


def _works() -> list[tuple[str, dict, Record, Callable]]:
    """(service, raw work, citelsp's parse of it, entry writer) for each distinct work."""
    found: dict[tuple[str, str], tuple[str, dict, Record, Callable]] = {}
    for _, body in _bodies("crossref"):
        message = body["message"]
        for work in message["items"] if body["message-type"] == "work-list" else [message]:
            found.setdefault(("crossref", work["DOI"].lower()),
                             ("crossref", work, crossref.parse_work(work), _crossref))
    for _, body in _bodies("openalex"):
        for work in body.get("results", [body]):
            found.setdefault(("openalex", work["id"]),
                             ("openalex", work, openalex.parse_work(work), _openalex))
    for _, body in _bodies("semantic_scholar"):
        for paper in _papers(body):
            found.setdefault(("semantic_scholar", paper["paperId"]),
                             ("semantic_scholar", paper, semantic_scholar.parse_paper(paper),
                              _semantic_scholar))
    for path in sorted((REAL / "arxiv").glob("*.xml")):
        for entry in ET.parse(path).getroot().iter(f"{_ATOM}entry"):
            record = arxiv.parse_entry(entry)
            found.setdefault(("arxiv", record.arxiv_id or ""), ("arxiv", entry, record, _arxiv))
    for _, body in _bodies("datacite"):
        data = body["data"]
        for entry in data if isinstance(data, list) else [data]:
            found.setdefault(("datacite", entry["id"].lower()),
                             ("datacite", entry, datacite.parse_doi({"data": entry}), _datacite))
    return list(found.values())


def _variants(written: Written) -> dict[str, dict]:
    """Wrong entries: each changes one thing a checker must notice."""
    item, out = written.item, {}
    people = [a for a in item["author"] if "family" in a]
    truncated = written.record.authors_truncated
    if len(people) >= 2 and not truncated:
        dropped = people[-1]
        out["missing co-author"] = {
            **item, "author": [a for a in item["author"] if a is not dropped]}
    words = item["title"].split()
    longest = max(range(len(words)), key=lambda i: len(words[i]))
    if len(words) >= 3 and len(words[longest]) >= 5:
        changed = [*words[:longest], "Zanzibarite", *words[longest + 1:]]
        out["changed title word"] = {**item, "title": " ".join(changed)}
    year = (item.get("issued") or {}).get("date-parts", [[None]])[0][0]
    if year:
        out["year three years early"] = {**item, "issued": {"date-parts": [[year - 3]]}}
    deposit = written.deposit_year
    if deposit and written.record_years and not written.record.is_preprint \
            and all(abs(deposit - y) > 1 for y in written.record_years):
        out["deposit year"] = {**item, "issued": {"date-parts": [[deposit]]}}
    if item.get("URL", "").startswith("https://arxiv.org/abs/"):
        out["invented arXiv id"] = {**item, "URL": item["URL"][:-4] + "9999",
                                    "container-title": "arXiv preprint"}
    if item.get("DOI") and not item["DOI"].lower().startswith("10.48550/"):
        # (no arXiv body is served, so an invented arXiv DOI could only be unreachable here)
        out["invented DOI"] = {**item, "DOI": item["DOI"] + "x9q"}
    return out


class _Served:
    """A source that serves the parsed records by DOI and as title-search candidates."""

    def __init__(self, records: list[Record], named: frozenset[str] = frozenset()) -> None:
        self.by = {r.doi: r for r in records if r.doi}
        self.arxiv_ids = {r.arxiv_id: r for r in records if r.arxiv_id}
        self.named = named
        self.titles = {" ".join((r.title or "").split()).casefold(): r for r in records}

    async def by_doi(self, doi: str) -> Found | NotFound:
        record = self.by.get(doi.lower())
        return Found((record,)) if record else NotFound("no record")

    async def search_title(self, title: str, *_: Any) -> Found:
        hit = self.titles.get(" ".join(title.split()).casefold())
        return Found((hit,) if hit else ())

    async def by_arxiv_id(self, arxiv_id: str) -> Found | NotFound | Unreachable:
        """An arXiv id the corpus has no feed for, but another record names, is not known to
        be missing: unreachable, never a refutation."""
        bare = re.sub(r"v\d+$", "", arxiv_id)
        if bare in self.arxiv_ids:
            return Found((self.arxiv_ids[bare],))
        return Unreachable("no arXiv body recorded") if bare in self.named else NotFound()


class _Registry:
    """doi.org: Crossref prefixes unless DataCite serves the DOI; Handle knows served DOIs."""

    def __init__(self, known: set[str], datacite_prefixes: set[str]) -> None:
        self.known, self.datacite_prefixes = known, datacite_prefixes

    async def agency(self, prefix: str) -> Agency:
        return Agency("DataCite" if prefix in self.datacite_prefixes else "Crossref")

    async def handle(self, doi: str) -> Handle:
        return Handle(doi.lower() in self.known)

    async def csl(self, doi: str) -> Unreachable:
        return Unreachable("not served")


@dataclass(frozen=True)
class _Sources:
    crossref: Any
    openalex: Any
    semantic_scholar: Any
    arxiv: Any
    datacite: Any
    doi_registry: Any
    pubmed: Any
    dblp: Any


_BIBTEX_TYPES = {"article-journal": ("article", "journal"),
                 "paper-conference": ("inproceedings", "booktitle"),
                 "chapter": ("incollection", "booktitle"), "book": ("book", None),
                 "thesis": ("phdthesis", None), "report": ("techreport", None)}
_BIBTEX_SPECIAL = re.compile(r"([&%#_$])")


def _braced(text: str) -> str:
    """Text as a BibTeX author types it: LaTeX specials escaped, a title's math kept."""
    if "$" in text and "\\" in text:
        return text  # arXiv titles are LaTeX already
    return _BIBTEX_SPECIAL.sub(r"\\\1", text.replace("{", "").replace("}", ""))


def _garbled(name: dict) -> bool:
    """A record name that holds several people (``ESCHARD, REMI, GUY DESAUBLIAUX, RUE``,
    a given name ``C. SOTELO-MONTES† and I. K.``): no BibTeX spelling of it is the author's."""
    family, given = name.get("family", ""), name.get("given", "")
    return family.count(",") > 1 or " and " in f" {family} {given} "


def _bibtex(item: dict) -> str:
    """A CSL item as the BibTeX entry its author would have written instead."""
    kind, venue_field = _BIBTEX_TYPES.get(item["type"], ("misc", "howpublished"))
    names = [f"{{{_braced(a['literal'])}}}" if "literal" in a
             else f"{_braced(a['family'])}, {_braced(a['given'])}".rstrip(", ")
             for a in item.get("author", [])]
    fields = {"title": f"{{{_braced(item['title'])}}}", "author": " and ".join(names)}
    if item.get("issued"):
        fields["year"] = str(item["issued"]["date-parts"][0][0])
    if item.get("container-title") and venue_field:
        fields[venue_field] = _braced(item["container-title"])
    for csl, bib in (("volume", "volume"), ("page", "pages"), ("DOI", "doi"), ("URL", "url")):
        if item.get(csl):
            fields[bib] = _braced(item[csl]) if bib not in ("doi", "url") else item[csl]
    body = "".join(f"  {k} = {{{v}}},\n" for k, v in fields.items() if v)
    return f"@{kind}{{{item['id']},\n{body}}}\n"


SERVICES = ("crossref", "openalex", "datacite", "arxiv", "semantic_scholar")


@dataclass
class Graded:
    written: list[Written]
    priorities: dict[str, set[str]]
    """Entry id → the priorities of its findings."""
    codes: dict[str, set[str]]
    sources: _Sources


def _judged(entries: list[dict], sources: _Sources, *, bibtex: bool = False
            ) -> tuple[dict, dict]:
    """(entry id → finding priorities, entry id → P0/P1 finding lines) for CSL-JSON items,
    written as CSL-JSON or, with ``bibtex``, as BibTeX."""
    if bibtex:
        bib = parse_bibtex("file:///real.bib", "".join(map(_bibtex, entries)))
    else:
        bib = parse_csl_json("file:///real.json", json.dumps(entries))
    assert bib is not None and not bib.problems, bib.problems[:3]
    ctx = Context(sources=sources, today=date.today(), arxiv_recheck_delay=0)

    async def run() -> list:
        return await asyncio.gather(*(resolve_reference(ref, ctx) for ref in bib.references))

    priorities, codes = {}, {}
    for ref, resolution in zip(bib.references, asyncio.run(run()), strict=True):
        judgement = judge(ref, resolution)
        priorities[ref.key] = {f.priority for f in judgement.findings}
        codes[ref.key] = {f"{f.priority} {f.reason_code} {f.field or ''}: {f.message}"
                          for f in judgement.findings if f.priority in ("P0", "P1")
                          or f.reason_code == "VENUE_UNCONFIRMED"}
    return priorities, codes


def _written() -> list[Written]:
    """Every titled work as the author cites it, keyed by service and identifier."""
    written: list[Written] = []
    for service, raw, record, write in _works():
        made = write(raw)
        if made is None:
            continue
        item, deposit, years = made
        ident = record.doi or record.arxiv_id or record.source_id
        w = Written(f"{service}:{ident}", service, record, item, deposit, years)
        w.variants = _variants(w)
        written.append(w)
    return written


WRITTEN = _written()
"""Parsed once, at collection: each work is one test of the correct entry."""


def _grade(written: list[Written] = WRITTEN) -> Graded:
    entries = []
    for w in written:
        entries.append({"id": w.key, **w.item})
        entries += [{"id": f"{w.key}~{name}", **v} for name, v in w.variants.items()]
    records = {s: [w.record for w in written if w.service == s] for s in SERVICES}
    known = {r.doi for rs in records.values() for r in rs if r.doi}
    named = frozenset(r.arxiv_id for rs in records.values() for r in rs if r.arxiv_id)
    sources = _Sources(
        crossref=_Served(records["crossref"]), openalex=_Served(records["openalex"]),
        semantic_scholar=_Served(records["semantic_scholar"]),
        arxiv=_Served(records["arxiv"], named), datacite=_Served(records["datacite"]),
        doi_registry=_Registry(known, {r.doi.split("/")[0] for r in records["datacite"]}),
        pubmed=_Served([]), dblp=_Served([]),
    )
    return Graded(written, *_judged(entries, sources), sources)


@pytest.fixture(scope="module")
def graded() -> Graded:
    return _grade()


def test_the_corpus_is_large_and_covers_every_recorded_service(graded):
    by_service = {s: sum(w.service == s for w in graded.written) for s in SERVICES}
    assert sum(by_service.values()) >= 500 and all(by_service.values()), by_service


@pytest.mark.parametrize("work", WRITTEN, ids=[w.key for w in WRITTEN])
def test_a_correct_entry_gets_no_p0_or_p1(graded, work):
    assert not graded.priorities[work.key] & {"P0", "P1"}, (
        work.item["title"], sorted(graded.codes[work.key]))


VARIANTS = ("missing co-author", "changed title word", "year three years early", "deposit year",
            "invented DOI", "invented arXiv id")


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_wrong_variant_is_caught(graded, variant):
    tried = [w for w in graded.written if variant in w.variants]
    missed = [(w.key, w.item["title"], graded.priorities[f"{w.key}~{variant}"]) for w in tried
              if not graded.priorities[f"{w.key}~{variant}"] & {"P0", "P1"}]
    assert tried and not missed, f"{variant}: {len(missed)} of {len(tried)} missed: {missed[:20]}"


def test_a_journal_cited_for_a_work_known_only_as_a_preprint_is_a_p2_note(graded):
    """A posted-content record (a preprint server's DOI) cannot confirm or contradict the
    journal a citation names: VENUE_UNCONFIRMED (P2), never a P1 (DESIGN.md §4)."""
    preprints = [w for w in graded.written if w.record.is_preprint and w.service == "crossref"
                 and not graded.priorities[w.key] & {"P0", "P1"}]
    assert preprints
    entries = [{**w.item, "id": w.key, "type": "article-journal",
                "container-title": "Journal of Made-up Results"} for w in preprints]
    priorities, codes = _judged(entries, graded.sources)
    for w in preprints:
        assert priorities[w.key] == {"P2"}, codes[w.key]
        assert any("VENUE_UNCONFIRMED venue" in c and "only a preprint is known" in c
                   for c in codes[w.key])


def _crossref_item(name: str, doi: str) -> dict:
    body = json.loads((REAL / "crossref" / name).read_text())
    return next(w for w in body["message"]["items"] if w["DOI"].lower() == doi)


def test_entities_in_a_venue_are_decoded_as_in_a_title():
    """Crossref sends ``Trends in Ecology &amp; Evolution`` as the container title."""
    work = _crossref_item("serrano__test_works_sort__0bd8765b__479db28c89.json",
                          "10.1016/j.tree.2014.01.007")
    assert "&amp;" in work["container-title"][0]
    assert crossref.parse_work(work).venue == "Trends in Ecology & Evolution"


def test_inline_markup_is_dropped_without_splitting_the_word_it_sits_in():
    """``<i>Ostα</i><sup><i>−/−</i></sup>mice``: a reader sees Ostα−/−mice."""
    work = _crossref_item(
        "serrano__test_works_filter_handler_different_filters__8bae1954__5ca2456e74.json",
        "10.14814/phy2.12263")
    assert crossref.parse_work(work).title == (
        "Ost\u03b1\u2212/\u2212mice are not protected from western diet-induced weight gain")


# --- Classes seen in the recorded bodies of fixtures/api (the team's earlier corpus) ----------

API = REAL.parent / "api"


def _api(path: str) -> dict:
    return json.loads((API / path).read_text())


def _cited(record: Record, **fields: Any) -> dict[str, str]:
    """The accuracy conflicts of a citation of ``record`` with ``fields`` (field → reason)."""
    work = Work(**{"title": record.title, "authors": record.authors, **fields})
    return {c.field: c.reason for c in accuracy_conflicts(work, "article", (record,))}


def test_a_buddhist_era_year_is_the_same_year_as_its_gregorian_one():
    """A Thai thesis whose DataCite record gives publicationYear 2549 (2006)."""
    record = datacite.parse_doi(_api("datacite/10.14457_kmitl.res.2006.17.json"))
    assert record.years == (2549,)
    for year in (2006, 2549, 2007):
        assert "year" not in _cited(record, year=year), year
    assert _cited(record, year=2010)["year"] == "METADATA_CONFLICT"
    assert _cited(record, year=2553)["year"] == "METADATA_CONFLICT"  # 2010 in the Thai era


def test_several_people_in_one_datacite_creator_are_several_authors():
    """Dataverse and UCSF deposits put every author in one ``name``, split by semicolons,
    sometimes with affiliations in brackets."""
    record = datacite.parse_doi(_api("datacite/10.7272_q63x84km.json"))
    assert [p.family for p in record.authors] == [
        "Cardenas", "Samuelson", "Lenoci", "Studholme", "Neylan", "Marmar", "Schuff", "Weiner"]
    assert "author" not in _cited(record)
    assert _cited(record, authors=record.authors[:2])["author"] == "METADATA_CONFLICT"
    record = datacite.parse_doi(_api("datacite/10.7910_dvn_eqtqyo.json"))
    assert [(p.family, p.given) for p in record.authors] == [
        ("Enos", "Ryan"), ("Fowler", "Anthony"), ("Vavreck", "Lynn")]


def test_cjk_display_names_are_family_name_first():
    """OpenAlex writes Japanese authors' names in kanji, family name first: 宮地 元彦."""
    record = openalex.parse_work(_api("openalex/10.7600_jspfsm.56.60.json"))
    assert [(p.family, p.given) for p in record.authors] == [("宮地", "元彦"), ("山元", "健太")]
    assert "author" not in _cited(record, authors=(Person("宮地", "元彦"), Person("山元", "健太")))


@pytest.mark.parametrize(("name", "family"), [
    ("С. В. Кондратенко", "Кондратенко"),  # as OpenAlex shows it (fixtures/real/openalex)
    ("Кондратенко Сергей Владимирович", "Кондратенко"),  # Family Given Patronymic
    ("Сергей Владимирович Кондратенко", "Кондратенко"),
    ("Роман Аркадьевич Абрамович", "Абрамович"),  # a family name that looks like a patronymic
    ("Jan van der Berg", "van der Berg"),
    ("The Anh Nguyen", "Nguyen"),
])
def test_display_name_order(name, family):
    assert person_from_name(name).family == family


def test_a_consortium_named_like_a_person_is_an_organization():
    """figshare's DataCite record lists ``ODIN Consortium`` as a creator without a name type;
    OpenAlex and arXiv give consortia as display names too."""
    body = json.loads((REAL / "datacite" /
                       "volpino__executes_perform__68a9ae30__1ddec48cb5.json").read_text())
    first = datacite.parse_doi(body).authors[0]
    assert (first.family, first.literal) == ("ODIN Consortium", True)
    for name in ("The ATLAS Collaboration", "MoTrPAC Study Group"):
        assert person_from_name(name).literal, name


def test_a_name_in_another_script_is_not_compared_with_its_transliteration():
    """OpenAlex lists the third author of W4387635986 in Cyrillic (С. В. Кондратенко); a
    citation that writes Kondratenko names the same person and must not conflict."""
    body = json.loads((REAL / "openalex" / "peneira__works__9991d93a__4bb50c1342.json")
                      .read_text())
    work = next(w for w in body["results"] if w["id"].endswith("W4387635986"))
    record = openalex.parse_work(work)
    cited = (Person("Andreychenko", "Anna"), Person("Korzhuk", "Viktoriia"),
             Person("Kondratenko", "S. V."), Person("Cheraneva", "Polina"))
    assert "author" not in _cited(record, authors=cited)
    wrong = (*cited[:2], Person("Kovalenko", "S. V."), cited[3])
    assert "author" not in _cited(record, authors=wrong)  # not comparable: no verdict either way
    assert _cited(record, authors=(cited[0], cited[1], cited[3]))["author"] == "METADATA_CONFLICT"


def test_the_same_correct_entries_written_in_bibtex_get_no_p0_or_p1(graded):
    """LaTeX escapes (``Trends in Ecology \\& Evolution``), braces and ``--`` page ranges
    read as the CSL-JSON entries do."""
    entries = [{"id": f"w{n}", **w.item} for n, w in enumerate(graded.written)
               if not any(_garbled(a) for a in w.item["author"])]
    priorities, codes = _judged(entries, graded.sources, bibtex=True)
    flagged = {graded.written[int(k[1:])].key: sorted(codes[k])
               for k, p in priorities.items() if p & {"P0", "P1"}}
    assert not flagged, f"{len(flagged)} of {len(entries)}: {flagged}"


# --- Semantic Scholar bodies through the loopback server and the real client ------------------

S2_PAPERS = [p for _, body in _bodies("semantic_scholar") for p in _papers(body)]


async def test_semantic_scholar_papers_read_the_same_through_the_client(api_server, sources):
    """Each recorded paper served at its single lookup path (``/paper/DOI:…``): the batch the
    client sends (``POST /paper/batch``, assembled from those bodies as the API answers it)
    and a single lookup give the records the corpus test grades, in the order asked."""
    by_doi = {p["externalIds"]["DOI"]: p for p in S2_PAPERS if (p.get("externalIds") or {})
              .get("DOI")}
    for doi, paper in by_doi.items():
        api_server.add_json("semantic_scholar", f"/paper/DOI:{doi}", paper,
                            query={"fields": semantic_scholar.FIELDS})
    ids = [f"DOI:{doi}" for doi in by_doi]
    answers = await sources.s2.by_ids(ids[:SEMANTIC_SCHOLAR_BATCH])
    assert not isinstance(answers, Unreachable), answers
    for paper_id, answer in answers.items():
        assert isinstance(answer, Found), paper_id
        assert answer.records == (semantic_scholar.parse_paper(by_doi[paper_id[4:]]),)
    doi, paper = next(iter(by_doi.items()))
    single = await sources.s2.by_doi(doi.upper())
    assert isinstance(single, Found) and single.records[0].source_id == paper["paperId"]
    assert api_server.count("semantic_scholar", "/paper/batch") == 1


# --- Names and titles of real records, cited the way their authors' conventions write them ----


def _crossref_record(name: str, doi: str) -> Record:
    return crossref.parse_work(_crossref_item(name, doi))


def _initials(given: str) -> str:
    return " ".join(f"{word[0]}." for word in given.replace(".", " ").split())


def test_russian_given_names_with_patronymics_are_cited_by_their_initials():
    """Crossref gives ``Kirill Sergeevich`` ``Golokhvast`` (given name and patronymic); an
    author writes ``Golokhvast, K. S.``, and in Cyrillic ``Латышева, А. Н.`` for
    ``Александра Николаевна`` ``Латышева``."""
    for name, doi in (("serrano__test_prefixes_filter_handler__737b9f31__492b98b610.json",
                       "10.1016/j.bse.2019.01.007"),
                      ("serrano__test_works_sample__0ffd7fcf__e65cca0018.json",
                       "10.17323/727-0634-2017-15-4-660-668")):
        record = _crossref_record(name, doi)
        assert any(len(p.given.split()) == 2 for p in record.authors), doi
        cited = tuple(Person(p.family, _initials(p.given)) for p in record.authors)
        assert "author" not in _cited(record, authors=cited), doi
        if len(cited) > 1:
            assert _cited(record, authors=cited[:-1])["author"] == "METADATA_CONFLICT"


def test_a_display_name_with_a_patronymic_in_the_middle_is_given_patronymic_family():
    """OpenAlex's ``Svetlana Vladimirovna Kurisheva``: cited ``Kurisheva, S. V.``."""
    body = json.loads((REAL / "openalex" / "peneira__works__9991d93a__4bb50c1342.json")
                      .read_text())
    work = next(w for w in body["results"] if w["id"].endswith("W4206064211"))
    record = openalex.parse_work(work)
    names = [a["author"]["display_name"] for a in work["authorships"]]
    assert "Svetlana Vladimirovna Kurisheva" in names
    cited = tuple(Person(p.family, _initials(p.given)) for p in record.authors)
    assert "Kurisheva" in [p.family for p in cited]
    assert "author" not in _cited(record, authors=cited)


def test_a_spanish_author_is_cited_by_the_first_of_two_surnames():
    """Crossref's ``Honorio Coronado``, ``Silva Espejo``, ``Mendoza Bautista`` and ``Parada
    Gutierrez`` (10.1111/geb.12803), cited by their first surname as Spanish usage allows,
    name the same people; another family name still conflicts."""
    record = _crossref_record("serrano__test_works_sort__737b9f31__5e27c10a03.json",
                              "10.1111/geb.12803")
    double = {"Honorio Coronado", "Silva Espejo", "Mendoza Bautista", "Parada Gutierrez"}
    assert double <= {p.family for p in record.authors}
    cited = tuple(Person(p.family.split()[0] if p.family in double else p.family, p.given)
                  for p in record.authors)
    assert "author" not in _cited(record, authors=cited)
    both = tuple(Person(p.family, p.given) for p in record.authors)
    assert "author" not in _cited(record, authors=both)
    wrong = tuple(Person("Coronel", p.given) if p.family == "Honorio" else p
                  for p in cited)
    assert _cited(record, authors=wrong)["author"] == "METADATA_CONFLICT"


def test_a_display_name_with_two_surnames_is_cited_by_the_first():
    """Semantic Scholar's ``Perla Itzel Alcántara Llanas`` reads as family ``Llanas``; a
    citation ``Alcántara, P. I.`` (or ``Alcántara Llanas``) names her, ``Itzel`` does not."""
    paper = next(p for p in S2_PAPERS if any(
        a.get("name") == "Perla Itzel Alcántara Llanas" for a in p.get("authors") or []))
    record = semantic_scholar.parse_paper(paper)
    at = next(i for i, p in enumerate(record.authors) if p.family == "Llanas")
    for family in ("Alcántara", "Alcántara Llanas", "Llanas"):
        cited = tuple(Person(family, "P. I.") if i == at else p
                      for i, p in enumerate(record.authors))
        assert "author" not in _cited(record, authors=cited), family
    cited = tuple(Person("Itzel", "P.") if i == at else p for i, p in enumerate(record.authors))
    assert _cited(record, authors=cited)["author"] == "METADATA_CONFLICT"


def test_escaped_and_inline_markup_in_real_titles_and_subtitles():
    """SciELO deposits ``… a partir de &lt;i&gt;O Typhis&lt;/i&gt; de Frei Caneca`` (escaped
    inline markup in a Crossref title); Wiley a subtitle with ``<scp>L</scp>`` in it. Each
    reads as a reader sees it, and the title as cited matches it."""
    record = crossref.parse_work(_api("crossref/10.1590_scielopreprints.15155.json")["message"])
    assert record.title.endswith("a partir de O Typhis de Frei Caneca")
    assert "title" not in _cited(record)
    work = _crossref_item(
        "serrano__test_works_filter_handler_different_filters__8bae1954__5ca2456e74.json",
        "10.1002/kin.20537")
    assert "<scp>" in work["subtitle"][0]
    record = crossref.parse_work(work)
    assert not any("<" in t for t in record.titles)
    cited = ("Kinetics of the substitution reactions of some Pt(II) complexes with 5′-GMP and "
             "L-histidine")
    assert "title" not in _cited(record, title=cited)
