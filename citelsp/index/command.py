"""``citelsp index build|update|status``: the command line of the local index.

A progress bar (works read, rate) on a terminal; nothing on a pipe. Building from a subset is
ordinary: a range of years, a list of venues, or simply a subset of the files.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

from citelsp.index.backends import open_backend, open_writer
from citelsp.index.build import LABELS, READERS, IndexFileError, Loaded, Subset
from citelsp.index.query import IndexOpenError

EPILOG = """\
examples:
  citelsp index build refs.sqlite --dblp dblp.xml.gz --years 2015-2026
  citelsp index build all.sqlite --openalex openalex-snapshot/data/jsonl/works \\
      --crossref crossref-2025.tar --arxiv arxiv-metadata-oai-snapshot.json
  citelsp index update all.sqlite --openalex openalex-snapshot/data/jsonl/works
  citelsp index status all.sqlite
  citelsp index build postgresql://citelsp@db.lab/citelsp --openalex works  # shared

Then point citelsp at it: CITELSP_INDEX=all.sqlite citelsp check paper.tex
(or the setting citelsp.index in the editor); a PostgreSQL index with
CITELSP_INDEX_URL=postgresql://… (the setting citelsp.indexUrl)."""


WHERE = "the index file, or a PostgreSQL database: postgresql://USER@HOST/DB"


def add_parser(sub: argparse._SubParsersAction) -> None:
    index = sub.add_parser(
        "index", help="build, update or describe a local index of the open snapshots",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG,
        description="A local index of the open snapshots (OpenAlex, Crossref, DBLP, arXiv, "
                    "DataCite), asked before any\nservice: what it holds is verified "
                    "offline and with no request; the rest still goes to the services.")
    actions = index.add_subparsers(dest="action", metavar="ACTION", required=True)
    for action, text in (("build", "build a new index (replaces PATH when done)"),
                         ("update", "add newer snapshot files to an index")):
        one = actions.add_parser(action, help=text, description=text)
        one.add_argument("path", metavar="PATH", help=WHERE)
        for source, what in (("openalex", "DIR"), ("crossref", "DIR"), ("dblp", "FILE"),
                             ("arxiv", "FILE"), ("datacite", "DIR")):
            one.add_argument(f"--{source}", action="append", type=Path, default=[],
                             metavar=what, help=f"{LABELS[source]} snapshot files "
                                                "(repeatable; gzip and tar as shipped)")
        one.add_argument("--years", metavar="FROM-TO",
                         help="keep only works published in these years (e.g. 2015-2026)")
        one.add_argument("--venues", type=Path, metavar="FILE",
                         help="keep only works of the venues listed in FILE, one a line")
    status = actions.add_parser("status", help="the sources, dates, counts and size")
    status.add_argument("path", metavar="PATH", help=WHERE)


def run(ns: argparse.Namespace) -> int:
    """Exit 0, or 2 for a usage error or an index that cannot be written or read."""
    if ns.action == "status":
        return _status(ns.path)
    try:
        subset = _subset(ns)
    except ValueError as exc:
        print(f"citelsp: {exc}", file=sys.stderr)
        return 2
    given = [(source, path) for source in READERS for path in getattr(ns, source)]
    if not given:
        print("citelsp: name at least one snapshot (--openalex, --crossref, --dblp, --arxiv, "
              "--datacite)", file=sys.stderr)
        return 2
    missing = [str(p) for _, p in given if not p.exists()]
    if missing:
        print(f"citelsp: no such file or directory: {', '.join(missing)}", file=sys.stderr)
        return 2
    try:
        writer = open_writer(ns.path, fresh=ns.action == "build")
        try:
            for source, path in given:
                with _progress(LABELS[source]) as tick:
                    loaded = writer.add(source, path, subset=subset, progress=tick)
                _tell(loaded, path)
        except BaseException:
            writer.abandon()
            raise
        writer.close()
    except IndexFileError as exc:
        print(f"citelsp: {exc}", file=sys.stderr)
        return 2
    return _status(ns.path)


def _subset(ns: argparse.Namespace) -> Subset:
    years = None
    if ns.years:
        low, _, high = ns.years.partition("-")
        if not (low.isdigit() and (not high or high.isdigit())):
            raise ValueError(f"--years {ns.years}: expected FROM-TO, e.g. 2015-2026")
        years = (int(low), int(high or low))
    venues = None
    if ns.venues:
        try:
            lines = ns.venues.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise ValueError(f"--venues {ns.venues}: {exc.strerror}") from None
        venues = frozenset(v.strip().casefold() for v in lines if v.strip())
    return Subset(years, venues)


class _progress:
    """A tqdm bar (works, rate) on a terminal; a no-op elsewhere."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.bar = None

    def __enter__(self) -> Callable[[int], None]:
        if not sys.stderr.isatty():
            return lambda _n: None
        from tqdm import tqdm
        size = shutil.get_terminal_size()
        self.bar = tqdm(desc=self.label, unit=" works", unit_scale=True, file=sys.stderr,
                        ncols=size.columns or 80, nrows=size.lines or 24)
        return self.bar.update

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.close()


def _tell(loaded: Loaded, path: Path) -> None:
    tally = loaded.tally
    rate = loaded.kept / loaded.seconds if loaded.seconds else 0
    line = (f"{LABELS[loaded.source]}: {loaded.kept:,} works from {path} "
            f"({rate:,.0f}/s)")
    if tally.works != loaded.kept:
        line += f", {tally.works - loaded.kept:,} outside the subset"
    if loaded.replaced:
        line += f", {loaded.replaced:,} replaced older copies"
    if tally.malformed:
        line += f", {tally.malformed:,} malformed lines skipped"
    if tally.unreadable:
        line += f", {tally.unreadable:,} files unreadable (truncated?)"
    print(line, file=sys.stderr)
    for problem in tally.problems[:5]:
        print(f"  {problem}", file=sys.stderr)


def _status(where: str) -> int:
    try:
        index = open_backend(where)
    except IndexOpenError as exc:
        print(f"citelsp: {exc}", file=sys.stderr)
        return 2
    snapshots = list(index.snapshots.values())
    total = sum(s.works for s in snapshots)
    print(f"{index.where}: {total:,} works, {index.size_bytes() / 2**20:,.1f} MiB")
    for s in snapshots:
        extra = "".join([f", {s.malformed:,} malformed lines skipped" if s.malformed else "",
                         f", {s.unreadable:,} files unreadable" if s.unreadable else ""])
        print(f"  {s.label:<28} {s.works:>12,} works{extra}  (loaded {(s.loaded_at or '?')[:10]}"
              f" from {', '.join(s.paths)})")
    index.close()
    return 0
