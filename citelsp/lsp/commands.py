"""What the workspace commands need besides the workspace: which links a human may be sent
to, where reports are written, and writing them atomically."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

from citelsp.verdict.checklist import HUMAN_LINK_HOSTS

REPORT_SUFFIX = {"json": "json", "sarif": "sarif", "markdown": "md", "text": "txt",
                 "ars": "json", "ledger": "json"}


def allowed_url(url: object) -> str | None:
    """The URL if a human may be sent there: https on an allowlisted host, no userinfo."""
    if not isinstance(url, str):
        return None
    parts = urlsplit(url)
    if parts.scheme != "https" or parts.hostname not in HUMAN_LINK_HOSTS:
        return None
    if parts.username or parts.password or parts.port not in (None, 443):
        return None
    return url


def write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
