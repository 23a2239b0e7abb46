"""Time local diagnostics from a real ``citelsp`` server over stdio, and its peak memory.

Run: ``python bench/parse_bench.py [ENTRIES] [CITATIONS]`` (defaults 10,000 and 2,000).
It writes a generated library and manuscript to a temporary workspace, starts
``python -m citelsp`` with verification off (``citelsp.verify: false``: local diagnostics only,
the cost this measures) and a private cache, and prints:

- time from ``didOpen`` to the first ``publishDiagnostics`` for the library, then for the
  manuscript (the library already open);
- time to re-publish after a one-character edit of each (isolated edits, a pause longer than
  the debounce interval between them; median and worst of several);
- the server's peak RSS (``VmHWM``).

Targets on a 2-core machine: library diagnostics within 1 s of ``didOpen``; a re-publish
after a small edit within 100 ms.

The JSON-RPC framing is written here rather than using pygls's client: a timestamp must be
taken when a message's bytes arrive, before a client structures 10,000 diagnostics into
objects (which would be measured as server time).
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

EDITS = 7
PAUSE_S = 0.5
"""Longer than the server's 200 ms debounce, so every edit is an isolated one."""

SURNAMES = ["Müller", "Smith", "García", "Nguyen", "O'Brien", "Zhang", "Kowalski", "Dubois"]
VENUES = ["Journal of Machine Learning Research", "Nature", "Proceedings of {ACL}",
          "Advances in Neural Information Processing Systems", "Physical Review Letters"]


def generated_library(entries: int) -> str:
    parts = ['@string{jmlr = "Journal of Machine Learning Research"}\n\n']
    for i in range(entries):
        first, second = SURNAMES[i % 8], SURNAMES[(i * 3 + 1) % 8]
        kind = "inproceedings" if i % 3 == 0 else "article"
        venue = "booktitle" if kind == "inproceedings" else "journal"
        extra = ""
        if i % 5 < 3:
            extra += f"  doi = {{10.{1000 + i % 97}/bench.{i}}},\n"
        elif i % 5 == 3:
            extra += f"  eprint = {{{2001 + i % 20:04d}.{i:05d}}},\n  archivePrefix = {{arXiv}},\n"
        parts.append(
            f"@{kind}{{key{i},\n"
            f"  author = {{{first}, Anna and {second}, Bo{' and others' if i % 4 else ''}}},\n"
            f"  title = {{On {{BERT}}-style Models, Part {i}: Effects \\& Results}},\n"
            f"  {venue} = {{{VENUES[i % len(VENUES)]}}},\n"
            f"  year = {{{1990 + i % 35}}},\n"
            f"  volume = {{{i % 50}}},\n"
            f"  pages = {{{i}--{i + 10}}},\n"
            f"{extra}}}\n\n"
        )
    return "".join(parts)


