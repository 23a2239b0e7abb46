"""Bounded decoding of a response's ``Content-Encoding`` (bodies over 2 MiB are
refused, decoded or not).

httpx inflates each network chunk whole before anyone can count it: a 64 KiB chunk of gzip
becomes 64 MiB, and a stacked ``gzip, gzip`` turned 1.8 KB into 1 GiB. Here every step asks
zlib for at most the room left under the cap plus one byte, so a body over the cap is refused
having produced no more than the cap and one step's output.
"""

from __future__ import annotations

import zlib

ACCEPTED = "gzip, deflate"
"""The ``Accept-Encoding`` every request sends: the codings ``Decoder`` reads boundedly
(httpx would add ``br`` or ``zstd`` when their packages are installed)."""
_WBITS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}


class DecodingRefused(Exception):
    """The body cannot be decoded within the policy; the message says why."""


class Decoder:
    """Decodes one body under ``limit`` decoded bytes, chunk by chunk (``feed``, then ``end``)."""

    def __init__(self, content_encoding: str, limit: int) -> None:
        """``DecodingRefused`` for a coding not in ``ACCEPTED`` or for stacked codings: one
        layer is all a service needs, and each further layer multiplies the expansion."""
        codings = [c.strip().lower() for c in content_encoding.split(",")]
        codings = [c for c in codings if c and c != "identity"]
        if len(codings) > 1:
            raise DecodingRefused(f"stacked content encodings ({', '.join(codings)})")
        self.coding = codings[0] if codings else None
        if self.coding is not None and self.coding not in _WBITS:
            raise DecodingRefused(f"unsupported content encoding {self.coding!r}")
        self._limit = limit
        self._size = 0
        self._raw_deflate = False
        self._inflater = self._new_inflater() if self.coding else None
        self._started = False

    def feed(self, chunk: bytes) -> bytes:
        """``chunk`` decoded; ``DecodingRefused`` once the decoded body would pass the cap."""
        if self._inflater is None:
            return self._counted(chunk)
        out = bytearray()
        while chunk:
            room = self._limit - self._size - len(out) + 1
            try:
                out += self._inflater.decompress(chunk, room)
            except zlib.error:
                if self._started or self.coding != "deflate" or self._raw_deflate:
                    raise DecodingRefused(f"malformed {self.coding} body") from None
                # "deflate" is zlib-wrapped by the standard, raw in some servers (as httpx reads)
                self._raw_deflate = True
                self._inflater = self._new_inflater()
                continue
            self._started = True
            if self._size + len(out) > self._limit:
                raise DecodingRefused(f"over {self._limit} bytes once decoded")
            # All input was taken (output stopped short of ``room``); what follows a finished
            # gzip member is the next member (RFC 1952 §2.2).
            chunk = self._inflater.unused_data if self._inflater.eof else b""
            if chunk:
                self._inflater = self._new_inflater()
        return self._counted(bytes(out))

    def end(self) -> None:
        """``DecodingRefused`` when the compressed stream stopped before its end."""
        if self._inflater is not None and self._started and not self._inflater.eof:
            raise DecodingRefused(f"truncated {self.coding} body")

    def _counted(self, data: bytes) -> bytes:
        self._size += len(data)
        if self._size > self._limit:
            raise DecodingRefused(f"over {self._limit} bytes")
        return data

    def _new_inflater(self):  # zlib's decompress object has no public type to name
        assert self.coding is not None
        return zlib.decompressobj(-zlib.MAX_WBITS if self._raw_deflate else _WBITS[self.coding])
