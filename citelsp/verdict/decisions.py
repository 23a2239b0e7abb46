"""Human decisions in ``.citelsp/decisions.json`` at a workspace root (DESIGN.md §7).

A decision is keyed by citation key *and* the entry's identity (identifiers, title, year,
authors), so editing what an entry cites makes its decision stale. A rejection is permanent
for its identity. The file is written atomically, and a file that cannot be read is kept as
``.bak`` before it is ever rewritten: a human's decisions are never lost silently.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from citelsp.files import FileRefused, OutsideWorkspace, inside, read_bytes, write_inside

DecisionKind = Literal["verified", "rejected"]
FILE_VERSION = 1
log = logging.getLogger(__name__)


class PermanentRejection(ValueError):
    """Raised when a "verified" decision would overwrite a rejection of the same identity."""


class DecisionsRefused(ValueError):
    """The decisions file is not one citelsp will read or write: a symbolic link that leads
    out of the workspace, a FIFO or device, or a file over the size cap."""


MAX_DECISIONS_BYTES = 8 * 1024 * 1024


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
        self.root = Path(root)
        self.path = self.root / ".citelsp" / "decisions.json"
        self._decisions: list[Decision] = []
        self.corrupt = False
        """The file exists but could not be read; it is backed up before any rewrite."""

    def load(self) -> list[Decision]:
        """The decisions on file; none (with a warning in the log) when the file is refused."""
        try:
            self._decisions, self.corrupt, _raw = self._read()
        except DecisionsRefused as exc:
            log.warning("%s", exc)
            self._decisions, self.corrupt = [], False
        return list(self._decisions)

    def _read(self) -> tuple[list[Decision], bool, bytes]:
        """(decisions, whether the file is unreadable as decisions, its bytes)."""
        if not inside(self.path, self.root):
            raise DecisionsRefused(f"{self.path} leads outside the workspace {self.root} "
                                   "(a symbolic link): decisions are not read or written there")
        try:
            raw = read_bytes(self.path, MAX_DECISIONS_BYTES)
        except FileNotFoundError:
            return [], False, b""
        except FileRefused as exc:
            raise DecisionsRefused(f"{self.path}: {exc}") from None
        except OSError:
            return [], True, b""
        try:
            data = json.loads(raw)
            return [Decision(**d) for d in data["decisions"]], False, raw
        except (ValueError, TypeError, KeyError, RecursionError):
            return [], True, raw

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
        decisions, corrupt, raw = self._read()
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
            self._backup(raw)
        self._write(kept)
        self._decisions, self.corrupt = kept, False

    def clear(self, key: str) -> int:
        """Remove every decision recorded for ``key``; how many there were."""
        decisions, corrupt, _raw = self._read()
        kept = [d for d in decisions if d.citation_key != key]
        removed = len(decisions) - len(kept)
        if removed:
            self._write(kept)
        self._decisions, self.corrupt = kept, corrupt and not removed
        return removed

    def _write(self, decisions: list[Decision]) -> None:
        payload = {"version": FILE_VERSION, "decisions": [asdict(d) for d in decisions]}
        text = json.dumps(payload, ensure_ascii=False, indent=2) + "\n"
        self._replace(self.path, text.encode("utf-8"))

    def _backup(self, raw: bytes) -> None:
        """Keep an unreadable file's bytes as ``decisions.json.bak`` before a rewrite (a human's
        decisions are never lost silently)."""
        self._replace(self.path.with_name(self.path.name + ".bak"), raw)

    def _replace(self, target: Path, data: bytes) -> None:
        """Write atomically; a symbolic link at ``target`` is replaced, never followed."""
        try:
            write_inside(self.root, target, data)
        except OutsideWorkspace as exc:
            raise DecisionsRefused(str(exc)) from None
