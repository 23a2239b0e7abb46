"""The corpus: every parsed document, which bibliographies a manuscript uses, and key lookup.

Open documents come from the editor; everything else is read from disk on demand, so a
manuscript finds its bibliography whether or not that file is open (DESIGN.md §2).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

import yaml

from citelsp.config import Settings
from citelsp.documents.bibtex import parse_bibtex
from citelsp.documents.csl import parse_csl_json
from citelsp.documents.manuscript import language_for_path, parse_manuscript
from citelsp.documents.model import Bibliography, Citation, Manuscript, Reference

log = logging.getLogger(__name__)

Document = Manuscript | Bibliography
BIBLIOGRAPHY_SUFFIXES = (".bib", ".json")
MANUSCRIPT_SUFFIXES = (".md", ".markdown", ".qmd", ".rmd", ".tex", ".ltx", ".latex")
SKIPPED_DIRS = {".git", "node_modules", ".venv", "venv", "__pycache__", ".citelsp", "build", "dist"}
MAX_SCAN_FILES = 2000


def uri_to_path(uri: str) -> Path:
    parsed = urlparse(uri)
    if parsed.scheme and parsed.scheme != "file":
        return Path(unquote(parsed.path))
    return Path(unquote(parsed.path)) if parsed.scheme else Path(uri)


def path_to_uri(path: Path | str) -> str:
    return Path(path).resolve().as_uri()


def parse_document(uri: str, text: str, language: str | None = None) -> Document | None:
    """Parse by file type; ``None`` for files citelsp does not read (e.g. non-CSL JSON)."""
    suffix = uri_to_path(uri).suffix.lower()
    if suffix == ".bib" or language in ("bibtex", "bib"):
        return parse_bibtex(uri, text)
    if suffix == ".json" or language in ("json", "csl-json"):
        return parse_csl_json(uri, text)
    lang = language_for_path(str(uri_to_path(uri)))
    if lang is None and language in ("markdown", "latex", "tex", "plaintext", "quarto", "rmd"):
        lang = {"tex": "latex", "quarto": "markdown", "rmd": "markdown"}.get(language, language)
    if lang is None:
        return None
    return parse_manuscript(uri, text, lang)


@dataclass(frozen=True)
class Resolved:
    """A citation's key resolved to the references it names (empty when dangling)."""

    key: str
    references: tuple[Reference, ...]


