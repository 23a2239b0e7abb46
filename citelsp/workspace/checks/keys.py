"""Duplicate keys: the same key twice (Error), or keys that differ only in letter case
(Warning: BibTeX reads them as one key, biber as two)."""

from __future__ import annotations

from collections.abc import Container

from citelsp.documents.model import Problem, Reference, Severity
from citelsp.workspace.checks.groups import Groups, related


class KeyIndex:
    """Entries by key and by casefolded key."""

    def __init__(self) -> None:
        self.groups = Groups()

    def add(self, ref: Reference) -> None:
        self.groups.file(ref, _groups(ref), remove=False)

    def remove(self, ref: Reference) -> None:
        self.groups.file(ref, _groups(ref), remove=True)

    def defines(self, key: str) -> bool:
        """Whether some entry has ``key``, in any letter case (as BibTeX looks keys up)."""
        return ("case", key.casefold()) in self.groups.members

    def problems(self, own: Container[int]) -> list[Problem]:
        """The findings on the entries whose ids are in ``own``."""
        problems = []
        for kind, value in self.groups.sorted_collisions():
            same = self.groups.of((kind, value))
            if kind == "key":
                for r in same:
                    if id(r) in own:
                        problems.append(Problem(
                            code="DUPLICATE_KEY",
                            span=r.key_span,
                            message=f"key '{r.key}' is defined {len(same)} times",
                            severity=Severity.ERROR,
                            key=r.key,
                            related=related(r, same, lambda o, r=r: o is not r),
                        ))
                continue
            spellings = sorted({r.key for r in same})
            if len(spellings) < 2:
                continue
            for r in same:
                if id(r) in own:
                    others = ", ".join(repr(k) for k in spellings if k != r.key)
                    problems.append(Problem(
                        code="DUPLICATE_KEY",
                        span=r.key_span,
                        message=f"key '{r.key}' differs only in letter case from {others}: "
                                "BibTeX reads them as one key (a repeated entry), biber as two",
                        severity=Severity.WARNING,
                        key=r.key,
                        related=related(r, same, lambda o, r=r: o.key != r.key),
                    ))
        return problems


def _groups(ref: Reference) -> tuple[tuple[str, str], tuple[str, str]]:
    return ("key", ref.key), ("case", ref.key.casefold())
