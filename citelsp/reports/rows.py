"""Problems placed in files → rows with paths and 0-based line/column ranges."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from citelsp.check import CheckResult
from citelsp.documents.model import Severity
from citelsp.documents.project import uri_to_path
from citelsp.spans import LineIndex

SEVERITY_PRIORITY = {
    Severity.ERROR: "P0",
    Severity.WARNING: "P1",
    Severity.INFORMATION: "P2",
    Severity.HINT: "P3",
}
SEVERITY_NAME = {
    Severity.ERROR: "error",
    Severity.WARNING: "warning",
    Severity.INFORMATION: "information",
    Severity.HINT: "hint",
}


@dataclass(frozen=True)
class Row:
    path: str
    uri: str
    start: tuple[int, int]
    end: tuple[int, int]
    severity: Severity
    code: str
    message: str
    priority: str
    """The checklist priority, or the one a local problem's severity counts as."""
    key: str | None


def display_path(uri: str) -> str:
    path = uri_to_path(uri)
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)


def rows(result: CheckResult) -> list[Row]:
    indexes: dict[str, LineIndex] = {}
    out = []
    for uri, problem in result.problems:
        doc = result.documents.get(uri)
        if doc is None:
            text = Path(uri_to_path(uri)).read_text(encoding="utf-8", errors="replace") \
                if uri_to_path(uri).exists() else ""
        else:
            text = doc.text
        index = indexes.get(uri) or indexes.setdefault(uri, LineIndex(text))
        out.append(Row(
            path=display_path(uri),
            uri=uri,
            start=index.position(problem.span.start),
            end=index.position(problem.span.end),
            severity=problem.severity,
            code=problem.code,
            message=problem.message,
            priority=problem.priority or SEVERITY_PRIORITY[problem.severity],
            key=problem.key,
        ))
    out.sort(key=lambda r: (r.path, r.start, r.code))
    return out
