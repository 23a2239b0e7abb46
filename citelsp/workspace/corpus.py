"""The corpus: every document citelsp knows, open in the editor or read from disk.

Open documents hold the editor's text. Other files are read from disk only when asked to
``load`` them (a manuscript names its bibliography, a rename reaches unopened files), and read
again only when their modification time changed; plain ``get`` never touches the disk, so
publishing and hovers never do I/O. ``generation`` counts every change a finding could depend
on; memoized findings compare it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

from citelsp.config import Settings
from citelsp.documents.bibtex import BibtexBibliography, parse_bibtex
from citelsp.documents.encoding import Decoded, decode, encoding_problem
from citelsp.documents.parse import (
    BIBLIOGRAPHY_SUFFIXES,
    MANUSCRIPT_SUFFIXES,
    Document,
    parse_document,
)
from citelsp.files import read_bytes
from citelsp.uris import path_to_uri, uri_to_path

log = logging.getLogger(__name__)

SKIPPED_DIRS = {".git", "node_modules", ".venv", "venv", "__pycache__", ".citelsp", "build", "dist"}
MAX_SCAN_FILES = 2000


def decode_document(data: bytes) -> Decoded:
    """The text of a document file's bytes: UTF-8, else decoded with a guessed encoding (see
    ``documents.encoding``; ``note_encoding`` adds the warning to its parse)."""
    return decode(data)


def read_document(path: Path) -> Decoded:
    return decode_document(read_bytes(path))


def note_encoding(doc: Document | None, decoded: Decoded) -> None:
    """Put the FILE_ENCODING warning of a file that was not UTF-8 on its parse."""
    if doc is not None and (problem := encoding_problem(decoded)) is not None:
        doc.problems.insert(0, problem)


class Corpus:
    """Open documents (text from the editor) and files on disk, parsed."""

    def __init__(self, settings: Settings | None = None, roots: list[Path] | None = None,
                 *, scan: bool = True) -> None:
        self.settings = settings or Settings()
        self.roots: list[Path] = list(roots or [])
        self.scan = scan
        """Whether the workspace folders are searched for files (the editor); the command
        line knows only the files it was given and the ones they name."""
        self.open: dict[str, Document | None] = {}
        """Open documents by URI (None: open, but not a kind citelsp reads)."""
        self._disk: dict[str, tuple[float, Document | None]] = {}
        self._scanned: list[str] | None = None
        self.unreadable: dict[str, str] = {}
        """Files on disk that could not be read, with why."""
        self.generation = 0

    # -- documents -------------------------------------------------------------------------

    def update(self, uri: str, text: str, *, language: str | None = None) -> Document | None:
        """The editor's (or the command line's) text of an open document, parsed."""
        self.generation += 1
        doc = parse_document(uri, text, language, previous=self._last_parse(uri))
        self.open[uri] = doc
        return doc

    def _last_parse(self, uri: str) -> Document | None:
        """The latest parse of ``uri``, open or from disk: the seed of an incremental one."""
        if uri in self.open:
            return self.open[uri]
        cached = self._disk.get(uri)
        return cached[1] if cached is not None else None

    def close(self, uri: str) -> None:
        """Forget an open document; its disk copy is read again if something still needs it."""
        self.generation += 1
        self.open.pop(uri, None)
        self._disk.pop(uri, None)

    def get(self, uri: str) -> Document | None:
        """The open document, else the disk copy already loaded; never reads the disk."""
        if uri in self.open:
            return self.open[uri]
        cached = self._disk.get(uri)
        return cached[1] if cached is not None else None

    def load(self, uri: str) -> Document | None:
        """The open document, else the file on disk (parsed again only when it changed)."""
        if uri in self.open:
            return self.open[uri]
        path = uri_to_path(uri)
        try:
            mtime = path.stat().st_mtime
        except (OSError, ValueError):
            self.unreadable[uri] = "no such file"
            if self._disk.pop(uri, None) is not None:
                self.generation += 1
            return None
        cached = self._disk.get(uri)
        if cached is not None and cached[0] == mtime:
            return cached[1]
        try:
            decoded = read_document(path)
        except OSError as exc:
            log.warning("cannot read %s: %s", path, exc)
            self.unreadable[uri] = exc.strerror or str(exc)
            self._disk[uri] = (mtime, None)
            return None
        self.unreadable.pop(uri, None)
        doc = parse_document(uri, decoded.text, previous=cached[1] if cached else None)
        note_encoding(doc, decoded)
        self._disk[uri] = (mtime, doc)
        self.generation += 1
        return doc

    def given_macros(self, uri: str, macros: dict[str, str]) -> Document | None:
        """The bibliography at ``uri``, read again when the ``@string`` macros defined by the
        bibliographies listed before it change what it reads (BibTeX reads the files of
        ``\\bibliography{a,b}`` as one): a macro it lacked, or another value for one it used.
        A file listed by several manuscripts keeps the macros it was last given."""
        doc = self.get(uri)
        if not isinstance(doc, BibtexBibliography) or not macros:
            return doc
        if not any(name in macros for name in doc.undefined) and all(
            macros.get(name, value) == value for name, value in doc.external.items()
        ):
            return doc
        kept = [p for p in doc.problems if p.code == "FILE_ENCODING"]
        doc = parse_bibtex(uri, doc.text, previous=doc, macros={**doc.incoming, **macros})
        doc.problems[:0] = kept
        self.generation += 1
        if uri in self.open:
            self.open[uri] = doc
        elif uri in self._disk:
            self._disk[uri] = (self._disk[uri][0], doc)
        return doc

    def invalidate(self, uri: str | None = None) -> None:
        """A file changed on disk (or everything may have): read it again when needed."""
        self.generation += 1
        if uri is None:
            self._disk.clear()
        else:
            self._disk.pop(uri, None)
        self._scanned = None

    def is_open(self, uri: str) -> bool:
        return uri in self.open

    def open_documents(self) -> list[Document]:
        return [d for d in self.open.values() if d is not None]

    # -- the workspace scan ----------------------------------------------------------------

    def scanned(self, suffixes: tuple[str, ...]) -> list[str]:
        """URIs of files under the workspace roots with one of ``suffixes`` (scanned once until
        ``invalidate``), plus open documents of that kind."""
        if self._scanned is None:
            self._scanned = [path_to_uri(p) for p in self._scan()] if self.scan else []
        found = dict.fromkeys(u for u in self.open if u.lower().endswith(suffixes))
        found.update(dict.fromkeys(u for u in self._scanned if u.lower().endswith(suffixes)))
        return list(found)

    def _scan(self) -> Iterator[Path]:
        count = 0
        for root in self.roots:
            stack = [root]
            while stack and count < MAX_SCAN_FILES:
                folder = stack.pop()
                try:
                    entries = sorted(folder.iterdir())
                except OSError:
                    continue
                for entry in entries:
                    if entry.is_dir():
                        if entry.name not in SKIPPED_DIRS and not entry.name.startswith("."):
                            stack.append(entry)
                    elif entry.suffix.lower() in BIBLIOGRAPHY_SUFFIXES + MANUSCRIPT_SUFFIXES:
                        count += 1
                        yield entry

    def setting_path(self, value: str) -> Path:
        """A path from a setting: absolute, else relative to the first workspace root."""
        path = Path(value).expanduser()
        if path.is_absolute() or not self.roots:
            return path
        return self.roots[0] / path
