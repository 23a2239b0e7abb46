"""Real PostgreSQL and Redis servers on loopback for the team-mode tests (no mocks).

CI (`.ci/run`) starts Debian's services and names them in ``CITELSP_TEST_POSTGRES_URL`` (a
superuser URL) and ``CITELSP_TEST_REDIS_URL``; without those the test session starts private
servers from the installed binaries in a temporary folder. Either way every test gets a fresh
database and an empty Redis. A test that must stop or restart a server starts its own
(``PostgresServer`` / ``RedisServer``) so it never disturbs the shared ones.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

PG_BIN = Path("/usr/lib/postgresql/15/bin")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _as_postgres(cmd: list[str]) -> list[str]:
    """PostgreSQL refuses to run as root; the CI machine is root, so drop to ``postgres``."""
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *cmd]
    return cmd


def _wait_port(port: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port} after {timeout} s")


class PostgresServer:
    """A private PostgreSQL cluster on 127.0.0.1 (trust authentication, user ``postgres``)."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="citelsp-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres", "postgres")
        subprocess.run(
            _as_postgres([str(PG_BIN / "initdb"), "-D", str(self.data), "-U", "postgres",
                          "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8"]),
            check=True, capture_output=True,
        )

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def start(self) -> PostgresServer:
        subprocess.run(
            _as_postgres([str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-w", "-l",
                          str(self.root / "log"), "-o",
                          f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 "
                          "-c fsync=off -c max_connections=200", "start"]),
            check=True, capture_output=True,
        )
        _wait_port(self.port)
        return self

    def stop(self, mode: str = "fast") -> None:
        subprocess.run(
            _as_postgres([str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-w", "-m", mode,
                          "stop"]),
            capture_output=True,
        )

    def restart(self) -> None:
        self.stop()
        self.start()

    def destroy(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)


class RedisServer:
    """A private Redis on 127.0.0.1 that keeps nothing on disk."""

    def __init__(self) -> None:
        self.port = free_port()
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        self.process = subprocess.Popen(
            ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port), "--save", "",
             "--appendonly", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        _wait_port(self.port)
        return self

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(10)
            self.process = None


def fresh_database(admin_url: str) -> str:
    """Create an empty database on the server of ``admin_url`` and return its URL."""
    import psycopg

    name = "t_" + uuid.uuid4().hex[:16]
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    base, _, _ = admin_url.rpartition("/")
    return f"{base}/{name}"


def drop_database(admin_url: str, url: str) -> None:
    import psycopg

    name = url.rpartition("/")[2]
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
