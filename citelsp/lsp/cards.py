"""Hover cards: what every source said about a reference, and what it means (DESIGN.md §7).

Every string from a document or an API goes through ``escape``; links are built only from
allowlisted https URLs, so data can never smuggle a link, image, HTML or command into a hover.
"""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import urlsplit

from citelsp.lsp.hover import escape
from citelsp.resolution.outcome import Outcome, Record
from citelsp.resolution.resolve import LABELS
from citelsp.verdict.checklist import HUMAN_LINK_HOSTS
from citelsp.verdict.reasons import REASONS
from citelsp.workspace.snapshot import ReferenceResult

VERDICT_WORDS = {
    "true": "found — the work exists as cited",
    "false": "refuted — identifier evidence says this reference is fabricated",
    "unresolvable": "not confirmed — no source could confirm or refute it",
}
STATUS_WORDS = {
    "matched": "✔ matched",
    "unmatched": "✘ not matched",
    "unreachable": "⚠ unreachable",
    "skipped": "– skipped",
}


def safe_link(url: str | None, text: str) -> str:
    """A Markdown link only for https URLs on the allowed hosts; otherwise plain text."""
    if not url:
        return escape(text)
    parts = urlsplit(url)
    if parts.scheme != "https" or parts.hostname not in HUMAN_LINK_HOSTS or parts.username:
        return escape(text)
    target = url.replace("(", "%28").replace(")", "%29").replace(" ", "%20")
    return f"[{escape(text)}]({target})"


def pending_card() -> str:
    return "**Verification:** being checked…"


def verification_card(result: ReferenceResult) -> str:
    verification = result.judgement
    resolution = result.resolution
    item = verification.item
    lines = [f"**Verification:** {escape(VERDICT_WORDS[verification.verdict])}"]
    if item is not None:
        reason = REASONS.get(item.reason_code)
        lines.append(f"**{item.priority} · {item.reason_code}** — {escape(item.message)}")
        if reason is not None and reason.action:
            lines.append(f"_To do:_ {escape(reason.action)}")
        if item.other_reasons:
            lines.append("Also: " + ", ".join(escape(r) for r in item.other_reasons))
    else:
        lines.append("No human check needed.")
    decision = result.decision
    if decision is not None:
        state = "stale — the entry changed since" if result.decision_stale else "recorded"
        note = f": {escape(decision.note)}" if decision.note else ""
        lines.append(f"**Human decision:** {escape(decision.decision)} ({state} "
                     f"{escape(decision.decided_at)}){note}")
    if verification.retraction is not None:
        r = verification.retraction
        notice = safe_link(f"https://doi.org/{r.notice_doi}" if r.notice_doi else None,
                           r.notice_doi or "notice")
        lines.append(f"**Retraction:** {escape(r.kind)} ({escape(r.source)}"
                     f"{', ' + escape(r.date) if r.date else ''}) {notice}")
    lines += ["", "| source | status | queried by | summary | checked |", "|---|---|---|---|---|"]
    for name, outcome in resolution.outcomes.items():
        lines.append(_row(name, outcome))
    if verification.matched is not None:
        lines += ["", "**Matched record:** " + record_line(verification.matched)]
    conflicts = verification.conflicts
    if conflicts:
        lines.append("**Conflicts:** " + "; ".join(
            f"{escape(c.field)}: cited {escape(c.cited)}, found {escape(c.found)}"
            for c in conflicts))
    if verification.near_matches:
        lines.append("**Near matches:**")
        lines += [f"- {record_line(r)}" for r in verification.near_matches[:3]]
    if resolution.cache_age_days is not None:
        stale = " — stale, re-verify to refresh" if resolution.cache_stale_advisory else ""
        lines.append(f"_Cached answers, {resolution.cache_age_days:.0f} days old{stale}._")
    return "  \n".join(lines)


def _row(name: str, outcome: Outcome) -> str:
    when = _ago(outcome.checked_at)
    origin = "cache" if outcome.from_cache else "live"
    checked = f"{when} ({origin})" if when else "—"
    summary = safe_link(outcome.url, outcome.summary) if outcome.url else escape(outcome.summary)
    return (f"| {escape(LABELS.get(name, name))} | {STATUS_WORDS[outcome.status]} | "
            f"{escape(outcome.queried_by or '—')} | {summary} | {checked} |")


def record_line(record: Record) -> str:
    authors = ", ".join(escape(p.display()) for p in record.authors[:4])
    if len(record.authors) > 4:
        authors += " et al."
    parts = [f"*{escape(record.title or 'untitled')}*"]
    if authors:
        parts.append(authors)
    if record.venue:
        parts.append(escape(record.venue))
    if record.year:
        parts.append(str(record.year))
    if record.doi:
        parts.append(safe_link(f"https://doi.org/{record.doi}", f"doi:{record.doi}"))
    if record.arxiv_id:
        parts.append(safe_link(f"https://arxiv.org/abs/{record.arxiv_id}",
                               f"arXiv:{record.arxiv_id}"))
    return " · ".join(parts)


def _ago(when: datetime | None) -> str:
    if when is None:
        return ""
    seconds = (datetime.now(UTC) - when.astimezone(UTC)).total_seconds()
    if seconds < 90:
        return "just now"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min ago"
    if seconds < 172800:
        return f"{seconds / 3600:.0f} h ago"
    return f"{seconds / 86400:.0f} days ago"
