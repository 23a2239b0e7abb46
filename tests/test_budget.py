"""Daily budgets (OpenAlex's metering since 2026-02-13): charged before a request goes, shared
by processes through the cache directory, reset each day, and reported once as waiting."""

from __future__ import annotations

import asyncio
import json
import multiprocessing
from types import SimpleNamespace

import httpx

from citelsp.config import Settings
from citelsp.reports.cards import verification_card
from citelsp.reports.markup import Markup
from citelsp.reports.text import summary
from citelsp.resolution.budget import (
    MICRO,
    OPENALEX_COSTS,
    SPENT,
    Allowance,
    DailyBudget,
    allowances,
    waiting_statement,
    waits_for,
)
from citelsp.resolution.engine import Engine
from citelsp.resolution.http import HttpClient
from citelsp.resolution.outcome import Outcome
from citelsp.verdict.judge import judge
from citelsp.workspace.snapshot import ReferenceResult, Snapshot
from citelsp.workspace.verification import Listener, Verifier
from tests.test_check_e2e import run_cli
from tests.test_engine import bib_refs, entry

DAY = 86_400.0
KEYLESS = Allowance(10_000, OPENALEX_COSTS, keyed=False)
"""$0.01 a day: ten searches, or a hundred lists."""


class Clock:
    def __init__(self) -> None:
        self.now = 1_780_000_000.0  # a day in 2026, 10:13 UTC

    def __call__(self) -> float:
        return self.now


def test_the_published_allowances():
    assert allowances(Settings())["openalex"].micro_usd == 10_000, "$0.01 without a key"
    keyed = allowances(Settings(openalex_api_key="k"))["openalex"]
    assert keyed.micro_usd == MICRO, "$1 with a free key"
    assert keyed.micro_usd // OPENALEX_COSTS["search"] == 1_000
    assert keyed.micro_usd // OPENALEX_COSTS["list"] == 10_000
    assert OPENALEX_COSTS["single"] == 0, "lookups by id or DOI are free"
    assert allowances(Settings(openalex_daily_budget_usd=5.0))["openalex"].micro_usd == 5 * MICRO
    mirror = Settings.from_options({"resolvers": {"openalex": {"baseUrl": "https://m.example"}}},
                                   {})
    assert allowances(mirror) == {}, "another base URL is not OpenAlex's metering"
    assert Settings.from_options({}, {"CITELSP_OPENALEX_DAILY_BUDGET_USD": "2.5"}) \
        .openalex_daily_budget_usd == 2.5
    assert Settings.from_options({"openalexDailyBudgetUsd": "1e400"}, {}) \
        .openalex_daily_budget_usd is None, "an infinite amount is no setting"


async def test_searches_stop_at_the_budget_lookups_never_and_the_next_day_resets(tmp_path):
    clock = Clock()
    budget = DailyBudget(tmp_path, {"openalex": KEYLESS}, clock=clock)
    granted = [await budget.charge("openalex", "search") is None for _ in range(12)]
    assert granted == [True] * 10 + [False] * 2
    refused = await budget.charge("openalex", "search")
    assert refused is not None and refused.startswith(SPENT)
    assert "without an API key" in refused
    assert await budget.charge("openalex", "single") is None, "single records are free"
    assert await budget.charge("crossref", "search") is None, "Crossref is not metered"
    assert await budget.charge("openalex", "list") is not None, \
        "the searches spent the lists' share"
    assert await budget.spent_today("openalex") == 10_000
    again = DailyBudget(tmp_path, {"openalex": KEYLESS}, clock=clock)
    assert await again.charge("openalex", "search") is not None, \
        "the count is kept beside the cache"
    clock.now += DAY
    assert await again.charge("openalex", "search") is None, "a new day, a new budget"


async def test_exhausted_by_the_service_means_spent_for_the_day(tmp_path):
    clock = Clock()
    budget = DailyBudget(tmp_path, {"openalex": KEYLESS}, clock=clock)
    await budget.exhaust("openalex")
    assert await budget.charge("openalex", "list") is not None
    assert await DailyBudget(tmp_path, {"openalex": KEYLESS}, clock=clock) \
        .charge("openalex", "list") is not None


def _spend(directory: str, tries: int, results) -> None:
    budget = DailyBudget(__import__("pathlib").Path(directory), {"openalex": KEYLESS})
    async def spend() -> int:
        return sum([await budget.charge("openalex", "list") is None for _ in range(tries)])

    results.put(asyncio.run(spend()))


def test_two_processes_share_one_budget(tmp_path):
    """A hundred lists a day between an editor and a command line, not a hundred each."""
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    workers = [context.Process(target=_spend, args=(str(tmp_path), 80, results))
               for _ in range(2)]
    for worker in workers:
        worker.start()
    granted = results.get(timeout=60) + results.get(timeout=60)
    for worker in workers:
        worker.join(timeout=60)
    assert granted == 100


def test_the_waiting_statement_names_the_references_and_the_way_out():
    reason = ("OpenAlex unreachable: budget spent: OpenAlex search budget for today spent "
              "($0.01 a day without an API key); asked again tomorrow")
    spent = waits_for([Outcome("crossref", "unmatched", "title", "Crossref: no exact title"),
                       Outcome("openalex", "unreachable", None, reason, unchecked="budget")])
    assert spent is not None
    said = waiting_statement(spent, ["a", "b"])
    assert said.startswith("OpenAlex search budget for today spent; 2 references wait for "
                           "tomorrow or an API key")
    assert said.endswith(": a, b")
    assert waits_for([Outcome("openalex", "unreachable", None,
                              "OpenAlex unreachable: HTTP 503", unchecked="outage")]) is None


