"""SARIF 2.1.0: one rule per reason code, one result per diagnostic (columns in code points).

Messages are plain text (§3.11.3), which SARIF still reads two ways: ``{0}`` is a placeholder
for an argument (§3.11.5) and ``[text](uri)`` an embedded link (§3.11.6) that viewers render as
one. Titles, keys and venues from documents and services go into the messages, so
``plain_text`` makes them say only what they say."""

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


def plain_text(text: str) -> str:
    """``text`` as a SARIF plain-text message that a viewer shows as it is: braces doubled, as
    §3.11.5 requires of every literal brace, and ``](`` written ``] (``, so that no
    ``[text](uri)`` is left for §3.11.6 (or GitHub) to read as a link whose text hides where it
    goes. (§3.11.6 escapes brackets with a backslash only inside link text; elsewhere a
    backslash is shown, and naive viewers match ``[…](…)`` across it.)"""
    return text.replace("{", "{{").replace("}", "}}").replace("](", "] (")


def data(snapshot: Snapshot) -> dict:
    found = rows(snapshot)
    codes = sorted({r.code for r in found})
    rules = []
    for code in codes:
        info = REASONS.get(code)
        rule = {
            "id": code,
            "name": code.title().replace("_", ""),
            "shortDescription": {"text": plain_text(info.summary if info else code)},
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
            "message": {"text": plain_text(r.message)},
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
