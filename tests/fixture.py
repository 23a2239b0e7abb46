"""Multi-file fixtures for in-process feature tests (texlab's ``Fixture::parse`` is the model).

One string holds every file, each after a ``%! NAME`` line (``%! NAME (closed)``: written to
disk but not open in the editor). ``$0`` marks the cursor; a line of only ``^`` under a line
marks an expected span of it (in code points of that line as it reads without ``$0``).
The files are written under a folder and opened in a ``Workspace`` rooted there; the
features are asked on its ``View``, with no server.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

from citelsp.config import Settings
from citelsp.documents.model import Location
from citelsp.documents.parse import Document
from citelsp.resolution.asking import Resolution
from citelsp.resolution.identifiers import reference_ids
from citelsp.resolution.outcome import Outcome
from citelsp.spans import Edit, Span
from citelsp.workspace import Workspace
from citelsp.workspace.view import View

CURSOR = "$0"
_HEADER = re.compile(r"^%! (?P<name>\S+)(?P<closed> \(closed\))?$")
_CARETS = re.compile(r"^ *\^+ *$")


@dataclass
class Fixture:
    workspace: Workspace
    uris: dict[str, str]
    """File name → URI."""
    cursor: tuple[str, int] | None = None
    """(name, code-point offset) of ``$0``."""
    expected: list[tuple[str, str]] = field(default_factory=list)
    """The ``^^^`` spans: (file name, the text they underline)."""

    @property
    def view(self) -> View:
        return View(self.workspace)

    def doc(self, name: str | None = None) -> Document:
        name = name or self.cursor_name
        doc = self.workspace.document(self.uris[name])
        assert doc is not None, f"{name} is not open"
        return doc

    @property
    def cursor_name(self) -> str:
        assert self.cursor is not None, "the fixture has no $0"
        return self.cursor[0]

    def at(self) -> tuple[View, Document, int]:
        """What a request at the cursor asks a feature with."""
        assert self.cursor is not None, "the fixture has no $0"
        return self.view, self.doc(), self.cursor[1]

    def name_of(self, uri: str) -> str:
        return next(n for n, u in self.uris.items() if u == uri)

    def text_at(self, uri: str, span: Span) -> str:
        doc = self.workspace.document(uri)
        assert doc is not None
        return doc.text[span.start:span.end]

    def places(self, found: list[Location]) -> list[tuple[str, str]]:
        """Locations as (file name, text there), sorted."""
        return sorted((self.name_of(loc.uri), self.text_at(loc.uri, loc.span)) for loc in found)

    def applied(self, edits: list[Edit] | tuple[Edit, ...], name: str) -> str:
        """The text of ``name`` with the edits to it applied."""
        text = self.doc(name).text
        mine = [e for e in edits if e.uri == self.uris[name]]
        for edit in sorted(mine, key=lambda e: e.span.start, reverse=True):
            text = text[:edit.span.start] + edit.text + text[edit.span.end:]
        return text

    def read_workspace(self) -> None:
        """What the server does after a change: read the files the editor has not opened."""
        for _ in self.workspace.graph.read_workspace():
            pass

    def resolve(self, key: str, *outcomes: Outcome) -> None:
        """Store what verification would have found for every entry with ``key``."""
        verifier = self.workspace.verifier
        for ref in self.workspace.references({key}):
            verifier.results[verifier.identity(ref)] = Resolution(
                key, reference_ids(ref), {o.resolver: o for o in outcomes})


def parse(spec: str, folder: Path, settings: Settings | None = None) -> Fixture:
    """Write the files of ``spec`` under ``folder`` and open them in a workspace rooted
    there."""
    files: list[tuple[str, bool, list[str]]] = []
    for line in textwrap.dedent(spec).strip("\n").split("\n"):
        if m := _HEADER.match(line):
            files.append((m["name"], bool(m["closed"]), []))
        else:
            assert files, "a fixture starts with a %! NAME line"
            files[-1][2].append(line)
    workspace = Workspace(settings or Settings(), [folder])
    fixture = Fixture(workspace, {})
    opened = []
    for name, closed, lines in files:
        text, cursor, spans = _marks(lines)
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        fixture.uris[name] = path.as_uri()
        if cursor is not None:
            fixture.cursor = (name, cursor)
        fixture.expected += [(name, text[s.start:s.end]) for s in spans]
        if not closed:
            opened.append((path.as_uri(), text))
    for uri, text in opened:
        workspace.open(uri, text)
    return fixture


def _marks(lines: list[str]) -> tuple[str, int | None, list[Span]]:
    """The text without its marks, the cursor's offset and the underlined spans."""
    kept: list[str] = []
    cursor = None
    spans = []
    offset = 0
    for line in lines:
        if _CARETS.match(line) and kept:
            start = offset - len(kept[-1]) - 1
            spans.append(Span(start + line.index("^"), start + len(line.rstrip())))
            continue
        if CURSOR in line:
            assert cursor is None, "one $0 per fixture"
            cursor = offset + line.index(CURSOR)
            line = line.replace(CURSOR, "", 1)
        kept.append(line)
        offset += len(line) + 1
    return "\n".join(kept) + "\n", cursor, spans
