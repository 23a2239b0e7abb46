"""Command line: ``citelsp check``, ``citelsp decide`` and ``citelsp serve`` (LSP on stdio).

``check`` builds a workspace from the paths it is given, verifies, and renders the workspace's
snapshot; it decides nothing itself. This module owns what a command line owns: arguments,
input errors, colour, the closing summary and the exit status.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import os
import shutil
import sys
from pathlib import Path

from citelsp import __version__
from citelsp.config import PRIORITIES, Settings
from citelsp.index import command as index_command
from citelsp.resolution import budget, cache_command
from citelsp.screen import command as screen_command
from citelsp.workspace import Listener, Snapshot, Workspace, folders_without_work
from citelsp.workspace.inputs import expand_inputs

FORMATS = ("text", "json", "sarif", "markdown", "ars", "ledger")
FAIL_ON = (*PRIORITIES, "never")
EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_UNCHECKED = 0, 1, 2, 3

_left_to_exit: list[object] | None = None
"""While ``run`` is the caller: what a check built, left for ``os._exit`` to drop (freeing a
10,000-reference snapshot object by object took 0.16 s)."""

DESCRIPTION = """\
Catch fabricated and wrong references in manuscripts and bibliographies.

citelsp reads Markdown (pandoc [@key], <!--ref:slug--> markers) and LaTeX (\\cite{})
manuscripts with their BibTeX or CSL-JSON bibliographies, checks what it can locally, and
looks every reference up in Crossref, OpenAlex, Semantic Scholar, arXiv, DataCite and the DOI
registry. Each reference that needs a human gets one item, graded by urgency:
P0 identifier evidence (the DOI or arXiv id does not exist or names another work),
P1 likely wrong or unconfirmed, P2 could not be confirmed automatically,
P3 no automated source applies."""

EXIT_CODES = """\
exit status:
  0  nothing at or above --fail-on
  1  an item or diagnostic at or above --fail-on (default P0)
  2  usage error, or an input that could not be read (missing, empty, not a
     manuscript or bibliography; such files found by searching a folder are
     passed over, unless the folder holds nothing else); the other inputs are
     still checked
  3  no reference could be checked (offline without cached answers, or every
     source unreachable), unless --fail-on never or --allow-unchecked"""

CHECK_EPILOG = f"""\
formats (--format):
  text      one line per finding: path:line:col: PRIORITY CODE key: message, then a
            summary; a reference's item is printed once, at its bibliography entry, with
            the places that cite it (--locations all: every place)
  json      {{summaries, outcomes, checklist, diagnostics}}
  sarif     SARIF 2.1.0, for code-scanning tools
  markdown  the human-check checklist, most urgent first
  ars       the per-reference verification summaries alone
  ledger    one claim-ledger fact per reference

{EXIT_CODES}

examples:
  citelsp check paper.md                      the manuscript and its bibliography
  citelsp check paper/ "chapters/*.md"        every manuscript and bibliography found
  citelsp check refs.bib --format json > report.json
  citelsp check paper.tex --bib refs.bib --fail-on P1
  citelsp check paper.md --offline            local checks and cached answers only
  citelsp check paper.md --ignore ORPHAN_REFERENCE,NO_LOCATOR"""

DECIDE_EPILOG = """\
A decision is stored in .citelsp/decisions.json under the workspace root, keyed by the
citation key and what the entry cites (identifiers, title, year, authors): editing the entry
makes the decision stale and its verdict shows again. A rejection is permanent for that
identity (--verified cannot overwrite it); --clear removes every decision for the key.

