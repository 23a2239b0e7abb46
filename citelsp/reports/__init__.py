"""Renderings of a check result: text, JSON, SARIF, Markdown checklist, ARS summaries, ledger."""

from __future__ import annotations

from collections.abc import Callable

from citelsp.reports import json as json_report
from citelsp.reports import ledger, markdown, sarif, text
from citelsp.workspace.snapshot import Snapshot

RENDERERS: dict[str, Callable[[Snapshot], str]] = {
    "text": text.render,
    "json": json_report.render,
    "sarif": sarif.render,
    "markdown": markdown.render,
    "ars": json_report.render_ars,
    "ledger": ledger.render,
}
