"""Human decisions in ``.citelsp/decisions.json`` at a workspace root (DESIGN.md §7).

A decision is keyed by citation key *and* the entry's identity (identifiers, title, year,
authors), so editing what an entry cites makes its decision stale. A rejection is permanent
for its identity. The file is written atomically, and a file that cannot be read is kept as
``.bak`` before it is ever rewritten: a human's decisions are never lost silently.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

DecisionKind = Literal["verified", "rejected"]
FILE_VERSION = 1


class PermanentRejection(ValueError):
    """Raised when a "verified" decision would overwrite a rejection of the same identity."""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass(frozen=True)
class Decision:
    citation_key: str
    identity: str
    decision: DecisionKind
    note: str = ""
    decided_at: str = field(default_factory=_now)


class DecisionStore:
    """Decisions of one workspace. ``record`` re-reads the file first, so two processes
    recording different keys do not drop each other's decisions."""

    def __init__(self, root: Path) -> None:
        self.path = Path(root) / ".citelsp" / "decisions.json"
        self._decisions: list[Decision] = []
        self.corrupt = False
        """The file exists but could not be read; it is backed up before any rewrite."""

    def load(self) -> list[Decision]:
        self._decisions, self.corrupt = self._read()
        return list(self._decisions)

    def _read(self) -> tuple[list[Decision], bool]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return [], False
        except (OSError, ValueError):
            return [], True
        try:
            return [Decision(**d) for d in data["decisions"]], False
        except (TypeError, KeyError):
            return [], True

    def get(self, key: str, identity: str) -> tuple[Decision | None, bool]:
        """The decision for this key and identity; else the latest one for the key, marked
        stale (the entry changed since the human decided); else ``(None, False)``."""
        for d in self._decisions:
            if d.citation_key == key and d.identity == identity:
                return d, False
        for d in reversed(self._decisions):
            if d.citation_key == key:
                return d, True
        return None, False

    def record(self, decision: Decision) -> None:
        """Store a decision, replacing the previous one for the same key and identity.

        Raises ``PermanentRejection`` if that identity was rejected and this says verified.
        """
        decisions, corrupt = self._read()
        for d in decisions:
            same = d.citation_key == decision.citation_key and d.identity == decision.identity
            if same and d.decision == "rejected" and decision.decision == "verified":
                raise PermanentRejection(
                    f"{decision.citation_key} was rejected for this identity on {d.decided_at}; "
                    "a rejection is permanent"
                )
        kept = [
            d
            for d in decisions
            if (d.citation_key, d.identity) != (decision.citation_key, decision.identity)
        ]
        kept.append(decision)
        if corrupt:
            shutil.copy2(self.path, self.path.with_name(self.path.name + ".bak"))
        self._write(kept)
        self._decisions, self.corrupt = kept, False

    def clear(self, key: str) -> int:
        """Remove every decision recorded for ``key``; how many there were."""
        decisions, corrupt = self._read()
        kept = [d for d in decisions if d.citation_key != key]
        removed = len(decisions) - len(kept)
        if removed:
            if corrupt:
                shutil.copy2(self.path, self.path.with_name(self.path.name + ".bak"))
            self._write(kept)
        self._decisions, self.corrupt = kept, corrupt and not removed
        return removed

    def _write(self, decisions: list[Decision]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        payload = {"version": FILE_VERSION, "decisions": [asdict(d) for d in decisions]}
        fd, tmp = tempfile.mkstemp(prefix=".decisions.", suffix=".tmp", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(payload, f, ensure_ascii=False, indent=2)
                f.write("\n")
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
