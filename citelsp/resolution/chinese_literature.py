"""Chinese-language literature (seed 001): ISTIC and CNKI DOIs, and PubMed coordinates.

Crossref is one registration agency, not the DOI system: most Chinese DOIs are ISTIC's or
CNKI's and no index covers them. An ISTIC DOI is checked by its CSL title over the allowlisted
HTTPS path, a CNKI DOI only for existence (its title is on an HTML page we do not scrape). A
reference without a DOI may still be found in PubMed by journal, volume and page, through an
offline bridge from the Chinese journal name to its NLM title abbreviation.

Negatives are strong and positives conservative: only a refuted DOI or two different Chinese
titles for one DOI are evidence ("false"). A PubMed hit is a candidate until its DOI gives the
cited Chinese title; a coordinate miss is a P1 item, never evidence, and every gap in our table
or in the coordinates is a P3 item, never suspicion. Outages are ``unreachable``, never a verdict.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from importlib import resources
from typing import Any, Literal, Protocol

from citelsp import links
from citelsp.documents.model import Work
from citelsp.documents.text import cn_titles_equal, has_han, normalize_cn_title
from citelsp.resolution.asking import Asked
from citelsp.resolution.doi_registry import DoiRegistryClient
from citelsp.resolution.identifiers import Identifier, ReferenceIds, doi_prefix
from citelsp.resolution.outcome import (
    Agency,
    Answer,
    Found,
    Handle,
    NotFound,
    Outcome,
    Record,
    Unreachable,
)
from citelsp.resolution.pubmed import (
    PubMedClient,
    SearchResult,
    author_year_term,
    coordinate_term,
    journal_term,
)
from citelsp.resolution.records import first_page

RESOLVER = "chinese_literature"
CHINESE_AGENCIES = frozenset({"istic", "cnki"})
CHINESE_LANGUAGES = frozenset({"zh", "chi", "zho", "chinese"})
PUBMED = "pubmed"
"""Cache namespace of the PubMed answers."""
COVERAGE_RETMAX = 1
"""The coverage probe needs the count only; one PMID shows the journal has records."""
COORDINATE_RETMAX = 2
"""Zero, one or several: a second id already makes the coordinates ambiguous."""
BRIDGE_FILE = "chinese_journals.json"

TitleBinding = Literal["match", "mismatch", "unverifiable"]


class Run(Protocol):
    """What this resolver uses of one reference's resolution (``resolve._Run``)."""

    work: Work
    ids: ReferenceIds
    agency: str | None
    authoritative: str | None
    outcomes: dict[str, Outcome]

    async def ask(self, resolver: str, form: str, query: str,
                  call: Callable[[], Awaitable[Answer]]) -> Asked: ...

    def set(self, resolver: str, status: str, queried_by: str | None, summary: str,
            asked: Asked | None = None, **extra: Any) -> Outcome: ...

    def skip(self, resolver: str, why: str, reason: str | None = None,
             searchable: bool = False) -> None: ...

    def offline_skip(self, resolver: str) -> None: ...

    def matched(self) -> Outcome | None: ...


# --- the offline journal bridge (seed 001 §4a) ------------------------------------------------


@dataclass(frozen=True)
class Journal:
    """One bridge row; ``nlm_ta`` is None for a catalogued journal PubMed does not index."""

    name: str
    issn: str
    nlm_ta: str | None
    nlm_id: str | None = None


class JournalBridge:
    """Chinese journal name (or its ISSN, or its NLM abbreviation) → bridge row."""

    def __init__(self, journals: tuple[Journal, ...]) -> None:
        self.journals = journals
        self._by_name: dict[str, Journal] = {}
        self._by_issn: dict[str, Journal] = {}
        for j in journals:
            self._by_name[_journal_key(j.name)] = j
            if j.nlm_ta:
                self._by_name.setdefault(_journal_key(j.nlm_ta), j)
            self._by_issn[_issn(j.issn)] = j

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> JournalBridge:
        return cls(tuple(
            Journal(row["name"], row["issn"], row.get("nlm_ta"), row.get("nlm_id"))
            for row in data["journals"]
        ))

    def find(self, venue: str | None, issns: tuple[str, ...] = ()) -> Journal | None:
        """By the cited ISSN first (unambiguous), else by the journal name as cited."""
        for issn in issns:
            if (row := self._by_issn.get(_issn(issn))) is not None:
                return row
        return self._by_name.get(_journal_key(venue)) if venue else None


