"""Bytes → text for documents read from disk, and text that cannot be encoded.

Files are UTF-8. A file that is not (an old Latin-1 ``.bib``) is decoded with the encoding
chardet guesses (a maintained detector; charset-normalizer was tried and read the German
``jbtest.bib`` of TeX Live as Japanese cp932), and a FILE_ENCODING warning says so, rather
than silently turning every accented letter into U+FFFD. Lone UTF-16 surrogates (from a
JSON ``\\ud800`` escape, or an editor) cannot be written out as UTF-8 and would break every
report downstream: they are replaced by U+FFFD, which keeps every offset, with a warning.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

from citelsp.documents.model import Problem, Severity
from citelsp.spans import Span

_SURROGATE = re.compile("[\ud800-\udfff]")
_FALLBACK = "cp1252"
"""Windows-1252: Latin-1 with printable characters where Latin-1 has C1 controls."""


@dataclass(frozen=True)
class Decoded:
    """A file's text and how it was decoded."""

    text: str
    encoding: str
    """"utf-8", or the guessed encoding the text was read with."""
    invalid_at: int | None = None
    """Offset in ``text`` of the first character that was not valid UTF-8."""


def decode(data: bytes) -> Decoded:
    """UTF-8 when valid. Otherwise the bytes that are not UTF-8 are decoded with the
    encoding guessed from the lines that hold them, and valid UTF-8 stays UTF-8: files made
    by concatenating a Latin-1 ``.bib`` onto UTF-8 ones happen. A multi-byte guess
    (Shift-JIS, GBK) decodes the whole file."""
    try:
        return Decoded(data.decode("utf-8-sig"), "utf-8")
    except UnicodeDecodeError as error:
        first_bad = error.start
    guess = _guess(_invalid_lines(data, first_bad))
    if _SINGLE_BYTE.match(guess):
        text = data.decode("utf-8-sig", errors=_fallback_handler(guess))
    else:
        try:
            text = data.decode(guess)
        except UnicodeDecodeError:
            guess = _FALLBACK
            text = data.decode("utf-8-sig", errors=_fallback_handler(guess))
    prefix = data[:first_bad].decode("utf-8-sig", errors="replace")
    return Decoded(text, guess, len(prefix))


_SINGLE_BYTE = re.compile(r"^(?:cp\d{3,4}|iso8859_\d+|latin_1|mac_\w+|koi8_\w+|tis_620)$")
_SAMPLE_BYTES = 1 << 16


def _invalid_lines(data: bytes, start: int) -> bytes:
    """The lines, from ``start`` on, that are not valid UTF-8 (a sample for the detector).
    From the end of each, the decoder finds the next invalid byte, and so the next such
    line, at C speed: no UTF-8 sequence spans a line break."""
    sample = []
    size = 0
    view = memoryview(data)
    start = _first_invalid(view, data.rfind(b"\n", 0, start) + 1)
    while start != -1:
        line_end = data.find(b"\n", start)
        if line_end == -1:
            line_end = len(data)
        line = data[data.rfind(b"\n", 0, start) + 1 : line_end]
        sample.append(line)
        size += len(line)
        if size > _SAMPLE_BYTES:
            break
        start = _first_invalid(view, line_end)
    return b"\n".join(sample)


def _first_invalid(view: memoryview, pos: int) -> int:
    """Offset of the first byte from ``pos`` on that is not valid UTF-8, -1 if none."""
    try:
        codecs.utf_8_decode(view[pos:], "strict", True)
    except UnicodeDecodeError as error:
        return pos + error.start
    return -1


def _guess(sample: bytes) -> str:
    """The detector's guess as a Python codec name, Windows-1252 when it has none."""
    import chardet  # loaded only for the rare file that is not UTF-8

    guess = chardet.detect(sample).get("encoding") or _FALLBACK
    try:
        return codecs.lookup(guess).name
    except LookupError:
        return _FALLBACK


def _fallback_handler(encoding: str) -> str:
    """The name of a codec error handler that decodes invalid UTF-8 bytes with
    ``encoding`` (registered once per encoding)."""
    name = f"citelsp-{encoding}"
    try:
        codecs.lookup_error(name)
    except LookupError:
        codecs.register_error(
            name, lambda e: (e.object[e.start : e.end].decode(encoding, "replace"), e.end)
        )
    return name


def encoding_problem(decoded: Decoded) -> Problem | None:
    """The FILE_ENCODING warning of a file that was not UTF-8, at its first such character."""
    if decoded.invalid_at is None:
        return None
    at = min(decoded.invalid_at, max(len(decoded.text) - 1, 0))
    return Problem(
        code="FILE_ENCODING",
        span=Span(at, min(at + 1, len(decoded.text))),
        message=f"The file is not UTF-8: it was read as {decoded.encoding} (a guess). "
        "Check its accented letters and save it as UTF-8.",
        severity=Severity.WARNING,
    )


def without_surrogates(text: str) -> tuple[str, Problem | None]:
    """``text`` with lone surrogates replaced by U+FFFD, and a warning at the first one."""
    try:
        text.encode("utf-8")  # C speed: only a lone surrogate fails
        return text, None
    except UnicodeEncodeError:
        pass
    first = _SURROGATE.search(text)
    if first is None:
        return text, None
    count = len(_SURROGATE.findall(text))
    problem = Problem(
        code="MALFORMED_ENTRY",
        span=Span(first.start(), first.end()),
        message=f"{count} invalid character(s) (lone UTF-16 surrogate U+{ord(first.group()):04X}"
        f"{' …' if count > 1 else ''}) replaced by U+FFFD.",
        severity=Severity.WARNING,
    )
    return _SURROGATE.sub("\ufffd", text), problem
