"""Bytes → text for documents read from disk, and text that cannot be encoded.

Files are UTF-8. A file that is not (an old Latin-1 ``.bib``) is decoded with the encoding
chardet guesses (a maintained detector; charset-normalizer was tried and read the German
``jbtest.bib`` of TeX Live as Japanese cp932), and a FILE_ENCODING warning says so, rather
than silently turning every accented letter into U+FFFD. Lone UTF-16 surrogates (from a
JSON ``\\ud800`` escape, or an editor) cannot be written out as UTF-8 and would break every
report downstream: they are replaced by U+FFFD, which keeps every offset, with a warning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from citelsp.documents.model import Problem, Severity
from citelsp.spans import Span

_SURROGATE = re.compile("[\ud800-\udfff]")
_FALLBACK = "cp1252"


@dataclass(frozen=True)
class Decoded:
    """A file's text and how it was decoded."""

    text: str
    encoding: str
    """"utf-8", or the guessed encoding the text was read with."""
    invalid_at: int | None = None
    """Offset in ``text`` of the first character that was not valid UTF-8."""


def decode(data: bytes) -> Decoded:
    try:
        return Decoded(data.decode("utf-8-sig"), "utf-8")
    except UnicodeDecodeError as error:
        first_bad = error.start
    guess = _guess(data)
    try:
        text = data.decode(guess)
    except (UnicodeDecodeError, LookupError):
        guess = _FALLBACK
        text = data.decode(_FALLBACK, errors="replace")
    prefix = data[:first_bad].decode("utf-8-sig", errors="replace")
    return Decoded(text, guess, len(prefix))


def _guess(data: bytes) -> str:
    import chardet  # loaded only for the rare file that is not UTF-8

    guess = chardet.detect(data).get("encoding")
    return guess or _FALLBACK


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
    if text.isascii():
        return text, None
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
