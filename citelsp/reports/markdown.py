"""The human-check checklist as Markdown, most urgent first: every reference's item, and the
local problems that need a person too (errors and warnings: a dangling citation, a duplicate
key), so that everything that sets the exit status is on the list."""

from __future__ import annotations

from citelsp import links
from citelsp.reports.rows import Row, rows
from citelsp.reports.safe import markdown_text
from citelsp.reports.text import summary
from citelsp.verdict.reasons import PRIORITY_ORDER, priority_rank
from citelsp.workspace.snapshot import Snapshot

HEADINGS = {
    "P0": "P0 — identifier evidence: check first",
    "P1": "P1 — likely wrong or unconfirmed",
    "P2": "P2 — could not be confirmed automatically",
    "P3": "P3 — no automated source applies",
}
LOCAL_PRIORITIES = ("P0", "P1")
"""Local findings listed: errors and warnings (hints and notes stay in the editor)."""


def render(snapshot: Snapshot) -> str:
    items = [(r, r.judgement.item) for r in snapshot.results if r.judgement.item is not None]
    items.sort(key=lambda pair: (priority_rank(pair[1].priority), pair[1].citation_key))
    found = rows(snapshot)
    local = _local(found)
    lines = ["# Reference check", "",
             *(markdown_text(line) for line in summary(snapshot, found).splitlines())]
    for priority in PRIORITY_ORDER:
        group = [(r, i) for r, i in items if i.priority == priority]
        here = [g for g in local if g[0].priority == priority]
        if not group and not here:
            continue
        lines += ["", f"## {HEADINGS[priority]}", ""]
        for result, item in group:
            decision = result.current_decision
            box = "x" if decision is not None else " "
            lines.append(f"- [{box}] **{markdown_text(item.citation_key)}** · "
                         f"`{item.reason_code}` · verdict {item.verdict_contribution}")
            lines.append(f"  - Cited as: {markdown_text(item.cited_as)}")
            lines.append(f"  - {markdown_text(item.message)}")
            if item.other_reasons:
                lines.append(f"  - Also: {', '.join(f'`{r}`' for r in item.other_reasons)}")
            lines.append(f"  - To do: {markdown_text(item.human_action)}")
            lines += [f"  - <{url}>" for url in item.verification_urls if links.allowed(url)]
            if decision is not None:
                note = f": {markdown_text(decision.note)}" if decision.note else ""
                lines.append(f"  - Human decision: **{decision.decision}**{note}")
        for row, others in here:
            where = markdown_text(row.place)
            if others:
                where += f" (and {len(others)} more)"
            lines.append(f"- [ ] **{markdown_text(row.key or row.code)}** · `{row.code}` · "
                         f"{where}")
            lines.append(f"  - {markdown_text(row.message)}")
    return "\n".join(lines) + "\n"


def _local(found: list[Row]) -> list[tuple[Row, list[Row]]]:
    """Local errors and warnings, one line per (code, key): a key dangling in five places is
    one thing to fix."""
    groups: dict[tuple, tuple[Row, list[Row]]] = {}
    for row in found:
        if row.local and row.priority in LOCAL_PRIORITIES:
            group = groups.setdefault((row.code, row.key or row.place), (row, []))
            if group[0] is not row:
                group[1].append(row)
    return list(groups.values())
