"""The server's state: the editor's texts, what was published, progress and timers. The
notification handlers (``lsp.notifications``) change the workspace through it; requests
(``lsp.requests``) read a view of it."""

from __future__ import annotations

import asyncio
import gc
import logging
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from citelsp import __version__
from citelsp.documents.parse import Document
from citelsp.files import OutsideWorkspace, write_inside
from citelsp.lsp.convert import (
    Diagnostics,
    LineIndexes,
    lsp_range,
    lsp_workspace_edit,
    offset_at,
    offset_of,
)
from citelsp.lsp.progress import ServerListener
from citelsp.lsp.protocol import CitelspProtocol
from citelsp.lsp.settings import settings_from_client
from citelsp.lsp.state import Timers
from citelsp.lsp.sync import OpenTexts
from citelsp.spans import Edit, Span
from citelsp.workspace import Workspace
from citelsp.workspace.view import View

RESULTS_PUBLISH_MS = 1000
"""How often arriving verdicts re-publish: often enough to feel live, rarely enough that
publishing never crowds out hovers and completions while hundreds of lookups run."""

OTHERS_AFTER_S = 0.01
"""The pause after publishing the document being edited, before the others: pygls reads a
message a line at a time in a thread, so a request sent with the keystroke needs a few
event-loop turns to arrive; without the pause it waited behind a library's re-publish."""

log = logging.getLogger(__name__)


