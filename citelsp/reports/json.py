"""``{"summaries", "outcomes", "checklist", "diagnostics"}`` (DESIGN.md §10) and ``ars``.

Checklist items follow ``schemas/checklist_item.schema.json`` exactly (no extra fields), so a
human decision is reported with the reference's ``outcomes`` entry instead.
"""

from __future__ import annotations

import json

from citelsp.reports.rows import SEVERITY_NAME, rows
from citelsp.workspace.snapshot import Snapshot


def outcome_dict(outcome) -> dict:
    return {
        "status": outcome.status,
        "queried_by": outcome.queried_by,
        "response_summary": outcome.summary,
        "reason": outcome.reason,
        "checked_at": outcome.checked_at.isoformat() if outcome.checked_at else None,
        "from_cache": outcome.from_cache,
        "matched_title": outcome.record.title if outcome.record else None,
        "url": outcome.url,
    }


def data(snapshot: Snapshot) -> dict:
    outcomes = []
    checklist = []
    for c in snapshot.results:
        res = c.resolution
        decision = c.current_decision
        outcomes.append({
            "citation_key": c.reference.key,
            "resolvers": {name: outcome_dict(o) for name, o in res.outcomes.items()},
            "cache_age_days": res.cache_age_days,
            "cache_stale_advisory": res.cache_stale_advisory,
            "human_decision": None if decision is None else {
                "decision": decision.decision,
                "note": decision.note,
                "decided_at": decision.decided_at,
            },
        })
        item = c.judgement.item
        if item is not None:
            checklist.append(item.to_dict())
    diagnostics = [
        {
            "path": row.path,
            "range": {
                "start": {"line": row.start[0], "character": row.start[1]},
                "end": {"line": row.end[0], "character": row.end[1]},
            },
            "severity": SEVERITY_NAME[row.severity],
            "priority": row.priority,
            "code": row.code,
            "message": row.message,
        }
        for row in rows(snapshot)
    ]
    return {
        "summaries": snapshot.summaries(),
        "outcomes": outcomes,
        "checklist": checklist,
        "diagnostics": diagnostics,
    }


def render(snapshot: Snapshot) -> str:
    return json.dumps(data(snapshot), indent=2, ensure_ascii=False) + "\n"


def render_ars(snapshot: Snapshot) -> str:
    return json.dumps(snapshot.summaries(), indent=2, ensure_ascii=False) + "\n"
