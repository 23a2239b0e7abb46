"""A reference and its resolution → its verdict and checklist item (no network).

The engine only resolves; judging happens here, from stored outcomes, every time it is asked:
a venue or page edit re-checks accuracy without a lookup, and a change of decision logic
takes effect on cached answers at once.
"""

from __future__ import annotations

import weakref

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
        venue_links=resolution.venue_links,
    )


class Judgements:
    """Each reference's judgement, made once per resolution: a new resolution, or an edited
    entry (a new Reference), is judged afresh. Holds nothing else, so whoever is handed
    ``of`` (the verifier's workers, which judge each resolution as it arrives) keeps no
    larger object alive."""

    def __init__(self) -> None:
        self._made: weakref.WeakKeyDictionary[Reference, tuple[Resolution, Judgement]] = (
            weakref.WeakKeyDictionary())

    def of(self, ref: Reference, resolution: Resolution) -> Judgement:
        made = self._made.get(ref)
        if made is not None and made[0] is resolution:
            return made[1]
        judgement = judge(ref, resolution)
        self._made[ref] = (resolution, judgement)
        return judgement
