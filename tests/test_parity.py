"""``citelsp check`` and the language server answer from one workspace: on the same files
they report the same problems, each at the same place with the same code and priority.

The workspace covers every verdict kind (found, refuted, unresolvable, unreachable, manual),
a human rejection, a stale decision, ref markers with and without anchors, and a LaTeX and a
Markdown manuscript sharing one bibliography.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest

from citelsp.documents.bibtex import parse_bibtex
from citelsp.resolution.identifiers import reference_ids
from citelsp.resolution.identity import identity_of
from tests.lsp_session import lsp_session, open_file, wait_until
from tests.test_check_e2e import run_cli
from tests.test_lsp_verify import BIB, api, workspace  # noqa: F401  (fixtures)

PRIORITY = {1: "P0", 2: "P1", 3: "P2", 4: "P3"}
PAPER = """---
bibliography: refs.bib
---
Chemistry agents [@bran2024] and again [@wrongyear]. <!--ref:bran2024-->
<!--anchor:quote:Chemistry%20agents-->
A fabricated one [@fake] <!--ref:fake--> and an invented one [@invented].
Unreachable [@down], manual [@handbook], hostile [@hostile].
"""
FILES = {"paper.md": "markdown", "paper.tex": "latex", "refs.bib": "bibtex",
         "refs.json": "json"}


@pytest.fixture
def parity_workspace(workspace: Path) -> Path:  # noqa: F811
    """test_lsp_verify's workspace, with ref markers in the manuscript and two decisions."""
    (workspace / "paper.md").write_text(PAPER, encoding="utf-8")
    refs = {r.key: r for r in parse_bibtex("file:///refs.bib", BIB).references}
    invented = refs["invented"]
    decisions = [
        {"citation_key": "invented", "decision": "rejected", "note": "no such paper",
         "identity": identity_of(reference_ids(invented), invented.work),
         "decided_at": "2026-11-30T10:00:00+00:00"},
        {"citation_key": "wrongyear", "decision": "verified", "note": "",
         "identity": "0123456789abcdef", "decided_at": "2026-11-30T10:00:00+00:00"},
    ]
    (workspace / ".citelsp").mkdir()
    (workspace / ".citelsp" / "decisions.json").write_text(
        json.dumps({"version": 1, "decisions": decisions}), encoding="utf-8")
    return workspace


def cli_problems(server, root: Path, cache: Path) -> set[tuple]:
    done = run_cli(server, "check", *FILES, "--format", "json", "--fail-on", "never",
                   cache_dir=cache, cwd=root)
    assert done.returncode == 0, done.stderr
    found = set()
    for d in json.loads(done.stdout)["diagnostics"]:
        r = d["range"]
        found.add((d["path"], r["start"]["line"], r["start"]["character"], r["end"]["line"],
                   r["end"]["character"], d["code"], d["priority"]))
    return found


def server_problems(lsp, uris: dict[str, str]) -> set[tuple]:
    found = set()
    for name, uri in uris.items():
        for d in lsp.diagnostics.get(uri, []):
            r = d.range
            found.add((name, r.start.line, r.start.character, r.end.line, r.end.character,
                       d.code, PRIORITY[int(d.severity)]))
    return found


async def test_the_command_line_and_the_server_report_the_same_problems(
        api, parity_workspace, tmp_path):  # noqa: F811
    root = parity_workspace
    expected = cli_problems(api, root, tmp_path / "cli-cache")
    codes = {p[5] for p in expected}
    assert {"DOI_REFUTED", "METADATA_CONFLICT", "NOT_FOUND_IN_INDEXES", "UNREACHABLE",
            "NO_AUTOMATED_SOURCE", "HUMAN_REJECTED", "NO_LOCATOR",
            "DUPLICATE_WORK"} <= codes, codes
    rejected = {p[0] for p in expected if p[5] == "HUMAN_REJECTED"}
    assert rejected == {"refs.bib", "paper.md"}, "on the entry key and on every citation"

    env = {**api.env(), "CITELSP_CACHE_DIR": str(tmp_path / "lsp-cache")}
    async with lsp_session(root, env) as lsp:
        uris = {name: open_file(lsp, root / name, language)
                for name, language in FILES.items()}
        with contextlib.suppress(TimeoutError):  # then the assertion below shows the drift
            await wait_until(lsp, lambda client: server_problems(client, uris) == expected,
                             timeout=60)
        got = server_problems(lsp, uris)
    assert got == expected, (f"only the server: {sorted(got - expected)}\n"
                             f"only the command line: {sorted(expected - got)}")
