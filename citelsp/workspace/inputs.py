"""What a command line names: files, folders searched for manuscripts and bibliographies, and
glob patterns, as the files to open (``citelsp check``, ``citelsp screen``)."""

from __future__ import annotations

import glob
from collections.abc import Sequence
from pathlib import Path

from citelsp.documents.parse import BIBLIOGRAPHY_SUFFIXES, MANUSCRIPT_SUFFIXES


def expand_inputs(values: Sequence[str]) -> tuple[list[Path], list[str], dict[str, list[Path]]]:
    """Files named, found under directories, or matched by glob patterns; the messages for
    what matched nothing; and each directory as written with the files its search found and
    nobody named (a ``package.json`` there is passed over, one named is an error)."""
    suffixes = BIBLIOGRAPHY_SUFFIXES + MANUSCRIPT_SUFFIXES
    found: dict[Path, None] = {}
    errors: list[str] = []
    folders: dict[str, list[Path]] = {}
    named: set[Path] = set()
    for value in values:
        path = Path(value)
        if path.is_dir():
            inside = [p for p in sorted(path.rglob("*")) if p.suffix.lower() in suffixes
                      and p.is_file() and not any(part.startswith(".") or part in SKIPPED_FOLDERS
                                                  for part in p.relative_to(path).parts)]
            found.update(dict.fromkeys(inside))
            folders.setdefault(value, []).extend(inside)
        elif path.exists():
            found[path] = None
            named.add(path)
        elif glob.has_magic(value):
            matched = [Path(p) for p in sorted(glob.glob(value, recursive=True))
                       if Path(p).is_file()]
            if not matched:
                errors.append(f"{value}: no file matches this pattern")
            found.update(dict.fromkeys(matched))
        else:
            errors.append(f"{value}: no such file or directory")
    return list(found), errors, {folder: [p for p in inside if p not in named]
                                 for folder, inside in folders.items()}


SKIPPED_FOLDERS = {"node_modules", "__pycache__", "build", "dist", "venv"}
"""Folders a search passes over: tools' and builds', never a writer's."""
