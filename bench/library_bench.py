"""The four figures of an editor at library scale, each beside a machine-independent ratio.

Run: ``python bench/library_bench.py [--only NAME ...]`` (names: ``open``, ``keystroke``,
``publish``, ``reopen``, ``offline``, ``completion``). It prints:

- ``open``: a generated 10,000-entry library (``bench/parse_bench.py``), ``didOpen`` → its first
  diagnostics from a real server over stdio (target ≤ 1 s);
- ``keystroke``: a one-character edit in a 20,000-entry library → its re-publish (median and
  worst of several isolated edits; the work should follow the edit, not the file);
- ``publish``: a 20,000-entry library with every entry verified (a small fake result set, one
  resolution per entry), published in-process by the server's ``publish`` (findings, then
  diagnostics): with nothing changed, after a one-character edit of one entry (the re-parse
  not counted), and after 50 new results arrived; each with the references it visited (the
  work should follow the change, not the library);
- ``reopen``: 1,000 HALLMARK references verified against the simulated index
  (``bench/editor_bench.py``), then a new server on the same cache: ``didOpen`` → the first run's
  final diagnostics (target ≤ 1 s); hover p99 while the first run verified (target ≤ 50 ms,
  ≤ 100 ms under a concurrent test run) and over 1,000 lookups once verified (500 hovers,
  500 completions);
- ``offline``: ``citelsp check --offline`` of the TeX Live corpus concatenated (9.7 MB; see
  ``bench/texlive_corpus.py``), its time and peak memory (targets ≤ 5 s, ≤ 400 MB);
- ``completion``: a manuscript on a generated 20,000-entry library, both open and published:
  the first completion after ``[@`` (target well under 100 ms); a title word typed, asked once
  the edit is published (its first search reads every entry's title); one more letter asked
  with its edit, as an editor does (the answer waits for the re-publish a keystroke starts);
  completionItem/resolve of one item.

This shared host's speed varies by half between hours, so each time is also given as a ratio to
a bare parse of the same input by bibtexparser 2 measured in this process just before (the
library, the reopened ``refs.bib``, the corpus; wall over its wall, CPU over its CPU): a ratio
that moves says the code changed, one that holds while the seconds move says the host did.
Where the work is one process's, its CPU seconds are given too (the server's from didOpen to
the publication, the command's whole run): with two cores and a load of 7, wall time is two to
three times the CPU time, which the load moves much less. The load average is printed before
each.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):  # run as a script: make ``citelsp`` and ``bench`` importable
    sys.path.insert(0, str(ROOT))

import bibtexparser  # noqa: E402
from lsprotocol import types  # noqa: E402

from bench import editor_bench, parse_bench, texlive_corpus  # noqa: E402
from citelsp.lsp.session import CitelspServer  # noqa: E402
from citelsp.resolution.asking import Resolution  # noqa: E402
from citelsp.resolution.identity import reference_ids  # noqa: E402
from citelsp.resolution.outcome import Outcome, Record  # noqa: E402

MEASURES = ("open", "keystroke", "publish", "reopen", "offline", "completion")


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.2f}/{five:.2f}"


class Bare(NamedTuple):
    """A bibtexparser parse of the same input, best of a few: the yardstick of this host
    now, in wall and in CPU seconds."""

    wall: float
    cpu: float


def bare_parse(text: str, runs: int = 3) -> Bare:
    wall = cpu = float("inf")
    logging.getLogger("bibtexparser").setLevel(logging.CRITICAL)  # its notes on bad blocks
    for _ in range(runs):
        started, used = time.perf_counter(), time.process_time()
        bibtexparser.parse_string(text)
        wall = min(wall, time.perf_counter() - started)
        cpu = min(cpu, time.process_time() - used)
    return Bare(wall, cpu)


def line(label: str, seconds: float, bare: Bare, target: str, *, unit: str = "s",
         cpu: float | None = None) -> str:
    """The wall time over the bare parse's wall time, and the CPU time over its CPU time."""
    shown = f"{seconds * 1000:8.1f} ms" if unit == "ms" else f"{seconds:8.3f} s "
    used = "" if cpu is None else (f"; CPU {cpu * 1000:.1f} ms" if unit == "ms" else
                                   f"; CPU {cpu:.2f} s") + f" = {cpu / bare.cpu:.3f} ×"
    return (f"  {label:<44}{shown}  {seconds / bare.wall:7.2f} × bare parse{used}   "
            f"(target {target})")


