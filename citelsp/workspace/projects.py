"""The documents and projects a manuscript is part of: the bibliographies it inherits.

A chapter rarely names its bibliography: a LaTeX chapter's ``\\bibliography`` is in the main
file that inputs it, and a Quarto book or website names it once, in the project's
``_quarto.yml`` or a folder's ``_metadata.yml``. Without reading them every citation of a
chapter checked on its own would dangle.

- LaTeX: the main file is the one ``% !TeX root`` or the ``subfiles`` class option names,
  else the ``.tex`` file in the chapter's folder or up to three above that inputs it; a part
  that names none leads on to its own main file. A main file may name its bibliography in a
  file it inputs (a preamble); paths are relative to the main file's folder either way.
- Quarto: a file belongs to the project of the nearest ``_quarto.yml`` above it; the nearest
  file between it and the project root that names a ``bibliography`` gives it (Quarto merges
  them, the nearest winning), its paths relative to that file's folder.
- bookdown (``_bookdown.yml``): the front matter of the book's ``index.Rmd``, which every
  chapter shares.
- MyST: ``project: bibliography:`` in ``myst.yml`` (mystmd), ``bibtex_bibfiles:`` in a
  Jupyter Book's ``_config.yml``.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import yaml

from citelsp.documents.latex import document_root, entry_sets, latex_inputs, parse_latex
from citelsp.documents.manuscript import front_matter, language_for_path, parse_manuscript
from citelsp.uris import path_to_uri
from citelsp.workspace.corpus import SKIPPED_DIRS, read_document

log = logging.getLogger(__name__)

PROJECT_FILES = ("_quarto.yml", "_quarto.yaml")
FOLDER_FILES = ("_metadata.yml", "_metadata.yaml")
BOOKDOWN_FILES = ("_bookdown.yml", "_bookdown.yaml")
BOOKDOWN_INDEXES = ("index.Rmd", "index.rmd")
MYST_FILES = ("myst.yml", "myst.yaml")
JUPYTER_BOOK_FILES = ("_config.yml", "_config.yaml")
MAX_LEVELS_UP = 3
"""How far above a LaTeX chapter its main file is looked for."""
MAX_NESTING = 4
"""Main file, part, chapter, section: how deep inputs are followed up."""
MAX_PROJECT_FILES = 2000
"""A book's chapters counted to know whether all are open (beyond, not all are taken to be)."""
MAX_PREAMBLE_DEPTH = 2
"""How deep a main file's inputs are searched for its ``\\bibliography``: a preamble, and a
file of settings the preamble inputs."""


@dataclass(frozen=True)
class Inherited:
    """Bibliographies named by a project or folder metadata file, or a LaTeX main file."""

    source: Path
    """The file that names them (``_quarto.yml``, ``_metadata.yml``, ``index.Rmd``,
    ``main.tex``, a preamble the main file inputs)."""
    written: tuple[str, ...]
    """The paths as written there."""
    folder: Path
    """What they are relative to: the source's folder, or a LaTeX main file's (TeX and
    biber read every input's paths from there)."""
    quarto: bool = False
    """Quarto metadata, which Quarto merges with a document's own (``quarto_merged``)."""
    main: Path | None = None
    """The LaTeX document's main file (which may name them in a preamble it inputs)."""
    bibitems: tuple[Path, ...] = ()
    """The files of that LaTeX document that hold its ``thebibliography``."""
    sets: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """The entry sets a LaTeX main file and the files it inputs define
    (``\\defbibentryset``), which a chapter cites by name."""
    listed: bool = False
    """Whether Quarto metadata wrote them as a list (here or in a file merged into it)."""