@lru_cache(maxsize=1)
def default_bridge() -> JournalBridge:
    """The packaged table (``citelsp/data/chinese_journals.json``)."""
    text = (resources.files("citelsp") / "data" / BRIDGE_FILE).read_text(encoding="utf-8")
    return JournalBridge.from_json(json.loads(text))


def _journal_key(name: str) -> str:
    """Chinese-aware title folding, then dots and case (``Zhonghua Yi Xue Za Zhi.``)."""
    return " ".join(normalize_cn_title(name).replace(".", " ").split()).casefold()


def _issn(value: str) -> str:
    digits = re.sub(r"[^0-9X]", "", value.upper())
    return f"{digits[:4]}-{digits[4:]}" if len(digits) == 8 else digits


# --- pure rules -------------------------------------------------------------------------------


def is_applicable(work: Work, agency: str | None = None) -> bool:
    """Stage 0, local signals only: Han characters in title or journal, or a Chinese language
    tag. A DOI's agency, once routing has learned it, makes an ISTIC/CNKI DOI applicable too."""
    language = (work.language or "").strip().casefold()
    return (has_han(work.title or "") or has_han(work.venue or "")
            or language in CHINESE_LANGUAGES or language.startswith("zh-")
            or (agency or "").casefold() in CHINESE_AGENCIES)


def bind_title(cited: str | None, record: Record) -> tuple[TitleBinding, str | None]:
    """Seed 001's title rule, and the record title it was decided on.

    Equal after Chinese-aware normalization → match. Different, with both sides in Han →
    mismatch. Anything else (no title on either side, different scripts, romanization,
    Latin against Latin) → unverifiable: there is no translation oracle, and a fuzzy ratio
    separates nothing on Chinese titles, so it plays no part.
    """
    variants = [t for t in dict.fromkeys((record.title, *record.titles)) if t]
    cited = (cited or "").strip()
    if not cited or not variants:
        return "unverifiable", variants[0] if variants else None
    if (equal := next((v for v in variants if cn_titles_equal(cited, v)), None)) is not None:
        return "match", equal
    han = [v for v in variants if has_han(v)]
    if has_han(cited) and han:
        return "mismatch", han[0]
    return "unverifiable", variants[0]


@dataclass(frozen=True)
class Coordinates:
    """One PubMed candidate query and how the summary names it."""

    term: str
    described: str


_PLAIN = re.compile(r"[A-Za-z0-9]+")
_ROMAN_NAME = re.compile(r"[A-Za-z][A-Za-z' -]*")


def coordinates(work: Work, journal_ta: str) -> Coordinates | None:
    """Volume and first page; first author (romanized) and year only when those are absent.

    PubMed's field syntax takes plain tokens, and its author index is romanized: a value
    that is neither is as good as absent.
    """
    volume = (work.volume or "").strip()
    page = (first_page(work.pages) or "").strip()
    if _PLAIN.fullmatch(volume) and _PLAIN.fullmatch(page):
        return Coordinates(coordinate_term(journal_ta, volume, page),
                           f"volume {volume}, first page {page}")
    author = work.authors[0] if work.authors else None
    family = author.family.strip() if author is not None and not author.literal else ""
    if work.year is None or not _ROMAN_NAME.fullmatch(family):
        return None
    given = author.given.strip() if author is not None else ""
    name = f"{family} {given[0].upper()}" if given[:1].isascii() and given[:1].isalpha() \
        else family
    return Coordinates(author_year_term(journal_ta, name, work.year),
                       f"first author {name}, {work.year}")


def structural_conflicts(work: Work, journal: Journal, record: Record) -> list[str]:
    """Where the PubMed candidate disagrees with the citation (the bridge row's ISSN stands in
    for an ISSN the citation lacks); a field missing on either side is not a conflict."""
    conflicts = []
    ours = {_issn(i) for i in work.issn or (journal.issn,)}
    theirs = {_issn(i) for i in record.issns}
    if theirs and not theirs & ours:
        conflicts.append(f"ISSN {', '.join(sorted(ours))} vs {', '.join(record.issns)}")
    if work.year is not None and record.years and work.year not in record.years:
        conflicts.append(f"year {work.year} vs {', '.join(map(str, record.years))}")
    if _differs(work.volume, record.volume):
        conflicts.append(f"volume {work.volume} vs {record.volume}")
    cited_page = first_page(work.pages)
    if _differs(cited_page, record.first_page):
        conflicts.append(f"first page {cited_page} vs {record.first_page}")
    return conflicts


def _differs(cited: str | None, found: str | None) -> bool:
    a, b = (cited or "").strip().casefold(), (found or "").strip().casefold()
    return bool(a and b) and a != b