examples:
  citelsp decide smith2023 --rejected --note "no such paper in the proceedings"
  citelsp decide lee2024 --verified --note "checked the PDF"
  citelsp decide lee2024 --clear"""


def build_parser() -> argparse.ArgumentParser:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(
        prog="citelsp", description=DESCRIPTION, formatter_class=formatter,
        epilog="commands:\n  citelsp check PATH...     check files and print a report\n"
               "  citelsp decide KEY ...    record a human decision about a reference\n"
               "  citelsp index ACTION ...  build, update or describe a local index\n"
               "  citelsp cache ACTION      show, prune or clear the answer cache\n"
               "  citelsp screen ACTION ... screen many submissions with workers\n"
               "  citelsp serve             the language server on stdio (also --stdio)\n\n"
               "Run 'citelsp check --help' for its options, formats and exit codes.",
    )
    parser.add_argument("--version", action="version", version=f"citelsp {__version__}")
    parser.add_argument("--stdio", action="store_true",
                        help="speak the Language Server Protocol on stdio (as 'serve')")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    serve = sub.add_parser("serve", help="speak the Language Server Protocol on stdio",
                           description="Speak the Language Server Protocol on stdio (what "
                                       "editors start).")
    serve.add_argument("--stdio", action="store_true", help="accepted and ignored")

    check = sub.add_parser(
        "check", help="check manuscripts and bibliographies", formatter_class=formatter,
        description="Check manuscripts and bibliographies: local checks at once, then every "
                    "reference looked up\n(cached answers are reused; progress on stderr when "
                    "it is a terminal).",
        epilog=CHECK_EPILOG)
    check.add_argument("paths", nargs="+", metavar="PATH",
                       help="a manuscript (.md .markdown .qmd .rmd .tex .ltx .latex .Rnw; a LaTeX "
                            "main file brings the chapters it inputs), a bibliography (.bib, "
                            "CSL .json), a directory (searched for both) or a glob pattern")
    check.add_argument("--bib", action="append", default=[], metavar="FILE",
                       help="bibliography for manuscripts that name none in their front "
                            "matter or \\bibliography{} (repeatable)")
    check.add_argument("--format", choices=FORMATS, default="text",
                       help="report format (default text; see below)")
    check.add_argument("--fail-on", choices=FAIL_ON, default="P0",
                       help="exit 1 when an item or diagnostic at or above this priority "
                            "exists (default P0; local diagnostics count by severity: error "
                            "P0, warning P1, information P2, hint P3)")
    check.add_argument("--min-priority", choices=PRIORITIES, default=None,
                       help="lowest priority reported (default P3: everything)")
    check.add_argument("--ignore", action="append", default=[], metavar="CODE",
                       help="leave out diagnostics with this code (repeatable or "
                            "comma-separated, e.g. ORPHAN_REFERENCE,NO_LOCATOR)")
    check.add_argument("--locations", choices=("entry", "all"), default="entry",
                       help="text format: print a reference's item once at its entry "
                            "(default) or at every place that cites it")
    check.add_argument("--offline", action="store_true",
                       help="no network: local checks plus cached answers")
    check.add_argument("--allow-unchecked", action="store_true",
                       help="exit 0, not 3, when no reference could be checked (no network, "
                            "no cached answers): for commit hooks that must not need the "
                            "network; the summary still says what was not checked")
    check.add_argument("--no-cache", action="store_true",
                       help="neither read nor write the answer cache")
    check.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                       help="colour the text report (auto: on a terminal, unless NO_COLOR "
                            "is set)")
    check.add_argument("-q", "--quiet", action="store_true",
                       help="print the report only: no progress, notices or summary on stderr")
    check.add_argument("--triangulate", action="store_true",
                       help="ask every source, not only those a verdict needs")
    check.add_argument("--summary-csv", type=Path, metavar="FILE",
                       help="also write one row per manuscript (references, checked, items "
                            "by priority) as CSV: for screening many submissions")
    check.add_argument("--summary-json", type=Path, metavar="FILE",
                       help="the same per-manuscript summary as JSON")

    index_command.add_parser(sub)
    screen_command.add_parser(sub)
    cache_command.add_parser(sub)

    decide = sub.add_parser(
        "decide", help="record a human decision about a reference", formatter_class=formatter,
        description="Record that a human checked a reference.", epilog=DECIDE_EPILOG)
    decide.add_argument("key", help="the citation key of the entry")
    group = decide.add_mutually_exclusive_group(required=True)
    group.add_argument("--verified", action="store_true",
                       help="the reference is right: hide its verification diagnostics")
    group.add_argument("--rejected", action="store_true",
                       help="the reference is wrong: show an error wherever it is cited")
    group.add_argument("--clear", action="store_true",
                       help="remove every decision recorded for KEY")
    decide.add_argument("--note", default="", help="why (shown in hovers and reports)")
    decide.add_argument("--bib", action="append", default=[], metavar="FILE",
                        help="bibliography holding KEY (default: every one under --root)")
    decide.add_argument("--root", type=Path, default=None,
                        help="workspace root holding .citelsp/decisions.json (default: the "
                             "current directory)")
    return parser


def run() -> None:
    """The ``citelsp`` command: ``main``, then exit without tearing the heap down object by
    object (after a large check that took seconds; everything is flushed first)."""
    global _left_to_exit
    _left_to_exit = []
    code = main()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(ValueError, OSError):  # the server closes stdout on exit
            stream.flush()
    os._exit(code)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if not args:
        if sys.stdin.isatty():  # a person typed a bare `citelsp`: don't wait silently
            parser.print_help()
            return EXIT_OK
        args = ["serve"]  # an editor started us with piped stdio
    if args == ["--stdio"]:
        args = ["serve"]
    try:
        ns = parser.parse_args(args)
    except SystemExit as exc:
        return int(exc.code or 0)
    if ns.command == "serve":
        from citelsp.lsp.server import create_server

        server = create_server()
        # A full collection scans every object (50-200 ms with a large library open) while a
        # hover waits: what the imports made lives as long as the server and is never scanned
        # again, and full collections come a tenth as often (cycles are rare here: nearly
        # everything is freed by reference counting).
        gc.freeze()
        gc.set_threshold(700, 10, 100)
        server.start_io()
        return server.protocol.exit_status
    if ns.command == "check":
        return check(ns)
    if ns.command == "decide":
        return decide(ns)
    if ns.command == "index":
        return index_command.run(ns)
    if ns.command == "screen":
        return screen_command.run(ns)
    if ns.command == "cache":
        return cache_command.run(ns)
    parser.print_help(sys.stderr)
    return EXIT_USAGE


def _settings(ns: argparse.Namespace) -> Settings:
    settings = Settings.from_options({}, os.environ)
    for message in settings.refused:
        print(message, file=sys.stderr)
    changes: dict = {}
    if getattr(ns, "bib", None):
        changes["bibliography"] = tuple(str(Path(b).resolve()) for b in ns.bib)
    if getattr(ns, "offline", False):
        changes["offline"] = True
    if getattr(ns, "no_cache", False):
        changes["use_cache"] = False
    if getattr(ns, "triangulate", False):
        changes["triangulate"] = True
    if getattr(ns, "min_priority", None):
        changes["min_priority"] = ns.min_priority
    ignored = [c.strip().upper() for value in getattr(ns, "ignore", []) for c in value.split(",")]
    if any(ignored):
        changes["ignore"] = tuple(sorted({*settings.ignore, *filter(None, ignored)}))
    return settings.with_changes(**changes)


class _Terminal(Listener):
    """Progress on stderr when it is a terminal; notices unless quiet."""

    def __init__(self, progress: bool, quiet: bool) -> None:
        self.progress = progress
        self.quiet = quiet
        self.bar = None

    def report(self, done: int, total: int) -> None:
        """A bar with the rate and the time left (tqdm), for a screening of thousands."""
        if not self.progress:
            return
        if self.bar is None or self.bar.total != total:
            from tqdm import tqdm
            if self.bar is not None:
                self.bar.close()
            self.bar = tqdm(total=total, desc="Verifying references", unit=" refs",
                            file=sys.stderr, **_bar_size())
        self.bar.update(done - self.bar.n)
        if done == total:
            self.bar.close()
            self.bar = None

    def notice(self, message: str) -> None:
        if not self.quiet and not budget.is_notice(message):  # the summary says it
            print(message, file=sys.stderr)


def _bar_size() -> dict[str, int]:
    """The terminal's size, or 80×24 where it reports none (tqdm hides a bar on a 0-line
    terminal)."""
    size = shutil.get_terminal_size()
    return {"ncols": size.columns or 80, "nrows": size.lines or 24}


async def _check(paths: list[Path], folders: dict[str, list[Path]], settings: Settings,
                 listener: _Terminal) -> tuple[Snapshot, list[str]]:
    workspace, errors = Workspace.for_paths(paths, settings, listener, folders=folders)
    try:
        await workspace.verify_now()
        return workspace.snapshot(), errors
    finally:
        await workspace.verifier.close()


def check(ns: argparse.Namespace) -> int:
    from citelsp.reports import RENDERERS
    from citelsp.reports import json as json_report
    from citelsp.reports import text as text_report
    from citelsp.reports.rows import rows

    paths, errors, folders = expand_inputs(ns.paths)
    if not paths:
        errors += folders_without_work(folders)
        for error in errors:
            print(f"citelsp: {error}", file=sys.stderr)
        return EXIT_USAGE
    settings = _settings(ns)
    gc.disable()  # one run allocates millions of acyclic objects; scanning them cost a fifth
    listener = _Terminal(progress=sys.stderr.isatty() and not ns.quiet, quiet=ns.quiet)
    snapshot, input_errors = asyncio.run(_check(paths, folders, settings, listener))
    if _left_to_exit is not None:
        _left_to_exit.append(snapshot)
    errors += input_errors
    errors += _summaries(snapshot, ns)
    for error in errors:
        print(f"citelsp: {error}", file=sys.stderr)
    if ns.format == "text":
        color = ns.color == "always" or ns.color == "auto" and sys.stdout.isatty() \
            and not os.environ.get("NO_COLOR")
        sys.stdout.write(text_report.render(snapshot, locations=ns.locations, color=color))
    else:
        if ns.format == "json":  # written as it is built: a large library is not held twice
            sys.stdout.flush()
            sys.stdout.buffer.writelines(json_report.chunks(snapshot))
        else:
            sys.stdout.write(RENDERERS[ns.format](snapshot))
        if not ns.quiet:
            print(text_report.summary(snapshot), file=sys.stderr)
    if errors:
        return EXIT_USAGE
    if ns.fail_on == "never":
        return EXIT_OK
    threshold = PRIORITIES.index(ns.fail_on)
    if any(PRIORITIES.index(row.priority) <= threshold for row in rows(snapshot)):
        return EXIT_FINDINGS
    coverage = snapshot.coverage()
    if coverage.checkable and coverage.checked == 0 and not ns.allow_unchecked:
        return EXIT_UNCHECKED
    return EXIT_OK


def _summaries(snapshot: Snapshot, ns: argparse.Namespace) -> list[str]:
    """Write the per-manuscript summaries asked for; what could not be written."""
    from citelsp.reports import screening

    errors = []
    for path, render in ((ns.summary_csv, screening.render_csv),
                         (ns.summary_json, screening.render_json)):
        if path is not None:
            try:
                path.write_text(render(snapshot), encoding="utf-8")
            except OSError as exc:
                errors.append(f"{path}: {exc.strerror}")
    return errors


def decide(ns: argparse.Namespace) -> int:
    from citelsp.verdict.decisions import Decision, DecisionsRefused, PermanentRejection

    root = (ns.root or Path.cwd()).resolve()
    workspace = Workspace(_settings(ns), [root])
    if ns.clear:
        try:
            removed = workspace.decisions.clear(ns.key)
        except DecisionsRefused as exc:
            print(f"citelsp: {exc}", file=sys.stderr)
            return EXIT_USAGE
        print(f"cleared: {removed} decision{'s' if removed != 1 else ''} for {ns.key}")
        return EXIT_OK
    refs = workspace.entries(ns.key)
    if not refs:
        print(f"citelsp: no entry with key '{ns.key}' under {root}", file=sys.stderr)
        return EXIT_USAGE
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
        return EXIT_FINDINGS
    except DecisionsRefused as exc:
        print(f"citelsp: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(f"recorded: {ref.key} {decision.decision}")
    return EXIT_OK
