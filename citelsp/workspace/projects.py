"""Quarto and bookdown projects: the bibliographies a Markdown manuscript inherits.

A Quarto book or website names its bibliography once, in the project's ``_quarto.yml`` or in a
folder's ``_metadata.yml``, and no chapter repeats it; without reading them every citation
of a chapter checked on its own would dangle. A file belongs to the project of the nearest
``_quarto.yml`` above it; the nearest file between it and the project root that names a
``bibliography`` gives it (Quarto merges them, the nearest winning), its paths relative to
that file's folder. A bookdown book (``_bookdown.yml``) names it in the front matter of its
``index.Rmd``, which every chapter shares.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import yaml

from citelsp.documents.manuscript import front_matter

log = logging.getLogger(__name__)

PROJECT_FILES = ("_quarto.yml", "_quarto.yaml")
FOLDER_FILES = ("_metadata.yml", "_metadata.yaml")
BOOKDOWN_FILES = ("_bookdown.yml", "_bookdown.yaml")
BOOKDOWN_INDEXES = ("index.Rmd", "index.rmd")


@dataclass(frozen=True)
class Inherited:
    """Bibliographies named by a project or folder metadata file."""

    source: Path
    """The ``_quarto.yml`` or ``_metadata.yml`` that names them."""
    written: tuple[str, ...]
    """The paths as written there, relative to its folder."""


class Projects:
    """What each folder inherits, read once until the files on disk may have changed."""

    def __init__(self) -> None:
        self._folders: dict[Path, Inherited | None] = {}

    def clear(self) -> None:
        self._folders.clear()

    def bibliographies(self, manuscript: Path) -> Inherited | None:
        """What the project around ``manuscript`` names for it, if it is in one."""
        folder = manuscript.parent
        if folder not in self._folders:
            self._folders[folder] = _inherited(folder)
        return self._folders[folder]


def _inherited(folder: Path) -> Inherited | None:
    nearest: Inherited | None = None
    for here in (folder, *folder.parents):
        project = _first_file(here, PROJECT_FILES)
        if nearest is None:  # a folder's metadata is merged after its project's
            nearest = _named_in(_first_file(here, FOLDER_FILES)) or _named_in(project)
        if project is not None:
            return nearest
        if nearest is None and _first_file(here, BOOKDOWN_FILES) is not None:
            return _named_in(_first_file(here, BOOKDOWN_INDEXES), front_matter_only=True)
    return None  # not in a project: folder metadata does not apply


def _first_file(folder: Path, names: tuple[str, ...]) -> Path | None:
    for name in names:
        path = folder / name
        if path.is_file():
            return path
    return None


def _named_in(path: Path | None, *, front_matter_only: bool = False) -> Inherited | None:
    """The ``bibliography:`` of one metadata file or manuscript's front matter (a path or a
    list of them), if any."""
    if path is None:
        return None
    try:
        text = path.read_text(encoding="utf-8")
        if front_matter_only:
            front = front_matter(text)
            text = text[front.body.start:front.body.end] if front is not None else ""
        data = yaml.load(text, Loader=yaml.BaseLoader)
    except (OSError, UnicodeDecodeError, yaml.YAMLError, RecursionError) as exc:
        log.info("cannot read %s: %s", path, exc)
        return None
    value = data.get("bibliography") if isinstance(data, dict) else None
    written = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    written = [w for w in written if isinstance(w, str) and w]
    return Inherited(path, tuple(written)) if written else None
