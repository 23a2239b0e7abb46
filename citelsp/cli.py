"""Command line: ``citelsp`` / ``citelsp serve`` (LSP on stdio), ``check`` and ``decide``."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

from citelsp import __version__
from citelsp.config import PRIORITIES, Settings
from citelsp.workspace import Listener, Snapshot, Workspace

FORMATS = ("text", "json", "sarif", "markdown", "ars", "ledger")
FAIL_ON = (*PRIORITIES, "never")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="citelsp",
        description="Catch fabricated and wrong references in manuscripts and bibliographies.",
    )
    parser.add_argument("--version", action="version", version=f"citelsp {__version__}")
    sub = parser.add_subparsers(dest="command")

    serve = sub.add_parser("serve", help="speak the Language Server Protocol on stdio")
    serve.add_argument("--stdio", action="store_true", help="accepted and ignored")

    check = sub.add_parser("check", help="check manuscripts and bibliographies")
    check.add_argument("paths", nargs="+", type=Path, metavar="PATH")
    check.add_argument("--bib", action="append", default=[], metavar="FILE",
                       help="bibliography to use when a manuscript names none (repeatable)")
    check.add_argument("--format", choices=FORMATS, default="text")
    check.add_argument("--fail-on", choices=FAIL_ON, default="P0",
                       help="exit 1 when an item at or above this priority exists (default P0)")
    check.add_argument("--offline", action="store_true",
                       help="no network: local checks plus cached answers")
    check.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    check.add_argument("--min-priority", choices=PRIORITIES, default="P3",
                       help="lowest priority reported as a diagnostic (default P3)")

    decide = sub.add_parser("decide", help="record a human decision about a reference")
    decide.add_argument("key")
    group = decide.add_mutually_exclusive_group(required=True)
    group.add_argument("--verified", action="store_true")
    group.add_argument("--rejected", action="store_true")
    decide.add_argument("--note", default="")
    decide.add_argument("--bib", action="append", default=[], metavar="FILE")
    decide.add_argument("--root", type=Path, default=None,
                        help="workspace root holding .citelsp/decisions.json (default: cwd)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args == ["--stdio"]:
        args = ["serve"]
    parser = build_parser()
    try:
        ns = parser.parse_args(args)
    except SystemExit as exc:
        return int(exc.code or 0)
    if ns.command == "serve":
        from citelsp.lsp.server import create_server

        create_server().start_io()
        return 0
    if ns.command == "check":
        return check(ns)
    if ns.command == "decide":
        return decide(ns)
    parser.print_help(sys.stderr)
    return 2


def _settings(ns: argparse.Namespace) -> Settings:
    settings = Settings.from_options({}, os.environ)
    changes: dict = {}
    if getattr(ns, "bib", None):
        changes["bibliography"] = tuple(str(Path(b).resolve()) for b in ns.bib)
    if getattr(ns, "offline", False):
        changes["offline"] = True
    if getattr(ns, "no_cache", False):
        changes["use_cache"] = False
    if getattr(ns, "min_priority", None):
        changes["min_priority"] = ns.min_priority
    return settings.with_changes(**changes)


class _Terminal(Listener):
    """Progress on stderr when it is a terminal; notices always."""

    def __init__(self, tty: bool) -> None:
        self.tty = tty

    def report(self, done: int, total: int) -> None:
        if self.tty:
            end = "\n" if done == total else ""
            print(f"\rVerifying references {done}/{total}", end=end, file=sys.stderr,
                  flush=True)

    def notice(self, message: str) -> None:
        print(message, file=sys.stderr)


async def _check(paths: list[Path], settings: Settings, tty: bool) -> Snapshot:
    workspace, errors = Workspace.for_paths(paths, settings, _Terminal(tty))
    await workspace.verifier.configure(settings)
    try:
        await workspace.verify_now()
        return workspace.snapshot(errors)
    finally:
        await workspace.verifier.close()


def check(ns: argparse.Namespace) -> int:
    from citelsp.reports import RENDERERS
    from citelsp.reports.rows import rows

    missing = [p for p in ns.paths if not p.exists()]
    if missing:
        print(f"citelsp: no such file: {', '.join(map(str, missing))}", file=sys.stderr)
        return 2
    settings = _settings(ns)
    snapshot = asyncio.run(_check(ns.paths, settings, sys.stderr.isatty()))
    for error in snapshot.errors:
        print(f"citelsp: {error}", file=sys.stderr)
    sys.stdout.write(RENDERERS[ns.format](snapshot))
    if snapshot.errors and not snapshot.documents:
        return 2
    if ns.fail_on == "never":
        return 0
    threshold = PRIORITIES.index(ns.fail_on)
    failing = any(PRIORITIES.index(row.priority) <= threshold for row in rows(snapshot))
    return 1 if failing else 0


def decide(ns: argparse.Namespace) -> int:
    from citelsp.verdict.decisions import Decision, PermanentRejection

    root = (ns.root or Path.cwd()).resolve()
    workspace = Workspace(_settings(ns), [root])
    refs = workspace.entries(ns.key)
    if not refs:
        print(f"citelsp: no entry with key '{ns.key}' under {root}", file=sys.stderr)
        return 2
    ref = refs[0]
    decision = Decision(
        citation_key=ref.key,
        identity=workspace.decision_identity(ref),
        decision="verified" if ns.verified else "rejected",
        note=ns.note,
    )
    try:
        workspace.record(decision)
    except PermanentRejection as exc:
        print(f"citelsp: {exc}", file=sys.stderr)
        return 1
    print(f"recorded: {ref.key} {decision.decision}")
    return 0