def test_only_an_outcome_not_asked_for_budget_waits_for_one():
    """Words are not a kind: an outage, or a near match whose title quotes the budget's
    message, waits for no budget."""
    quoted = ("Crossref: no exact title; nearest: 'budget spent: OpenAlex search budget for "
              "today spent ($0.01 a day without an API key)'")
    assert waits_for([Outcome("crossref", "unmatched", "title", quoted)]) is None
    assert waits_for([Outcome("crossref", "unreachable", None, quoted,
                              unchecked="outage")]) is None


TITLES = [f"A study of budgets number {n}" for n in range(14)]


async def test_a_run_larger_than_the_search_budget(api_server, api_settings):
    """Fourteen title-only references, ten searches a day: every reference is judged or
    listed as waiting, OpenAlex receives no search beyond the budget, the report says which,
    and the next day the rest are asked."""
    api_server.add("crossref", "GET", "/works",
                   body='{"status": "ok", "message-type": "work-list", "message": {"items": []}}')
    api_server.add("openalex", "GET", "/works", body='{"meta": {"count": 0}, "results": []}')
    api_server.add("semantic_scholar", "GET", "/paper/search", body='{"total": 0, "data": []}')
    settings = api_settings.with_changes(openalex_daily_budget_usd=0.01)
    refs = bib_refs("".join(entry(f"r{n}", title) for n, title in enumerate(TITLES)))
    clock = Clock()

    async def run() -> Snapshot:
        engine = Engine(settings, arxiv_recheck_delay=0.0, clock=clock)
        try:
            resolutions = await engine.resolve_all(refs)
        finally:
            await engine.aclose()
        results = [ReferenceResult(ref, res, judge(ref, res))
                   for ref, res in zip(refs, resolutions, strict=True)]
        return Snapshot({}, [], results)

    first = await run()
    searches = [s for s in api_server.requests if s.endpoint == "openalex"]
    assert len(searches) == 10, "no request beyond the budget"
    waiting = first.waiting_for_budget()
    (spent, keys), = waiting.items()
    assert len(keys) == 4 and spent.startswith("OpenAlex search budget for today")
    asked = {r.reference.key for r in first.results
             if r.resolution.outcomes["openalex"].status == "unmatched"}
    assert asked | set(keys) == {f"r{n}" for n in range(14)}, "judged or waiting, each"
    said = summary(first)
    assert said.count("budget for today spent") == 1
    assert "4 references wait for tomorrow" in said and all(k in said for k in keys)

    for result in first.results:
        if result.reference.key in keys:
            item = result.judgement.item
            assert item is None or item.priority != "P0", "a spent budget is never evidence"
            assert "this reference waits for tomorrow" in verification_card(result, Markup())

    notices: list[str] = []

    class Heard(Listener):
        def notice(self, message: str) -> None:
            notices.append(message)

    editor = Verifier(Heard())
    editor.engine = SimpleNamespace(settings=settings)
    for result in first.results:
        editor._watch(result.resolution)
    said = [n for n in notices if "budget" in n]
    assert len(said) == 1, "the status notice is said once"
    assert said[0].startswith("citelsp: OpenAlex search budget for today spent; the references "
                              "that need it wait for tomorrow or an API key")

    clock.now += DAY
    second = await run()
    later = [s.query["search"] for s in api_server.requests if s.endpoint == "openalex"][10:]
    assert sorted(later) == sorted(TITLES[int(k[1:])] for k in keys), \
        "a new day: the four that waited are asked (the others' answers are cached)"
    assert second.waiting_for_budget() == {}


async def test_openalex_saying_nothing_is_left_spends_the_day(tmp_path):
    """``x-ratelimit-remaining-usd: 0`` on an answer: no further metered request today, in
    this process or the next."""
    sent = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request.url.params.get("search"))
        return httpx.Response(200, json={"results": []},
                              headers={"x-ratelimit-remaining-usd": "0.0000"})

    clock = Clock()
    budget = DailyBudget(tmp_path, {"openalex": KEYLESS}, clock=clock)
    http = HttpClient(Settings(), transport=httpx.MockTransport(answer), budget=budget)
    first = await http.get("openalex", "/works", params={"search": "a"}, kind="search")
    second = await http.get("openalex", "/works", params={"search": "b"}, kind="search")
    free = await http.get("openalex", "/works/doi:10.1/x")
    await http.aclose()
    assert not hasattr(first, "reason") and sent == ["a", None]
    assert second.reason.startswith(SPENT)
    assert not hasattr(free, "reason"), "single records stay free"
    assert await DailyBudget(tmp_path, {"openalex": KEYLESS}, clock=clock) \
        .charge("openalex", "list") is not None


def test_the_command_line_says_it_once(api_server, tmp_path):
    """``citelsp check --format json``: the summary on stderr names the budget and the
    references that wait, once; each waiting reference's OpenAlex outcome is unreachable."""
    api_server.add("openalex", "GET", "/works", body='{"meta": {"count": 0}, "results": []}')
    bib = tmp_path / "refs.bib"
    bib.write_text("".join(entry(f"t{n}", f"An invented study number {n}") for n in range(4)),
                   encoding="utf-8")
    done = run_cli(api_server, "check", str(bib), "--format", "json", "--fail-on", "never",
                   cache_dir=tmp_path / "cache", cwd=tmp_path,
                   env={"CITELSP_OPENALEX_DAILY_BUDGET_USD": "0.002"})
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("budget for today spent") == 1, done.stderr
    assert "2 references wait for tomorrow or an API key" in done.stderr
    assert api_server.count("openalex") == 2
    report = json.loads(done.stdout)
    waiting = [o["citation_key"] for o in report["outcomes"]
               if o["resolvers"]["openalex"]["status"] == "unreachable"]
    assert len(waiting) == 2 and all(k in done.stderr for k in waiting)
