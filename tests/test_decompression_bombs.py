"""Compressed bodies from a hostile base URL: a gzip bomb of one, two or three layers never
costs more memory than the 2 MiB body cap and a constant (measured as the peak RSS of a
child process that asks a loopback server for each bomb)."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from tests.apiserver import ApiServer

ROOT = Path(__file__).resolve().parent.parent
MIB = 1024 * 1024
BOMB_MIB = 256
GROWTH_LIMIT_MIB = 48
"""The child's peak RSS may grow by the 2 MiB cap, its copies and the allocator's slack; the
bombs below would need 256 MiB or more (before the fix one layer peaked at 254 MB)."""

ASK = """
import asyncio, json, os, sys
from citelsp.config import Settings
from citelsp.resolution.http import HttpClient

def peak_kib():
    # VmHWM is this program's own peak: getrusage's ru_maxrss keeps the parent's peak across
    # fork and exec, so a large pytest process would count as the child's.
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))

async def main():
    async with HttpClient(Settings.from_options({}, environ=dict(os.environ))) as client:
        await client.prepare()
        await client.get("crossref", "/works/warm-up")  # httpx and its connection pool loaded
        before = peak_kib()
        answer = await client.get("crossref", sys.argv[1])
        after = peak_kib()
    print(json.dumps({"answer": getattr(answer, "reason", None) or len(answer.body),
                      "growth_kib": after - before, "peak_kib": after}))

asyncio.run(main())
"""


def gzip_zeros(size: int) -> bytes:
    """``size`` zero bytes, gzipped in 1 MiB steps (the bomb is never held inflated)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    step = bytes(MIB)
    parts = [packer.compress(step) for _ in range(size // MIB)]
    return b"".join([*parts, packer.flush()])


@pytest.fixture(scope="module")
def bombs():
    one = gzip_zeros(BOMB_MIB * MIB)
    two = gzip.compress(one, 9)
    three = gzip.compress(two, 9)
    with ApiServer() as server:
        server.add_json("crossref", "/works/warm-up", {"message": {}})
        for name, body, coding in [
            ("gzip", one, "gzip"),
            ("deflate", zlib.compress(bytes(BOMB_MIB * MIB), 9), "deflate"),
            ("gzip-gzip", two, "gzip, gzip"),
            ("gzip-gzip-gzip", three, "gzip, gzip, gzip"),
            ("gzip-identity-gzip", two, "gzip, identity, gzip"),
        ]:
            server.add("crossref", "GET", f"/works/{name}", body=body,
                       headers={"Content-Encoding": coding})
        yield server


def peak_rss(server: ApiServer, path: str) -> dict:
    env = {**os.environ, **server.env(), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", ASK, path], env=env, capture_output=True,
                          text=True, timeout=120, check=True)
    return json.loads(done.stdout)


@pytest.mark.timeout(300)
@pytest.mark.parametrize(("name", "why"), [
    ("gzip", "over 2097152 bytes once decoded"),
    ("deflate", "over 2097152 bytes once decoded"),
    ("gzip-gzip", "stacked content encodings (gzip, gzip)"),
    ("gzip-gzip-gzip", "stacked content encodings (gzip, gzip, gzip)"),
    ("gzip-identity-gzip", "stacked content encodings (gzip, gzip)"),
])
def test_a_decompression_bomb_is_refused_within_the_body_cap(bombs, name, why):
    measured = peak_rss(bombs, f"/works/{name}")
    assert measured["answer"] == f"response from 127.0.0.1 refused: {why}"
    assert measured["growth_kib"] < GROWTH_LIMIT_MIB * 1024, measured
    assert measured["peak_kib"] < 300 * 1024, measured
