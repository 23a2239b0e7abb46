"""The local index as the request plan's first resolver: opened from the settings, with what
a person must hear once about it (a file that cannot be used, a snapshot that is old)."""

from __future__ import annotations

from datetime import UTC, date, datetime

from citelsp.config import Settings
from citelsp.index.backends import open_backend
from citelsp.index.query import Hit, IndexOpenError, LocalIndexes
from citelsp.resolution.asking import Asked
from citelsp.resolution.outcome import Found


def open_index(settings: Settings, today: date | None = None
               ) -> tuple[LocalIndexes | None, list[str]]:
    """The index files ``citelsp.index`` names and the database ``citelsp.indexUrl`` names,
    and notices: an index that cannot be opened is not used (verification goes to the
    services as without it), and each snapshot older than ``citelsp.indexStaleDays`` is named
    once."""
    wanted = [*settings.index, *([settings.index_url] if settings.index_url else [])]
    if not wanted:
        return None, []
    opened, notes = [], []
    for where in wanted:
        try:
            opened.append(open_backend(where))
        except IndexOpenError as exc:
            notes.append(f"citelsp: local index not used: {exc}")
    if not opened:
        return None, notes
    index = LocalIndexes(opened)
    today = today or date.today()
    stale = index.stale(settings.index_stale_days, today)
    if not stale:
        return index, notes
    ages = ", ".join(f"{s.label} ({s.age_days(today)} days)" for s in stale)
    return index, [*notes, f"citelsp: the local index is older than "
                   f"{settings.index_stale_days} days ({ages}): newer works and corrections "
                   "may be missing from it; what it cannot match is looked up in the services"]


def asked(hit: Hit) -> Asked:
    """An index hit as an answer: checked on the snapshot's date, named by its label."""
    when = None
    if hit.snapshot.date:
        try:
            when = datetime.fromisoformat(hit.snapshot.date[:10]).replace(tzinfo=UTC)
        except ValueError:
            when = None
    return Asked(Found((hit.record,)), checked_at=when, via=hit.snapshot.label)
