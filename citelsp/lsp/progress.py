"""What verification tells the editor: work-done progress, re-publishing as results arrive,
the status line and one-off messages."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from lsprotocol import types

from citelsp.workspace import Listener

if TYPE_CHECKING:
    from citelsp.lsp.session import CitelspServer

STATUS_NOTIFICATION = "citelsp/status"

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
