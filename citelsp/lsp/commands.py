"""What the workspace commands need besides the workspace: where reports are written, and
writing them atomically (which links a human may be sent to is ``links.allowed``)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

REPORT_SUFFIX = {"json": "json", "sarif": "sarif", "markdown": "md", "text": "txt",
                 "ars": "json", "ledger": "json"}


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
