"""SARIF 2.1.0: one rule per reason code, one result per diagnostic (columns in code points)."""

from __future__ import annotations

import json
import os
from urllib.parse import quote

from citelsp import __version__
from citelsp.documents.model import Severity
from citelsp.reports.rows import Row, rows
from citelsp.verdict.reasons import README_URL, REASONS, doc_url
from citelsp.workspace.snapshot import Snapshot

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {
    Severity.ERROR: "error",
    Severity.WARNING: "warning",
    Severity.INFORMATION: "note",
    Severity.HINT: "note",
}


def artifact_uri(row: Row) -> str:
    """A percent-encoded relative reference for a file under the working directory (code
    scanning reads it from the repository root), else the file's absolute ``file:`` URI."""
    path = row.path.replace("\\", "/")
    if os.path.isabs(row.path) or path == ".." or path.startswith("../"):
        return row.uri
    return quote(path)


def data(snapshot: Snapshot) -> dict:
    found = rows(snapshot)
    codes = sorted({r.code for r in found})
    rules = []
    for code in codes:
        info = REASONS.get(code)
        rule = {
            "id": code,
            "name": code.title().replace("_", ""),
            "shortDescription": {"text": info.summary if info else code},
            "helpUri": doc_url(code),
        }
        if info is not None:
            rule["defaultConfiguration"] = {"level": LEVELS[info.severity]}
        rules.append(rule)
    index = {code: i for i, code in enumerate(codes)}
    results = [
        {
            "ruleId": r.code,
            "ruleIndex": index[r.code],
            "level": LEVELS[r.severity],
            "message": {"text": r.message},
            "locations": [{
                "physicalLocation": {
                    "artifactLocation": {"uri": artifact_uri(r)},
                    "region": {
                        "startLine": r.start[0] + 1,
                        "startColumn": r.start[1] + 1,
                        "endLine": r.end[0] + 1,
                        "endColumn": r.end[1] + 1,
                    },
                }
            }],
            "properties": {"priority": r.priority, **({"citationKey": r.key} if r.key else {})},
        }
        for r in found
    ]
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "citelsp",
                "version": __version__,
                "informationUri": README_URL,
                "rules": rules,
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }


def render(snapshot: Snapshot) -> str:
    return json.dumps(data(snapshot), indent=2, ensure_ascii=False) + "\n"
