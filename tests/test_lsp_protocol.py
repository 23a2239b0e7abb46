"""JSON-RPC conformance the client library cannot exercise: requests whose params cannot be
read get a -32602 error response (and the server goes on), and ``exit`` without
``shutdown`` ends the process with status 1 (0 after ``shutdown``). Raw messages over stdio."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.test_check_e2e import ROOT


class Raw:
    def __init__(self, tmp_path) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CITELSP_")}
        env.update({"PYTHONPATH": str(ROOT), "CITELSP_CACHE_DIR": str(tmp_path / "cache"),
                    "CITELSP_OFFLINE": "1"})
        self.process = subprocess.Popen([sys.executable, "-m", "citelsp", "serve"],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, env=env, cwd=tmp_path)

    def send(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def receive(self) -> dict:
        length = 0
        while (line := self.process.stdout.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        return json.loads(self.process.stdout.read(length))

    def response(self, msg_id: int) -> dict:
        while True:
            message = self.receive()
            if message.get("id") == msg_id and "method" not in message:
                return message
            if "method" in message and "id" in message:  # a request from the server
                self.send({"id": message["id"], "result": None})

    def start(self, root_uri: str) -> None:
        self.send({"id": 0, "method": "initialize",
                   "params": {"capabilities": {}, "rootUri": root_uri}})
        self.response(0)
        self.send({"method": "initialized", "params": {}})


@pytest.mark.parametrize("params", [
    {"textDocument": {"uri": "file:///x.md"}, "position": {"line": -1, "character": 0}},
    {"textDocument": {"uri": "file:///x.md"}, "position": {"line": "one", "character": 0}},
    {"textDocument": None, "position": {"line": 0, "character": 0}},
    None,
])
def test_invalid_params_get_an_error_response_and_the_server_goes_on(tmp_path, params):
    raw = Raw(tmp_path)
    try:
        raw.start(tmp_path.as_uri())
        raw.send({"id": 1, "method": "textDocument/hover", "params": params})
        error = raw.response(1)
        assert error["error"]["code"] == -32602, error
        raw.send({"method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": (tmp_path / "x.md").as_uri(), "languageId": "markdown", "version": 1,
            "text": "[@k]\n"}}})
        raw.send({"id": 2, "method": "textDocument/hover", "params": {
            "textDocument": {"uri": (tmp_path / "x.md").as_uri()},
            "position": {"line": 0, "character": 3}}})
        assert "not in any bibliography" in raw.response(2)["result"]["contents"]["value"]
        raw.send({"id": 3, "method": "shutdown"})
        raw.response(3)
        raw.send({"method": "exit"})
        assert raw.process.wait(timeout=30) == 0
    finally:
        raw.process.kill()


def test_exit_without_shutdown_exits_with_status_one(tmp_path):
    raw = Raw(tmp_path)
    try:
        raw.start(tmp_path.as_uri())
        raw.send({"method": "exit"})
        assert raw.process.wait(timeout=30) == 1
    finally:
        raw.process.kill()
