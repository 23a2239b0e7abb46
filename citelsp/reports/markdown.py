"""The human-check checklist as Markdown, most urgent first: every reference's item, and the
local problems (a dangling citation, a duplicate key, an uncited entry), so that everything
that sets the exit status, and everything the header counts, is on the list."""

from __future__ import annotations

from citelsp import links
from citelsp.reports.rows import Row, rows
from citelsp.reports.safe import markdown_text
from citelsp.reports.text import summary
from citelsp.verdict.placement import shown
from citelsp.verdict.reasons import PRIORITY_ORDER, priority_rank
from citelsp.workspace.snapshot import Snapshot

HEADINGS = {
    "P0": "P0 — identifier evidence: check first",
    "P1": "P1 — likely wrong or unconfirmed",
    "P2": "P2 — could not be confirmed automatically",
    "P3": "P3 — no automated source applies",
}
LOCAL_HEADINGS = {
    "P0": "P0 — errors in the manuscripts and bibliographies",
    "P1": "P1 — warnings in the manuscripts and bibliographies",
    "P2": "P2 — notes on the manuscripts and bibliographies",
    "P3": "P3 — hints on the manuscripts and bibliographies",
}
"""Local findings (a dangling citation, a duplicate key) are no identifier evidence: they get
headings of their own."""


def render(snapshot: Snapshot) -> str:
    """Every item and local finding the report counts is listed under its own heading."""
    items = [(r, r.judgement.item) for r in snapshot.results if r.judgement.item is not None
             and shown(r.judgement.item.priority, snapshot.minimum)]
    items.sort(key=lambda pair: (priority_rank(pair[1].priority), pair[1].citation_key))
    found = rows(snapshot)
    local = _local(found)
    body: list[str] = []
    listed = {p: 0 for p in PRIORITY_ORDER}
    for priority in PRIORITY_ORDER:
        group = [(r, i) for r, i in items if i.priority == priority]
        if group:
            body += ["", f"## {HEADINGS[priority]}", ""]
            listed[priority] += len(group)
        for result, item in group:
            decision = result.current_decision
            box = "x" if decision is not None else " "
            body.append(f"- [{box}] **{markdown_text(item.citation_key)}** · "
                        f"`{item.reason_code}` · verdict {item.verdict_contribution}")
            body.append(f"  - Cited as: {markdown_text(item.cited_as)}")
            body.append(f"  - {markdown_text(item.message)}")
            if item.other_reasons:
                body.append(f"  - Also: {', '.join(f'`{r}`' for r in item.other_reasons)}")
            body.append(f"  - To do: {markdown_text(item.human_action)}")
            body += [f"  - <{url}>" for url in item.verification_urls if links.allowed(url)]
            if decision is not None:
                note = f": {markdown_text(decision.note)}" if decision.note else ""
                body.append(f"  - Human decision: **{decision.decision}**{note}")
        here = [g for g in local if g[0].priority == priority]
        if here:
            body += ["", f"## {LOCAL_HEADINGS[priority]}", ""]
            listed[priority] += len(here)
        for row, others in here:
            where = markdown_text(row.place)
            if others:
                where += f" (and {len(others)} more)"
            body.append(f"- [ ] **{markdown_text(row.key or row.code)}** · `{row.code}` · "
                        f"{where}")
            body.append(f"  - {markdown_text(row.message)}")
    head = ["# Reference check", "", *(markdown_text(line) for line in
                                       summary(snapshot, found, listed).splitlines())]
    return "\n".join(head + body) + "\n"


def _local(found: list[Row]) -> list[tuple[Row, list[Row]]]:
    """Local findings, one line per (code, key): a key dangling in five places is one thing
    to fix."""
    groups: dict[tuple, tuple[Row, list[Row]]] = {}
    for row in found:
        if row.local:
            group = groups.setdefault((row.code, row.key or row.place), (row, []))
            if group[0] is not row:
                group[1].append(row)
    return list(groups.values())
