"""Notifications: the only handlers that change the workspace (open, change, close, save,
watched files, settings), and the session's start and end."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from citelsp.lsp.session import CitelspServer
from citelsp.lsp.settings import settings_from_client
from citelsp.uris import uri_to_path


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


async def initialized(ls: CitelspServer, params: types.InitializedParams) -> None:
    await ls.pull_configuration()
    ls.publish_open()
    await ls.watch_files()


async def did_change_configuration(ls: CitelspServer,
                                   params: types.DidChangeConfigurationParams) -> None:
    pushed = params.settings.get("citelsp") if isinstance(params.settings, dict) else None
    await ls.pull_configuration(pushed if isinstance(pushed, dict) else None)
    ls.publish_open()
    ls.schedule_verification()


def did_open(ls: CitelspServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.document_opened(params.text_document)


def did_change(ls: CitelspServer, params: types.DidChangeTextDocumentParams) -> None:
    ls.text_changed(params.text_document, list(params.content_changes))


async def shutdown(ls: CitelspServer, params: None) -> None:
    await ls.ws.verifier.close()


def cancel_progress(ls: CitelspServer, params: types.WorkDoneProgressCancelParams) -> None:
    if params.token == ls.progress.token:
        ls.ws.verifier.cancel_all()


def did_close(ls: CitelspServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.document_closed(params.text_document.uri)


def did_save(ls: CitelspServer, params: types.DidSaveTextDocumentParams) -> None:
    ls.ws.files_changed([params.text_document.uri])
    ls.read_workspace_soon()


def did_change_watched(ls: CitelspServer, params: types.DidChangeWatchedFilesParams) -> None:
    ls.ws.files_changed([change.uri for change in params.changes])
    ls.schedule_publish()


def register(server: CitelspServer) -> None:
    server.feature(types.INITIALIZE)(initialize)
    server.feature(types.INITIALIZED)(initialized)
    server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)(did_change_configuration)
    server.feature(types.TEXT_DOCUMENT_DID_OPEN)(did_open)
    server.feature(types.TEXT_DOCUMENT_DID_CHANGE)(did_change)
    server.feature(types.SHUTDOWN)(shutdown)
    server.feature(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)(cancel_progress)
    server.feature(types.TEXT_DOCUMENT_DID_CLOSE)(did_close)
    server.feature(types.TEXT_DOCUMENT_DID_SAVE)(did_save)
    server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)(did_change_watched)
