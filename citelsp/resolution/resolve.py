"""One reference → one outcome per resolver: the request plan.

This module decides what to ask whom, and asks no more than a verdict needs (the rate limits
make requests the cost): each identifier goes to the source that registers it first (routed
by registration agency, batched across references by ``lookups``); once that source matches
it by identifier, with the title confirmed and the record feeding the accuracy checks, the
other sources are ``skipped`` ("not needed: matched by Crossref"). Otherwise the other
identifier sources are asked, the Handle System settles existence, and title searches run
when no identifier matched: Crossref and OpenAlex together, Semantic Scholar and DBLP only
when neither matched and no cited identifier is already refuted. ``triangulate`` asks every
source. Answers come through the cache; what they prove is recomputed every time.

Judged from stored answers alone (a cached reopen, ``--offline``, a reference the local index
matches), a reference walks only the steps reached: each step is a coroutine built when the
one before it did not decide, so the index (``from_index``) or the registering source's
stored record ends the plan at its first step. What remains is reading and judging those
answers, which the cache must not store (the decision is recomputed). Measured over 1,000
cached references: 152 ms, of which reading answers 88 ms, judging 27 ms, the plan's own
bookkeeping (the eight outcome rows, routing) 45 ms.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import replace
from datetime import date
from typing import Any

from citelsp import links
from citelsp.documents.model import Reference, Work
from citelsp.documents.works import venue_key
from citelsp.index.adapter import asked as index_answer
from citelsp.resolution.arxiv import base_id
from citelsp.resolution.asking import Asked, Context, Resolution, ask
from citelsp.resolution.chinese_literature import ChineseLiterature
from citelsp.resolution.identifiers import (
    Identifier,
    agency_resolver,
    arxiv_from_doi,
    doi_prefix,
    identifiers_of,
)
from citelsp.resolution.matching import (
    IdJudgement,
    judge_identifier_record,
    judge_title_search,
    near_matches,
)
from citelsp.resolution.outcome import (
    Agency,
    Alias,
    Answer,
    Found,
    Handle,
    Malformed,
    NotFound,
    Outcome,
    Record,
    Unchecked,
    Unreachable,
    skipped,
)

RESOLVERS = (
    "crossref",
    "openalex",
    "semantic_scholar",
    "arxiv",
    "datacite",
    "doi_registry",
    "chinese_literature",
    "dblp",
)
TITLE_SEARCHERS = ("crossref", "openalex", "semantic_scholar", "dblp")
BROAD_SEARCHERS = ("crossref", "openalex")
"""Asked first for a title: fast, broad, and OpenAlex's search is metered (a daily budget).
Semantic Scholar and DBLP (free, but one request a second or two, and DBLP covers computer
science only) are asked only when neither found the exact title."""
LABELS = {
    "crossref": "Crossref",
    "openalex": "OpenAlex",
    "semantic_scholar": "Semantic Scholar",
    "arxiv": "arXiv",
    "datacite": "DataCite",
    "doi_registry": "doi.org",
    "chinese_literature": "Chinese-literature sources",
    "dblp": "DBLP",
}
INDEX_PREFERENCE = ("arxiv", "crossref", "datacite", "openalex", "dblp")
"""Which snapshot's record of a cited identifier is judged first: the registering source's."""


class _Run:
    """The state of resolving one reference."""

    def __init__(self, ref: Reference, ctx: Context) -> None:
        self.ref = ref
        self.ctx = ctx
        self.work: Work = ref.work
        self.ids = identifiers_of(ref, ctx.today)
        self.outcomes: dict[str, Outcome] = {}
        self.records: dict[str, Record] = {}
        """Records returned for the cited DOI (for retraction), by resolver."""
        self.asked: list[Asked] = []
        self.answered: dict[tuple[str, str, str], Asked] = {}
        self.agency: str | None = None
        self.authoritative: str | None = None
        self.incomplete = False
        self.any_matched = False
        """Some outcome was ever set matched (a later one may have replaced it)."""
        self.candidates: dict[str, tuple[Record, ...]] = {}
        """Title-search candidates by resolver; scored for near matches only if nothing
        matched (scoring every miss would dominate the cost of a cached reopen)."""

    # -- helpers ---------------------------------------------------------------------------

    async def ask(self, resolver: str, form: str, query: str,
                  call: Callable[[], Awaitable[Answer]]) -> Asked:
        """Through the cache; a question this resolution already asked is not asked again
        (a re-verify bypasses the cache, not this)."""
        question = (resolver, form, query.strip().lower())
        if (earlier := self.answered.get(question)) is not None:
            return earlier
        asked = await ask(self.ctx, resolver, form, query, call)
        self.answered[question] = asked
        self.asked.append(asked)
        if asked.answer is None:
            self.incomplete = True
        return asked

    async def together(self, *steps: Coroutine[Any, Any, Any]) -> list[Any]:
        """Run ``steps`` concurrently; offline, in order. Offline nothing waits (answers come
        from the cache), so each concurrent step would run to its end in turn anyway: in
        order gives the same outcomes without a task and an event-loop turn per step, which
        a cached reopen of a large library would pay for every reference."""
        if self.ctx.offline:
            return [await step for step in steps]
        return list(await asyncio.gather(*steps))

    def set(self, resolver: str, status: str, queried_by: str | None, summary: str,
            asked: Asked | None = None, **extra) -> Outcome:
        if asked is not None and asked.via:
            summary = f"{asked.via}: {summary}"
            extra["details"] = {**extra.get("details", {}), "snapshot": asked.via}
        outcome = Outcome(resolver, status, queried_by, summary, **extra)
        if status == "unreachable":
            answer = asked.answer if asked is not None else None
            outcome.unchecked = answer.kind if isinstance(answer, Unreachable) else "outage"
        if asked is not None:
            outcome.checked_at = asked.checked_at
            outcome.from_cache = asked.from_cache
            outcome.cache_age_days = asked.age_days
        self.outcomes[resolver] = outcome
        if status == "matched":
            self.any_matched = True
        return outcome

    def skip(self, resolver: str, why: str, reason: str | None = None,
             searchable: bool = False) -> None:
        """Mark ``resolver`` as not asked; ``searchable`` lets a title search still run."""
        if resolver not in self.outcomes:
            self.outcomes[resolver] = skipped(resolver, why, reason, searchable)

    def matched(self) -> Outcome | None:
        """The first match in ``RESOLVERS`` order, so reports do not depend on timing."""
        if not self.any_matched:  # asked after every step; most often nothing matched
            return None
        found = (self.outcomes.get(name) for name in RESOLVERS)
        return next((o for o in found if o is not None and o.status == "matched"), None)

    def offline_skip(self, resolver: str) -> None:
        if resolver not in self.outcomes:
            self.outcomes[resolver] = skipped(resolver, "offline: no cached answer",
                                              unchecked="offline")

    # -- the plan --------------------------------------------------------------------------

    async def run(self) -> Resolution:
        if self.work.manual:
            for name in RESOLVERS:
                self.skip(name, "manual entry: not checked automatically")
            await self.retraction_only()
        elif not self.ids.any and not self.work.title:
            for name in RESOLVERS:
                self.skip(name, "nothing to look up: no identifier and no title")
        else:
            await self.expand_short_doi()
            if not await self.from_index():
                await self.look_up()
        matched, refuted = self.matched(), self.refuted()
        for name in RESOLVERS:
            if name not in self.outcomes:
                self.skip(name, self.not_asked_reason(name, matched, refuted))
        if matched is None:
            self.find_near_matches()
        return self.resolution()

    async def look_up(self) -> None:
        chinese = ChineseLiterature(self, self.ctx.sources.doi_registry, self.ctx.sources.pubmed)
        if self.doi_is_the_arxiv_id():
            await self.arxiv()
            await self.doi()
        else:
            await self.together(self.arxiv(), self.doi())
        await chinese.check_identifier()
        await self.title_searches()
        await chinese.check_coordinates()

    def find_near_matches(self) -> None:
        for resolver, candidates in self.candidates.items():
            outcome = self.outcomes.get(resolver)
            if outcome is None or outcome.status != "unmatched" or not candidates:
                continue
            near = near_matches(self.work, candidates)
            if near:
                outcome.near_matches = near
                outcome.summary = outcome.summary.replace(
                    f"no exact title among {len(candidates)} candidates",
                    f"no exact title; closest: {_quote(near[0].title)}")

    def not_asked_reason(self, name: str, matched: Outcome | None, refuted: bool) -> str:
        if matched is not None:
            by = matched.details.get("snapshot") or LABELS[matched.resolver]
            return f"not needed: matched by {by}"
        if refuted and name in TITLE_SEARCHERS:
            return "not needed: the cited identifier is refuted"
        if name == "arxiv":
            return "not asked: no arXiv id"
        if name == "datacite":
            return "not asked: not a DataCite DOI"
        if name == "doi_registry":
            return "not asked: no DOI" if self.ids.doi is None else "not needed for this DOI"
        if not self.work.title:
            return "not asked: no title to search"
        return "not asked"

    def resolution(self) -> Resolution:
        ages = [a.age_days for a in self.asked if a.from_cache and a.age_days is not None]
        retraction = next(
            (r for name in RESOLVERS if (rec := self.records.get(name)) is not None
             for r in rec.retractions), None
        )
        return Resolution(
            key=self.ref.key,
            ids=self.ids,
            outcomes={name: self.outcomes[name] for name in RESOLVERS},
            retraction=retraction,
            agency=self.agency,
            authoritative=self.authoritative,
            cache_age_days=max(ages) if ages else None,
            cache_stale_advisory=any(a.stale for a in self.asked),
            complete=not self.incomplete,
            venue_links=self.venue_links(),
        )

    def venue_links(self) -> dict[str, frozenset[str]]:
        """What the local index's venue lists link to each venue name of the matched
        records (``Resolution.venue_links``); a preprint's venue is never compared."""
        index = self.ctx.index
        if index is None:
            return {}
        names = {n for o in self.outcomes.values() if o.status == "matched" and o.record
                 and not o.record.is_preprint for n in (o.record.venue, *o.record.venue_aliases)
                 if n}
        return {venue_key(n): links for n in names if (links := index.venue_links(n))}

    # -- the local index -------------------------------------------------------------------

    async def from_index(self) -> bool:
        """Take from the local index what it can match, as an answer of the
        source whose snapshot holds the record. Only a match is taken from a snapshot: a
        record that does not confirm the cited work, and a work the index lacks, go on to the
        services (snapshots lag and cover less; absence from one is never evidence). True
        when every cited identifier matched, or, none cited, the title: no service is asked.
        What matched is also this run's answer should the plan ask that source after all."""
        index = self.ctx.index
        if index is None:
            return False
        doi, arxiv = self.ids.doi, self.ids.arxiv
        if doi is not None and (agency := index.agency(doi_prefix(doi.value))):
            self.agency, self.authoritative = agency, agency_resolver(agency)
            question = ("doi_registry", "agency", doi_prefix(doi.value).strip().lower())
            self.answered[question] = Asked(Agency(agency))
        cited = [(i, find) for i, find in ((arxiv, index.by_arxiv), (doi, index.by_doi))
                 if i is not None and not i.impossible]
        if cited or doi is not None or arxiv is not None:
            return bool(cited) and all([self.index_identifier(i, find) for i, find in cited])
        # A title search of a large index may take tens of milliseconds: off the event loop
        # (a server's hovers wait on it); identifier lookups take a fraction of one.
        hits = await asyncio.to_thread(index.by_title, self.work.title or "")
        match = judge_title_search(self.work, [h.record for h in hits], with_near=False).match
        hit = next((h for h in hits if h.record is match), None)
        if hit is None:
            return False
        self.set(hit.record.source, "matched", "title",
                 f"title found: {_quote(hit.record.title)}", index_answer(hit),
                 record=hit.record, url=hit.record.url)
        return True

    def index_identifier(self, ident: Identifier, find: Callable[[str], list]) -> bool:
        first = self.authoritative if ident.kind == "doi" else "arxiv"
        hits = sorted(find(ident.value), key=lambda h: (
            h.record.source != first, _rank(INDEX_PREFERENCE, h.record.source)))
        form = "doi" if ident.kind == "doi" else "id"
        url = links.doi_url(ident.value) if ident.kind == "doi" else links.arxiv_url(ident.value)
        for hit in hits:
            judgement = judge_identifier_record(self.work, hit.record, authoritative=False)
            if not judgement.matched:
                continue
            resolver, asked = hit.record.source, index_answer(hit)
            self.answered[(resolver, form, ident.value.strip().lower())] = asked
            if ident.kind == "doi":
                self.records[resolver] = hit.record
            self.apply_id_judgement(resolver, ident, hit.record, judgement, asked, url)
            return True
        return False

    # -- arXiv -----------------------------------------------------------------------------

    async def arxiv(self) -> None:
        arxiv = self.ids.arxiv
        if arxiv is None:
            return
        if arxiv.impossible:
            self.set("arxiv", "unmatched", "id", f"arXiv id {arxiv.value} cannot exist "
                     "(its year-month is impossible); not looked up",
                     reason="ARXIV_ID_REFUTED", refutes_identifier=True)
            return
        asked = await self.ask("arxiv", "id", arxiv.value, lambda: self.arxiv_twice(arxiv.value))
        self.judge_id("arxiv", arxiv, asked.answer, asked, authoritative=True)

    async def arxiv_twice(self, arxiv_id: str) -> Answer:
        """arXiv sometimes returns an empty page by mistake: a miss counts only when a second
        request at least ``arxiv_recheck_delay`` later misses too. Only this final answer is
        cached, so a cached ``NotFound`` always means two misses. The recheck joins whatever
        arXiv batch goes next, so it costs no paced request of its own."""
        lookups = self.ctx.lookups
        ask = lookups.arxiv.ask if lookups is not None else self.ctx.sources.arxiv.by_arxiv_id
        first = await ask(arxiv_id)
        if not isinstance(first, NotFound):
            return first
        await asyncio.sleep(self.ctx.arxiv_recheck_delay)
        second = await ask(arxiv_id)
        if isinstance(second, Unreachable):
            return Unreachable(f"no entry once, then the recheck failed: {second.reason}")
        return second

    # -- DOI -------------------------------------------------------------------------------

    async def doi(self) -> None:
        """The registering source first; the others only when it did not match (or when
        triangulating); Semantic Scholar last, and only while nothing matched."""
        doi = self.ids.doi
        if doi is None:
            return
        await self.route(doi)
        if self.doi_is_the_arxiv_id() and self.matched() is not None \
                and not self.ctx.triangulate:
            return  # arXiv matched the id this DOI names: DataCite is "not needed"
        auth = self.authoritative
        if auth not in (None, "crossref"):
            self.skip("crossref", f"DOI not asked: {doi.cited} is registered by "
                      f"{self.agency or 'another agency'}, not Crossref", searchable=True)
        first = []
        if auth in (None, "crossref"):
            first.append(self.doi_lookup("crossref", doi, authoritative=auth == "crossref"))
        if auth in (None, "datacite"):
            # With the agency unknown (doiRA unreachable), DataCite may still know the DOI.
            first.append(self.doi_lookup("datacite", doi, authoritative=auth == "datacite"))
        if auth == "doi_registry":
            first.append(self.doi_registry(doi))
        if auth is None or auth == "chinese_literature" or self.ctx.triangulate:
            first.append(self.doi_lookup("openalex", doi))
        await self.together(*first)
        if not self.ctx.triangulate:
            if self.matched() is not None or await self.refuted_by_handle(doi):
                return await self.settle_existence(doi)
            if "openalex" not in self.outcomes:
                await self.doi_lookup("openalex", doi)
        if self.matched() is None or self.ctx.triangulate:
            await self.doi_lookup("semantic_scholar", doi)
        await self.settle_existence(doi)
        return None

    async def expand_short_doi(self) -> None:
        """A cited shortDOI (``10/ggd754``) stands for the full DOI that doi.org's Handle API
        names as its alias; that DOI is then checked as if cited. Only the proxy's "no such
        handle" refutes a shortDOI; while it cannot be resolved the title is checked."""
        short = self.ids.short_doi
        if short is None:
            return
        source = self.ctx.sources.doi_registry
        asked = await self.ask("doi_registry", "alias", short.value,
                               lambda: source.alias(short.value))
        answer = asked.answer
        if isinstance(answer, Alias):
            self.ids = replace(self.ids, doi=short.resolved(answer.doi), short_doi=None)
        elif isinstance(answer, Handle) and not answer.exists:
            self.set("doi_registry", "unmatched", "id",
                     f"shortDOI {short.value} does not exist: the Handle System answers 100 "
                     "(no such handle)", asked, reason="DOI_REFUTED", refutes_identifier=True,
                     url=links.doi_url(short.value))
        elif answer is None:
            self.offline_skip("doi_registry")
        else:
            self.set("doi_registry", "unreachable", None,
                     f"doi.org unreachable: shortDOI {short.value} not resolved to a DOI: "
                     f"{_why(answer)}", asked)

    def doi_is_the_arxiv_id(self) -> bool:
        """The cited DOI is the arXiv DOI (``10.48550/arXiv.ID``) of the cited arXiv id."""
        doi, arxiv = self.ids.doi, self.ids.arxiv
        named = arxiv_from_doi(doi.value) if doi is not None else None
        return (named is not None and arxiv is not None
                and base_id(named).lower() == base_id(arxiv.value).lower())

    async def refuted_by_handle(self, doi: Identifier) -> bool:
        """Whether the cited DOI is already refuted, or the registering source has no record
        of it and the Handle System says it does not exist (then no other index is asked:
        their answers cannot change a P0). The Handle answer is remembered for
        ``settle_existence``. The OpenAlex title search a refuted DOI still gets (its near
        matches become "did you mean") goes beside the Handle check, not after it: the P0 of
        an invented DOI comes one round trip sooner."""
        if self.refuted():
            return True
        auth = self.outcomes.get(self.authoritative or "")
        if auth is None or auth.details.get("answer") != "not_found":
            return False
        source = self.ctx.sources.doi_registry
        check = self.ask("doi_registry", "handle", doi.value, lambda: source.handle(doi.value))
        title = self.work.title
        if title and "openalex" not in self.outcomes:
            handle, _search = await self.together(
                check, self.ask_title("openalex", " ".join(title.split())))
        else:
            handle = await check
        return isinstance(handle.answer, Handle) and not handle.answer.exists

    def refuted(self) -> bool:
        return any(o.refutes_identifier for o in self.outcomes.values())

    async def route(self, doi: Identifier) -> None:
        if arxiv_from_doi(doi.value) is not None:
            self.agency, self.authoritative = "DataCite", "datacite"
            return
        prefix = doi_prefix(doi.value)
        lookups = self.ctx.lookups
        ask = lookups.agency.ask if lookups is not None else self.ctx.sources.doi_registry.agency
        asked = await self.ask("doi_registry", "agency", prefix, lambda: ask(prefix))
        if isinstance(asked.answer, Agency) and asked.answer.name:
            self.agency = asked.answer.name
            self.authoritative = agency_resolver(asked.answer.name)

    async def doi_lookup(self, resolver: str, doi: Identifier, *, authoritative: bool = False
                         ) -> None:
        asked = await self.ask(resolver, "doi", doi.value,
                               lambda: self.lookup_doi(resolver, doi.value))
        if isinstance(asked.answer, Found) and asked.answer.records:
            self.records[resolver] = asked.answer.records[0]
        self.judge_id(resolver, doi, asked.answer, asked, authoritative=authoritative)

    async def lookup_doi(self, resolver: str, doi: str) -> Answer:
        if self.ctx.lookups is not None:
            return await self.ctx.lookups.by_doi(resolver, doi)
        return await getattr(self.ctx.sources, resolver).by_doi(doi)

    async def doi_registry(self, doi: Identifier) -> None:
        """Agencies without their own resolver: Handle existence plus CSL content negotiation."""
        source = self.ctx.sources.doi_registry
        handle = await self.ask("doi_registry", "handle", doi.value,
                                lambda: source.handle(doi.value))
        if handle.answer is None:
            return self.offline_skip("doi_registry")
        if isinstance(handle.answer, Handle) and not handle.answer.exists:
            self.refute_doi("doi_registry", doi, handle, "the Handle System answers 100 "
                            "(no such handle)")
            return None
        csl = await self.ask("doi_registry", "csl", doi.value, lambda: source.csl(doi.value))
        if isinstance(csl.answer, Found) and csl.answer.records:
            self.judge_id("doi_registry", doi, csl.answer, csl, authoritative=True)
            return None
        if isinstance(handle.answer, Handle):
            self.set("doi_registry", "unmatched", "title",
                     f"{doi.cited} exists (Handle System) but {self.agency or 'its agency'} "
                     "offers no machine-readable title", handle,
                     reason="DOI_EXISTS_TITLE_UNVERIFIABLE")
        else:
            self.set("doi_registry", "unreachable", None,
                     f"doi.org unreachable: {_why(handle.answer)}", handle)
        return None

    async def settle_existence(self, doi: Identifier) -> None:
        """Turn 404s for the DOI into evidence or a coverage gap.

        The Handle System decides: 100 refutes, 1 makes every 404 a coverage gap. Only while
        it is unreachable (not merely unasked, as offline) does the 404 of the agency that
        registers the DOI count. doi_registry and chinese_literature settle this themselves.
        """
        auth = self.authoritative
        if auth in ("doi_registry", "chinese_literature") or self.records:
            return
        missing = [o for name in RESOLVERS if (o := self.outcomes.get(name)) is not None
                   and o.details.get("answer") == "not_found"]
        if not missing:
            return
        source = self.ctx.sources.doi_registry
        handle = await self.ask("doi_registry", "handle", doi.value,
                                lambda: source.handle(doi.value))
        answer = handle.answer
        target = self.outcomes.get(auth) if auth in ("crossref", "datacite") else None
        if target is not None and target.details.get("answer") != "not_found":
            target = None
        if isinstance(answer, Handle) and not answer.exists:
            where = target.resolver if target is not None else "doi_registry"
            no_record = ", ".join(LABELS[o.resolver] for o in missing)
            self.refute_doi(where, doi, handle, f"the Handle System answers 100 "
                            f"(and {no_record} {'has' if len(missing) == 1 else 'have'} "
                            "no record)")
        elif isinstance(answer, Handle):
            for outcome in missing:
                label = LABELS[outcome.resolver]
                outcome.summary = (f"{label} has no record of {doi.cited}, but the DOI exists "
                                   "(Handle System): coverage gap, not evidence")
                if outcome is target:
                    outcome.reason = "DOI_EXISTS_TITLE_UNVERIFIABLE"
        elif target is not None and isinstance(answer, Unreachable):
            self.refute_doi(target.resolver, doi, handle,
                            f"{LABELS[target.resolver]}, which registers this DOI, has no "
                            "record (Handle System unreachable)")
        else:
            why = "not asked offline" if answer is None else "unreachable"
            for outcome in missing:
                outcome.summary += f"; existence unknown (Handle System {why})"

    def refute_doi(self, resolver: str, doi: Identifier, asked: Asked, why: str) -> None:
        self.set(resolver, "unmatched", "id", f"DOI {doi.cited} does not exist: {why}", asked,
                 reason="DOI_REFUTED", refutes_identifier=True,
                 url=links.doi_url(doi.value))

    # -- judging an identifier lookup -------------------------------------------------------

    def judge_id(self, resolver: str, ident: Identifier, answer: Answer | None, asked: Asked,
                 *, authoritative: bool) -> None:
        label = LABELS[resolver]
        what = "DOI" if ident.kind == "doi" else "arXiv id"
        url = links.doi_url(ident.value) if ident.kind == "doi" else links.arxiv_url(ident.value)
        if answer is None:
            return self.offline_skip(resolver)
        if isinstance(answer, Unreachable):
            self.set(resolver, "unreachable", None, f"{label} unreachable: {answer.reason}", asked)
            return None
        if isinstance(answer, Malformed):
            self.set(resolver, "unmatched", "title",
                     f"{label} says {what} {ident.cited} is malformed: {answer.detail}", asked,
                     reason="INVALID_IDENTIFIER")
            return None
        if isinstance(answer, NotFound):
            if ident.kind == "arxiv":
                self.set(resolver, "unmatched", "id",
                         f"arXiv id {ident.cited} does not exist: arXiv returned no entry twice",
                         asked, reason="ARXIV_ID_REFUTED", refutes_identifier=True, url=url)
                return None
            self.set(resolver, "unmatched", "title",
                     f"{label} has no record of {what} {ident.cited} (not evidence on its own)",
                     asked, details={"answer": "not_found"})
            return None
        if not isinstance(answer, Found) or not answer.records:
            self.set(resolver, "unreachable", None, f"{label}: unexpected answer", asked)
            return None
        record = answer.records[0]
        judgement = judge_identifier_record(self.work, record, authoritative=authoritative)
        self.apply_id_judgement(resolver, ident, record, judgement, asked, url)
        return None

    def apply_id_judgement(self, resolver: str, ident: Identifier, record: Record,
                           judgement: IdJudgement, asked: Asked, url: str) -> None:
        label = LABELS[resolver]
        what = "DOI" if ident.kind == "doi" else "arXiv id"
        found = _quote(record.title)
        if judgement.matched:
            self.set(resolver, "matched", "id", f"{what} {ident.cited} → {found}", asked,
                     record=record, reason=judgement.reason(ident.kind), url=url)
        elif judgement.kind == "mismatch":
            self.set(resolver, "unmatched", "id",
                     f"{what} {ident.cited} names another work: {label} has {found}", asked,
                     record=record, reason=judgement.reason(ident.kind),
                     refutes_identifier=True, url=url)
        else:
            self.set(resolver, "unmatched", "title",
                     f"{what} {ident.cited} → {found}, which does not confirm the cited title",
                     asked, record=record, reason=judgement.reason(ident.kind), url=url)

    # -- title search ------------------------------------------------------------------------

    async def title_searches(self) -> None:
        """Crossref and OpenAlex together; Semantic Scholar and DBLP together only when
        neither matched and no cited identifier is refuted (their answers could not change
        the P0 then)."""
        title = self.work.title
        if not title or self.matched() is not None:
            return
        searchable = [r for r in TITLE_SEARCHERS if self.searchable(r)]
        await self.together(*(self.title_search(r, title, self.outcomes.get(r))
                              for r in searchable if r in BROAD_SEARCHERS))
        later = [r for r in searchable if r not in BROAD_SEARCHERS]
        if not later or self.matched() is not None:
            return
        if self.refuted() and not self.ctx.triangulate:
            return
        await self.together(*(self.title_search(r, title, self.outcomes.get(r)) for r in later))

    def searchable(self, resolver: str) -> bool:
        current = self.outcomes.get(resolver)
        return current is None or not (current.refutes_identifier or current.status == "skipped"
                                       and not current.details.get("searchable"))

    def ask_title(self, resolver: str, query: str) -> Coroutine[Any, Any, Asked]:
        """The title search of ``query`` (whitespace collapsed) at ``resolver``, once per run."""
        source = getattr(self.ctx.sources, resolver)
        return self.ask(resolver, "title", query.casefold(), lambda: source.search_title(query))

    async def title_search(self, resolver: str, title: str, previous: Outcome | None) -> None:
        query = " ".join(title.split())
        asked = await self.ask_title(resolver, query)
        label = LABELS[resolver]
        answer = asked.answer
        before = f"{previous.summary}; " if previous is not None and previous.status != "skipped" \
            else ""
        if answer is None:
            if previous is None:
                self.offline_skip(resolver)
            return
        if isinstance(answer, Unreachable):
            if previous is None or previous.status == "skipped":
                self.set(resolver, "unreachable", None, f"{label} unreachable: {answer.reason}",
                         asked)
            return
        candidates = answer.records if isinstance(answer, Found) else ()
        judgement = judge_title_search(self.work, candidates, with_near=False)
        self.candidates[resolver] = candidates
        search_url = links.title_search_url(resolver, query)
        keep_reason = previous.reason if previous is not None else None
        if judgement.match is not None:
            self.set(resolver, "matched", "title",
                     f"{before}title search found {_quote(judgement.match.title)}", asked,
                     record=judgement.match, url=search_url)
            return
        if judgement.generic:
            why = "generic title: a title search cannot identify the work"
        elif judgement.conflicts:
            why = "exact title found, but " + "; ".join(
                f"{c.field} {c.cited!r} vs {c.found!r}" for c in judgement.conflicts)
        else:
            why = f"no exact title among {len(candidates)} candidates"
        self.set(resolver, "unmatched", "title", f"{before}title search: {why}", asked,
                 reason=keep_reason or ("GENERIC_TITLE" if judgement.generic else None),
                 near_matches=judgement.near_matches, conflicts=judgement.conflicts,
                 url=search_url, record=previous.record if previous else None,
                 details={"searched": True})

    # -- manual entries ----------------------------------------------------------------------

    async def retraction_only(self) -> None:
        """A manual entry is not verified, but a cited DOI is still checked for retraction."""
        doi = self.ids.doi
        if doi is None or self.ctx.offline and self.ctx.cache is None:
            return
        asked = await self.ask("crossref", "doi", doi.value,
                               lambda: self.lookup_doi("crossref", doi.value))
        if isinstance(asked.answer, Found) and asked.answer.records:
            self.records["crossref"] = asked.answer.records[0]


def _rank(order: tuple[str, ...], name: str) -> int:
    return order.index(name) if name in order else len(order)


def _quote(title: str | None) -> str:
    return f"“{title}”" if title else "a record without a title"


def _why(answer: Answer | None) -> str:
    return answer.reason if isinstance(answer, Unreachable) else "no usable answer"


async def resolve_reference(ref: Reference, ctx: Context) -> Resolution:
    return await _Run(ref, ctx).run()


def unchecked_resolution(ref: Reference, kind: Unchecked, why: str) -> Resolution:
    """The resolution of a reference no source was asked about (yet): every source skipped
    for ``why``, so it is judged, shown and listed as "not checked" like any other."""
    if ref.work.manual:
        outcomes = {name: skipped(name, "manual entry: not checked automatically")
                    for name in RESOLVERS}
    else:
        outcomes = {name: skipped(name, why, unchecked=kind) for name in RESOLVERS}
    return Resolution(ref.key, identifiers_of(ref, date.today()), outcomes, complete=False)
