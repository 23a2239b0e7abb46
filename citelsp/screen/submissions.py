"""Submissions in a folder, each read as ``citelsp check`` reads it.

A submission is a subfolder (its manuscripts with their bibliographies) or a manuscript
directly in the folder. Each is opened as its own workspace, so one submission's
bibliography never answers for another's citations, and the references it wants are those a
check of it alone verifies.
"""

from __future__ import annotations

from pathlib import Path

from citelsp.config import Settings
from citelsp.documents.model import Reference
from citelsp.documents.parse import MANUSCRIPT_SUFFIXES
from citelsp.workspace import Workspace, folders_without_work
from citelsp.workspace.inputs import SKIPPED_FOLDERS, expand_inputs


def submissions_in(folder: Path) -> list[Path]:
    """Each subfolder, and each manuscript directly in ``folder``, sorted."""
    found = []
    for path in sorted(folder.iterdir()):
        if path.name.startswith(".") or path.name in SKIPPED_FOLDERS:
            continue
        if path.is_dir() or path.is_file() and path.suffix.lower() in MANUSCRIPT_SUFFIXES:
            found.append(path.resolve())
    return found


def open_submission(path: Path, settings: Settings) -> tuple[Workspace | None, list[str]]:
    """The submission as a workspace (None when it holds nothing to check), and a message
    for every file that could not be used."""
    paths, errors, folders = expand_inputs([str(path)])
    if not paths:
        return None, errors + folders_without_work(folders)
    workspace, more = Workspace.for_paths(paths, settings, folders=folders)
    return workspace, errors + more


def wanted(workspace: Workspace) -> dict[str, Reference]:
    """Each distinct reference the submission's check verifies, by identity, with the first
    entry of that identity (the one a check resolves)."""
    found: dict[str, Reference] = {}
    for ref in workspace.wanted():
        found.setdefault(workspace.verifier.identity(ref), ref)
    return found
