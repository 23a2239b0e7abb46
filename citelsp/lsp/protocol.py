"""pygls's protocol with three corrections: a request whose params cannot be read gets the
JSON-RPC error response it is owed (-32602) instead of silence; open documents' text is
kept by ``OpenTexts`` (LSP line endings, applied in order) instead of pygls's workspace; and
``exit`` without ``shutdown`` exits with status 1, as the specification asks."""

from __future__ import annotations

import logging
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.protocol import LanguageServerProtocol, lsp_method

log = logging.getLogger(__name__)


class _Answered:
    """What a request that was already answered with an error structures to."""

    jsonrpc = "answered"


class CitelspProtocol(LanguageServerProtocol):
    exit_status = 0
    """Set by ``exit``: 0 after ``shutdown``, else 1."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as error:
            if "id" not in data or "method" not in data or "jsonrpc" not in data:
                raise
            invalid = JsonRpcInvalidParams(
                f"invalid params for {data['method']!s:.100}: {error.message or 'unreadable'}")
            self._send_response(data["id"], error=invalid.to_response_error())
            return _Answered()

    def handle_message(self, message: Any) -> None:
        if isinstance(message, _Answered):
            return
        super().handle_message(message)

    @lsp_method(types.EXIT)
    def lsp_exit(self, *args):
        self.exit_status = 0 if self._shutdown else 1
        yield from super().lsp_exit(*args)

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams):
        if (user_handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_OPEN)) is not None:
            yield user_handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams):
        if (user_handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            yield user_handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams):
        if (user_handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CLOSE)) is not None:
            yield user_handler, (params,), None
