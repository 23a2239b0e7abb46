"""Daily budgets per service and request class, kept beside the answer cache.

OpenAlex meters usage per day in dollars since 2026-02-13: a single record by id or DOI
is free, a list or filter call costs $0.0001, a search $0.001; a free API key gives $1 a day
(unlimited single records, or 10,000 lists, or 1,000 searches), no key $0.01 (about ten
searches). citelsp counts what it spends and sends no request the day's budget cannot pay
for: such a request is ``Unreachable`` ("budget spent"), never a verdict, and the references
it was for wait for the next day or a key. A list refused for budget costs nothing more: the
batch falls back to single lookups, which are free, so identifier lookups never wait.

The count lives in ``budget.db`` (SQLite) in the cache directory, so that two processes on
one machine (an editor and ``citelsp check``) share one (UTC) day's budget: each charge is one
``BEGIN IMMEDIATE`` transaction that reads the day's spending and adds to it only when the
budget allows. A directory that cannot hold the file keeps the count in memory (the service
still refuses what it will not pay for, which is reported unreachable too).
"""

from __future__ import annotations

import asyncio
import logging
import re
import sqlite3
import time
from collections.abc import Callable, Iterable, Mapping
from contextlib import closing
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from citelsp.config import DEFAULT_ENDPOINTS, SOURCE_NAMES, Settings
from citelsp.resolution import terms

if TYPE_CHECKING:
    from citelsp.resolution.outcome import Outcome

log = logging.getLogger("citelsp.budget")

DATABASE = "budget.db"
MICRO = 1_000_000
"""Amounts are kept in millionths of a dollar: whole numbers add up exactly."""
OPENALEX_COSTS = {terms.SINGLE: 0, terms.LIST: 100, terms.SEARCH: 1_000}
"""OpenAlex's price per call in millionths of a dollar: free, $0.10 and $1 per 1,000."""
OPENALEX_KEYLESS_USD = 0.01
OPENALEX_KEYED_USD = 1.0
SPENT = "budget spent"
"""How an ``Unreachable`` reason for a spent budget begins (``waits_for``)."""
_KIND_NAMES = {terms.SINGLE: "lookup", terms.LIST: "list", terms.SEARCH: "search"}
_WAITS = re.compile(re.escape(SPENT) + r": (.+? budget for today) spent")
_LOCK_TIMEOUT_S = 2.0


@dataclass(frozen=True)
class Allowance:
    """One service's daily budget: ``micro_usd`` a day, each class costing ``costs``."""

    micro_usd: int
    costs: Mapping[str, int]
    keyed: bool


def allowances(settings: Settings) -> dict[str, Allowance]:
    """The budgets in force: OpenAlex's, from the setting or its published free allowance.
    A mirror or a test server at another base URL is not metered by OpenAlex: it has a budget
    only when the setting gives one."""
    keyed = bool(settings.openalex_api_key)
    usd = settings.openalex_daily_budget_usd
    if usd is None:
        endpoint = settings.endpoints.get("openalex")
        if endpoint is None or endpoint.base_url != DEFAULT_ENDPOINTS["openalex"].base_url:
            return {}
        usd = OPENALEX_KEYED_USD if keyed else OPENALEX_KEYLESS_USD
    return {"openalex": Allowance(round(usd * MICRO), OPENALEX_COSTS, keyed)}


