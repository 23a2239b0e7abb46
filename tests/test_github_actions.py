"""The GitHub Actions recipe (editors/github-actions/citelsp.yml): its citelsp steps run as
the runner would run them (bash, in a checkout), the SARIF they write is valid SARIF 2.1.0 as
code scanning reads it, and the upload step uploads that file."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import jsonschema
import yaml

from tests.test_cli import offline_env
from tests.test_pre_commit import citelsp_shim

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / "editors" / "github-actions" / "citelsp.yml"
SARIF_SCHEMA = ROOT / "schemas" / "sarif-2.1.0-rtm.5.json"


def steps() -> list[dict]:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]["citelsp"]["steps"]


def run_step(step: dict, repo: Path, tmp: Path) -> subprocess.CompletedProcess[str]:
    """A `run:` step in bash -e, `citelsp` being this tree; `${{ }}` values left out."""
    shim = citelsp_shim(tmp)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CITELSP_")}
    env.update({k: str(v) for k, v in (step.get("env") or {}).items() if "${{" not in str(v)})
    env.update({"PATH": f"{shim}{os.pathsep}{env.get('PATH', '')}", "PYTHONPATH": str(ROOT),
                "CITELSP_CACHE_DIR": str(tmp / "cache"), **offline_env()})
    return subprocess.run(["bash", "-e", "-c", step["run"]], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=300)


def test_the_workflow_uploads_the_sarif_the_check_writes() -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert workflow["permissions"]["security-events"] == "write"
    check = next(s for s in steps() if "--format sarif" in s.get("run", ""))
    assert check["run"].endswith("> citelsp.sarif") and "--fail-on never" in check["run"]
    upload = next(s for s in steps() if s.get("uses", "").startswith(
        "github/codeql-action/upload-sarif@"))
    assert upload["with"]["sarif_file"] == "citelsp.sarif"
    assert upload["if"] == "always()"
    assert steps().index(check) < steps().index(upload)


def test_the_workflow_steps_write_sarif_code_scanning_accepts(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "examples", repo / "paper")
    (repo / "notes on method.md").write_text(
        "---\nbibliography: paper/refs.bib\n---\n\nAs shown [@missing2020].\n", encoding="utf-8")
    ran = [s for s in steps() if s.get("run", "").startswith("citelsp ")]
    assert len(ran) == 2

    check = run_step(ran[0], repo, tmp_path)
    assert check.returncode == 0, check.stderr
    sarif = json.loads((repo / "citelsp.sarif").read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))).validate(
        sarif)

    # What code scanning adds to the schema: one run of a named tool, a rule for every
    # ruleId, at most 25,000 results, and locations relative to the repository root.
    run, = sarif["runs"]
    assert run["tool"]["driver"]["name"] == "citelsp"
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert len(rules) == len(set(rules))
    results = run["results"]
    assert 0 < len(results) <= 25_000
    uris = set()
    for result in results:
        assert result["ruleId"] in rules and result["message"]["text"]
        location = result["locations"][0]["physicalLocation"]
        uri = location["artifactLocation"]["uri"]
        parts = urlsplit(uri)
        assert not parts.scheme and not uri.startswith("/") and " " not in uri, uri
        assert location["region"]["startLine"] >= 1
        uris.add(uri)
    assert {"paper/paper.md", "notes%20on%20method.md"} <= uris
    assert any(r["ruleId"] == "DANGLING_CITATION" and r["level"] == "error" for r in results)

    gate = run_step(ran[1], repo, tmp_path)
    assert gate.returncode == 1, gate.stderr  # the dangling citation is P0
    (repo / "notes on method.md").unlink()
    gate = run_step(ran[1], repo, tmp_path)
    assert gate.returncode == 0, gate.stdout + gate.stderr  # nothing checked offline: no fail
