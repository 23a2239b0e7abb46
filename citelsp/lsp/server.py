"""The citelsp language server: handler registration only; features live in sibling modules."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from citelsp import __version__, links
from citelsp.documents.model import Bibliography, Location, Manuscript, Problem, Reference
from citelsp.documents.parse import Document
from citelsp.files import OutsideWorkspace, write_inside
from citelsp.lsp import actions, cards, commands, completion, hover, symbols
from citelsp.lsp.diagnostics import converter_with_reused_diagnostics, lsp_diagnostic
from citelsp.lsp.markup import Markup
from citelsp.lsp.positions import LineIndexes, lsp_range, offset_of
from citelsp.lsp.protocol import CitelspProtocol
from citelsp.lsp.settings import settings_from_client
from citelsp.lsp.state import Timers
from citelsp.lsp.sync import OpenTexts, offset_at
from citelsp.reports import RENDERERS
from citelsp.reports.markdown import render as render_checklist
from citelsp.spans import Span
from citelsp.uris import uri_to_path
from citelsp.verdict.decisions import Decision, DecisionsRefused, PermanentRejection
from citelsp.workspace import Listener, Workspace, navigation

STATUS_NOTIFICATION = "citelsp/status"
RESULTS_PUBLISH_MS = 1000
"""How often arriving verdicts re-publish: often enough to feel live, rarely enough that
publishing never crowds out hovers and completions while hundreds of lookups run."""

log = logging.getLogger(__name__)


class ServerListener(Listener):
    """What verification tells the editor: ``$/progress`` for the queue (created once per
    run, cancellable), re-publishing as results arrive, and one-off messages."""

    def __init__(self, server: CitelspServer) -> None:
        self.server = server
        self.token: str | None = None
        self._ready = False
        self._pending_end: str | None = None
        self._runs = 0

    def supported(self) -> bool:
        window = self.server.client_capabilities.window
        return bool(window and window.work_done_progress)

    def begin(self, total: int) -> None:
        if not self.supported() or self.token is not None:
            return
        self._runs += 1
        self.token = f"citelsp-verify-{self._runs}"
        self._ready = False
        self._pending_end = None
        self.server.timers.run_task(self._create(self.token, total), "progress")

    async def _create(self, token: str, total: int) -> None:
        try:
            await self.server.work_done_progress.create_async(token)
        except Exception:
            log.warning("client refused work-done progress")
            self.token = None
            return
        if token != self.token:
            return
        self.server.work_done_progress.begin(token, types.WorkDoneProgressBegin(
            title="citelsp", message=f"Verifying references 0/{total}", cancellable=True,
            percentage=0))
        self._ready = True
        if self._pending_end is not None:
            self.end(self._pending_end)

    def report(self, done: int, total: int) -> None:
        if self.token is None or not self._ready:
            return
        self.server.work_done_progress.report(self.token, types.WorkDoneProgressReport(
            message=f"Verifying references {done}/{total}", cancellable=True,
            percentage=int(100 * done / max(total, 1))))

    def end(self, message: str) -> None:
        if self.token is None:
            return
        if not self._ready:
            self._pending_end = message
            return
        token, self.token = self.token, None
        self.server.work_done_progress.tokens.pop(token, None)
        self.server.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))

    def results_arrived(self, urgent: bool = False) -> None:
        self.server.results_arrived(urgent)

    def status(self, message: str) -> None:
        """Also a ``citelsp/status`` notification, which the VS Code extension shows in its
        status bar item (other clients ignore it)."""
        if message:
            self.server.window_log_message(types.LogMessageParams(
                type=types.MessageType.Info, message=f"citelsp: {message}"))
        self.server.protocol.notify(STATUS_NOTIFICATION, {"message": message})

    def notice(self, message: str) -> None:
        warning = "OpenAlex" in message
        self.server.window_show_message(types.ShowMessageParams(
            type=types.MessageType.Warning if warning else types.MessageType.Info,
            message=message))


class CitelspServer(LanguageServer):
    """Protocol conversion, publishing, progress and timers; the workspace answers the rest."""

    def __init__(self) -> None:
        super().__init__(
            "citelsp", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            converter_factory=converter_with_reused_diagnostics, protocol_cls=CitelspProtocol,
        )
        self.progress = ServerListener(self)
        self.ws = Workspace(listener=self.progress)
        self.timers = Timers(lambda: self.ws.settings.debounce_ms)
        self.lines = LineIndexes()
        self.texts = OpenTexts()
        self._unparsed: set[str] = set()
        self._languages: dict[str, str] = {}
        self.init_options: dict = {}
        self.settings_known = False
        """Whether the workspace's settings have been pulled (``initialized``): nothing is
        looked up before, under initialization options they may change (``offline``)."""
        self._publishing: asyncio.Task | None = None
        self._publish_again = False
        self._published: dict[str, tuple] = {}
        self._converted: dict[str, dict[tuple, types.Diagnostic]] = {}
        """What each document was last published from; unchanged documents are skipped."""

    # -- conversions ------------------------------------------------------------------------

    @property
    def encoding(self) -> str:
        return self.workspace.position_encoding or types.PositionEncodingKind.Utf16

    def document(self, uri: str) -> Document | None:
        self.parse_pending(uri)
        return self.ws.document(uri)

    def range_for(self, uri: str, span: Span) -> types.Range | None:
        doc = self.document(uri)
        if doc is None:
            return None
        return lsp_range(self.lines.of(uri, doc.text), span, self.encoding)

    def offset_for(self, doc: Document, position: types.Position) -> int:
        return offset_of(self.lines.of(doc.uri, doc.text), position, self.encoding)

    @property
    def client_prompts_for_identifiers(self) -> bool:
        """The client's plugin asks the writer for a DOI or arXiv id when a code action's
        command leaves it out (experimental capability ``citelspPromptsForIdentifier``)."""
        experimental = self.client_capabilities.experimental
        return isinstance(experimental, dict) and bool(
            experimental.get("citelspPromptsForIdentifier"))

    @property
    def markup(self) -> Markup:
        return Markup.for_client(self.client_capabilities)

    def hover_text(self, refs: list[Reference]) -> str:
        """Each reference the cursor names (two under a duplicated key), with its card."""
        m = self.markup
        parts = []
        for ref in refs:
            text = hover.format_reference(ref, m)
            result = self.ws.result(ref)
            if result is not None:
                text += m.rule + cards.verification_card(result, m)
            elif self.ws.pending(ref):
                text += m.rule + cards.pending_card(m)
            parts.append(text)
        return m.rule.join(parts)

    def lsp_locations(self, found: list[Location]) -> list[types.Location]:
        out = []
        for loc in found:
            range_ = self.range_for(loc.uri, loc.span)
            if range_ is not None:
                out.append(types.Location(uri=loc.uri, range=range_))
        return out

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
        signature = (doc.text, id(local), self.ws.settings.min_priority, problems)
        if self._published.get(uri) == signature:
            return  # nothing changed for this document: don't re-send thousands of hints
        self._published[uri] = signature
        index = self.lines.of(uri, doc.text)
        previous = self._converted.get(uri, {})
        ascii_text = doc.text.isascii()  # then columns are the same in every encoding
        converted: dict[tuple, types.Diagnostic] = {}
        diagnostics = []
        for problem in problems:
            try:
                diagnostics.append(self._diagnostic(problem, index, previous, converted,
                                                    ascii_text))
            except Exception:  # one bad finding must not hide the others
                log.exception("cannot convert %s", problem.code)
        self._converted[uri] = converted
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics)
        )

    def _diagnostic(self, problem: Problem, index, previous: dict, converted: dict,
                    ascii_text: bool) -> types.Diagnostic:
        """Convert, reusing last publication's object when the problem and its line did not
        change (an edit shifts offsets, not most lines: 8,000 hints stay cheap)."""
        if problem.related:
            return lsp_diagnostic(problem, lsp_range(index, problem.span, self.encoding),
                                  self.range_for)
        line, column = index.position(problem.span.start)
        end = index.position(problem.span.end)
        key = (problem.code, problem.message, problem.severity, line, column, end,
               None if ascii_text else index.line_text(line))
        found = previous.get(key) or converted.get(key)
        if found is None:
            found = lsp_diagnostic(problem, lsp_range(index, problem.span, self.encoding),
                                   self.range_for)
        converted[key] = found
        return found

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

        One document per event-loop turn, so requests (hover, completion) interleave.
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
            for uri in sorted(self.ws.open_uris(), key=lambda u: u != focus):
                try:
                    self.publish(uri)
                except Exception:  # one document must never stop the others' diagnostics
                    log.exception("cannot publish %s", uri)
                await asyncio.sleep(0)
            if not self._publish_again:
                return

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
        self.document_changed(item.uri)

    def text_changed(self, uri: str, changes: list[types.TextDocumentContentChangeEvent]
                     ) -> None:
        text = self.texts.change(uri, changes, self.encoding,
                                 lambda current: self.lines.of(uri, current))
        if text is None:
            return
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
            try:
                self.ws.open(pending, text, language=self._languages.get(pending))
            except Exception:  # a parser bug must not take the server down
                log.exception("cannot parse %s", pending)

    def document_closed(self, uri: str) -> None:
        """Forget the document and what was published for it, and clear its diagnostics."""
        self.texts.close(uri)
        self._unparsed.discard(uri)
        self._languages.pop(uri, None)
        self.ws.close(uri)
        self.lines.forget(uri)
        self._published.pop(uri, None)
        self._converted.pop(uri, None)
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        self.schedule_publish()

    async def configure(self, options: dict) -> None:
        await self.ws.configure(settings_from_client(options, self.init_options))
        self.settings_known = True
        self.timers.run_task(self.ws.want(), "verify")

    def workspace_edit(self, edits: list[actions.Edit]) -> types.WorkspaceEdit:
        changes: dict[str, list[types.TextEdit]] = {}
        for uri, span, new_text in edits:
            range_ = self.range_for(uri, span)
            if range_ is not None:
                changes.setdefault(uri, []).append(types.TextEdit(range=range_,
                                                                  new_text=new_text))
        return types.WorkspaceEdit(changes=changes)

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


def _supports_configuration(capabilities: types.ClientCapabilities) -> bool:
    return bool(capabilities.workspace and capabilities.workspace.configuration)


def _supports_watching(capabilities: types.ClientCapabilities) -> bool:
    watched = capabilities.workspace and capabilities.workspace.did_change_watched_files
    return bool(watched and watched.dynamic_registration)


WATCHED_SUFFIXES = "bib,json,yaml,yml,bbl"
"""What citelsp reads from disk that tools rewrite behind the editor: bibliographies,
``.bbl`` files, project files (``_quarto.yml``, ``myst.yml``). Manuscripts are edited in the
editor, whose saves are reported anyway."""


def create_server() -> CitelspServer:
    server = CitelspServer()

    @server.feature(types.INITIALIZE)
    async def initialize(ls: CitelspServer, params: types.InitializeParams) -> None:
        options = params.initialization_options
        if isinstance(options, dict):
            ls.init_options = dict(options.get("citelsp", options))
        roots = [uri_to_path(f.uri) for f in params.workspace_folders or []]
        if not roots and params.root_uri:
            roots = [uri_to_path(params.root_uri)]
        elif not roots and params.root_path:
            roots = [Path(params.root_path)]
        ls.ws.set_roots(roots)
        await ls.ws.configure(settings_from_client(ls.init_options))

    @server.feature(types.INITIALIZED)
    async def initialized(ls: CitelspServer, params: types.InitializedParams) -> None:
        await ls.pull_configuration()
        ls.publish_open()
        await ls.watch_files()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: CitelspServer,
                                       params: types.DidChangeConfigurationParams) -> None:
        pushed = params.settings.get("citelsp") if isinstance(params.settings, dict) else None
        await ls.pull_configuration(pushed if isinstance(pushed, dict) else None)
        ls.publish_open()
        ls.schedule_verification()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: CitelspServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.document_opened(params.text_document)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: CitelspServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.text_changed(params.text_document.uri, list(params.content_changes))

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: CitelspServer, params: None) -> None:
        await ls.ws.verifier.close()

    @server.feature(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)
    def cancel_progress(ls: CitelspServer, params: types.WorkDoneProgressCancelParams) -> None:
        if params.token == ls.progress.token:
            ls.ws.verifier.cancel_all()

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: CitelspServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.document_closed(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: CitelspServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.ws.files_changed([params.text_document.uri])

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched(ls: CitelspServer, params: types.DidChangeWatchedFilesParams) -> None:
        ls.ws.files_changed([change.uri for change in params.changes])
        ls.schedule_publish()

    @server.feature(
        types.TEXT_DOCUMENT_COMPLETION,
        types.CompletionOptions(trigger_characters=completion.TRIGGER_CHARACTERS),
    )
    def complete(ls: CitelspServer, params: types.CompletionParams) -> types.CompletionList | None:
        doc = ls.document(params.text_document.uri)
        if not isinstance(doc, Manuscript):
            return None
        index = ls.lines.of(doc.uri, doc.text)
        offset = ls.offset_for(doc, params.position)
        before = doc.text[index.line_start(params.position.line):offset]
        prefix = completion.completion_prefix(before)
        if prefix is None:
            return None
        return completion.complete_keys(ls.ws.graph, doc, prefix)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def on_hover(ls: CitelspServer, params: types.HoverParams) -> types.Hover | None:
        doc = ls.document(params.text_document.uri)
        if doc is None:
            return None
        offset = ls.offset_for(doc, params.position)
        citation = ls.ws.citation_at(doc, offset)
        if citation is not None:
            if citation.wildcard:
                return None
            refs = ls.ws.references_at(doc, offset)
            m = ls.markup
            text = ls.hover_text(refs) if refs else (
                f"{m.bold(m.text(citation.key))}: not in any bibliography of this manuscript")
            return hover.lsp_hover(text, m, ls.range_for(doc.uri, citation.span))
        refs = ls.ws.references_at(doc, offset)
        if not refs:
            return None
        return hover.lsp_hover(ls.hover_text(refs[:1]), ls.markup,
                               ls.range_for(refs[0].uri, refs[0].key_span))

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    def definition(ls: CitelspServer, params: types.DefinitionParams) -> list[types.Location]:
        doc = ls.document(params.text_document.uri)
        if doc is None:
            return []
        found = navigation.definitions(ls.ws, doc, ls.offset_for(doc, params.position))
        return ls.lsp_locations(found)

    @server.feature(types.TEXT_DOCUMENT_REFERENCES)
    def find_references(ls: CitelspServer, params: types.ReferenceParams) -> list[types.Location]:
        doc = ls.document(params.text_document.uri)
        if doc is None:
            return []
        key = navigation.key_at(ls.ws, doc, ls.offset_for(doc, params.position))
        if key is None:
            return []
        found = navigation.references(
            ls.ws, key, include_declaration=params.context.include_declaration
        )
        return ls.lsp_locations(found)

    @server.feature(types.TEXT_DOCUMENT_PREPARE_RENAME)
    def prepare_rename(ls: CitelspServer, params: types.PrepareRenameParams):
        doc = ls.document(params.text_document.uri)
        if doc is None:
            return None
        span = navigation.key_span_at(doc, ls.offset_for(doc, params.position))
        return ls.range_for(doc.uri, span) if span is not None else None

    @server.feature(types.TEXT_DOCUMENT_RENAME)
    def rename(ls: CitelspServer, params: types.RenameParams) -> types.WorkspaceEdit | None:
        doc = ls.document(params.text_document.uri)
        if doc is None:
            return None
        if not navigation.VALID_KEY.match(params.new_name):
            raise ValueError(f"'{params.new_name}' is not a valid citation key")
        key = navigation.key_at(ls.ws, doc, ls.offset_for(doc, params.position))
        if key is None:
            return None
        changes: dict[str, list[types.TextEdit]] = {}
        for loc in navigation.rename_locations(ls.ws, key):
            range_ = ls.range_for(loc.uri, loc.span)
            if range_ is not None:
                changes.setdefault(loc.uri, []).append(
                    types.TextEdit(range=range_, new_text=params.new_name)
                )
        return types.WorkspaceEdit(changes=changes)

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    def document_symbol(ls: CitelspServer, params: types.DocumentSymbolParams):
        doc = ls.document(params.text_document.uri)
        bib = doc if isinstance(doc, Bibliography) else getattr(doc, "inline", None)
        if bib is None:
            return []
        index = ls.lines.of(doc.uri, doc.text)
        return symbols.document_symbols(bib, lambda span: lsp_range(index, span, ls.encoding))

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    )
    def code_action(ls: CitelspServer, params: types.CodeActionParams):
        doc = ls.document(params.text_document.uri)
        if doc is None:
            return None
        offset = ls.offset_for(doc, params.range.start)
        ours = [d for d in params.context.diagnostics if d.source == "citelsp"] or None
        found: list[types.CodeAction | types.Command] = []
        for title, edits in actions.space_actions(doc.uri, ls.ws.local_problems(doc.uri),
                                                  doc.text, offset):
            found.append(types.CodeAction(title=title, kind=types.CodeActionKind.QuickFix,
                                          edit=ls.workspace_edit(edits), diagnostics=ours))
        for ref in ls.ws.references_at(doc, offset):
            result = ls.ws.result(ref)
            source = ls.document(ref.uri)
            if result is not None and source is not None:
                for title, edits in actions.edit_actions(ref, result, source.text):
                    found.append(types.CodeAction(
                        title=title, kind=types.CodeActionKind.QuickFix,
                        edit=ls.workspace_edit(edits), diagnostics=ours))
            found += actions.link_actions(ref, result)
            found += actions.decision_actions(ref, ls.ws.decision_identity(ref))
        citation = ls.ws.citation_at(doc, offset)
        if isinstance(doc, Manuscript) and citation is not None and not citation.wildcard \
                and not ls.ws.references_at(doc, offset):
            for key in navigation.similar_keys(ls.ws, doc, citation.key):
                found.append(types.CodeAction(
                    title=f"Did you mean '{key}'?", kind=types.CodeActionKind.QuickFix,
                    edit=ls.workspace_edit([(doc.uri, citation.span, key)]), diagnostics=ours))
            found += actions.create_entry_actions(doc.uri, citation.key,
                                                  ls.client_prompts_for_identifiers)
        return actions.distinct(found)

    @server.command(actions.CREATE_ENTRY)
    async def create_entry(ls: CitelspServer, *args):
        uri, key, identifier = (list(args) + ["", "", ""])[:3]
        if not uri or not key or not identifier:
            raise ValueError("usage: citelsp.createEntry MANUSCRIPT_URI KEY DOI_OR_ARXIV_ID")
        try:
            entry = await ls.ws.new_entry(str(uri), str(key), str(identifier))
        except ValueError as exc:  # why there is no entry: for the writer, not a traceback
            message = f"citelsp: no entry was created for '{key}' — {exc}."
            ls.window_show_message(types.ShowMessageParams(
                type=types.MessageType.Warning, message=message))
            return {"applied": False, "reason": message}
        edit = ls.workspace_edit([(entry.uri, Span(entry.offset, entry.offset), entry.text)])
        answer = await ls.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(
            edit=edit, label=f"Add '{key}' to the bibliography"))
        return {"applied": bool(answer and answer.applied), "uri": entry.uri,
                "entry": entry.text}

    @server.command(actions.OPEN_URL)
    async def open_url(ls: CitelspServer, *args):
        url = links.allowed(args[0] if args else None)
        if url is None:
            raise ValueError("citelsp opens only https links on doi.org, arxiv.org and the "
                             "other allowlisted hosts")
        window = ls.client_capabilities.window
        if not (window and window.show_document):
            ls.window_show_message(types.ShowMessageParams(
                type=types.MessageType.Info, message=f"citelsp: open {url} to check by hand"))
            return {"opened": None, "url": url}
        result = await ls.window_show_document_async(
            types.ShowDocumentParams(uri=url, external=True))
        return {"opened": url, "success": bool(result and result.success)}

    @server.command(actions.DECIDE)
    def decide(ls: CitelspServer, *args):
        key, identity, verdict, note = (list(args) + ["", "", "", ""])[:4]
        if verdict not in ("verified", "rejected") or not key or not identity:
            raise ValueError("usage: citelsp.decide KEY IDENTITY verified|rejected [NOTE]")
        try:
            ls.ws.record(Decision(citation_key=str(key), identity=str(identity),
                                  decision=verdict, note=str(note or "")))
        except (PermanentRejection, DecisionsRefused) as exc:
            ls.window_show_message(types.ShowMessageParams(
                type=types.MessageType.Warning, message=str(exc)))
            return {"recorded": False}
        ls.publish_open()
        return {"recorded": True, "key": key, "decision": verdict}

    @server.command(actions.REVERIFY)
    def reverify(ls: CitelspServer, *args):
        ls.parse_pending()
        queued = ls.ws.reverify({str(a) for a in args if a} or None)
        ls.publish_open()
        return {"queued": queued}

    @server.command(actions.CLEAR_CACHE)
    def clear_cache(ls: CitelspServer, *args):
        ls.ws.clear_cache()
        ls.publish_open()
        ls.schedule_verification()
        return {"cleared": True}

    @server.command(actions.SHOW_CHECKLIST)
    async def show_checklist(ls: CitelspServer, *args):
        ls.parse_pending()
        markdown = render_checklist(ls.ws.snapshot())
        path = ls.write_report("checklist.md", markdown)
        if path is None:
            return {"uri": None, "markdown": markdown}
        if ls.client_capabilities.window and ls.client_capabilities.window.show_document:
            await ls.window_show_document_async(types.ShowDocumentParams(
                uri=path.resolve().as_uri(), take_focus=True))
        return {"uri": path.resolve().as_uri(), "markdown": markdown}

    @server.command(actions.EXPORT_REPORT)
    def export_report(ls: CitelspServer, *args):
        fmt = str(args[0]) if args else "json"
        if fmt not in RENDERERS:
            raise ValueError(f"unknown report format '{fmt}' (use {', '.join(RENDERERS)})")
        ls.parse_pending()
        path = ls.write_report(f"report.{commands.REPORT_SUFFIX[fmt]}",
                               RENDERERS[fmt](ls.ws.snapshot()))
        return {"uri": path.resolve().as_uri() if path else None, "format": fmt}

    return server
