"""A reference and its resolution → its verdict and checklist item (no network).

The engine only resolves; judging happens here, from stored outcomes, every time it is asked:
a venue or page edit re-checks accuracy without a lookup, and a change of decision logic
takes effect on cached answers at once.
"""

from __future__ import annotations

from citelsp.documents.model import Reference
from citelsp.resolution.asking import Resolution
from citelsp.verdict.checklist import Judgement, build_judgement


def judge(ref: Reference, resolution: Resolution) -> Judgement:
    """The verdict, findings and checklist item for ``ref`` from its resolution."""
    return build_judgement(
        ref.key,
        ref.entry_type,
        ref.work,
        resolution.ids,
        resolution.outcomes,
        retraction=resolution.retraction,
    )
