"""``path:line:col: P0 DOI_REFUTED key: message``, one line per diagnostic (1-based)."""

from __future__ import annotations

from citelsp.reports.rows import rows
from citelsp.workspace.snapshot import Snapshot


def render(snapshot: Snapshot) -> str:
    lines = []
    for row in rows(snapshot):
        message = row.message
        if row.key and not message.startswith(f"{row.key}:"):
            message = f"{row.key}: {message}"
        lines.append(f"{row.path}:{row.start[0] + 1}:{row.start[1] + 1}: "
                     f"{row.priority} {row.code} {message}")
    checked = snapshot.results
    counts = {v: sum(1 for c in checked if c.judgement.verdict == v)
              for v in ("true", "false", "unresolvable")}
    if checked:
        lines.append(f"{len(checked)} references checked: {counts['true']} verified, "
                     f"{counts['false']} refuted, {counts['unresolvable']} unresolvable")
    return "\n".join(lines) + ("\n" if lines else "")
