"""Hover cards: each reference under the cursor, what every source said about it, and what
it means (``workspace.hover`` finds them; the language server sends the text).

Every string from a document or an API goes through the ``Markup`` writer; links are built
only from allowlisted https URLs, so data can never smuggle a link, image, HTML or command
into a hover.
"""

from __future__ import annotations

from datetime import UTC, datetime

from citelsp import links
from citelsp.documents.model import Reference
from citelsp.documents.text import normalize_title
from citelsp.reports.markup import Markup
from citelsp.resolution.budget import card_line as budget_card_line
from citelsp.resolution.budget import waits_for
from citelsp.resolution.outcome import Outcome, Record
from citelsp.resolution.resolve import LABELS
from citelsp.verdict.checklist import conflict_text
from citelsp.verdict.reasons import REASONS
from citelsp.workspace.hover import Hover
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


def hover_text(hover: Hover, m: Markup) -> str:
    """Each reference the cursor names (two under a duplicated key), with its card; or
    that a citation's key is in no bibliography."""
    if not hover.entries:
        return f"{m.bold(m.text(hover.key))}: not in any bibliography of this manuscript"
    parts = []
    for entry in hover.entries:
        text = format_reference(entry.reference, m)
        if entry.result is not None:
            text += m.rule + verification_card(entry.result, m)
        elif entry.pending:
            text += m.rule + pending_card(m)
        parts.append(text)
    return m.rule.join(parts)


def format_reference(ref: Reference, m: Markup) -> str:
    """One entry: authors, year, title, venue, identifiers."""
    work = ref.work
    names = ", ".join(m.text(p.display()) for p in work.authors[:8])
    if len(work.authors) > 8 or work.has_et_al:
        names += ", et al."
    kind = "\\bibitem, read from its text" if work.formatted else ref.entry_type
    parts = [f"{m.bold(m.text(ref.key))} · {m.text(kind)}", ""]
    line = names or m.italic("authors not read" if work.formatted else "no authors")
    if work.year:
        line += f" ({work.year})"
    parts.append(line + ".")
    parts.append(m.italic(m.text(work.title)) + "." if work.title else m.italic(
        "title not told apart" if work.formatted else "no title"))
    venue = ", ".join(m.text(v) for v in (work.venue, work.volume and f"vol. {work.volume}",
                                           work.issue and f"no. {work.issue}",
                                           work.pages and f"pp. {work.pages}") if v)
    if venue:
        parts.append(venue + ".")
    for name in ("doi", "DOI", "eprint", "url", "URL"):
        value = ref.value(name)
        if value:
            parts.append(f"{name}: {m.code(value)}")
    return m.line_break.join(parts)


def pending_card(m: Markup) -> str:
    return f"{m.bold('Verification:')} being checked…"


def verification_card(result: ReferenceResult, m: Markup) -> str:
    judgement = result.judgement
    resolution = result.resolution
    item = judgement.item
    unchecked = resolution.unchecked
    verdict = ("not checked — no source could be asked or answered" if unchecked is not None
               else VERDICT_WORDS[judgement.verdict])
    lines = [f"{m.bold('Verification:')} {m.text(verdict)}"]
    if item is not None:
        reason = REASONS.get(item.reason_code)
        lines.append(f"{m.bold(f'{item.priority} · {item.reason_code}')} — "
                     f"{m.text(item.message)}")
        if reason is not None and reason.action:
            lines.append(f"{m.italic('To do:')} {m.text(reason.action)}")
        if item.other_reasons:
            lines.append("Also: " + ", ".join(m.text(r) for r in item.other_reasons))
    else:
        lines.append("No human check needed.")
    decision = result.decision
    if decision is not None:
        state = "stale — the entry changed since" if result.decision_stale else "recorded"
        note = f": {m.text(decision.note)}" if decision.note else ""
        lines.append(f"{m.bold('Human decision:')} {m.text(decision.decision)} ({state} "
                     f"{m.text(decision.decided_at)}){note}")
    if judgement.retraction is not None:
        r = judgement.retraction
        notice = m.link(links.doi_url(r.notice_doi) if r.notice_doi else None,
                        r.notice_doi or "notice")
        lines.append(f"{m.bold('Retraction:')} {m.text(r.kind)} ({m.text(r.source)}"
                     f"{', ' + m.text(r.date) if r.date else ''}) {notice}")
    lines.append("")
    lines += m.table(["source", "status", "queried by", "summary", "checked"],
                     [_row(name, outcome, m) for name, outcome in resolution.outcomes.items()])
    spent = waits_for(resolution.outcomes.values())
    if spent is not None and judgement.verdict != "true":
        lines += ["", m.italic(m.text(budget_card_line(spent)))]
    if judgement.matched is not None:
        lines += ["", f"{m.bold('Matched record:')} {record_line(judgement.matched, m)}"]
    if judgement.conflicts:
        lines.append(m.bold("Conflicts:"))
        lines += [f"- {m.text(conflict_text(c))}" for c in judgement.conflicts]
    near = distinct(judgement.near_matches)
    if near:
        lines.append(m.bold("Near matches:"))
        lines += [f"- {record_line(r, m)}" for r in near[:3]]
    if resolution.cache_age_days is not None:
        stale = " — stale, re-verify to refresh" if resolution.cache_stale_advisory else ""
        lines.append(m.italic(f"Cached answers, {resolution.cache_age_days:.0f} days "
                              f"old{stale}."))
    return m.line_break.join(lines)


def distinct(records: tuple[Record, ...]) -> list[Record]:
    """One record per work: several sources returning the same near match show it once."""
    seen: set[str] = set()
    out = []
    for r in records:
        key = (r.doi or "").lower() or normalize_title(r.title or "")
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def _row(name: str, outcome: Outcome, m: Markup) -> list[str]:
    when = _ago(outcome.checked_at)
    origin = outcome.details.get("snapshot") or ("cache" if outcome.from_cache else "live")
    checked = f"{when} ({origin})" if when else ("—" if m.markdown else "")
    summary = m.link(outcome.url, outcome.summary) if outcome.url else m.text(outcome.summary)
    return [m.text(LABELS.get(name, name)), STATUS_WORDS[outcome.status],
            m.text(outcome.queried_by or "—") if m.markdown else (outcome.queried_by or ""),
            summary, checked]


def record_line(record: Record, m: Markup) -> str:
    authors = ", ".join(m.text(p.display()) for p in record.authors[:4])
    if len(record.authors) > 4:
        authors += " et al."
    parts = [m.italic(m.text(record.title or "untitled"))]
    if authors:
        parts.append(authors)
    if record.venue:
        parts.append(m.text(record.venue))
    if record.year:
        parts.append(str(record.year))
    if record.doi:
        parts.append(m.link(links.doi_url(record.doi), f"doi:{record.doi}"))
    if record.arxiv_id:
        parts.append(m.link(links.arxiv_url(record.arxiv_id),
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
