"""Human decisions in ``.citelsp/decisions.json`` at a workspace root.

A decision is keyed by citation key *and* the entry's identity (identifiers, title, year,
authors), so editing what an entry cites makes its decision stale. A rejection is permanent
for its identity. The file is written atomically under a lock (``decisions.json.lock``: two
processes recording at once lost 39 of 80 decisions without it), a file that cannot be parsed
is kept as ``.bak`` before it is ever rewritten, and one that cannot be read at all (too large,
unreadable) is never rewritten: a human's decisions are never lost silently.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import filelock

from citelsp.files import FileRefused, OutsideWorkspace, inside, read_bytes, write_inside

DecisionKind = Literal["verified", "rejected"]
FILE_VERSION = 1
log = logging.getLogger(__name__)


class PermanentRejection(ValueError):
    """Raised when a "verified" decision would overwrite a rejection of the same identity."""


class DecisionsRefused(ValueError):
    """The decisions file is not one citelsp will read or write: a symbolic link that leads
    out of the workspace, a FIFO or device, a file over the size cap or one the system will
    not let it read; or writing it failed (a full disk) or waited too long for the lock. The
    message says what to do; the file is as it was."""


MAX_DECISIONS_BYTES = 8 * 1024 * 1024
LOCK_TIMEOUT_S = 10.0
_UNREAD = ("none of its decisions (rejections included) is applied, and citelsp will not "
           "rewrite it, so none is lost")


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
        self._by_key: tuple[list[Decision], dict[str, list[Decision]]] = ([], {})
        """The decisions by key, and the list they were filed from (every change of the
        decisions assigns a new list)."""
        self.corrupt = False
        """The file exists but could not be read; it is backed up before any rewrite."""
        self.problem: str | None = None
        """Why the decisions on file are not applied, for the writer; None when they are."""

    def load(self) -> list[Decision]:
        """The decisions on file; none, with ``problem`` saying why, when the file is refused
        or cannot be parsed."""
        try:
            self._decisions, self.corrupt, _raw = self._read()
            self.problem = (f"citelsp: {self.path} cannot be parsed: its decisions are not "
                            "applied; it is kept as decisions.json.bak when the next decision "
                            "is recorded") if self.corrupt else None
        except DecisionsRefused as exc:
            self._decisions, self.corrupt, self.problem = [], False, f"citelsp: {exc}"
        if self.problem:
            log.warning("%s", self.problem)
        return list(self._decisions)

    def _read(self) -> tuple[list[Decision], bool, bytes]:
        """(decisions, whether the file is unreadable as decisions, its bytes)."""
        self._refuse_links(self.path)
        try:
            raw = read_bytes(self.path, MAX_DECISIONS_BYTES)
        except FileNotFoundError:
            return [], False, b""
        except FileRefused as exc:
            advice = (": move old decisions out of it or shorten long notes" if "larger" in
                      str(exc) else "")
            raise DecisionsRefused(f"{self.path} is {exc}: {_UNREAD}{advice}") from None
        except OSError as exc:
            raise DecisionsRefused(f"{self.path} cannot be read ({exc.strerror or exc}): "
                                   f"{_UNREAD}") from None
        try:
            data = json.loads(raw)
            return [Decision(**d) for d in data["decisions"]], False, raw
        except (ValueError, TypeError, KeyError, RecursionError):
            return [], True, raw

    @property
    def version(self) -> object:
        """A token that is another object after every change of the decisions (compare it
        with ``is``): what was built from them is built again."""
        return self._decisions

    def get(self, key: str, identity: str) -> tuple[Decision | None, bool]:
        """The decision for this key and identity; else the latest one for the key, marked
        stale (the entry changed since the human decided); else ``(None, False)``."""
        filed_from, by_key = self._by_key
        if filed_from is not self._decisions:  # filed once per change: publishing asks for
            by_key = {}                          # every entry of a 20,000-entry library
            for d in self._decisions:
                by_key.setdefault(d.citation_key, []).append(d)
            self._by_key = (self._decisions, by_key)
        found = by_key.get(key)
        if not found:
            return None, False
        for d in found:
            if d.identity == identity:
                return d, False
        return found[-1], True

    def record(self, decision: Decision) -> None:
        """Store a decision, replacing the previous one for the same key and identity.

        Raises ``PermanentRejection`` if that identity was rejected and this says verified,
        ``DecisionsRefused`` when the file cannot be read or written (nothing is changed).
        """
        with self._locked():
            self._record(decision)

    def _record(self, decision: Decision) -> None:
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
        with self._locked():
            return self._clear(key)

    def _clear(self, key: str) -> int:
        decisions, corrupt, _raw = self._read()
        kept = [d for d in decisions if d.citation_key != key]
        removed = len(decisions) - len(kept)
        if removed:
            self._write(kept)
        self._decisions, self.corrupt = kept, corrupt and not removed
        return removed

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Hold ``decisions.json.lock`` for a read-modify-write. An advisory lock (flock, via
        filelock) the system releases when its holder dies: a killed ``decide`` leaves none."""
        folder = self.path.parent
        self._refuse_links(folder, self.path)
        try:
            folder.mkdir(parents=True, exist_ok=True)
            with filelock.FileLock(folder / "decisions.json.lock", timeout=LOCK_TIMEOUT_S):
                yield
        except filelock.Timeout:
            raise DecisionsRefused(f"{self.path} is being written by another process (waited "
                                   f"{LOCK_TIMEOUT_S:g} s): nothing was recorded; try again"
                                   ) from None
        except OSError as exc:
            raise DecisionsRefused(f"cannot write {self.path} ({exc.strerror or exc}): "
                                   "nothing was recorded, the file is as it was") from None

    def _refuse_links(self, *paths: Path) -> None:
        for path in paths:
            if not inside(path, self.root):
                raise DecisionsRefused(f"{path} leads outside the workspace {self.root} (a "
                                       "symbolic link): decisions are not read or written there")

    def _write(self, decisions: list[Decision]) -> None:
        payload = {"version": FILE_VERSION, "decisions": [asdict(d) for d in decisions]}
        data = (json.dumps(payload, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
        if len(data) > MAX_DECISIONS_BYTES:  # never write a file that would not be read back
            raise DecisionsRefused(
                f"{self.path} would grow past {MAX_DECISIONS_BYTES // (1024 * 1024)} MiB, more "
                "than citelsp reads: nothing was recorded; shorten the note, or move old "
                "decisions out of the file")
        self._replace(self.path, data)

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