class DailyBudget:
    """Charges requests against the day's budget of their service; shared across processes."""

    def __init__(self, directory: Path | None, budgets: Mapping[str, Allowance], *,
                 clock: Callable[[], float] = time.time) -> None:
        """``directory`` holds ``budget.db``; None keeps the count in this process only."""
        self._budgets = dict(budgets)
        self._clock = clock
        self._memory: dict[tuple[str, str], int] = {}
        self._directory = directory
        self._path: Path | None = None
        """``budget.db``, opened at the first metered request: nothing is written to the
        cache directory of a run that spends nothing."""

    async def charge(self, endpoint: str, kind: str) -> str | None:
        """Take the price of one ``kind`` request to ``endpoint`` from today's budget: None
        when it is paid for (or free, or unmetered), else why not (``SPENT``). The file's
        transaction runs in a worker thread: another process holding the lock must not stall
        the event loop."""
        allowance = self._budgets.get(endpoint)
        cost = allowance.costs.get(kind, 0) if allowance is not None else 0
        if allowance is None or cost == 0:
            return None
        day = self._day()
        self._opened()
        if self._path is not None:
            try:
                if await asyncio.to_thread(self._charged_on_disk, day, endpoint, cost,
                                           allowance.micro_usd):
                    return None
                return self._spent(endpoint, kind, allowance)
            except sqlite3.Error as exc:
                log.warning("budget file %s unusable (%s); counting in memory", self._path, exc)
                self._path = None
        spent = self._memory.get((day, endpoint), 0)
        if spent + cost > allowance.micro_usd:
            return self._spent(endpoint, kind, allowance)
        self._memory[(day, endpoint)] = spent + cost
        return None

    async def exhaust(self, endpoint: str) -> None:
        """The service says today's budget is gone (its usage header): spend the rest, so
        that neither this process nor another asks again today."""
        allowance = self._budgets.get(endpoint)
        if allowance is None:
            return
        day = self._day()
        self._memory[(day, endpoint)] = allowance.micro_usd
        self._opened()
        if self._path is not None:
            try:
                await asyncio.to_thread(self._exhausted_on_disk, day, endpoint,
                                        allowance.micro_usd)
            except sqlite3.Error as exc:
                log.warning("budget file %s unusable (%s)", self._path, exc)

    async def spent_today(self, endpoint: str) -> int:
        """Millionths of a dollar spent at ``endpoint`` today (tests, diagnostics)."""
        day = self._day()
        self._opened()
        if self._path is not None:
            with closing(self._connect()) as con:
                row = con.execute("SELECT micro_usd FROM spent WHERE day = ? AND endpoint = ?",
                                  (day, endpoint)).fetchone()
            return row[0] if row else 0
        return self._memory.get((day, endpoint), 0)

    def _day(self) -> str:
        """The budget's day, in UTC: OpenAlex's documentation meters usage per day without
        naming a time zone, so UTC is an assumption; if its day turns at another hour, its
        own refusals (unreachable) and usage headers (``exhaust``) still hold."""
        return datetime.fromtimestamp(self._clock(), UTC).date().isoformat()

    def _exhausted_on_disk(self, day: str, endpoint: str, micro_usd: int) -> None:
        with closing(self._connect()) as con, con:
            con.execute("INSERT INTO spent (day, endpoint, micro_usd) VALUES (?, ?, ?) "
                        "ON CONFLICT (day, endpoint) DO UPDATE SET micro_usd = "
                        "MAX(micro_usd, excluded.micro_usd)", (day, endpoint, micro_usd))

    def _charged_on_disk(self, day: str, endpoint: str, cost: int, limit: int) -> bool:
        with closing(self._connect()) as con:
            con.execute("BEGIN IMMEDIATE")
            try:
                row = con.execute("SELECT micro_usd FROM spent WHERE day = ? AND endpoint = ?",
                                  (day, endpoint)).fetchone()
                spent = row[0] if row else 0
                if spent + cost > limit:
                    con.rollback()
                    return False
                con.execute("INSERT INTO spent (day, endpoint, micro_usd) VALUES (?, ?, ?) "
                            "ON CONFLICT (day, endpoint) DO UPDATE SET micro_usd = ?",
                            (day, endpoint, spent + cost, spent + cost))
                con.execute("DELETE FROM spent WHERE day < ?", (day,))
                con.commit()
            except BaseException:
                con.rollback()
                raise
        return True

    def _opened(self) -> None:
        """Open (and make) ``budget.db`` once; a directory that cannot hold it leaves the
        count in memory."""
        directory, self._directory = self._directory, None
        if directory is None:
            return
        self._path = directory / DATABASE
        try:
            directory.mkdir(parents=True, exist_ok=True)
            with closing(self._connect()) as con:
                con.execute("CREATE TABLE IF NOT EXISTS spent (day TEXT NOT NULL, endpoint TEXT "
                            "NOT NULL, micro_usd INTEGER NOT NULL, PRIMARY KEY (day, endpoint))")
        except (OSError, sqlite3.Error) as exc:
            log.warning("budget file in %s off (%s); counting in memory", directory, exc)
            self._path = None

    def _connect(self) -> sqlite3.Connection:
        assert self._path is not None
        return sqlite3.connect(self._path, timeout=_LOCK_TIMEOUT_S, isolation_level=None)

    @staticmethod
    def _spent(endpoint: str, kind: str, allowance: Allowance) -> str:
        name = SOURCE_NAMES.get(endpoint, endpoint)
        usd = allowance.micro_usd / MICRO
        how = "with your API key" if allowance.keyed else "without an API key"
        return (f"{SPENT}: {name} {_KIND_NAMES.get(kind, kind)} budget for today spent "
                f"(${usd:g} a day {how}); asked again tomorrow")


def waits_for(outcomes: Iterable[Outcome]) -> str | None:
    """The spent budget a reference waits for ("OpenAlex search budget for today spent, …
    without an API key"), named in the summary of an outcome not asked for want of budget
    (``unchecked`` "budget"; any other outcome's words, a record's title among them, never
    count), or None."""
    for outcome in outcomes:
        if outcome.unchecked == "budget" and (m := _WAITS.search(outcome.summary)):
            keyless = "without an API key" in outcome.summary[m.end():]
            return m.group(1) + (_KEYLESS if keyless else "")
    return None


_KEYLESS = " (no API key)"
MAX_LISTED = 20


def _advice(budget: str) -> str:
    if budget.endswith(_KEYLESS):
        return " or an API key (CITELSP_OPENALEX_API_KEY, free at openalex.org/settings/api)"
    return ""


_NOTICE = "spent; the references that need it wait for tomorrow"


def notice(budget: str) -> str:
    """The editor's one status notice for a spent budget."""
    return f"citelsp: {budget.removesuffix(_KEYLESS)} {_NOTICE}{_advice(budget)}"


def is_notice(message: str) -> bool:
    """Whether ``message`` is ``notice``'s: the command line leaves it to the report's
    summary, which says the same once with the references that wait."""
    return _NOTICE in message


def card_line(budget: str) -> str:
    """The hover's line for a reference that waits."""
    return (f"{budget.removesuffix(_KEYLESS)} spent: this reference waits for "
            f"tomorrow{_advice(budget)}.")


def waiting_statement(budget: str, keys: list[str]) -> str:
    """"OpenAlex search budget for today spent; 41 references wait for tomorrow or an API
    key: a, b, …" — said once per report and once in the editor."""
    n = len(keys)
    shown = ", ".join(keys[:MAX_LISTED]) + (f" and {n - MAX_LISTED} more" if n > MAX_LISTED
                                            else "")
    return (f"{budget.removesuffix(_KEYLESS)} spent; {n} reference{'s' if n != 1 else ''} "
            f"wait{'s' if n == 1 else ''} for tomorrow{_advice(budget)}: {shown}")
