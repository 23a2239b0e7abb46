"""One row per manuscript of a screening run (a conference's submissions checked together):
how many references it cites, how many could be checked, and how many need a human at each
priority, for a spreadsheet beside the usual reports (``--summary-csv``, ``--summary-json``).
"""

from __future__ import annotations

import csv
import io
import json

from citelsp.config import PRIORITIES
from citelsp.documents.model import Bibliography
from citelsp.uris import display_path
from citelsp.workspace.snapshot import Snapshot

FIELDS = ("manuscript", "references", "checked", "unchecked", *PRIORITIES, "P0_keys")


def manuscript_rows(snapshot: Snapshot) -> list[dict]:
    """For each manuscript, its cited references' worst checklist priority, counted."""
    cited: dict[str, list] = {uri: [] for uri, doc in snapshot.documents.items()
                              if not isinstance(doc, Bibliography)}
    for result in snapshot.results:
        for uri in {c.uri for c in result.citations}:
            if uri in cited:
                cited[uri].append(result)
    rows = []
    for uri, results in cited.items():
        counts = dict.fromkeys(PRIORITIES, 0)
        p0, unchecked = [], 0
        for result in results:
            found = [f.priority for f in result.judgement.findings if f.priority in counts]
            if found:
                worst = min(found, key=PRIORITIES.index)
                counts[worst] += 1
                if worst == "P0":
                    p0.append(result.reference.key)
            unchecked += result.unchecked() is not None
        rows.append({"manuscript": display_path(uri), "references": len(results),
                     "checked": len(results) - unchecked, "unchecked": unchecked, **counts,
                     "P0_keys": " ".join(sorted(p0))})
    return sorted(rows, key=lambda r: r["manuscript"])


def render_csv(snapshot: Snapshot) -> str:
    return csv_text(manuscript_rows(snapshot))


def render_json(snapshot: Snapshot) -> str:
    return json_text(manuscript_rows(snapshot))


def csv_text(rows: list[dict]) -> str:
    """``manuscript_rows`` as CSV (also of many snapshots: ``citelsp screen report``)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, FIELDS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def json_text(rows: list[dict]) -> str:
    return json.dumps(rows, indent=1, ensure_ascii=False) + "\n"
