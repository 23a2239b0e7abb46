"""``citelsp screen report``: each submission's summary from the stored resolutions.

Each submission is read again as ``submit`` read it, its references are given their stored
resolutions, and the workspace's own snapshot and the screening rows of ``check
--summary-csv`` follow: the verdict code is the one a single ``citelsp check`` runs. A
reference with no stored resolution (its work not verified yet, or the file edited since
it was submitted) is reported as not checked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import psycopg

from citelsp.config import Settings
from citelsp.reports.screening import manuscript_rows
from citelsp.resolution.asking import Resolution
from citelsp.resolution.resolve import unchecked_resolution
from citelsp.screen import codec, store
from citelsp.screen.submissions import open_submission, wanted

NOT_VERIFIED = "not verified yet by the screening's workers"


@dataclass
class Report:
    rows: list[dict] = field(default_factory=list)
    not_verified: int = 0
    """References with no stored resolution (reported as not checked)."""
    errors: list[str] = field(default_factory=list)


def report(conn: psycopg.Connection, settings: Settings) -> Report:
    """One row per manuscript of every submission, sorted as ``check`` sorts them."""
    done = Report()
    for path in store.submissions(conn):
        workspace, errors = open_submission(Path(path), settings)
        done.errors += errors
        if workspace is None:
            continue
        refs = wanted(workspace)
        found = store.stored(conn, list(refs))
        for identity, ref in refs.items():
            data = found.get(identity)
            if data is None:
                resolution = unchecked_resolution(ref, "pending", NOT_VERIFIED)
                done.not_verified += 1
            else:
                try:
                    resolution = _rekeyed(codec.decode(data), ref.key)
                except ValueError as exc:
                    done.errors.append(f"{path}: {ref.key}: {exc}")
                    resolution = unchecked_resolution(ref, "pending", NOT_VERIFIED)
            workspace.verifier.results[identity] = resolution
        done.rows += manuscript_rows(workspace.snapshot())
    done.rows.sort(key=lambda r: r["manuscript"])
    return done


def _rekeyed(resolution: Resolution, key: str) -> Resolution:
    """Reported under the submission's own key, as a check's engine reports it."""
    if resolution.key != key:
        resolution.key = key
    return resolution
