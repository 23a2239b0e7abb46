"""One reference → one outcome per resolver (DESIGN.md §4–§5).

This module decides what to ask whom: identifier lookups routed by registration agency,
the Handle existence probe, the arXiv double check, then title searches when no identifier
matched. Answers come through the cache; what they prove is recomputed every time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine

from citelsp import links
from citelsp.documents.model import Reference, Work
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
    Answer,
    Found,
    Handle,
    Malformed,
    NotFound,
    Outcome,
    Record,
    Unreachable,
)

RESOLVERS = (
    "crossref",
    "openalex",
    "semantic_scholar",
    "arxiv",
    "datacite",
    "doi_registry",
    "chinese_literature",
)
TITLE_SEARCHERS = ("crossref", "openalex", "semantic_scholar")
LABELS = {
    "crossref": "Crossref",
    "openalex": "OpenAlex",
    "semantic_scholar": "Semantic Scholar",
    "arxiv": "arXiv",
    "datacite": "DataCite",
    "doi_registry": "doi.org",
    "chinese_literature": "Chinese-literature sources",
}


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
        self.agency: str | None = None
        self.authoritative: str | None = None
        self.incomplete = False
        self.candidates: dict[str, tuple[Record, ...]] = {}
        """Title-search candidates by resolver; scored for near matches only if nothing
        matched (scoring every miss would dominate the cost of a cached reopen)."""

    # -- helpers ---------------------------------------------------------------------------

    async def ask(self, resolver: str, form: str, query: str,
                  call: Callable[[], Awaitable[Answer]]) -> Asked:
        asked = await ask(self.ctx, resolver, form, query, call)
        self.asked.append(asked)
        if asked.answer is None:
            self.incomplete = True
        return asked

    async def together(self, *steps: Coroutine[None, None, None]) -> None:
        """Run ``steps`` concurrently; offline, in order. Offline nothing waits (answers come
        from the cache), so each concurrent step would run to its end in turn anyway: in
        order gives the same outcomes without a task and an event-loop turn per step, which
        a cached reopen of a large library would pay for every reference."""
        if self.ctx.offline:
            for step in steps:
                await step
        else:
            await asyncio.gather(*steps)

    def set(self, resolver: str, status: str, queried_by: str | None, summary: str,
            asked: Asked | None = None, **extra) -> Outcome:
        outcome = Outcome(resolver, status, queried_by, summary, **extra)
        if asked is not None:
            outcome.checked_at = asked.checked_at
            outcome.from_cache = asked.from_cache
            outcome.cache_age_days = asked.age_days
        self.outcomes[resolver] = outcome
        return outcome

    def skip(self, resolver: str, why: str, reason: str | None = None,
             searchable: bool = False) -> None:
        """Mark ``resolver`` as not asked; ``searchable`` lets a title search still run."""
        if resolver not in self.outcomes:
            self.set(resolver, "skipped", None, why, reason=reason,
                     details={"searchable": searchable})

    def matched(self) -> Outcome | None:
        """The first match in ``RESOLVERS`` order, so reports do not depend on timing."""
        found = (self.outcomes.get(name) for name in RESOLVERS)
        return next((o for o in found if o is not None and o.status == "matched"), None)

    def offline_skip(self, resolver: str) -> None:
        self.skip(resolver, "offline: no cached answer")

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
            chinese = ChineseLiterature(self, self.ctx.sources.doi_registry,
                                        self.ctx.sources.pubmed)
            await self.together(self.arxiv(), self.doi())
            await chinese.check_identifier()
            await self.title_searches()
            await chinese.check_coordinates()
        for name in RESOLVERS:
            self.skip(name, self.not_asked_reason(name))
        if self.matched() is None:
            self.find_near_matches()
        return self.resolution()

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

    def not_asked_reason(self, name: str) -> str:
        if (m := self.matched()) is not None:
            return f"not asked: already matched by {LABELS[m.resolver]}"
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
        )

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
        cached, so a cached ``NotFound`` always means two misses."""
        source = self.ctx.sources.arxiv
        first = await source.by_arxiv_id(arxiv_id)
        if not isinstance(first, NotFound):
            return first
        await asyncio.sleep(self.ctx.arxiv_recheck_delay)
        second = await source.by_arxiv_id(arxiv_id)
        if isinstance(second, Unreachable):
            return Unreachable(f"no entry once, then the recheck failed: {second.reason}")
        return second

    # -- DOI -------------------------------------------------------------------------------

    async def doi(self) -> None:
        doi = self.ids.doi
        if doi is None:
            return
        await self.route(doi)
        auth = self.authoritative
        lookups = [self.doi_lookup("openalex", doi)]
        if auth in (None, "crossref"):
            lookups.append(self.doi_lookup("crossref", doi, authoritative=auth == "crossref"))
        else:
            self.skip("crossref", f"DOI not asked: {doi.value} is registered by "
                      f"{self.agency or 'another agency'}, not Crossref", searchable=True)
        if auth in (None, "datacite"):
            # With the agency unknown (doiRA unreachable), DataCite may still know the DOI.
            lookups.append(self.doi_lookup("datacite", doi, authoritative=auth == "datacite"))
        if auth == "doi_registry":
            lookups.append(self.doi_registry(doi))
        await self.together(*lookups)
        if self.matched() is None:
            await self.doi_lookup("semantic_scholar", doi)
        await self.settle_existence(doi)

    async def route(self, doi: Identifier) -> None:
        if arxiv_from_doi(doi.value) is not None:
            self.agency, self.authoritative = "DataCite", "datacite"
            return
        prefix = doi_prefix(doi.value)
        source = self.ctx.sources.doi_registry
        asked = await self.ask("doi_registry", "agency", prefix, lambda: source.agency(prefix))
        if isinstance(asked.answer, Agency) and asked.answer.name:
            self.agency = asked.answer.name
            self.authoritative = agency_resolver(asked.answer.name)

    async def doi_lookup(self, resolver: str, doi: Identifier, *, authoritative: bool = False
                         ) -> None:
        source = getattr(self.ctx.sources, resolver)
        asked = await self.ask(resolver, "doi", doi.value, lambda: source.by_doi(doi.value))
        if isinstance(asked.answer, Found) and asked.answer.records:
            self.records[resolver] = asked.answer.records[0]
        self.judge_id(resolver, doi, asked.answer, asked, authoritative=authoritative)

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
                     f"{doi.value} exists (Handle System) but {self.agency or 'its agency'} "
                     "offers no machine-readable title", handle,
                     reason="DOI_EXISTS_TITLE_UNVERIFIABLE")
        else:
            self.set("doi_registry", "unreachable", None,
                     f"doi.org unreachable: {_why(handle.answer)}", handle)
        return None

    async def settle_existence(self, doi: Identifier) -> None:
        """Turn 404s for the DOI into evidence or a coverage gap (DESIGN.md §5).

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
                outcome.summary = (f"{label} has no record of {doi.value}, but the DOI exists "
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
        self.set(resolver, "unmatched", "id", f"DOI {doi.value} does not exist: {why}", asked,
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
                     f"{label} says {what} {ident.value} is malformed: {answer.detail}", asked,
                     reason="INVALID_IDENTIFIER")
            return None
        if isinstance(answer, NotFound):
            if ident.kind == "arxiv":
                self.set(resolver, "unmatched", "id",
                         f"arXiv id {ident.value} does not exist: arXiv returned no entry twice",
                         asked, reason="ARXIV_ID_REFUTED", refutes_identifier=True, url=url)
                return None
            self.set(resolver, "unmatched", "title",
                     f"{label} has no record of {what} {ident.value} (not evidence on its own)",
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
            self.set(resolver, "matched", "id", f"{what} {ident.value} → {found}", asked,
                     record=record, reason=judgement.reason(ident.kind), url=url)
        elif judgement.kind == "mismatch":
            self.set(resolver, "unmatched", "id",
                     f"{what} {ident.value} names another work: {label} has {found}", asked,
                     record=record, reason=judgement.reason(ident.kind),
                     refutes_identifier=True, url=url)
        else:
            self.set(resolver, "unmatched", "title",
                     f"{what} {ident.value} → {found}, which does not confirm the cited title",
                     asked, record=record, reason=judgement.reason(ident.kind), url=url)

    # -- title search ------------------------------------------------------------------------

    async def title_searches(self) -> None:
        title = self.work.title
        if not title or self.matched() is not None:
            return
        for resolver in TITLE_SEARCHERS:
            if self.matched() is not None:
                return
            current = self.outcomes.get(resolver)
            if current is not None and (current.refutes_identifier or current.status == "skipped"
                                        and not current.details.get("searchable")):
                continue
            await self.title_search(resolver, title, current)

    async def title_search(self, resolver: str, title: str, previous: Outcome | None) -> None:
        source = getattr(self.ctx.sources, resolver)
        query = " ".join(title.split())
        asked = await self.ask(resolver, "title", query.casefold(),
                               lambda: source.search_title(query))
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
        source = self.ctx.sources.crossref
        asked = await self.ask("crossref", "doi", doi.value, lambda: source.by_doi(doi.value))
        if isinstance(asked.answer, Found) and asked.answer.records:
            self.records["crossref"] = asked.answer.records[0]


def _quote(title: str | None) -> str:
    return f"“{title}”" if title else "a record without a title"


def _why(answer: Answer | None) -> str:
    return answer.reason if isinstance(answer, Unreachable) else "no usable answer"


async def resolve_reference(ref: Reference, ctx: Context) -> Resolution:
    return await _Run(ref, ctx).run()
