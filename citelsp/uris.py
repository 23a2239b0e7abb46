"""Document URIs and file paths: the one conversion between what an editor names a document
and where it lies on disk; and service URLs as messages may show them."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import unquote, urlparse, urlsplit, urlunsplit


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


def shown_url(url: str) -> str:
    """A service URL (PostgreSQL, Redis) fit for a message or a log: its password replaced by
    ``***``, its query (which may carry ``password=``) and fragment dropped."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - a port that is no number raises here, not in a message
    except ValueError:
        return url.split("://", 1)[0] + "://…"
    netloc = parts.netloc
    if parts.password is not None:
        netloc = f"{parts.username or ''}:***@{netloc.rpartition('@')[2]}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