def _without_authors(record: Record) -> Record:
    """ISTIC's CSL often folds a whole name into ``given`` and mixes pinyin with Han: its
    authors are for display only (seed 001) and must not become author conflicts."""
    return replace(record, authors=())


def _quote(title: str | None) -> str:
    return f"“{title}”" if title else "a record without a title"


def _stubs(result: SearchResult) -> Found | NotFound:
    """An ESearch page as a cacheable answer: one bare record per PMID on the page."""
    if not result.ids:
        return NotFound(f"{PUBMED}: no records")
    return Found(tuple(
        Record(source=PUBMED, source_id=pmid, url=links.pubmed_url(pmid))
        for pmid in result.ids
    ))


# --- the resolver ------------------------------------------------------------------------------


class ChineseLiterature:
    """Seed 001's waterfall for one reference, reporting through ``run``.

    ``check_identifier`` runs with the other identifier lookups (before title searches);
    ``check_coordinates`` runs after them, only when no DOI was cited and nothing matched.
    """

    def __init__(self, run: Run, registry: DoiRegistryClient, pubmed: PubMedClient,
                 bridge: JournalBridge | None = None) -> None:
        self.run = run
        self.registry = registry
        self.pubmed = pubmed
        self.bridge = bridge or default_bridge()

    # -- Stage 0 and Stage 1: the cited DOI ---------------------------------------------------

    async def check_identifier(self) -> None:
        run = self.run
        if not is_applicable(run.work, run.agency):
            run.skip(RESOLVER, "not asked: not Chinese-language literature")
            return
        doi = run.ids.doi
        if doi is None:
            return
        agency = (run.agency or "").casefold()
        if run.agency is None:
            run.skip(RESOLVER, f"the registration agency of {doi.shown} could not be "
                     "determined: no coordinate fallback for a cited DOI",
                     reason="DOI_RA_UNRESOLVED")
        elif agency == "istic":
            await self._istic(doi)
        elif agency == "cnki":
            await self._existence(doi, "CNKI serves no machine-readable title")
        else:
            self._out_of_scope(doi)

    def _out_of_scope(self, doi: Identifier) -> None:
        """Another agency's DOI is its own resolver's business; a row only when no identifier
        lookup (its own resolver's included) matched it."""
        run = self.run
        if (matched := run.matched()) is not None:
            run.skip(RESOLVER, f"not asked: {run.agency} DOI, matched by {matched.resolver}")
            return
        run.skip(RESOLVER, f"{run.agency} DOI {doi.shown}: outside ISTIC and CNKI, and its "
                 "own resolver did not match it; no coordinate fallback for a cited DOI",
                 reason="DOI_RA_OUT_OF_SCOPE")

    async def _istic(self, doi: Identifier) -> None:
        run = self.run
        csl = await run.ask("doi_registry", "csl", doi.value, lambda: self.registry.csl(doi.value))
        answer = csl.answer
        if answer is None:
            run.offline_skip(RESOLVER)
        elif isinstance(answer, Unreachable):
            run.set(RESOLVER, "unreachable", None,
                    f"doi.org content negotiation for {doi.shown} failed: {answer.reason}", csl)
        elif isinstance(answer, Found) and answer.records:
            self._judge_istic(doi, answer.records[0], csl)
        else:
            await self._existence(doi, "doi.org has no CSL record for it")

    def _judge_istic(self, doi: Identifier, record: Record, asked: Asked) -> None:
        binding, found = bind_title(self.run.work.title, record)
        url = links.doi_url(doi.value)
        shown = _without_authors(record)
        if binding == "match":
            self.run.set(RESOLVER, "matched", "id",
                         f"ISTIC DOI {doi.shown} → {_quote(found)} (CSL title equal to the "
                         "cited title)", asked, record=shown, url=url)
        elif binding == "mismatch":
            self.run.set(RESOLVER, "unmatched", "id",
                         f"DOI {doi.shown} names another work: ISTIC's record has "
                         f"{_quote(found)}", asked, record=shown, reason="DOI_TITLE_MISMATCH",
                         refutes_identifier=True, url=url)
        else:
            self.run.set(RESOLVER, "unmatched", "title",
                         f"ISTIC DOI {doi.shown} → {_quote(found)}, which cannot be compared "
                         "with the cited title (a title is missing or the scripts differ)",
                         asked, record=shown, reason="DOI_EXISTS_TITLE_UNVERIFIABLE", url=url)

    async def _existence(self, doi: Identifier, why_no_title: str) -> None:
        """The Handle System decides existence: 100 refutes (no wildcard on these prefixes),
        1 leaves the title to a human."""
        run = self.run
        handle = await run.ask("doi_registry", "handle", doi.value,
                               lambda: self.registry.handle(doi.value))
        answer = handle.answer
        url = links.doi_url(doi.value)
        if answer is None:
            run.offline_skip(RESOLVER)
        elif isinstance(answer, Handle) and not answer.exists:
            run.set(RESOLVER, "unmatched", "id",
                    f"DOI {doi.shown} does not exist: the Handle System answers 100 "
                    "(no such handle)", handle, reason="DOI_REFUTED", refutes_identifier=True,
                    url=url)
        elif isinstance(answer, Handle):
            run.set(RESOLVER, "unmatched", "title",
                    f"{doi.shown} exists ({run.agency}, Handle System) but {why_no_title}: "
                    "a human must compare the title", handle,
                    reason="DOI_EXISTS_TITLE_UNVERIFIABLE", url=url)
        else:
            reason = answer.reason if isinstance(answer, Unreachable) else "no usable answer"
            run.set(RESOLVER, "unreachable", None, f"Handle System unreachable: {reason}",
                    handle)

    # -- Stage 2: PubMed coordinates for a reference without a DOI ----------------------------

    async def check_coordinates(self) -> None:
        run = self.run
        if RESOLVER in run.outcomes or run.ids.doi is not None or run.matched() is not None:
            return
        work = run.work
        if not work.venue and not work.issn:
            run.skip(RESOLVER, "no DOI and no journal: nothing to look up in PubMed",
                     reason="INSUFFICIENT_PUBMED_COORDINATES")
            return
        journal = self.bridge.find(work.venue, work.issn)
        if journal is None:
            run.skip(RESOLVER, f"no DOI, and the journal {_quote(work.venue)} is not in the "
                     "ISSN bridge table: PubMed not asked", reason="NO_ISSN_MAPPING")
            return
        if journal.nlm_ta is None:
            run.skip(RESOLVER, f"{journal.name} (ISSN {journal.issn}) has no MEDLINE "
                     "abbreviation: PubMed does not index it", reason="JOURNAL_NOT_INDEXED")
            return
        query = coordinates(work, journal.nlm_ta)
        if query is None:
            run.skip(RESOLVER, f"{journal.name}: neither volume and first page nor a romanized "
                     "first author and year to look up in PubMed",
                     reason="INSUFFICIENT_PUBMED_COORDINATES")
            return
        if not self.pubmed.has_email:
            run.skip(RESOLVER, "PubMed not asked: no NCBI email configured",
                     reason="NCBI_EMAIL_MISSING")
            return
        if await self._indexed(journal, journal.nlm_ta):
            await self._coordinates(journal, query)

    async def _indexed(self, journal: Journal, ta: str) -> bool:
        """Coverage is "PubMed has ≥ 1 record of the journal", not "the NLM Catalog lists it":
        a miss against an unindexed journal would say nothing."""
        run = self.run
        term = journal_term(ta)
        asked = await run.ask(PUBMED, "journal", ta, lambda: self._search(term, COVERAGE_RETMAX))
        answer = asked.answer
        if answer is None:
            run.offline_skip(RESOLVER)
        elif isinstance(answer, Unreachable):
            run.set(RESOLVER, "unreachable", None, f"PubMed unreachable: {answer.reason}", asked)
        elif isinstance(answer, NotFound):
            run.skip(RESOLVER, f"{journal.name} ({ta}): PubMed has no records of it",
                     reason="JOURNAL_NOT_INDEXED")
        else:
            return True
        return False

    async def _coordinates(self, journal: Journal, query: Coordinates) -> None:
        """Exactly one query: never author and year after a zero or ambiguous volume/page
        answer, which could wash a wrong cited page into a match."""
        run = self.run
        asked = await run.ask(PUBMED, "coordinates", query.term,
                              lambda: self._search(query.term, COORDINATE_RETMAX))
        answer = asked.answer
        url = links.pubmed_search_url(query.term)
        where = f"{journal.nlm_ta}, {query.described}"
        if answer is None:
            run.offline_skip(RESOLVER)
        elif not isinstance(answer, Found | NotFound):
            why = answer.reason if isinstance(answer, Unreachable) else "unexpected answer"
            run.set(RESOLVER, "unreachable", None, f"PubMed unreachable: {why}", asked)
        elif isinstance(answer, NotFound) or not answer.records:
            run.set(RESOLVER, "unmatched", "title",
                    f"PubMed indexes {journal.nlm_ta} but has no record at {query.described} "
                    "(not evidence on its own)", asked,
                    reason="PUBMED_INDEXED_BUT_COORDINATE_MISS", url=url)
        elif len(answer.records) > 1:
            pmids = ", ".join(r.source_id or "?" for r in answer.records)
            run.set(RESOLVER, "unmatched", "title",
                    f"several PubMed records at {where} (PMID {pmids}, …): none is picked",
                    asked, reason="PUBMED_COORDINATE_AMBIGUOUS", url=url)
        else:
            await self._candidate(journal, answer.records[0].source_id or "", where)

    async def _candidate(self, journal: Journal, pmid: str, where: str) -> None:
        """A unique hit is only a candidate: PubMed's title of a Chinese article is an English
        shadow. Its DOI must route to ISTIC and give the cited Chinese title."""
        run = self.run
        asked = await run.ask(PUBMED, "pmid", pmid, lambda: self.pubmed.article(pmid))
        answer = asked.answer
        if answer is None:
            run.offline_skip(RESOLVER)
            return
        if not (isinstance(answer, Found) and answer.records):
            why = answer.reason if isinstance(answer, Unreachable) else \
                f"ESearch listed PMID {pmid} but ESummary has no record of it"
            run.set(RESOLVER, "unreachable", None, f"PubMed unreachable: {why}", asked)
            return
        record = answer.records[0]
        unbound = _Unbound(run, pmid, where, record)
        if conflicts := structural_conflicts(run.work, journal, record):
            return unbound.report("it conflicts with the citation: " + "; ".join(conflicts),
                                  asked)
        if record.doi is None:
            return unbound.report("it has no DOI to bind the cited Chinese title", asked)
        await self._bind_doi(unbound, record.doi)
        return None

    async def _bind_doi(self, unbound: _Unbound, doi: str) -> None:
        run = self.run
        prefix = doi_prefix(doi)
        routed = await run.ask("doi_registry", "agency", prefix,
                               lambda: self.registry.agency(prefix))
        agency = routed.answer
        if agency is None:
            return run.offline_skip(RESOLVER)
        if not isinstance(agency, Agency):
            return unbound.unreachable(f"doi.org agency lookup for {prefix} failed: "
                                       f"{getattr(agency, 'reason', 'no usable answer')}", routed)
        name = (agency.name or "").casefold()
        if name != "istic":
            what = "existence only, no title" if name == "cnki" else "not a Chinese title source"
            who = agency.name or "no known agency"
            return unbound.report(f"its DOI {doi} is registered by {who} ({what})", routed)
        csl = await run.ask("doi_registry", "csl", doi, lambda: self.registry.csl(doi))
        answer = csl.answer
        if answer is None:
            return run.offline_skip(RESOLVER)
        if isinstance(answer, Unreachable):
            return unbound.unreachable(f"doi.org content negotiation for {doi} failed: "
                                       f"{answer.reason}", csl)
        if not (isinstance(answer, Found) and answer.records):
            return unbound.report(f"doi.org has no CSL record for its DOI {doi}", csl)
        binding, found = bind_title(run.work.title, answer.records[0])
        if binding != "match":
            return unbound.report(f"its DOI {doi} (ISTIC) has {_quote(found)}, which does "
                                  "not confirm the cited title", csl)
        run.set(RESOLVER, "matched", "title",
                f"PubMed PMID {unbound.pmid} at {unbound.where}; its DOI {doi} (ISTIC) has "
                f"the cited Chinese title {_quote(found)}", csl,
                record=_without_authors(answer.records[0]), url=unbound.url)
        return None

    async def _search(self, term: str, retmax: int) -> Found | NotFound | Unreachable:
        result = await self.pubmed.esearch("pubmed", term, retmax)
        return result if isinstance(result, Unreachable) else _stubs(result)


@dataclass(frozen=True)
class _Unbound:
    """A unique PubMed hit that could not be bound to the cited title, and how to report it."""

    run: Run
    pmid: str
    where: str
    record: Record

    @property
    def url(self) -> str:
        return links.pubmed_url(self.pmid)

    def report(self, why: str, asked: Asked) -> None:
        self.run.set(RESOLVER, "unmatched", "title",
                     f"PubMed candidate PMID {self.pmid} at {self.where} "
                     f"({_quote(self.record.title)}), but {why}", asked, record=self.record,
                     reason="PUBMED_COORDINATE_CANDIDATE_UNVERIFIED", url=self.url)

    def unreachable(self, why: str, asked: Asked) -> None:
        self.run.set(RESOLVER, "unreachable", None,
                     f"PubMed candidate PMID {self.pmid} could not be checked: {why}", asked)
