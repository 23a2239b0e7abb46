"""Problems placed in files → rows with paths and 0-based line/column ranges."""

from __future__ import annotations

import os
from dataclasses import dataclass

from citelsp.check import CheckResult
from citelsp.documents.model import Severity
from citelsp.documents.project import uri_to_path
from citelsp.spans import LineIndex
from citelsp.verdict.reasons import severity_priority

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


def _text(result: CheckResult, uri: str) -> str:
    doc = result.documents.get(uri)
    if doc is not None:
        return doc.text
    path = uri_to_path(uri)
    return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""


def rows(result: CheckResult) -> list[Row]:
    files: dict[str, tuple[str, LineIndex]] = {}
    out = []
    for uri, problem in result.problems:
        if uri not in files:  # one read, one line index and one display path per file
            files[uri] = (display_path(uri), LineIndex(_text(result, uri)))
        path, index = files[uri]
        out.append(Row(
            path=path,
            uri=uri,
            start=index.position(problem.span.start),
            end=index.position(problem.span.end),
            severity=problem.severity,
            code=problem.code,
            message=problem.message,
            priority=problem.priority or severity_priority(problem.severity),
            key=problem.key,
        ))
    out.sort(key=lambda r: (r.path, r.start, r.code))
    return out
