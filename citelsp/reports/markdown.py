"""The human-check checklist as Markdown, most urgent first."""

from __future__ import annotations

from citelsp.verdict.reasons import PRIORITY_ORDER, priority_rank
from citelsp.workspace.snapshot import Snapshot

HEADINGS = {
    "P0": "P0 — identifier evidence: check first",
    "P1": "P1 — likely wrong or unconfirmed",
    "P2": "P2 — could not be confirmed automatically",
    "P3": "P3 — no automated source applies",
}


def escape(text: str) -> str:
    """Inert Markdown: data from documents and APIs must not become links or HTML."""
    out = " ".join(str(text).split()).replace("&", "&amp;").replace("<", "&lt;")
    for ch in "\\`*_[]()#|!>":
        out = out.replace(ch, "\\" + ch)
    return out


def render(snapshot: Snapshot) -> str:
    items = [(c, c.judgement.item) for c in snapshot.results
             if c.judgement.item is not None]
    items.sort(key=lambda pair: (priority_rank(pair[1].priority), pair[1].citation_key))
    verdicts = [c.judgement.verdict for c in snapshot.results]
    lines = [
        "# Reference check",
        "",
        f"{len(snapshot.results)} references checked: {verdicts.count('true')} verified, "
        f"{verdicts.count('false')} refuted, {verdicts.count('unresolvable')} unresolvable; "
        f"{len(items)} need a human check.",
    ]
    for priority in PRIORITY_ORDER:
        group = [(c, i) for c, i in items if i.priority == priority]
        if not group:
            continue
        lines += ["", f"## {HEADINGS[priority]}", ""]
        for checked, item in group:
            decision = checked.current_decision
            box = "x" if decision is not None else " "
            lines.append(f"- [{box}] **{escape(item.citation_key)}** · `{item.reason_code}` · "
                         f"verdict {item.verdict_contribution}")
            lines.append(f"  - Cited as: {escape(item.cited_as)}")
            lines.append(f"  - {escape(item.message)}")
            if item.other_reasons:
                lines.append(f"  - Also: {', '.join(item.other_reasons)}")
            lines.append(f"  - To do: {escape(item.human_action)}")
            for url in item.verification_urls:
                lines.append(f"  - <{url}>")
            if decision is not None:
                note = f": {escape(decision.note)}" if decision.note else ""
                lines.append(f"  - Human decision: **{decision.decision}**{note}")
    return "\n".join(lines) + "\n"
