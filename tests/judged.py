"""Resolve references with a bare engine and judge them: what the engine tests look at."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from citelsp.documents.model import Reference
from citelsp.resolution.asking import Resolution
from citelsp.resolution.engine import Engine
from citelsp.verdict.checklist import Judgement
from citelsp.verdict.judge import judge


@dataclass(frozen=True)
class Judged:
    reference: Reference
    resolution: Resolution
    judgement: Judgement


async def judge_all(engine: Engine, refs: Iterable[Reference], **kwargs) -> list[Judged]:
    refs = list(refs)
    resolutions = await engine.resolve_all(refs, **kwargs)
    return [Judged(r, res, judge(r, res)) for r, res in zip(refs, resolutions, strict=True)]