class CitelspServer(LanguageServer):
    """Protocol conversion, publishing, progress and timers; the workspace answers the rest."""

    def __init__(self) -> None:
        super().__init__(
            "citelsp", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=CitelspProtocol,
        )
        self.progress = ServerListener(self)
        self.ws = Workspace(listener=self.progress)
        self.timers = Timers(lambda: self.ws.settings.debounce_ms)
        self.lines = LineIndexes()
        self.texts = OpenTexts()
        self._unparsed: set[str] = set()
        self._languages: dict[str, str] = {}
        self._versions: dict[str, int] = {}
        """The client's version of each open document's text."""
        self._parsed_versions: dict[str, int] = {}
        """The version the workspace parsed: what its diagnostics are published for."""
        self.init_options: dict = {}
        self.settings_known = False
        """Whether the workspace's settings have been pulled (``initialized``): nothing is
        looked up before, under initialization options they may change (``offline``)."""
        self._publishing: asyncio.Task | None = None
        self._reading: asyncio.Task | None = None
        self._publish_again = False
        self._published: dict[str, tuple] = {}
        """What each document was last published from; unchanged documents are skipped."""
        self._diagnostics = Diagnostics()

    # -- requests ---------------------------------------------------------------------------

    @property
    def encoding(self) -> str:
        return self.workspace.position_encoding or types.PositionEncodingKind.Utf16

    def query(self, uri: str, position: types.Position) -> tuple[View, Document, int] | None:
        """What a request reads: a view of the workspace, the document and the cursor's
        offset. The document's own edits are parsed first (the deferred half of their
        notifications); no other file is parsed or read."""
        self.parse_pending(uri)
        doc = self.ws.document(uri)
        if doc is None:
            return None
        return View(self.ws), doc, offset_of(self.lines.of(uri, doc.text), position,
                                             self.encoding)

    def range_for(self, uri: str, span: Span) -> types.Range | None:
        """A span of a document as the workspace holds it, in the client's positions."""
        doc = self.ws.document(uri)
        if doc is None:
            return None
        return lsp_range(self.lines.of(uri, doc.text), span, self.encoding)

    def workspace_edit(self, edits: list[Edit]) -> types.WorkspaceEdit:
        return lsp_workspace_edit(edits, self.range_for)

    @property
    def client_prompts_for_identifiers(self) -> bool:
        """The client's plugin asks the writer for a DOI or arXiv id when a code action's
        command leaves it out (experimental capability ``citelspPromptsForIdentifier``)."""
        experimental = self.client_capabilities.experimental
        return isinstance(experimental, dict) and bool(
            experimental.get("citelspPromptsForIdentifier"))

    # -- publishing -------------------------------------------------------------------------

    def publish(self, uri: str) -> None:
        doc = self.ws.document(uri)
        if doc is None:
            return
        local = self.ws.local_problems(uri)
        try:
            problems = self.ws.problems(uri)
        except Exception:  # verification display must never hide the local checks
            log.exception("cannot show verification results for %s", uri)
            problems = local
        version = self._parsed_versions.get(uri)
        signature = (doc.text, version, id(local), self.ws.settings.min_priority, problems)
        if self._published.get(uri) == signature:
            return  # nothing changed for this document: don't re-send thousands of hints
        self._published[uri] = signature
        diagnostics = self._diagnostics.convert(uri, problems, self.lines.of(uri, doc.text),
                                                self.encoding, self.range_for)
        self.send_diagnostics(uri, version, diagnostics)

    def send_diagnostics(self, uri: str, version: int | None,
                         diagnostics: list[types.Diagnostic]) -> None:
        self.protocol.notify_json(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS,
                                  self._diagnostics.params_json(uri, version, diagnostics))

    def write_report(self, name: str, text: str) -> Path | None:
        """``.citelsp/NAME`` at the workspace root, written; None, with a warning to the
        writer, when a symbolic link would lead the write out of the workspace."""
        path = self.ws.root / ".citelsp" / name
        try:
            write_inside(self.ws.root, path, text.encode("utf-8"))
        except OutsideWorkspace as exc:
            self.window_show_message(types.ShowMessageParams(
                type=types.MessageType.Warning, message=f"citelsp: {exc}"))
            return None
        return path

    def publish_open(self) -> None:
        """Re-publish every open document (a change to one can change another's findings).

        The document being edited first; the others after a pause that lets a request sent
        with the keystroke (a completion) be read and answered first, then one per
        event-loop turn, so requests (hover, completion) interleave.
        """
        if self._publishing is not None and not self._publishing.done():
            self._publish_again = True
            return
        self._publishing = self.timers.run_task(self._publish_all(), "publish")

    async def _publish_all(self) -> None:
        while True:
            self._publish_again = False
            self.parse_pending()
            focus = self.ws.focus[0] if self.ws.focus else None
            for n, uri in enumerate(sorted(self.ws.open_uris(), key=lambda u: u != focus)):
                if n:
                    await asyncio.sleep(OTHERS_AFTER_S if n == 1 else 0)
                    if uri in self._unparsed:
                        continue  # edited meanwhile: the next round publishes its new text
                try:
                    self.publish(uri)
                except Exception:  # one document must never stop the others' diagnostics
                    log.exception("cannot publish %s", uri)
            if not self._publish_again:
                collect_young_objects()
                self.read_workspace_soon()
                return

    def read_workspace_soon(self) -> None:
        """Read the files find-references and rename reach, when they changed since last
        read, one per event-loop turn (after the diagnostics are out: publishing starts it)."""
        if self.ws.graph.workspace_read or (
                self._reading is not None and not self._reading.done()):
            return
        self._reading = self.timers.run_task(self._read_workspace(), "read workspace")

    async def _read_workspace(self) -> None:
        while not self.ws.graph.workspace_read:
            for _ in self.ws.graph.read_workspace():
                await asyncio.sleep(0)

    async def workspace_read(self) -> None:
        """Wait until the workspace's files are read (hovers and the rest go on meanwhile)."""
        self.read_workspace_soon()
        if self._reading is not None and not self._reading.done():
            await asyncio.wait([self._reading])  # a failure is logged, not the request's

    def schedule_publish(self) -> None:
        self.timers.debounce("publish", self.publish_open)
        self.schedule_verification()

    def schedule_verification(self) -> None:
        def start() -> None:
            self.parse_pending()
            if self.settings_known:  # else ``configure`` starts it once they are
                self.timers.run_task(self.ws.want(), "verify")

        self.timers.debounce("verify", start, delay_ms=max(self.ws.settings.debounce_ms, 300))

    def results_arrived(self, urgent: bool = False) -> None:
        """New verification results: re-publish (now when ``urgent``; else at most once a
        second, the first result after a quiet second at once: the throttle keeps its own
        clock, so a publication of local checks just before does not hold a verdict back)."""
        if urgent:
            self.timers.debounce("publish", self.publish_open, delay_ms=0)
        else:
            self.timers.throttle("results", self.publish_open, RESULTS_PUBLISH_MS)

    def document_opened(self, item: types.TextDocumentItem) -> None:
        self.texts.open(item.uri, item.text)
        self._languages[item.uri] = item.language_id
        self._versions[item.uri] = item.version
        self.document_changed(item.uri)

    def text_changed(self, document: types.VersionedTextDocumentIdentifier,
                     changes: list[types.TextDocumentContentChangeEvent]) -> None:
        uri = document.uri
        text = self.texts.change(uri, changes, self.encoding,
                                 lambda current: self.lines.of(uri, current),
                                 lambda new, index: self.lines.put(uri, new, index))
        if text is None:
            return
        self._versions[uri] = document.version
        last = changes[-1] if changes else None
        at = offset_at(self.lines.of(uri, text), last.range.start, self.encoding) if isinstance(
            last, types.TextDocumentContentChangePartial) else None
        self.document_changed(uri, changed_at=at)

    def document_changed(self, uri: str, changed_at: int | None = None) -> None:
        """The text changed: parse it when something next needs it (edits in a burst are
        parsed once), and publish after the debounce."""
        self._unparsed.add(uri)
        if changed_at is not None:
            self.ws.focus = (uri, changed_at)
        elif self.ws.focus is None:
            self.ws.focus = (uri, 0)
        self.schedule_publish()

    def parse_pending(self, uri: str | None = None) -> None:
        """Parse the changed documents (or just ``uri``) so the workspace holds their text."""
        for pending in [uri] if uri is not None else list(self._unparsed):
            if pending not in self._unparsed:
                continue
            self._unparsed.discard(pending)
            text = self.texts.get(pending)
            if text is None:
                continue
            if (version := self._versions.get(pending)) is not None:
                self._parsed_versions[pending] = version
            try:
                self.ws.open(pending, text, language=self._languages.get(pending))
            except Exception:  # a parser bug must not take the server down
                log.exception("cannot parse %s", pending)

    def document_closed(self, uri: str) -> None:
        """Forget the document and what was published for it, and clear its diagnostics."""
        self.texts.close(uri)
        self._unparsed.discard(uri)
        self._languages.pop(uri, None)
        self._versions.pop(uri, None)
        self._parsed_versions.pop(uri, None)
        self.ws.close(uri)
        self.lines.forget(uri)
        self._published.pop(uri, None)
        self._diagnostics.forget(uri)
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        self.schedule_publish()

    async def configure(self, options: dict) -> None:
        await self.ws.configure(settings_from_client(options, self.init_options))
        self.settings_known = True
        self.timers.run_task(self.ws.want(), "verify")

    async def watch_files(self) -> None:
        """Ask the client to report changes to the files citelsp reads from disk: a
        bibliography rewritten by Zotero's auto-export or a ``.bbl`` by BibTeX while it is
        not open, a project file. Without it they are read again only when an open
        manuscript changes."""
        if not _supports_watching(self.client_capabilities):
            return
        watchers = [types.FileSystemWatcher(glob_pattern=f"**/*.{{{WATCHED_SUFFIXES}}}")]
        try:
            await self.client_register_capability_async(types.RegistrationParams(registrations=[
                types.Registration(
                    id="citelsp-watched-files",
                    method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                    register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers),
                )]))
        except Exception:  # a client that refuses loses only the refresh
            log.exception("client/registerCapability for watched files failed")

    async def pull_configuration(self, pushed: dict | None = None) -> None:
        """The client's merged section (workspace-level), else what it pushed, else the
        initializationOptions (user-level, kept apart: config.py)."""
        options = dict(self.init_options if pushed is None else pushed)
        if _supports_configuration(self.client_capabilities):
            try:
                result = await self.workspace_configuration_async(types.ConfigurationParams(
                    items=[types.ConfigurationItem(section="citelsp")]
                ))
            except Exception:
                log.exception("workspace/configuration failed")
                result = None
            if result and isinstance(result[0], dict) and result[0]:
                options = dict(result[0])  # the client's current section is authoritative
        await self.configure(options)


