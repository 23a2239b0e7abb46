"""Reading snapshot files as their publishers ship them: gzip or not, a folder, a tar archive
or one file, JSON Lines or one JSON document per file.

A malformed line is skipped and counted, a truncated or unreadable file is reported and the
files after it are still read: one bad download must not cost the whole build. What each
reader yields is an ``Entry``: a Record parsed by the same code that parses the service's
answer (the services' API objects are the snapshots' objects), and the date the snapshot
gives the record, from which the snapshot's own date is taken.
"""

from __future__ import annotations

import gzip
import io
import tarfile
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import orjson

from citelsp.resolution.outcome import Record
from citelsp.resolution.records import PARSE_ERRORS

PROBLEMS_KEPT = 20
"""Problems remembered word for word; the rest are only counted."""
READ_ERRORS = (EOFError, OSError, zlib.error, tarfile.TarError, UnicodeDecodeError)


@dataclass(frozen=True)
class Entry:
    """One work of a snapshot: its Record and the date the snapshot gives it (``YYYY-MM-DD``)."""

    record: Record
    date: str | None = None


@dataclass
class Tally:
    """What reading one source met: works read, lines skipped, files cut short."""

    works: int = 0
    malformed: int = 0
    problems: list[str] = field(default_factory=list)
    unreadable: int = 0

    def skip(self, where: str, why: str) -> None:
        self.malformed += 1
        self._note(f"{where}: skipped ({why})")

    def broken(self, where: str, why: str) -> None:
        self.unreadable += 1
        self._note(f"{where}: unreadable from here on ({why})")

    def merge(self, other: Tally) -> None:
        """Add what another process's reading of one file met."""
        self.works += other.works
        self.malformed += other.malformed
        self.unreadable += other.unreadable
        self.problems.extend(other.problems[:PROBLEMS_KEPT - len(self.problems)])

    def _note(self, text: str) -> None:
        if len(self.problems) < PROBLEMS_KEPT:
            self.problems.append(text[:300])


@dataclass(frozen=True)
class Part:
    """One file to read: its name (for messages and format), and its path or, for a member
    of a tar archive, its bytes. Plain data, so that another process can read it."""

    name: str
    path: Path | None = None
    data: bytes | None = None

    def open(self) -> IO[bytes]:
        return self.path.open("rb") if self.path is not None else io.BytesIO(self.data or b"")


def parts(path: Path, keep: Callable[[str], bool] = lambda _name: True) -> Iterator[Part]:
    """The files of ``path`` (a folder, walked in name order; a tar archive, in its order; or
    one file) whose names ``keep`` accepts, each opened raw (``stream`` undoes gzip)."""
    if path.is_dir():
        for file in sorted(p for p in path.rglob("*") if p.is_file()):
            name = file.relative_to(path).as_posix()
            if keep(name):
                yield Part(name, file)
    elif is_tar(path):
        yield from _tar_parts(path, keep)
    elif keep(path.name):  # named in full: its folders may carry a date
        yield Part(path.as_posix(), path)


def is_tar(path: Path) -> bool:
    name = path.name.lower()
    return name.endswith((".tar", ".tar.gz", ".tgz")) and tarfile.is_tarfile(path)


def _tar_parts(path: Path, keep: Callable[[str], bool]) -> Iterator[Part]:
    """Members of a tar archive, read in one pass (Crossref and DataCite ship tar files)."""
    with tarfile.open(path, mode="r|*") as archive:
        for member in archive:
            if member.isfile() and keep(member.name):
                data = archive.extractfile(member)
                if data is not None:
                    body = data.read()
                    yield Part(member.name, data=body)


def stream(part: Part) -> IO[bytes]:
    """The part's bytes, gunzipped when they are gzip (by their magic number, not the name)."""
    raw = part.open()
    head = raw.read(2)
    raw.seek(0)
    return gzip.GzipFile(fileobj=raw) if head == b"\x1f\x8b" else raw


def documents(part: Part, tally: Tally) -> Iterator[Any]:
    """The JSON values of one file: one per line (JSON Lines), or the whole file when it is one
    JSON document (Crossref's older ``{"items": […]}`` files, DataCite's per-prefix files).
    A line that is not JSON is skipped and counted; a file cut short is reported."""
    try:
        with stream(part) as body:
            first = body.readline()
            try:
                value = orjson.loads(first) if first.strip() else None
            except orjson.JSONDecodeError:
                value = _whole(first + body.read(), part, tally)
                if value is not _BAD:
                    yield value
                return
            if value is not None:
                yield value
            for number, line in enumerate(body, start=2):
                if not line.strip():
                    continue
                try:
                    yield orjson.loads(line)
                except orjson.JSONDecodeError as exc:
                    tally.skip(f"{part.name} line {number}", str(exc))
    except READ_ERRORS as exc:
        tally.broken(part.name, f"{type(exc).__name__}: {exc}")


_BAD = object()


def _whole(data: bytes, part: Part, tally: Tally) -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        tally.broken(part.name, f"not JSON Lines nor one JSON document: {exc}")
        return _BAD


def entries(objects: Iterable[tuple[str, Any]], parse: Callable[[Any], Entry | None],
            tally: Tally) -> Iterator[Entry]:
    """``parse`` over (where, object) pairs; an object of the wrong shape is skipped, counted."""
    for where, obj in objects:
        try:
            entry = parse(obj)
        except PARSE_ERRORS as exc:
            tally.skip(where, f"{type(exc).__name__}: {exc}")
            continue
        if entry is not None:
            tally.works += 1
            yield entry


def json_files(name: str, since: str | None = None) -> bool:
    """The files JSON readers read (``.json``, ``.jsonl``, gzip or not)."""
    return ".json" in name.rsplit("/", 1)[-1].lower()


def read_json(part: Part, tally: Tally, parse: Callable[[Any], Entry | None],
              *lists: str) -> Iterator[Entry]:
    """Entries ``parse`` makes of every object in one JSON file."""
    yield from entries(unwrapped(part, tally, *lists), parse, tally)


def read_parts(reader: Any, path: Path, tally: Tally, since: str | None = None
               ) -> Iterator[Entry]:
    """Every entry a reader module (``wanted``, ``read_part``) gives for the files of
    ``path``, in order."""
    for part in parts(path, lambda name: reader.wanted(name, since)):
        yield from reader.read_part(part, tally, since)


def unwrapped(part: Part, tally: Tally, *lists: str) -> Iterator[tuple[str, Any]]:
    """Each object of a file, a document that wraps a list (``{"items": […]}``,
    ``{"data": […]}``, a bare list) unwrapped into its members."""
    for value in documents(part, tally):
        inner = value
        if isinstance(value, dict):
            inner = next((value[k] for k in lists if isinstance(value.get(k), list)), value)
        if isinstance(inner, list):
            for item in inner:
                yield part.name, item
        else:
            yield part.name, inner


def iso_date(value: Any) -> str | None:
    """``YYYY-MM-DD`` from the start of an ISO date or date-time string."""
    if isinstance(value, str) and len(value) >= 10 and value[4] == "-" and value[7] == "-":
        return value[:10]
    return None
