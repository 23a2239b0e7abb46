"""What a workspace knows, frozen for reports: each checked reference with its resolution,
judgement, human decision and citations, and every problem placed in its file."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from citelsp.documents.model import Citation, Problem, Reference
from citelsp.documents.parse import Document
from citelsp.resolution.asking import Resolution
from citelsp.verdict.checklist import Judgement
from citelsp.verdict.decisions import Decision
from citelsp.verdict.reduce import summary_outcomes


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


@dataclass
class Snapshot:
    documents: dict[str, Document]
    """The documents reported on, by URI (their text places the problems)."""
    problems: list[tuple[str, Problem]]
    results: list[ReferenceResult]
    errors: list[str] = field(default_factory=list)
    generated_at: datetime = field(default_factory=lambda: datetime.now(UTC))

    def summaries(self) -> list[dict]:
        """Seed-000 summaries: one per (citation_key, ref_slug) pair (DESIGN.md §10)."""
        rows = []
        for result in self.results:
            resolution = result.resolution
            times = [o.checked_at for o in resolution.outcomes.values() if o.checked_at]
            stamp = max(times) if times else self.generated_at
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
                    "verification_timestamp": stamp.astimezone(UTC).isoformat().replace(
                        "+00:00", "Z"),
                    "resolver_outcomes": summary_outcomes(resolution.outcomes,
                                                          resolution.authoritative),
                })
        return rows