YOUNG_BACKLOG = 100_000
"""Young objects past which the server collects them while idle (a keystroke leaves a few
hundred; opening a 20,000-entry library half a million)."""


def collect_young_objects() -> None:
    """Collect the young generations now, while the server is idle, when a parse or a
    publication that paused the collector (``paused_gc``) left many: else the allocation
    that next crosses a threshold pays, and a completion asked a second after a keystroke
    took 300 ms instead of 60 (a collection of what a library's parse left)."""
    if gc.isenabled() and gc.get_count()[0] + len(gc.get_objects(1)) > YOUNG_BACKLOG:
        gc.collect(1)


def _supports_configuration(capabilities: types.ClientCapabilities) -> bool:
    return bool(capabilities.workspace and capabilities.workspace.configuration)


def _supports_watching(capabilities: types.ClientCapabilities) -> bool:
    watched = capabilities.workspace and capabilities.workspace.did_change_watched_files
    return bool(watched and watched.dynamic_registration)


WATCHED_SUFFIXES = "bib,json,yaml,yml,bbl"
"""What citelsp reads from disk that tools rewrite behind the editor: bibliographies,
``.bbl`` files, project files (``_quarto.yml``, ``myst.yml``). Manuscripts are edited in the
editor, whose saves are reported anyway."""