class Projects:
    """What each folder and LaTeX file gives, read once until the files on disk may have
    changed."""

    def __init__(self) -> None:
        self._folders: dict[Path, Inherited | None] = {}
        self._latex: dict[Path, _LatexFile | None] = {}
        self._documents: dict[tuple[Path, str | None], Inherited | None] = {}
        self._mains: dict[tuple[Path, str | None], Path | None] = {}
        self._cited: dict[Path, frozenset[str] | None] = {}
        self._markdown: dict[Path, list[Path] | None] = {}
        self._project_keys: dict[Path, frozenset[str] | None] = {}

    def clear(self) -> None:
        self._folders.clear()
        self._latex.clear()
        self._documents.clear()
        self._mains.clear()
        self._cited.clear()
        self._markdown.clear()
        self._project_keys.clear()

    def markdown_project(self, manuscript: Path) -> Inherited | None:
        """What the project around ``manuscript`` names for it, if it is in one."""
        folder = manuscript.parent
        if folder not in self._folders:
            self._folders[folder] = _inherited(folder)
        return self._folders[folder]

    def markdown_files(self, folder: Path) -> list[Path] | None:
        """The Markdown documents a project renders under ``folder``: not in folders or
        files whose names start with ``_`` or ``.`` (Quarto skips them), nor in
        ``node_modules`` and the like. None when there are more than ``MAX_PROJECT_FILES``."""
        if folder not in self._markdown:
            found: list[Path] | None = []
            for here, folders, files in os.walk(folder):
                folders[:] = [f for f in folders
                              if not f.startswith(("_", ".")) and f not in SKIPPED_DIRS]
                found += [Path(here, f) for f in files if not f.startswith(("_", "."))
                          and language_for_path(f) == "markdown"]
                if len(found) > MAX_PROJECT_FILES:
                    found = None
                    break
            self._markdown[folder] = found
        return self._markdown[folder]

    def cited_in_project(self, folder: Path) -> frozenset[str] | None:
        """The keys every Markdown document of the project under ``folder`` cites, as on
        disk: what a chapter open alone leaves unknown. None when a document cites every
        entry (``nocite: '@*'``) or the project is too large to read."""
        if folder not in self._project_keys:
            self._project_keys[folder] = self._cited_in_project(folder)
        return self._project_keys[folder]

    def _cited_in_project(self, folder: Path) -> frozenset[str] | None:
        chapters = self.markdown_files(folder)
        if chapters is None:
            return None
        keys: set[str] = set()
        for path in chapters:
            try:
                text = read_document(path).text
            except OSError as exc:
                log.info("cannot read %s: %s", path, exc)
                continue
            for c in parse_manuscript(path_to_uri(path), text, "markdown").citations:
                if c.wildcard:
                    return None
                keys.add(c.key)
        return frozenset(keys)

    def latex_document(self, chapter: Path, root: str | None) -> Inherited | None:
        """The bibliographies of the LaTeX document ``chapter`` is part of (a chapter names
        none: they are in the main file), relative to the file that names them. The main
        file is the one ``root`` names (``% !TEX root``), else the file that inputs the
        chapter, looked for in its folder and the folders above, and so on up."""
        key = (chapter, root)
        if key not in self._documents:
            self._documents[key] = self._latex_document(_normal(chapter), root)
        return self._documents[key]

    def _latex_document(self, chapter: Path, root: str | None) -> Inherited | None:
        found = self._named_below(chapter, chapter.parent)  # a main file with a preamble
        if found is not None:
            return replace(found, main=chapter)
        for main in self._includers(chapter, root):
            found = self._named_below(main, main.parent)
            if found is None and self._bibitems_of(main):  # its own thebibliography
                found = Inherited(main, (), main.parent)
            if found is not None:
                sets = {name: members for path in (main, *(p for p, _ in self._below(main)))
                        if (read := self._read(path)) is not None
                        for name, members in read.sets.items()}
                return replace(found, main=main, sets=sets, bibitems=self._bibitems_of(main))
        return None

    def _includers(self, part: Path, root: str | None) -> Iterator[Path]:
        """The files above ``part`` in its LaTeX document, nearest first: the one its
        ``root`` names or that inputs it, the one above that, and so on."""
        seen, current = {part}, part
        while len(seen) <= MAX_NESTING:
            main = (_normal(current.parent / root) if root is not None
                    else self._includer(current))
            if main is None or main in seen or (read := self._read(main)) is None:
                return
            yield main
            seen.add(main)
            current, root = main, read.root

    def _named_below(self, path: Path, folder: Path, depth: int = 0) -> Inherited | None:
        """The bibliographies ``path`` names, or else the first file it inputs that names
        some (a preamble, ``\\input{settings}``), their paths relative to ``folder``."""
        read = self._read(path)
        if read is None:
            return None
        if read.bibliographies:
            return Inherited(path, read.bibliographies, folder)
        if depth < MAX_PREAMBLE_DEPTH:
            for name in read.inputs:
                included = _normal(folder / name)
                if included.is_file() and (found := self._named_below(
                        included, folder, depth + 1)) is not None:
                    return found
        return None

    def cited_below(self, main: Path) -> frozenset[str] | None:
        """The keys the files ``main`` inputs cite, and the files they input (as on disk):
        what the rest of the document cites. None when one cites every entry."""
        if main not in self._cited:
            self._cited[main] = self._cited_below(main)
        return self._cited[main]

    def _cited_below(self, main: Path) -> frozenset[str] | None:
        keys: set[str] = set()
        for _path, read in self._below(main):
            if read.keys is None:
                return None
            keys |= read.keys
        return frozenset(keys)

    def parts_below(self, main: Path) -> list[Path]:
        """The LaTeX files ``main`` inputs, and the files they input (as on disk), that cite
        works: the chapters of the document (a preamble or a table has nothing to check)."""
        return [path for path, read in self._below(main)
                if language_for_path(path.name) == "latex" and read.keys != frozenset()]

    def main_file(self, part: Path, root: str | None) -> Path | None:
        """The main file of the LaTeX document ``part`` belongs to, followed up through the
        files that input it (None when it is not part of another). TeX reads every path a
        part names from the main file's folder."""
        key = (part, root)
        if key not in self._mains:
            self._mains[key] = self._main_file(part, root)
        return self._mains[key]

    def _main_file(self, part: Path, root: str | None) -> Path | None:
        above = list(self._includers(_normal(part), root))
        return above[-1] if above else None

    def _bibitems_of(self, main: Path) -> tuple[Path, ...]:
        read = self._read(main)
        return (*([main] if read is not None and read.bibitems else []),
                *self.bibitems_below(main))

    def bibitems_below(self, main: Path) -> list[Path]:
        """The files ``main`` inputs (as on disk) that hold a ``thebibliography``: its
        bibliography, pasted into a file of its own."""
        return [path for path, read in self._below(main) if read.bibitems]

    def _below(self, main: Path) -> list[tuple[Path, _LatexFile]]:
        """The files ``main`` inputs, and the files they input, as read from disk."""
        found = []
        seen = {main}
        todo = [(main, 0)]
        while todo:
            path, depth = todo.pop()
            read = self._read(path)
            if read is None:
                continue
            if path != main:
                found.append((path, read))
            if depth < MAX_NESTING:
                for name in read.inputs:
                    included = _included(main.parent, path.parent, name)
                    if included is not None and included not in seen:
                        seen.add(included)
                        todo.append((included, depth + 1))
        return found

    def _includer(self, chapter: Path) -> Path | None:
        for here in chapter.parents[:MAX_LEVELS_UP + 1]:
            for candidate in sorted(here.glob("*.*")):  # .tex, .ltx, .Rnw
                if candidate != chapter and language_for_path(candidate.name) == "latex" and (
                        read := self._read(candidate)) is not None and _names(
                        candidate, read.inputs, chapter):
                    return candidate
        return None

    def _read(self, path: Path) -> _LatexFile | None:
        if path not in self._latex:
            try:
                text = read_document(path).text
            except OSError as exc:
                log.info("cannot read %s: %s", path, exc)
                self._latex[path] = None
            else:
                citations, bibliographies = parse_latex(path_to_uri(path), text)
                self._latex[path] = _LatexFile(
                    tuple(bibliographies), document_root(text), tuple(latex_inputs(text)),
                    None if any(c.wildcard for c in citations)
                    else frozenset(c.key for c in citations),
                    "\\begin{thebibliography}" in text,
                    entry_sets(text) if "\\defbibentryset" in text else {})
        return self._latex[path]


