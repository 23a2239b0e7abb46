"""The citelsp language server: every handler registered, each module with its own."""

from __future__ import annotations

from citelsp.lsp import commands, notifications, requests
from citelsp.lsp.session import CitelspServer


def create_server() -> CitelspServer:
    server = CitelspServer()
    notifications.register(server)
    requests.register(server)
    commands.register(server)
    return server
