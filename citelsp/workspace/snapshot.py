"""What a workspace knows, frozen for reports: each checked reference with its resolution,
judgement, human decision and citations, and every problem placed in its file."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

from citelsp.documents.model import Citation, Problem, Reference
from citelsp.documents.parse import Document
from citelsp.resolution.asking import Resolution
from citelsp.resolution.budget import waits_for
from citelsp.resolution.outcome import NotChecked, Outcome
from citelsp.verdict.checklist import Judgement, unchecked_words
from citelsp.verdict.decisions import Decision
from citelsp.verdict.reduce import summary_outcomes

T = TypeVar("T")


@dataclass(frozen=True)
class ReferenceResult:
    """One verified reference, what was judged from its resolution, and what a human decided."""

    reference: Reference
    resolution: Resolution
    judgement: Judgement
    decision: Decision | None = None
    decision_stale: bool = False
    """The entry changed since the human decided: the decision no longer applies."""
    citations: tuple[Citation, ...] = ()

    @property
    def current_decision(self) -> Decision | None:
        """The decision, unless the entry changed since it was made."""
        return None if self.decision_stale else self.decision


    def unchecked(self) -> NotChecked | None:
        """Why no source could be asked about this reference or answered for it (offline,
        an outage, a spent budget); None when some source answered or none applies (a manual
        entry)."""
        found = self.resolution.unchecked
        if found is None and not self.resolution.complete and not any(
                o.status in ("matched", "unmatched")
                for o in self.resolution.outcomes.values()):
            return NotChecked("offline", ())
        return found


@dataclass(frozen=True)
class Coverage:
    """How many references could be checked, and why the others could not."""

    total: int
    unchecked: dict[str, int]
    """Cause ("offline", "source unreachable: Crossref, OpenAlex") → how many references."""
    checkable: int
    """References some source could be asked about (not manual entries, not empty ones)."""

    @property
    def checked(self) -> int:
        return self.checkable - sum(self.unchecked.values())

    def statement(self) -> str | None:
        """"3 of 12 references could not be checked (offline)", or None."""
        missing = sum(self.unchecked.values())
        if not missing:
            return None
        causes = "; ".join(self.unchecked)
        return (f"{missing} of {self.total} reference{'s' if self.total != 1 else ''} could "
                f"not be checked ({causes})")


@dataclass(repr=False, eq=False)
class Snapshot:
    """Compared by identity: reports remember what they derive from one (``rows``)."""

    documents: dict[str, Document]
    """The documents reported on, by URI (their text places the problems)."""
    problems: list[tuple[str, Problem]]
    results: list[ReferenceResult]
    generated_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    minimum: str = "P3"
    """The lowest priority reported (``citelsp.minPriority``, ``--min-priority``)."""
    hidden: dict[str, int] = field(default_factory=dict)
    """Priority → findings below ``minimum``, left out of ``problems``: counted, not lost."""

    def __repr__(self) -> str:
        """Short: asyncio writes the repr of a finished task's result, and a full one of a
        10,000-reference snapshot took seconds."""
        return (f"Snapshot({len(self.documents)} documents, {len(self.problems)} problems, "
                f"{len(self.results)} results)")

    def coverage(self) -> Coverage:
        """Said once per report, each cause once with every source it names."""
        kinds: dict[str, tuple[int, dict[str, None]]] = {}
        checkable = 0
        for result in self.results:
            unchecked = result.unchecked()
            if unchecked is not None:
                n, resolvers = kinds.get(unchecked.kind, (0, {}))
                resolvers.update(dict.fromkeys(unchecked.resolvers))
                kinds[unchecked.kind] = (n + 1, resolvers)
            if unchecked is not None or any(o.status != "skipped"
                                            for o in result.resolution.outcomes.values()):
                checkable += 1
        causes = {"offline" if kind == "offline" else  # nothing cached: said once below
                  unchecked_words(NotChecked(kind, tuple(resolvers))): n  # type: ignore[arg-type]
                  for kind, (n, resolvers) in kinds.items()}
        return Coverage(len(self.results), causes, checkable)

    def waiting_for_budget(self) -> dict[str, list[str]]:
        """Spent daily budget (``budget.waits_for``) → the keys of the references not
        verified that wait for it: said once in a report."""
        waiting: dict[str, list[str]] = {}
        for result in self.results:
            if result.judgement.verdict == "true":
                continue
            spent = waits_for(result.resolution.outcomes.values())
            if spent is not None:
                waiting.setdefault(spent, []).append(result.reference.key)
        return waiting

    def summaries(self) -> list[dict]:
        """Seed-000 summaries: one per (citation_key, ref_slug) pair."""
        rows = []
        now = _timestamp(self.generated_at)
        not_asked = NotAsked()
        for result in self.results:
            resolution = result.resolution
            times = [o.checked_at for o in resolution.outcomes.values() if o.checked_at]
            stamp = _timestamp(max(times)) if times else now
            summary = not_asked.made(resolution, _summary_outcomes)
            slugs: dict[str, bool] = {}
            for citation in result.citations:
                if citation.syntax == "marker":
                    slugs[citation.key] = slugs.get(citation.key, False) or \
                        citation.anchor_present
            key = result.reference.key
            for slug, anchored in (slugs or {key: False}).items():
                rows.append({
                    "citation_key": key,
                    "ref_slug": slug,
                    "lookup_verified": result.judgement.verdict,
                    "anchor_present": anchored,
                    "verification_timestamp": stamp,
                    "resolver_outcomes": summary,
                })
        return rows


class NotAsked:
    """What a report makes from the outcomes of a reference no source was asked about, made
    once for each set of them: they are shared (``outcome.skipped``), and in an offline
    check of a large library nearly every reference has one of a few such sets. One per kind
    of thing made (``make``)."""

    def __init__(self) -> None:
        self._made: dict[tuple, tuple[tuple[Outcome, ...], Any]] = {}
        """By authoritative resolver, names and outcome ids; the value keeps the outcomes
        alive, so no id is reused while this exists."""

    def made(self, resolution: Resolution, make: Callable[[Resolution], T]) -> T:
        outcomes = resolution.outcomes
        if not all(o.status == "skipped" for o in outcomes.values()):
            return make(resolution)
        shape = (resolution.authoritative, *outcomes, *map(id, outcomes.values()))
        hit = self._made.get(shape)
        if hit is None:
            hit = self._made[shape] = (tuple(outcomes.values()), make(resolution))
        return hit[1]


def _summary_outcomes(resolution: Resolution) -> dict[str, dict]:
    return summary_outcomes(resolution.outcomes, resolution.authoritative)


def _timestamp(at: datetime) -> str:
    return at.astimezone(UTC).isoformat().replace("+00:00", "Z")