async def library_open(entries: int, edits: bool) -> list[str]:
    """didOpen → first diagnostics of a generated library; with ``edits``, keystrokes too."""
    library = parse_bench.generated_library(entries)
    bare = bare_parse(library)
    out = [f"{entries:,}-entry library ({len(library) / 1e6:.1f} MB; bare parse "
           f"{bare.wall:.3f} s, CPU {bare.cpu:.3f} s; {load()})"]
    with tempfile.TemporaryDirectory(prefix="citelsp-bench-") as tmp:
        root = Path(tmp)
        (root / "library.bib").write_text(library, encoding="utf-8")
        uri = (root / "library.bib").as_uri()
        env = {**os.environ, "CITELSP_OFFLINE": "1", "CITELSP_CACHE_DIR": str(root / "cache")}
        server = await parse_bench.Server.start(env)
        await server.request("initialize", {
            "processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": {},
            "workspaceFolders": [{"uri": root.as_uri(), "name": "bench"}],
            "initializationOptions": {"citelsp": {"verify": False}},
        })
        await server.notify("initialized", {})
        await asyncio.sleep(parse_bench.PAUSE_S)
        cpu = editor_bench.cpu_seconds(server.process.pid)
        sent = await server.notify("textDocument/didOpen",
                                   parse_bench.open_params(uri, "bibtex", library))
        arrived, count = await server.published(uri, sent)
        used = editor_bench.cpu_seconds(server.process.pid)
        out.append(line(f"didOpen → first diagnostics ({count})", arrived - sent, bare, "≤ 1 s",
                        cpu=used - cpu if used is not None and cpu is not None else None))
        if edits:
            cpu = editor_bench.cpu_seconds(server.process.pid)
            times = await parse_bench.one_char_edits(server, uri, library, "Effects")
            used = editor_bench.cpu_seconds(server.process.pid)
            each = (used - cpu) / len(times) if used is not None and cpu is not None else None
            out.append(line("keystroke → re-publish, median", statistics.median(times), bare,
                            "≤ 100 ms", unit="ms", cpu=each))
            out.append(line("keystroke → re-publish, worst", max(times), bare, "≤ 100 ms",
                            unit="ms"))
        rss = server.peak_rss_mib()
        await server.stop()
    out.append(f"  server peak RSS {rss:.0f} MiB" if rss is not None else "")
    return out


def fake_resolution(ref, kind: int) -> Resolution:
    """What verification could have found for ``ref``: two sources matched it (no finding),
    one did (PARTIAL_COVERAGE), none did (NOT_FOUND_IN_INDEXES), or its identifier does not
    exist (DOI_REFUTED or ARXIV_ID_REFUTED)."""
    record = Record("crossref", title=ref.fields["title"].value)
    matched = {s: Outcome(s, "matched", "id", "found", record=record)
               for s in ("crossref", "openalex")}
    outcomes = [matched, {"crossref": matched["crossref"]},
                {s: Outcome(s, "unmatched", "title", "no match") for s in matched},
                {"crossref": Outcome("crossref", "unmatched", "id", "does not exist",
                                     reason="DOI_REFUTED", refutes_identifier=True)}]
    return Resolution(ref.key, reference_ids(ref), outcomes[kind])


class Unconnected(CitelspServer):
    """The server without a client: UTF-16 positions, and publications built but not sent."""

    encoding = types.PositionEncodingKind.Utf16

    def send_diagnostics(self, uri: str, version: int | None,
                         diagnostics: list[types.Diagnostic]) -> None:
        pass


def timed(action: Callable[[], object]) -> tuple[float, float]:
    """Wall and CPU seconds of ``action()``."""
    started, used = time.perf_counter(), time.process_time()
    action()
    return time.perf_counter() - started, time.process_time() - used