def generated_manuscript(citations: int, entries: int) -> str:
    parts = ["---\ntitle: Benchmark\nbibliography: library.bib\n---\n\n# Results\n\n"]
    step = max(1, entries // citations)
    written = 0
    paragraph = 0
    while written < citations:
        paragraph += 1
        keys = [f"key{((written + j) * step) % entries}" for j in range(4)]
        parts.append(
            f"Paragraph {paragraph}: 注意力 🙂 as shown by @{keys[0]} and others "
            f"[see @{keys[1]}, p. 4; @{keys[2]}], the effect<!--ref:{keys[3]}-->"
            f"<!--anchor:page:{paragraph}--> holds.\n\n"
        )
        written += 4
    return "".join(parts)


class Server:
    """A citelsp process spoken to over stdio; every received message is timestamped."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self._next_id = 0
        self._responses: dict[int, asyncio.Future] = {}
        self._published: list[tuple[float, str, int]] = []
        self._changed = asyncio.Event()
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def start(cls, env: dict[str, str]) -> Server:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "citelsp", stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, env=env, limit=2**26,
        )
        return cls(process)

    async def _read(self) -> None:
        out = self.process.stdout
        while True:
            length = 0
            while (line := await out.readline()) not in (b"\r\n", b""):
                name, _, value = line.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            if not line:
                return
            body = await out.readexactly(length)
            arrived = time.perf_counter()
            message = json.loads(body)
            if "id" in message and "method" in message:  # a request from the server
                self._send({"jsonrpc": "2.0", "id": message["id"], "result": None})
            elif "id" in message:
                self._responses.pop(message["id"]).set_result(message)
            elif message.get("method") == "textDocument/publishDiagnostics":
                params = message["params"]
                self._published.append((arrived, params["uri"], len(params["diagnostics"])))
                self._changed.set()

    def _send(self, message: dict) -> None:
        body = json.dumps(message).encode("utf-8")
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    async def request(self, method: str, params: dict) -> dict:
        self._next_id += 1
        future = asyncio.get_running_loop().create_future()
        self._responses[self._next_id] = future
        self._send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        await self.process.stdin.drain()
        return await future

    async def notify(self, method: str, params: dict) -> float:
        """Send a notification; returns the time it was handed to the pipe."""
        self._send({"jsonrpc": "2.0", "method": method, "params": params})
        sent = time.perf_counter()
        await self.process.stdin.drain()
        return sent

    async def published(self, uri: str, after: float, timeout: float = 60.0) -> tuple[float, int]:
        """The first publication for ``uri`` that arrived after ``after``: (time, count)."""
        deadline = time.perf_counter() + timeout
        while True:
            for arrived, published_uri, count in self._published:
                if published_uri == uri and arrived > after:
                    return arrived, count
            self._changed.clear()
            await asyncio.wait_for(self._changed.wait(), max(0.0, deadline - time.perf_counter()))

    def peak_rss_mib(self) -> float | None:
        try:
            status = Path(f"/proc/{self.process.pid}/status").read_text()
        except OSError:
            return None
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return None

    async def stop(self) -> None:
        await self.request("shutdown", None)
        await self.notify("exit", None)
        await self.process.wait()
        self._reader.cancel()


def utf16_column(line: str) -> int:
    return len(line.encode("utf-16-le")) // 2


async def one_char_edits(server: Server, uri: str, text: str, anchor: str,
                         first_version: int = 2) -> list[float]:
    """Type one character at a time before ``anchor`` (far into the document); seconds each."""
    offset = text.index(anchor, len(text) // 2)
    line = text.count("\n", 0, offset)
    column = utf16_column(text[text.rfind("\n", 0, offset) + 1 : offset])
    times = []
    for n, version in enumerate(range(first_version, first_version + EDITS)):
        await asyncio.sleep(PAUSE_S)
        where = {"line": line, "character": column + n}
        sent = await server.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"range": {"start": where, "end": where}, "text": "x"}],
        })
        arrived, _ = await server.published(uri, sent)
        times.append(arrived - sent)
    return times


def _typed(text: str, anchor: str) -> str:
    """``text`` after ``one_char_edits`` typed EDITS characters before ``anchor``."""
    offset = text.index(anchor, len(text) // 2)
    return text[:offset] + "x" * EDITS + text[offset:]


def open_params(uri: str, language: str, text: str) -> dict:
    return {"textDocument": {"uri": uri, "languageId": language, "version": 1, "text": text}}


async def run(entries: int, citations: int) -> None:
    with tempfile.TemporaryDirectory(prefix="citelsp-bench-") as tmp:
        root = Path(tmp)
        library, manuscript = generated_library(entries), generated_manuscript(citations, entries)
        (root / "library.bib").write_text(library, encoding="utf-8")
        (root / "paper.md").write_text(manuscript, encoding="utf-8")
        bib_uri, md_uri = (root / "library.bib").as_uri(), (root / "paper.md").as_uri()
        env = {**os.environ, "CITELSP_OFFLINE": "1", "CITELSP_CACHE_DIR": str(root / "cache")}
        print(f"library: {entries:,} entries, {len(library):,} characters; "
              f"manuscript: {citations:,} citations, {len(manuscript):,} characters")

        server = await Server.start(env)
        started = time.perf_counter()
        await server.request("initialize", {
            "processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": {},
            "workspaceFolders": [{"uri": root.as_uri(), "name": "bench"}],
            "initializationOptions": {"citelsp": {"verify": False}},
        })
        await server.notify("initialized", {})
        print(f"server start to initialize response        {time.perf_counter() - started:8.3f} s")

        await asyncio.sleep(PAUSE_S)
        sent = await server.notify("textDocument/didOpen", open_params(bib_uri, "bibtex", library))
        arrived, count = await server.published(bib_uri, sent)
        print(f"didOpen library -> first diagnostics        {arrived - sent:8.3f} s"
              f"  ({count} diagnostics; target < 1 s)")
        times = await one_char_edits(server, bib_uri, library, "Effects")
        print(f"one-character edit of the library alone -> re-publish "
              f"median {statistics.median(times) * 1000:7.1f} ms, "
              f"worst {max(times) * 1000:7.1f} ms  (target < 100 ms)")
        library = _typed(library, "Effects")

        await asyncio.sleep(PAUSE_S)
        sent = await server.notify("textDocument/didOpen",
                                   open_params(md_uri, "markdown", manuscript))
        arrived, count = await server.published(md_uri, sent)
        bib_again, bib_count = await server.published(bib_uri, sent)
        print(f"didOpen manuscript -> first diagnostics     {arrived - sent:8.3f} s"
              f"  ({count} diagnostics)")
        print(f"  ... and the library re-published         {bib_again - sent:8.3f} s"
              f"  ({bib_count} diagnostics: orphans now known)")

        for label, uri, text, anchor, version in (
            ("manuscript", md_uri, manuscript, "holds.", 2),
            ("library", bib_uri, library, "Effects", 2 + EDITS),
        ):
            times = await one_char_edits(server, uri, text, anchor, version)
            print(f"one-character edit of the {label:<10} -> re-publish "
                  f"median {statistics.median(times) * 1000:7.1f} ms, "
                  f"worst {max(times) * 1000:7.1f} ms  (target < 100 ms)")

        rss = server.peak_rss_mib()
        print("server peak RSS (VmHWM)                     "
              + (f"{rss:8.1f} MiB" if rss is not None else "     n/a (no /proc)"))
        await server.stop()


def main() -> None:
    entries = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    citations = int(sys.argv[2]) if len(sys.argv) > 2 else 2_000
    asyncio.run(run(entries, citations))


if __name__ == "__main__":
    main()
