"""``path:line:col: P0 DOI_REFUTED key: message``, then a summary (1-based positions).

By default a reference's finding is printed once, at its bibliography entry, with the places
that cite it; a local problem found at several citations of one key is printed once with the
other places. ``locations="all"`` prints every place. Data is printed through ``printable``:
a key can never move the cursor or ring the bell.
"""

from __future__ import annotations

from citelsp.reports.rows import Row, rows
from citelsp.reports.safe import printable
from citelsp.resolution.budget import waiting_statement
from citelsp.verdict.reasons import PRIORITY_ORDER
from citelsp.workspace.snapshot import Snapshot

COLORS = {"P0": "\x1b[1;31m", "P1": "\x1b[33m", "P2": "\x1b[36m", "P3": "\x1b[2m"}
RESET = "\x1b[0m"
MAX_PLACES = 5
"""Citing places listed on one line; more are counted."""


def render(snapshot: Snapshot, *, locations: str = "entry", color: bool = False) -> str:
    found = rows(snapshot)
    lines = [_line(row, places, color) for row, places in _grouped(found, locations)]
    lines.append(summary(snapshot, found))
    return "\n".join(lines) + "\n"


def _grouped(found: list[Row], locations: str) -> list[tuple[Row, list[Row]]]:
    """Each row with the other places it stands for (none with ``locations="all"``): the
    citations of a reference whose finding is at its entry, and the repeats of one dangling
    key in one manuscript."""
    if locations == "all":
        return [(row, []) for row in found]
    groups: list[tuple[Row, list[Row]]] = []
    by_entry: dict[tuple[str | None, str], list[tuple[Row, list[Row]]]] = {}
    dangling: dict[tuple[str, str | None], tuple[Row, list[Row]]] = {}
    listed: dict[int, set[str]] = {}
    """Places already listed with a group (by the id of its list of places)."""
    for row in found:
        if row.on_citation:
            continue
        if row.code == "DANGLING_CITATION" and (row.path, row.key) in dangling:
            dangling[(row.path, row.key)][1].append(row)
            continue
        group: tuple[Row, list[Row]] = (row, [])
        groups.append(group)
        by_entry.setdefault((row.key, row.code), []).append(group)
        if row.code == "DANGLING_CITATION":
            dangling[(row.path, row.key)] = group
    for row in found:
        if row.on_citation:
            entries = by_entry.get((row.key, row.code))
            if not entries:
                groups.append((row, []))
            for _entry, places in entries or ():  # a key defined twice: each entry's places
                if id(places) not in listed:
                    listed[id(places)] = set()
                if row.place not in listed[id(places)]:
                    listed[id(places)].add(row.place)
                    places.append(row)
    groups.sort(key=lambda g: (g[0].path, g[0].start, g[0].code))
    return groups


def _line(row: Row, places: list[Row], color: bool) -> str:
    message = printable(row.message)
    if row.key and not message.startswith(f"{printable(row.key)}:"):
        message = f"{printable(row.key)}: {message}"
    tag = f"{row.priority} {row.code}"
    if color:
        tag = f"{COLORS.get(row.priority, '')}{tag}{RESET}"
    line = f"{printable(row.place)}: {tag} {message}"
    if places:
        shown = ", ".join(printable(p.place) for p in places[:MAX_PLACES])
        more = f" and {len(places) - MAX_PLACES} more" if len(places) > MAX_PLACES else ""
        what = "also at" if row.code == "DANGLING_CITATION" else "cited at"
        line += f" [{what} {shown}{more}]"
    return line


def counted(by_priority: dict[str, int], minimum: str, hidden: dict[str, int]) -> str:
    """"3 P0, 0 P1 (18 P2 hidden: below P1)": the priorities shown, and how many findings
    the minimum priority hides (never a "0 P2" for findings that were only not shown)."""
    shown = ", ".join(f"{by_priority.get(p, 0)} {p}" for p in PRIORITY_ORDER
                      if PRIORITY_ORDER.index(p) <= PRIORITY_ORDER.index(minimum))
    below = ", ".join(f"{n} {p}" for p in PRIORITY_ORDER if (n := hidden.get(p, 0)))
    return shown + (f" ({below} hidden: below {minimum})" if below else "")


def _by_human(n: int) -> str:
    return f" ({n} by a human)" if n else ""


def summary(snapshot: Snapshot, found: list[Row] | None = None,
            listed: dict[str, int] | None = None) -> str:
    """What was checked, the findings by priority (``listed``: as a report lists them, else
    one per line of this one), and what could not be checked."""
    found = rows(snapshot) if found is None else found
    results = snapshot.results
    verdicts = {"true": 0, "false": 0, "unresolvable": 0}
    humans = {"true": 0, "false": 0}
    for r in results:
        decision = r.current_decision
        if decision is None:
            verdicts[r.judgement.verdict] += 1
        else:  # the human's word: counted as verified or refuted, and said to be theirs
            verdict = "true" if decision.decision == "verified" else "false"
            verdicts[verdict] += 1
            humans[verdict] += 1
    by_priority = {p: 0 for p in PRIORITY_ORDER}
    for row in found if listed is None else ():
        if not row.on_citation:
            by_priority[row.priority] += 1
    by_priority.update(listed or {})
    head = (f"{len(results)} reference{'s' if len(results) != 1 else ''}: "
            f"{verdicts['true']} verified{_by_human(humans['true'])}, "
            f"{verdicts['false']} refuted{_by_human(humans['false'])}, "
            f"{verdicts['unresolvable']} unresolvable; "
            f"{'findings' if listed is None else 'on this list'}: "
            f"{counted(by_priority, snapshot.minimum, snapshot.hidden)}")
    statements = [snapshot.coverage().statement(),
                  *(waiting_statement(spent, keys)
                    for spent, keys in snapshot.waiting_for_budget().items())]
    return "\n".join([head, *(printable(s) for s in statements if s)])