@dataclass(frozen=True)
class _LatexFile:
    bibliographies: tuple[str, ...]
    root: str | None
    inputs: tuple[str, ...]
    """The files it inputs, includes or imports, as written."""
    keys: frozenset[str] | None
    """The keys it cites; None when it cites every entry (``\\nocite{*}``)."""
    bibitems: bool = False
    """Whether it holds a ``thebibliography`` (a main file's ``\\input{bibliography}``)."""
    sets: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """The entry sets it defines (``\\defbibentryset``)."""


def _names(including: Path, inputs: tuple[str, ...], chapter: Path) -> bool:
    """Whether one of ``inputs`` is ``chapter``: relative to the including file's folder, or
    to a folder above it (TeX reads a nested file's ``\\input`` from the main file's)."""
    return any(_normal(base / name) == chapter
               for base in including.parents[:MAX_LEVELS_UP + 1] for name in inputs)


def _included(main_folder: Path, folder: Path, name: str) -> Path | None:
    """The file an ``\\input`` names: relative to the main file's folder, where TeX reads
    it, else to the including file's (``\\subimport``); None when neither exists."""
    for base in (main_folder, folder):
        path = _normal(base / name)
        if path.is_file():
            return path
    return None


def _normal(path: Path) -> Path:
    """A path with ``..`` and ``.`` resolved textually (a chapter and the name an
    ``\\input`` gives it compare equal), ``.tex`` added to a name without a suffix."""
    path = Path(os.path.normpath(path))
    return path if path.suffix else path.with_name(path.name + ".tex")