async def publish_cost(entries: int) -> list[str]:
    """The server's publication of a verified library: unchanged, edited, results arrived."""
    library = parse_bench.generated_library(entries)
    bare = bare_parse(library)
    out = [f"{entries:,}-entry library, every entry verified, published in-process "
           f"({len(library) / 1e6:.1f} MB; bare parse {bare.wall:.3f} s, CPU {bare.cpu:.3f} s; "
           f"{load()})"]
    server = Unconnected()
    ws, verifier = server.ws, server.ws.verifier
    with tempfile.TemporaryDirectory(prefix="citelsp-bench-") as tmp:
        uri = (Path(tmp) / "library.bib").as_uri()
        server.document_opened(types.TextDocumentItem(uri, "bibtex", 1, library))
        server.parse_pending()
        refs = ws.document(uri).references
        for i, ref in enumerate(refs):  # mostly clean, some of each finding
            verifier.results[verifier.identity(ref)] = fake_resolution(
                ref, 0 if i % 5 else (i // 5) % 4)
        wall, cpu = timed(lambda: server.publish(uri))
        shown = len(ws.problems(uri))
        out.append(line(f"first publication ({shown:,} findings)", wall, bare, "—", cpu=cpu))

        def measured(label: str, change: Callable[[int], object], runs: int) -> None:
            """The findings (``Workspace.problems``), then the rest of the publication
            (diagnostics from them), after each ``change``."""
            found, cpus, converted, visits = [], [], [], []
            for n in range(runs):
                change(n)
                wall, cpu = timed(lambda: ws.problems(uri))
                found.append(wall)
                cpus.append(cpu)
                visits.append(ws.findings[uri].visited)
                converted.append(timed(lambda: server.publish(uri))[0])
            out.append(line(f"{label}: findings", statistics.median(found), bare, "∝ change",
                            unit="ms", cpu=statistics.median(cpus)))
            out.append(f"    {statistics.median(visits):,.0f} references visited; the "
                       f"diagnostics from them {statistics.median(converted) * 1000:.1f} ms "
                       f"more (median of {runs})")

        measured("(a) nothing changed", lambda n: None, 20)
        offset = library.index("Effects", len(library) // 2)
        index = server.lines.of(uri, library)
        line_no, column = index.position(offset)

        def edit(n: int) -> None:
            where = types.Position(line=line_no, character=column + n)
            server.text_changed(types.VersionedTextDocumentIdentifier(version=2 + n, uri=uri), [
                types.TextDocumentContentChangePartial(types.Range(where, where), "x")])
            server.parse_pending()

        measured("(b) one-character edit", edit, parse_bench.EDITS)
        refs = ws.document(uri).references

        def arrived(n: int) -> None:  # 50 entries spread over the library get new verdicts
            for ref in refs[n * 7::len(refs) // 50][:50]:
                if (identity := verifier.identity_if_known(ref)) is not None:
                    verifier.results[identity] = fake_resolution(ref, 2 + n % 2)

        measured("(c) 50 results arrived", arrived, 5)
    await server.ws.verifier.close()
    return out


async def reopen_and_hover(refs: int) -> list[str]:
    """editor_bench's first run and cached reopen, with 1,000 lookups once verified."""
    args = argparse.Namespace(refs=refs, delay=0.2, flawed=0.1, profile=None, probes=200,
                              gap=0.1, idle_probes=500, quiet=2.0, timeout=1200.0,
                              reopen_timeout=60.0, seed=1, limits=False)
    entries = editor_bench.chosen_entries(args.refs, args.flawed, args.seed)
    library = editor_bench.render_bibtex(entries)
    bare = bare_parse(library)
    out = [f"{refs:,} verified references ({len(library) / 1e3:.0f} kB; bare parse "
           f"{bare.wall * 1000:.1f} ms, CPU {bare.cpu * 1000:.1f} ms; {load()})"]
    index = editor_bench.IndexProcess(args.delay)
    base_url = index.start()
    try:
        with tempfile.TemporaryDirectory(prefix="citelsp-bench-") as tmp:
            root, cache = Path(tmp) / "ws", Path(tmp) / "cache"
            root.mkdir()
            cache.mkdir()
            manuscript, sites = editor_bench.render_manuscript(entries)
            (root / "refs.bib").write_text(library, encoding="utf-8")
            (root / "paper.md").write_text(manuscript, encoding="utf-8")
            docs = [(root / "paper.md", "markdown"), (root / "refs.bib", "bibtex")]
            env = editor_bench.index_environ(base_url, cache)
            first = await editor_bench.first_run(root, env, docs, entries, sites, index, args)
            out.append(f"  (first run: all verdicts {first.verdicts_s:.1f} s after didOpen; "
                       f"{load()})")
            reopen = await editor_bench.cached_reopen(root, env, docs, sites, first, index, args)
    finally:
        index.stop()
    if reopen.seconds is None:
        out.append("  cached reopen did not reach the first run's diagnostics")
    else:
        label = "cached reopen → final diagnostics" + (" (bound)" if reopen.upper_bound else "")
        out.append(line(label, reopen.seconds, bare, "≤ 1 s", cpu=reopen.cpu_s))
    for label, samples in (("while verifying", [s for s in first.samples if s.phase == "load"]),
                           ("1,000 lookups once verified", first.idle)):
        hovers = [s.ms / 1000 for s in samples if s.kind == "hover"]
        _p50, p99, _top = editor_bench.percentiles(hovers)
        out.append(line(f"hover p99 {label} ({len(hovers)})", p99, bare, "≤ 50 ms", unit="ms"))
    return out


async def library_completion(entries: int, real: Path | None) -> list[str]:
    """The first completion in a manuscript whose bibliography is a generated library, or
    ``real`` (a .bib as written by people: decoding its entries costs what it costs)."""
    if real is None:
        library = parse_bench.generated_library(entries)
        manuscript = parse_bench.generated_manuscript(200, entries) + "As [@"
        name = f"a {entries:,}-entry library"
    else:
        library = real.read_text(encoding="utf-8", errors="replace")
        manuscript = "---\nbibliography: library.bib\n---\n\nAs [@"
        name = real.name
    bare = bare_parse(library)
    out = [f"completion on {name} ({len(library) / 1e6:.1f} MB; bare parse "
           f"{bare.wall:.3f} s, CPU {bare.cpu:.3f} s; {load()})"]
    with tempfile.TemporaryDirectory(prefix="citelsp-bench-") as tmp:
        root = Path(tmp)
        paths = {"library.bib": library, "paper.md": manuscript}
        for name, text in paths.items():
            (root / name).write_text(text, encoding="utf-8")
        lib_uri, uri = (root / "library.bib").as_uri(), (root / "paper.md").as_uri()
        env = {**os.environ, "CITELSP_OFFLINE": "1", "CITELSP_CACHE_DIR": str(root / "cache")}
        server = await parse_bench.Server.start(env)
        started = await server.request("initialize", {
            "processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": {},
            "workspaceFolders": [{"uri": root.as_uri(), "name": "bench"}],
            "initializationOptions": {"citelsp": {"verify": False}},
        })
        resolves = started["result"]["capabilities"]["completionProvider"].get(
            "resolveProvider")  # not before completionItem/resolve: run it on older code too
        await server.notify("initialized", {})
        sent = await server.notify("textDocument/didOpen",
                                   parse_bench.open_params(lib_uri, "bibtex", library))
        await server.published(lib_uri, sent)
        sent = await server.notify("textDocument/didOpen",
                                   parse_bench.open_params(uri, "markdown", manuscript))
        await server.published(uri, sent)
        await asyncio.sleep(2 * parse_bench.PAUSE_S)  # the server idle again

        async def timed(method: str, params: dict) -> tuple[float, float | None, dict]:
            cpu = editor_bench.cpu_seconds(server.process.pid)
            started = time.perf_counter()
            answer = await server.request(method, params)
            seconds = time.perf_counter() - started
            used = editor_bench.cpu_seconds(server.process.pid)
            return seconds, used - cpu if used is not None and cpu is not None else None, answer

        last = manuscript.count("\n")
        column = parse_bench.utf16_column(manuscript.rsplit("\n", 1)[-1])
        steps = (("first completion after [@", "", False),
                 ("then a title word, its first search", "Resul", True),
                 ("one more letter, sent with the edit", "t", False))
        for version, (label, typed, settle) in enumerate(steps, start=1):
            if typed:
                await server.notify("textDocument/didChange", {
                    "textDocument": {"uri": uri, "version": version}, "contentChanges": [{
                        "range": {"start": {"line": last, "character": column},
                                  "end": {"line": last, "character": column}},
                        "text": typed}]})
                column += len(typed)
            if settle:
                await asyncio.sleep(2 * parse_bench.PAUSE_S)  # the edit published
            seconds, cpu, answer = await timed("textDocument/completion", {
                "textDocument": {"uri": uri}, "position": {"line": last, "character": column}})
            found = answer["result"]
            out.append(line(f"{label} ({len(found['items'])} items"
                            f"{', more' if found['isIncomplete'] else ''})", seconds, bare,
                            "≤ 100 ms", unit="ms", cpu=cpu))
        if resolves:
            seconds, cpu, answer = await timed("completionItem/resolve", found["items"][0])
            out.append(line(f"resolve {answer['result']['detail']!r}", seconds, bare,
                            "≤ 100 ms", unit="ms", cpu=cpu))
        await server.stop()
    return out


def offline_check() -> list[str]:
    """``check --offline`` of the TeX Live corpus concatenated: time and the child's peak."""
    files = texlive_corpus.corpus_files()
    if not files:
        return [f"offline: no .bib files under {texlive_corpus.ROOT} "
                f"(apt-get install {' '.join(texlive_corpus.PACKAGES)})"]
    data = b"".join(p.read_bytes() for p in files)
    bare = bare_parse(data.decode("utf-8", errors="replace"), runs=1)
    out = [f"check --offline of the TeX Live corpus ({len(data) / 1e6:.1f} MB; bare parse "
           f"{bare.wall:.2f} s, CPU {bare.cpu:.2f} s; {load()})"]
    with tempfile.TemporaryDirectory() as tmp:
        joined = Path(tmp) / "corpus.bib"
        joined.write_bytes(data)
        env = {**os.environ, "CITELSP_CACHE_DIR": str(Path(tmp) / "cache")}
        times, peaks, cpus = [], [], []
        for _ in range(3):
            started = time.perf_counter()
            child = subprocess.Popen(
                [sys.executable, "-m", "citelsp", "check", "--offline", "--format", "json",
                 "--fail-on", "never", str(joined)],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
            _pid, status, usage = os.wait4(child.pid, 0)
            times.append(time.perf_counter() - started)
            peaks.append(usage.ru_maxrss / 1024)
            cpus.append(usage.ru_utime + usage.ru_stime)
            if status != 0:
                return [*out, child.stderr.read().decode(errors="replace")[-2000:]]
            child.stderr.close()
    out.append(line(f"median of {', '.join(f'{t:.2f}' for t in times)} s",
                    statistics.median(times), bare, "≤ 5 s", cpu=statistics.median(cpus)))
    out.append(f"  peak memory {max(peaks):.0f} MB (target ≤ 400 MB)")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", choices=MEASURES, default=list(MEASURES))
    parser.add_argument("--entries", type=int, default=10_000, help="library size for open")
    parser.add_argument("--keystroke-entries", type=int, default=20_000)
    parser.add_argument("--refs", type=int, default=1000, help="references for reopen")
    parser.add_argument("--completion-entries", type=int, default=20_000)
    parser.add_argument("--completion-library", type=Path,
                        help="a real .bib for completion instead of a generated one")
    args = parser.parse_args(argv)
    runs: dict[str, Callable[[], list[str]]] = {
        "open": lambda: asyncio.run(library_open(args.entries, edits=False)),
        "keystroke": lambda: asyncio.run(library_open(args.keystroke_entries, edits=True)),
        "publish": lambda: asyncio.run(publish_cost(args.keystroke_entries)),
        "reopen": lambda: asyncio.run(reopen_and_hover(args.refs)),
        "offline": offline_check,
        "completion": lambda: asyncio.run(library_completion(args.completion_entries,
                                                             args.completion_library)),
    }
    print(f"citelsp library bench, {time.strftime('%Y-%m-%d %H:%M')} UTC, {os.cpu_count()} cores, "
          f"host loop {texlive_corpus.host_loop_s():.2f} s")
    for name in args.only:
        print("\n".join(runs[name]()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
