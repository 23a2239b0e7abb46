"""The citelsp language server: handler registration only; features live in sibling modules."""

from __future__ import annotations

import logging
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from citelsp import __version__
from citelsp.checks import problems_for
from citelsp.documents.model import Bibliography, Location, Manuscript
from citelsp.documents.project import Document, uri_to_path
from citelsp.lsp import completion, hover, navigation
from citelsp.lsp.diagnostics import lsp_diagnostic
from citelsp.lsp.positions import line_index, lsp_range, offset_of
from citelsp.lsp.settings import settings_from_client
from citelsp.lsp.state import ServerState
from citelsp.spans import Span

log = logging.getLogger(__name__)


class CitelspServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "citelsp", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental
        )
        self.state = ServerState()
        self._init_options: dict = {}

    # -- conversions ------------------------------------------------------------------------

    @property
    def encoding(self) -> str:
        return self.workspace.position_encoding or types.PositionEncodingKind.Utf16

    def document(self, uri: str) -> Document | None:
        return self.state.corpus.get(uri)

    def range_for(self, uri: str, span: Span) -> types.Range | None:
        doc = self.document(uri)
        if doc is None:
            return None
        return lsp_range(line_index(uri, doc.text), span, self.encoding)

    def offset_for(self, doc: Document, position: types.Position) -> int:
        return offset_of(line_index(doc.uri, doc.text), position, self.encoding)

    def lsp_locations(self, found: list[Location]) -> list[types.Location]:
        out = []
        for loc in found:
            range_ = self.range_for(loc.uri, loc.span)
            if range_ is not None:
                out.append(types.Location(uri=loc.uri, range=range_))
        return out

    # -- publishing -------------------------------------------------------------------------

    def publish(self, uri: str) -> None:
        doc = self.state.corpus.documents.get(uri)
        if doc is None:
            return
        index = line_index(uri, doc.text)
        diagnostics = []
        for problem in problems_for(self.state.corpus, uri):
            try:
                diagnostics.append(lsp_diagnostic(
                    problem, lsp_range(index, problem.span, self.encoding), self.range_for
                ))
            except Exception:  # one bad finding must not hide the others
                log.exception("cannot convert %s", problem.code)
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics)
        )

    def publish_open(self) -> None:
        """Re-publish every open document (a change to one can change another's findings)."""
        for uri in list(self.state.corpus.open_uris):
            self.publish(uri)

    def schedule_publish(self) -> None:
        self.state.debounce("publish", self.publish_open)

    def document_changed(self, uri: str, language: str | None = None) -> None:
        text = self.workspace.get_text_document(uri).source
        try:
            self.state.corpus.update(uri, text, language=language)
        except Exception:  # a parser bug must not take the server down
            log.exception("cannot parse %s", uri)
            return
        self.schedule_publish()

    async def pull_configuration(self) -> None:
        options = dict(self._init_options)
        if _supports_configuration(self.client_capabilities):
            try:
                result = await self.workspace_configuration_async(types.ConfigurationParams(
                    items=[types.ConfigurationItem(section="citelsp")]
                ))
            except Exception:
                log.exception("workspace/configuration failed")
                result = None
            if result and isinstance(result[0], dict):
                options.update(result[0])
        self.state.apply_settings(settings_from_client(options))


def _supports_configuration(capabilities: types.ClientCapabilities) -> bool:
    return bool(capabilities.workspace and capabilities.workspace.configuration)