def _inherited(folder: Path) -> Inherited | None:
    levels: list[Inherited | None] = []  # folder metadata, the nearest first
    for here in (folder, *folder.parents):
        levels.append(_named_in(_first_file(here, FOLDER_FILES), quarto=True))
        if (project := _first_file(here, PROJECT_FILES)) is not None:
            merged = _named_in(project, quarto=True)  # then each folder's, from the top
            for level in reversed(levels):
                merged = quarto_merged(merged, level)
            return merged
        if any(levels):
            continue  # folder metadata below: only a Quarto project root may use it
        if _first_file(here, BOOKDOWN_FILES) is not None:
            return _named_in(_first_file(here, BOOKDOWN_INDEXES), front_matter_only=True)
        if (myst := _first_file(here, MYST_FILES)) is not None:
            return _named_in(myst, ("project", "bibliography"))
        if (book := _named_in(_first_file(here, JUPYTER_BOOK_FILES), ("bibtex_bibfiles",))):
            return book  # a _config.yml is Jupyter Book's only where it names these
    return None  # not in a project: folder metadata does not apply


def quarto_merged(base: Inherited | None, over: Inherited | None) -> Inherited | None:
    """``over`` merged onto ``base`` as Quarto merges a project's, a folder's and a
    document's metadata: when either is a list, both (each file once, ``base``'s first);
    else ``over`` replaces ``base``. The paths are made relative to ``over``'s folder."""
    if base is None or over is None:
        return over or base
    if not (base.listed or over.listed):
        return over
    joined: dict[str, str] = {}
    for inherited in (base, over):
        for written in inherited.written:
            moved = _rebased(written, inherited.folder, over.folder)
            joined.setdefault(os.path.normpath(over.folder / moved), moved)
    return replace(over, written=tuple(joined.values()), listed=True)


def _rebased(written: str, folder: Path, onto: Path) -> str:
    """A path written relative to ``folder``, written relative to ``onto`` (a URL as is)."""
    if folder == onto or "://" in written or "\0" in written:
        return written
    located = os.path.normpath(folder / written)
    try:
        return os.path.relpath(located, onto)
    except ValueError:  # another drive
        return located


def _first_file(folder: Path, names: tuple[str, ...]) -> Path | None:
    for name in names:
        path = folder / name
        if path.is_file():
            return path
    return None


def _named_in(path: Path | None, keys: tuple[str, ...] = ("bibliography",), *,
              front_matter_only: bool = False, quarto: bool = False) -> Inherited | None:
    """The ``bibliography:`` (or another key, nested as ``keys`` say) of one metadata file
    or manuscript's front matter (a path or a list of them), if any."""
    if path is None:
        return None
    try:
        text = read_document(path).text
        if front_matter_only:
            front = front_matter(text)
            text = text[front.body.start:front.body.end] if front is not None else ""
        data = yaml.load(text, Loader=yaml.BaseLoader)
    except (OSError, yaml.YAMLError, RecursionError) as exc:
        log.info("cannot read %s: %s", path, exc)
        return None
    value = data
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    written = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    written = [w for w in written if isinstance(w, str) and w]
    if not written:
        return None
    return Inherited(path, tuple(written), path.parent, quarto,
                     listed=quarto and isinstance(value, list))
