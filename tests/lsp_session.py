"""Drive the real citelsp server over stdio (pytest-lsp's client), pointed at the loopback
API server, with helpers to wait for diagnostics without sleeping."""

from __future__ import annotations

import asyncio
import os
import sys
from contextlib import asynccontextmanager
from pathlib import Path

from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features


def _accept_registration(params: types.RegistrationParams) -> None:
    """``client/registerCapability``, accepted as VS Code accepts it (the server asks to be
    told of changed files)."""


EDITOR_FEATURES = {**DEFAULT_CLIENT_FEATURES,
                   types.CLIENT_REGISTER_CAPABILITY: _accept_registration}
"""pytest-lsp's test client's handlers, and the requests every editor answers."""


def editor_client() -> LanguageClient:
    """pytest-lsp's test client (``ClientServerConfig.client_factory``), answering as an
    editor does."""
    lsp = LanguageClient(converter_factory=default_converter)
    register_lsp_features(lsp, EDITOR_FEATURES)
    return lsp


@asynccontextmanager
async def lsp_session(root: Path, env: dict[str, str], *, options: dict | None = None,
                      client: str = "visual_studio_code",
                      capabilities: types.ClientCapabilities | None = None,
                      features: dict | None = None):
    """A started and initialized client; the server is shut down afterwards. ``features``
    replace the test client's own handlers (method → handler)."""
    lsp = LanguageClient(converter_factory=default_converter)
    register_lsp_features(lsp, {**EDITOR_FEATURES, **(features or {})})
    server_env = {k: v for k, v in os.environ.items() if not k.startswith("CITELSP_")}
    server_env.update(env)
    await lsp.start_io(sys.executable, "-m", "citelsp", env=server_env)
    await lsp.initialize_session(types.InitializeParams(
        capabilities=capabilities or client_capabilities(client),
        root_uri=root.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="ws")],
        initialization_options={"citelsp": options or {}},
    ))
    try:
        yield lsp
    finally:
        await lsp.shutdown_session()


def accept_edits(lsp: LanguageClient) -> list[types.WorkspaceEdit]:
    """Apply every ``workspace/applyEdit`` the server sends, as an editor would; the list
    collects them for the test to read."""
    applied: list[types.WorkspaceEdit] = []

    @lsp.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        applied.append(params.edit)
        return types.ApplyWorkspaceEditResult(applied=True)

    return applied


def open_file(lsp: LanguageClient, path: Path, language: str, version: int = 1) -> str:
    uri = path.as_uri()
    lsp.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id=language, version=version,
                                             text=path.read_text(encoding="utf-8"))))
    return uri


async def wait_until(lsp: LanguageClient, predicate, timeout: float = 30.0) -> None:
    """Wait for published diagnostics until ``predicate(lsp)`` holds."""
    async def loop() -> None:
        while not predicate(lsp):
            await lsp.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)

    await asyncio.wait_for(loop(), timeout)


def codes(lsp: LanguageClient, uri: str) -> dict[str, list[types.Diagnostic]]:
    found: dict[str, list[types.Diagnostic]] = {}
    for d in lsp.diagnostics.get(uri, []):
        found.setdefault(str(d.code), []).append(d)
    return found
