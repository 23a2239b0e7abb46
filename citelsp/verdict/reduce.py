"""Outcomes → ``lookup_verified`` (seed 000) and the four-key summary of the reports.

The reducer is seed 000's, unchanged: skipped outcomes do not count, any matched wins,
otherwise an ID-keyed unmatched is fabrication evidence, otherwise unresolvable. The summary
folds every other resolver into the ``crossref`` key so the same reducer applied to the four
keys gives the same verdict as applied to all outcomes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

Verdict = Literal["true", "false", "unresolvable"]

SUMMARY_RESOLVERS = ("crossref", "openalex", "semantic_scholar", "arxiv")
AUTHORITATIVE_FALLBACK = "doi_registry"
"""The resolver authoritative for a DOI whose agency is unknown."""


def _get(outcome: Any, name: str, default: Any = None) -> Any:
    if isinstance(outcome, Mapping):
        return outcome.get(name, default)
    return getattr(outcome, name, default)


def reduce_lookup_verified(outcomes: Mapping[str, Any]) -> Verdict:
    """Seed 000's reducer over outcomes (``Outcome`` objects or seed-000 dicts).

    An outcome flagged ``refutes_identifier`` counts as ID-keyed whatever it says it queried.
    """
    ran = [o for o in outcomes.values() if _get(o, "status") != "skipped"]
    if any(_get(o, "status") == "matched" for o in ran):
        return "true"
    if any(_get(o, "status") == "unmatched" and _queried_by(o) == "id" for o in ran):
        return "false"
    return "unresolvable"


def _strength(outcome: Any) -> int:
    """matched > unmatched/id > unmatched/title > unreachable > skipped."""
    status = _get(outcome, "status")
    if status == "matched":
        return 4
    if status == "unmatched":
        return 3 if _queried_by(outcome) == "id" else 2
    return 1 if status == "unreachable" else 0


def _queried_by(outcome: Any) -> str | None:
    """What the summary reports as queried: a refuted identifier is always ``id``."""
    status = _get(outcome, "status")
    if _get(outcome, "refutes_identifier", False) and status == "unmatched":
        return "id"
    if status in ("skipped", "unreachable"):
        return None
    queried = _get(outcome, "queried_by")
    return queried if queried in ("id", "title") else "title"


def _summary_text(outcome: Any) -> str | None:
    return _get(outcome, "summary") or _get(outcome, "response_summary")


def _entry(outcome: Any, via: str | None = None) -> dict:
    text = _summary_text(outcome)
    if via is not None:
        text = f"{via}: {text}" if text else via
    return {
        "status": _get(outcome, "status"),
        "queried_by": _queried_by(outcome),
        "response_summary": text,
    }


def summary_outcomes(outcomes: Mapping[str, Any], authoritative: str | None) -> dict[str, dict]:
    """The four seed-000 ``resolver_outcomes`` for one reference.

    ``crossref`` carries the strongest of Crossref's own outcome and the DOI's authoritative
    resolver (``authoritative``; doi_registry when unknown). Any further resolver outside the
    four (e.g. PubMed coordinates via chinese_literature) is folded in the same way after it,
    so no match and no fabrication evidence is lost from the summary. Ties keep Crossref's own.
    """
    authority = authoritative or AUTHORITATIVE_FALLBACK
    result = {
        name: _entry(outcomes[name])
        if name in outcomes
        else {"status": "skipped", "queried_by": None, "response_summary": "not run"}
        for name in SUMMARY_RESOLVERS
    }
    others = [n for n in outcomes if n not in SUMMARY_RESOLVERS]
    others.sort(key=lambda n: n != authority)
    best, best_name = outcomes.get("crossref"), "crossref"
    for name in others:
        if best is None or _strength(outcomes[name]) > _strength(best):
            best, best_name = outcomes[name], name
    if best is not None and best_name != "crossref":
        result["crossref"] = _entry(best, via=best_name)
    return result