def create_server() -> CitelspServer:
    server = CitelspServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: CitelspServer, params: types.InitializeParams) -> None:
        options = params.initialization_options
        if isinstance(options, dict):
            ls._init_options = dict(options.get("citelsp", options))
        ls.state.apply_settings(settings_from_client(ls._init_options))
        roots = [uri_to_path(f.uri) for f in params.workspace_folders or []]
        if not roots and params.root_uri:
            roots = [uri_to_path(params.root_uri)]
        elif not roots and params.root_path:
            roots = [Path(params.root_path)]
        ls.state.set_roots(roots)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: CitelspServer, params: types.InitializedParams) -> None:
        await ls.pull_configuration()
        ls.publish_open()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: CitelspServer,
                                       params: types.DidChangeConfigurationParams) -> None:
        if isinstance(params.settings, dict) and isinstance(params.settings.get("citelsp"), dict):
            ls._init_options = {**ls._init_options, **params.settings["citelsp"]}
        await ls.pull_configuration()
        ls.publish_open()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: CitelspServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.document_changed(params.text_document.uri, params.text_document.language_id)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: CitelspServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.document_changed(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: CitelspServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.state.corpus.close(uri)
        ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=[])
        )
        ls.schedule_publish()

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: CitelspServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.state.corpus.invalidate_disk(params.text_document.uri)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched(ls: CitelspServer, params: types.DidChangeWatchedFilesParams) -> None:
        for change in params.changes:
            ls.state.corpus.invalidate_disk(change.uri)
        ls.schedule_publish()

    @server.feature(
        types.TEXT_DOCUMENT_COMPLETION,
        types.CompletionOptions(trigger_characters=completion.TRIGGER_CHARACTERS),
    )
    def complete(ls: CitelspServer, params: types.CompletionParams) -> types.CompletionList | None:
        doc = ls.document(params.text_document.uri)
        if not isinstance(doc, Manuscript):
            return None
        index = line_index(doc.uri, doc.text)
        offset = ls.offset_for(doc, params.position)
        before = doc.text[index.line_start(params.position.line):offset]
        prefix = completion.completion_prefix(before)
        if prefix is None:
            return None
        return completion.complete_keys(ls.state.corpus, doc, prefix)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def on_hover(ls: CitelspServer, params: types.HoverParams) -> types.Hover | None:
        doc = ls.document(params.text_document.uri)
        if doc is None:
            return None
        offset = ls.offset_for(doc, params.position)
        corpus = ls.state.corpus
        if isinstance(doc, Manuscript):
            citation = corpus.citation_at(doc, offset)
            if citation is None or citation.wildcard:
                return None
            refs = corpus.resolve(doc, citation).references
            if not refs:
                return hover.lsp_hover(
                    f"**{hover.escape(citation.key)}**: not in any bibliography of this manuscript",
                    ls.range_for(doc.uri, citation.span),
                )
            return hover.lsp_hover(hover.format_reference(refs[0]),
                                   ls.range_for(doc.uri, citation.span))
        ref = corpus.reference_at(doc, offset)
        if ref is None:
            return None
        return hover.lsp_hover(hover.format_reference(ref), ls.range_for(doc.uri, ref.key_span))

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    def definition(ls: CitelspServer, params: types.DefinitionParams) -> list[types.Location]:
        doc = ls.document(params.text_document.uri)
        if doc is None:
            return []
        found = navigation.definitions(ls.state.corpus, doc, ls.offset_for(doc, params.position))
        return ls.lsp_locations(found)

    @server.feature(types.TEXT_DOCUMENT_REFERENCES)
    def find_references(ls: CitelspServer, params: types.ReferenceParams) -> list[types.Location]:
        doc = ls.document(params.text_document.uri)
        if doc is None:
            return []
        key = navigation.key_at(ls.state.corpus, doc, ls.offset_for(doc, params.position))
        if key is None:
            return []
        found = navigation.references(
            ls.state.corpus, key, include_declaration=params.context.include_declaration
        )
        return ls.lsp_locations(found)

    @server.feature(types.TEXT_DOCUMENT_PREPARE_RENAME)
    def prepare_rename(ls: CitelspServer, params: types.PrepareRenameParams):
        doc = ls.document(params.text_document.uri)
        if doc is None:
            return None
        offset = ls.offset_for(doc, params.position)
        span = navigation.key_span_at(ls.state.corpus, doc, offset)
        return ls.range_for(doc.uri, span) if span is not None else None

    @server.feature(types.TEXT_DOCUMENT_RENAME)
    def rename(ls: CitelspServer, params: types.RenameParams) -> types.WorkspaceEdit | None:
        doc = ls.document(params.text_document.uri)
        if doc is None:
            return None
        if not navigation.VALID_KEY.match(params.new_name):
            raise ValueError(f"'{params.new_name}' is not a valid citation key")
        key = navigation.key_at(ls.state.corpus, doc, ls.offset_for(doc, params.position))
        if key is None:
            return None
        changes: dict[str, list[types.TextEdit]] = {}
        for loc in navigation.rename_locations(ls.state.corpus, key):
            range_ = ls.range_for(loc.uri, loc.span)
            if range_ is not None:
                changes.setdefault(loc.uri, []).append(
                    types.TextEdit(range=range_, new_text=params.new_name)
                )
        return types.WorkspaceEdit(changes=changes)

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    def symbols(ls: CitelspServer, params: types.DocumentSymbolParams):
        doc = ls.document(params.text_document.uri)
        bib = doc if isinstance(doc, Bibliography) else getattr(doc, "inline", None)
        if bib is None:
            return []
        index = line_index(doc.uri, doc.text)
        return navigation.document_symbols(bib, lambda span: lsp_range(index, span, ls.encoding))

    return server