class Corpus:
    """All documents citelsp knows: open ones (text from the editor) and files on disk."""

    def __init__(self, settings: Settings | None = None, roots: Iterable[Path] = ()) -> None:
        self.settings = settings or Settings()
        self.roots = [Path(r) for r in roots]
        self.documents: dict[str, Document] = {}
        self.open_uris: set[str] = set()
        self._disk: dict[str, tuple[float, Document | None]] = {}
        self._scanned: list[str] | None = None
        self._slug_map: dict[str, str] | None = None
        self._key_indexes: dict[str, tuple[Bibliography, dict[str, list[Reference]]]] = {}
        self.generation = 0
        self._bibs_for: dict[str, tuple[Manuscript, int, list[Bibliography]]] = {}
        """Bumped on every change a local check could depend on (memo key for findings)."""

    # -- documents -------------------------------------------------------------------------

    def update(self, uri: str, text: str, *, language: str | None = None, is_open: bool = True
               ) -> Document | None:
        self.generation += 1
        doc = parse_document(uri, text, language)
        if doc is None:
            self.documents.pop(uri, None)
        else:
            self.documents[uri] = doc
        if is_open:
            self.open_uris.add(uri)
        return doc

    def close(self, uri: str) -> None:
        self.generation += 1
        self.open_uris.discard(uri)
        self._disk.pop(uri, None)  # the disk copy may share objects re-based to the buffer
        self.documents.pop(uri, None)

    def get(self, uri: str) -> Document | None:
        """The open document, else the file on disk (parsed once per modification time)."""
        if uri in self.documents:
            return self.documents[uri]
        return self._from_disk(uri)

    def _from_disk(self, uri: str) -> Document | None:
        path = uri_to_path(uri)
        try:
            mtime = path.stat().st_mtime
        except OSError:
            return None
        cached = self._disk.get(uri)
        if cached is not None and cached[0] == mtime:
            return cached[1]
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
        doc = parse_document(uri, text)
        self._disk[uri] = (mtime, doc)
        self.generation += 1
        return doc

    def invalidate_disk(self, uri: str | None = None) -> None:
        """Forget cached disk reads (a watched file changed) and the workspace scan."""
        self.generation += 1
        if uri is None:
            self._disk.clear()
        else:
            self._disk.pop(uri, None)
        self._scanned = None
        self._slug_map = None

    def manuscripts(self) -> list[Manuscript]:
        """Manuscripts the editor has given us (open ones)."""
        return [d for d in self.documents.values() if isinstance(d, Manuscript)]

    def all_manuscripts(self) -> list[Manuscript]:
        """Open manuscripts plus every manuscript file under the workspace roots, so that
        find-references and rename reach files the editor has not opened."""
        uris = dict.fromkeys(
            [m.uri for m in self.manuscripts()]
            + [u for u in self._scanned_uris() if u.lower().endswith(MANUSCRIPT_SUFFIXES)]
        )
        return [m for u in uris if isinstance(m := self.get(u), Manuscript)]

    def open_manuscripts(self) -> list[Manuscript]:
        return [m for m in self.manuscripts() if m.uri in self.open_uris]

    # -- bibliographies --------------------------------------------------------------------

    def workspace_bibliographies(self) -> list[Bibliography]:
        """Every ``.bib`` and CSL-JSON file under the workspace roots, plus open ones."""
        uris = dict.fromkeys(
            [u for u, d in self.documents.items() if isinstance(d, Bibliography)]
            + [u for u in self._scanned_uris() if u.lower().endswith(BIBLIOGRAPHY_SUFFIXES)]
        )
        return [b for u in uris if isinstance(b := self.get(u), Bibliography)]

    def _scanned_uris(self) -> list[str]:
        if self._scanned is None:
            self._scanned = [path_to_uri(p) for p in self._scan()]
        return self._scanned

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

    def bibliographies_for(self, manuscript: Manuscript) -> list[Bibliography]:
        """Front matter / ``\\bibliography`` first, then the setting, else the workspace.

        Remembered until the corpus changes: hovers and checks ask for it constantly.
        """
        memo = self._bibs_for.get(manuscript.uri)
        if memo is not None and memo[0] is manuscript and memo[1] == self.generation:
            return memo[2]
        found = self._find_bibliographies(manuscript)
        self._bibs_for[manuscript.uri] = (manuscript, self.generation, found)
        return found

    def _find_bibliographies(self, manuscript: Manuscript) -> list[Bibliography]:
        found: list[Bibliography] = []
        if manuscript.inline is not None:
            found.append(manuscript.inline)
        base = uri_to_path(manuscript.uri).parent
        named = [base / p for p in manuscript.bibliography_paths]
        if not manuscript.bibliography_paths and self.settings.bibliography:
            named = [self._setting_path(p) for p in self.settings.bibliography]
        if named:
            for path in named:
                doc = self.get(path_to_uri(path))
                if isinstance(doc, Bibliography):
                    found.append(doc)
            return found
        return found + self.workspace_bibliographies()

    def _setting_path(self, value: str) -> Path:
        path = Path(value).expanduser()
        if path.is_absolute() or not self.roots:
            return path
        return self.roots[0] / path

    def manuscripts_using(self, bibliography_uri: str) -> list[Manuscript]:
        return [
            m
            for m in self.manuscripts()
            if any(b.uri == bibliography_uri for b in self.bibliographies_for(m))
        ]

    def all_bibliographies(self) -> list[Bibliography]:
        seen: dict[str, Bibliography] = {b.uri: b for b in self.workspace_bibliographies()}
        for m in self.all_manuscripts():
            for b in self.bibliographies_for(m):
                seen.setdefault(b.uri, b)
        return list(seen.values())

    # -- keys ------------------------------------------------------------------------------

    def slug_map(self) -> dict[str, str]:
        if self._slug_map is None:
            self._slug_map = self._load_slug_map()
        return self._slug_map

    def _load_slug_map(self) -> dict[str, str]:
        value = self.settings.slug_map
        if value is None:
            return {}
        if not isinstance(value, str):
            return dict(value)
        path = self._setting_path(value)
        try:
            text = path.read_text(encoding="utf-8")
            data = json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
        except (OSError, ValueError, yaml.YAMLError) as exc:
            log.warning("cannot read slug map %s: %s", path, exc)
            return {}
        if not isinstance(data, dict):
            return {}
        return {str(k): str(v) for k, v in data.items() if isinstance(v, str | int)}

    def key_index(self, bibliography: Bibliography) -> dict[str, list[Reference]]:
        """Key → references of one bibliography, rebuilt only when the bibliography is new."""
        cached = self._key_indexes.get(bibliography.uri)
        if cached is not None and cached[0] is bibliography:
            return cached[1]
        index: dict[str, list[Reference]] = {}
        for r in bibliography.references:
            index.setdefault(r.key, []).append(r)
        self._key_indexes[bibliography.uri] = (bibliography, index)
        return index

    def resolve(self, manuscript: Manuscript, citation: Citation,
                bibliographies: list[Bibliography] | None = None) -> Resolved:
        """The references a citation names: by key, else (markers) through the slug map."""
        bibs = self.bibliographies_for(manuscript) if bibliographies is None else bibliographies
        refs = self._lookup(bibs, citation.key)
        if refs or citation.wildcard:
            return Resolved(citation.key, refs)
        mapped = self.slug_map().get(citation.key)
        if mapped:
            return Resolved(mapped, self._lookup(bibs, mapped))
        return Resolved(citation.key, ())

    def _lookup(self, bibliographies: list[Bibliography], key: str) -> tuple[Reference, ...]:
        return tuple(r for b in bibliographies for r in self.key_index(b).get(key, ()))

    def keys_for(self, manuscript: Manuscript) -> dict[str, Reference]:
        """Key → first reference, for completion."""
        keys: dict[str, Reference] = {}
        for b in self.bibliographies_for(manuscript):
            for r in b.references:
                keys.setdefault(r.key, r)
        return keys

    def citations_of(self, key: str) -> list[tuple[Manuscript, Citation]]:
        """Every citation of ``key`` in every manuscript, open or on disk (slug-mapped ones
        included)."""
        slugs = {s for s, k in self.slug_map().items() if k == key}
        return [
            (m, c)
            for m in self.all_manuscripts()
            for c in m.citations
            if c.key == key or (c.syntax == "marker" and c.key in slugs)
        ]

    def reference_at(self, bibliography: Bibliography, offset: int) -> Reference | None:
        for r in bibliography.references:
            if r.span.contains(offset):
                return r
        return None

    def citation_at(self, manuscript: Manuscript, offset: int) -> Citation | None:
        """The citation whose key is under the cursor, else the one whose group is."""
        for c in manuscript.citations:
            if c.span.contains(offset):
                return c
        for c in manuscript.citations:
            if c.full_span.contains(offset):
                return c
        return None
