"""Document URIs and file paths: the one conversion between what an editor names a document
and where it lies on disk."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import unquote, urlparse


def uri_to_path(uri: str) -> Path:
    """The path of a ``file:`` URI (or of a plain path given as a URI)."""
    parsed = urlparse(uri)
    return Path(unquote(parsed.path)) if parsed.scheme else Path(uri)


def path_to_uri(path: Path | str) -> str:
    return Path(path).resolve().as_uri()


def display_path(uri: str) -> str:
    """The path as a person would type it: relative to the working directory when possible."""
    path = uri_to_path(uri)
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)
