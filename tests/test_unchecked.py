""""Not checked: REASON", one representation for every front end: a source's outcome says
why it gave no answer (offline, outage, budget, pending), and a reference no source answered
for is not checked for the most telling of them."""

from __future__ import annotations

import httpx

from citelsp.config import Settings
from citelsp.resolution.budget import DailyBudget
from citelsp.resolution.http import HttpClient
from citelsp.resolution.outcome import NotChecked, Outcome, Unreachable, not_checked, skipped
from citelsp.verdict.checklist import unchecked_words
from tests.test_budget import KEYLESS, Clock


def down(name: str, kind: str = "outage") -> Outcome:
    return Outcome(name, "unreachable", None, f"{name}: down", unchecked=kind)


def test_no_answer_is_not_checked_for_the_most_telling_reason():
    offline = skipped("arxiv", "offline: no cached answer", unchecked="offline")
    assert not_checked({"crossref": down("crossref"), "arxiv": offline}) == NotChecked(
        "outage", ("crossref",))
    assert not_checked({"openalex": down("openalex", "budget"), "crossref": down("crossref"),
                        "arxiv": offline}).kind == "budget"
    assert not_checked({"arxiv": offline}).kind == "offline"


def test_an_answer_or_nothing_wanted_is_no_reason():
    answered = Outcome("crossref", "unmatched", "title", "no exact title")
    assert not_checked({"crossref": answered, "openalex": down("openalex")}) is None
    assert not_checked({"crossref": skipped("crossref", "manual entry")}) is None


def test_the_words_every_front_end_uses():
    assert unchecked_words(NotChecked("offline", ())) == "offline, no cached answer"
    assert unchecked_words(NotChecked("outage", ("crossref", "openalex", "dblp"))) == (
        "Crossref, OpenAlex and DBLP unreachable")
    assert unchecked_words(NotChecked("budget", ("openalex",))) == (
        "today's budget spent (OpenAlex)")


async def test_a_spent_budget_is_an_unreachable_of_kind_budget(tmp_path):
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"results": []},
                              headers={"x-ratelimit-remaining-usd": "0.0000"})

    budget = DailyBudget(tmp_path, {"openalex": KEYLESS}, clock=Clock())
    http = HttpClient(Settings(), transport=httpx.MockTransport(answer), budget=budget)
    await http.get("openalex", "/works", params={"search": "a"}, kind="search")
    refused = await http.get("openalex", "/works", params={"search": "b"}, kind="search")
    await http.aclose()
    assert isinstance(refused, Unreachable) and refused.kind == "budget"
