"""Entries grouped by a value they share, for the checks that look for two of a kind.

A group with two or more members is *colliding*; only those are ever looked at again, so an
edit costs the groups of the entries it replaced and the findings cost the (few) collisions.
"""

from __future__ import annotations

from collections.abc import Iterable

from citelsp.documents.model import Location, Reference

Group = tuple[str, str]
"""(kind, value): ``("key", "smith2020")``, ``("DOI", "10.1000/x")``."""

MAX_RELATED = 3
"""Other entries a duplicate finding names: with n copies of a work, each of the n findings
would otherwise carry n-1 locations."""


class Groups:
    def __init__(self) -> None:
        self.members: dict[Group, dict[int, Reference]] = {}
        self.colliding: set[Group] = set()

    def file(self, ref: Reference, groups: Iterable[Group], *, remove: bool) -> None:
        for group in groups:
            members = self.members.get(group)
            if remove:
                if members is None:
                    continue
                members.pop(id(ref), None)
                if not members:
                    del self.members[group]
            else:
                if members is None:
                    members = self.members[group] = {}
                members[id(ref)] = ref
            if members and len(members) >= 2:
                self.colliding.add(group)
            else:
                self.colliding.discard(group)

    def sorted_collisions(self) -> list[Group]:
        return sorted(self.colliding)

    def of(self, group: Group) -> list[Reference]:
        """The members of ``group`` in text order."""
        return in_order(self.members[group].values())


def in_order(refs: Iterable[Reference]) -> list[Reference]:
    return sorted(refs, key=lambda r: (r.uri, r.span.start))


def related(r: Reference, refs: list[Reference], keep) -> tuple[Location, ...]:
    """Up to MAX_RELATED locations of the entries of ``refs`` that ``keep`` accepts."""
    out = []
    for o in refs:
        if keep(o):
            out.append(Location(o.uri, o.key_span))
            if len(out) == MAX_RELATED:
                break
    return tuple(out)
