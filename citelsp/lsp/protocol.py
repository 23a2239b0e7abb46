"""pygls's protocol with three corrections: a request whose params cannot be read gets the
JSON-RPC error response it is owed (-32602) instead of silence; open documents' text is
kept by ``OpenTexts`` (LSP line endings, applied in order) instead of pygls's workspace; and
``exit`` without ``shutdown`` exits with status 1, as the specification asks. Diagnostics go
out as JSON the server keeps (``notify_json``)."""

from __future__ import annotations

import asyncio
import inspect
import json
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

    def notify_json(self, method: str, params: str) -> None:
        """Send a notification whose ``params`` are JSON already (pygls's ``notify`` takes
        objects and serializes them whole): the server keeps each diagnostic's JSON and
        re-sends a library's unchanged hints without serializing them again."""
        if self.writer is None:
            log.error("cannot send %s: no transport", method)
            return
        body = (f'{{"jsonrpc":"{self.VERSION}","method":{json.dumps(method)},'
                f'"params":{params}}}').encode(self.CHARSET)
        if self._include_headers:
            body = (f"Content-Length: {len(body)}\r\nContent-Type: {self.CONTENT_TYPE}; "
                    f"charset={self.CHARSET}\r\n\r\n").encode("ascii") + body
        try:
            written = self.writer.write(body)
            if inspect.isawaitable(written):
                asyncio.ensure_future(written)
        except BrokenPipeError:
            log.exception("cannot send %s: the client is gone", method)
            raise

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
