"""``{"summaries", "outcomes", "checklist", "diagnostics"}`` and ``ars``.

Checklist items follow ``schemas/checklist_item.schema.json`` exactly (no extra fields), so a
human decision is reported with the reference's ``outcomes`` entry instead.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

import orjson

from citelsp.reports.rows import SEVERITY_NAME, Row, rows
from citelsp.resolution.asking import Resolution
from citelsp.resolution.outcome import Outcome
from citelsp.workspace.snapshot import NotAsked, ReferenceResult, Snapshot


def _encode(item: object) -> bytes:
    """UTF-8 JSON, by orjson: ``json`` took a second over the 45 MB report of a 10 MB
    library. A lone surrogate (which an API record may carry) is not UTF-8: that record is
    written with ``\\u`` escapes instead."""
    try:
        return orjson.dumps(item)
    except orjson.JSONEncodeError:
        return json.dumps(item, ensure_ascii=True).encode("ascii")


def outcome_dict(outcome: Outcome) -> dict:
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


def sections(snapshot: Snapshot) -> dict[str, Iterable[object]]:
    """The report's four lists, each built as it is written."""
    not_asked = NotAsked()
    return {
        "summaries": snapshot.summaries(),
        "outcomes": (_outcomes(r, not_asked) for r in snapshot.results),
        "checklist": (r.judgement.item.to_dict() for r in snapshot.results
                      if r.judgement.item is not None),
        "diagnostics": (_diagnostic(row) for row in rows(snapshot)),
    }


def _outcomes(result: ReferenceResult, not_asked: NotAsked) -> dict:
    resolution = result.resolution
    decision = result.current_decision
    return {
        "citation_key": result.reference.key,
        "resolvers": not_asked.made(resolution, _resolvers),
        "cache_age_days": resolution.cache_age_days,
        "cache_stale_advisory": resolution.cache_stale_advisory,
        "human_decision": None if decision is None else {
            "decision": decision.decision,
            "note": decision.note,
            "decided_at": decision.decided_at,
        },
    }


def _resolvers(resolution: Resolution) -> dict:
    return {name: outcome_dict(o) for name, o in resolution.outcomes.items()}


def _diagnostic(row: Row) -> dict:
    return {
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


def chunks(snapshot: Snapshot) -> Iterator[bytes]:
    """The report in UTF-8 pieces, one record a line: written as it is built (a library of
    10,000 entries is never held twice in memory)."""
    yield b"{"
    for n, (name, items) in enumerate(sections(snapshot).items()):
        yield (b"\n" if n == 0 else b",\n") + f'  "{name}": ['.encode()
        yield from _records(items, b"    ")
        yield b"]"
    yield b"\n}\n"


def _records(items: Iterable[object], indent: bytes) -> Iterator[bytes]:
    empty = True
    for item in items:
        yield (b"\n" if empty else b",\n") + indent + _encode(item)
        empty = False
    if not empty:
        yield b"\n" + indent[:-2]


def render(snapshot: Snapshot) -> str:
    return b"".join(chunks(snapshot)).decode()


def render_ars(snapshot: Snapshot) -> str:
    return (b"[" + b"".join(_records(snapshot.summaries(), b"  ")) + b"]\n").decode()
