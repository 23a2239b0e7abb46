"""A claim ledger (seed 002 ``Fact``): one fact per reference, "this work exists as cited"."""

from __future__ import annotations

import json
import uuid

from citelsp.resolution.identity import identity_of
from citelsp.workspace.snapshot import ReferenceResult, Snapshot

VERIFICATION = {"true": "verified", "false": "refuted", "unresolvable": "undetermined"}
STATE = {"matched": "ai_verified", "unmatched": "unverified", "unreachable": "needs_human_check"}


def fact(result: ReferenceResult, generated_at: str) -> dict:
    ref = result.reference
    identity = identity_of(result.resolution.ids, ref.work)
    decision = result.current_decision
    sources = []
    for name, outcome in result.resolution.outcomes.items():
        if outcome.status == "skipped":
            continue
        source = {
            "title": (outcome.record.title if outcome.record and outcome.record.title else name),
            "domain": name,
            "state": "human_verified" if decision and decision.decision == "verified"
            else STATE[outcome.status],
            "stateReason": "reachable" if outcome.status != "unreachable" else "unreachable",
        }
        if outcome.url:
            source["url"] = outcome.url
            source["decision_url"] = outcome.url
        if outcome.checked_at:
            source["retrievedAt"] = outcome.checked_at.isoformat()
        sources.append(source)
    approval = {"verified": "approved", "rejected": "rejected"}.get(
        decision.decision if decision else "", "pending")
    title = ref.work.title or ref.key
    return {
        "id": str(uuid.uuid5(uuid.NAMESPACE_URL, f"citelsp:{ref.key}:{identity}")),
        "claim": f"The work cited as '{ref.key}' (“{title}”) exists as cited.",
        "figure": None,
        "provenance": "imported",
        "sources": sources,
        "verification": VERIFICATION[result.judgement.verdict],
        "approval": approval,
        "section_binding": None,
        "updated_at": decision.decided_at if decision else generated_at,
    }


def render(snapshot: Snapshot) -> str:
    stamp = snapshot.generated_at.isoformat().replace("+00:00", "Z")
    return json.dumps([fact(r, stamp) for r in snapshot.results], indent=2,
                      ensure_ascii=False) + "\n"
