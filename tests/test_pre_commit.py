"""The pre-commit hooks (.pre-commit-hooks.yaml) run by pre-commit itself, in a throwaway git
repository of a manuscript, with ``pre-commit try-repo`` as a writer would try them.

pre-commit installs a ``language: python`` hook with pip, which needs the package index; the
fast tests run the same hook definitions as ``language: system`` against this tree (the one
difference, checked below), and the slow test installs the real hook from this repository.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.test_cli import offline_env
from tests.test_neovim import REFS

ROOT = Path(__file__).resolve().parents[1]
HOOKS = ROOT / ".pre-commit-hooks.yaml"

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

PAPER = """\
---
bibliography: refs.bib
---

Residual networks [@he2016deep] changed vision{extra}.
"""



def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"})


def manuscript_repo(folder: Path, extra: str) -> Path:
    folder.mkdir()
    (folder / "paper.md").write_text(PAPER.format(extra=extra), encoding="utf-8")
    (folder / "chapter.qmd").write_text("---\nbibliography: refs.bib\n---\n\nAlso [@he2016deep].\n",
                                        encoding="utf-8")
    (folder / "refs.bib").write_text(REFS, encoding="utf-8")
    (folder / "package.json").write_text('{"private": true}\n', encoding="utf-8")  # not passed
    git(folder, "init", "-q")
    git(folder, "add", "-A")
    return folder


def system_hooks(folder: Path) -> Path:
    """The hooks as ``language: system``, in a git repository of their own."""
    folder.mkdir()
    hooks = yaml.safe_load(HOOKS.read_text(encoding="utf-8"))
    for hook in hooks:
        hook["language"] = "system"
    (folder / ".pre-commit-hooks.yaml").write_text(yaml.safe_dump(hooks), encoding="utf-8")
    git(folder, "init", "-q")
    git(folder, "add", "-A")
    git(folder, "commit", "-qm", "hooks")
    return folder


def citelsp_shim(tmp: Path) -> Path:
    """A folder holding a ``citelsp`` program that runs this tree (with PYTHONPATH set)."""
    shim = tmp / "bin"
    shim.mkdir(exist_ok=True)
    (shim / "citelsp").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m citelsp "$@"\n',
                                  encoding="utf-8")
    (shim / "citelsp").chmod(0o755)
    return shim


def try_repo(repo: Path, hook_repo: Path, hook: str, tmp: Path,
             env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    shim = citelsp_shim(tmp)
    full = {k: v for k, v in os.environ.items() if not k.startswith("CITELSP_")}
    full.update({"PATH": f"{shim}{os.pathsep}{full.get('PATH', '')}", "PYTHONPATH": str(ROOT),
                 "PRE_COMMIT_HOME": str(tmp / "pre-commit"),
                 "CITELSP_CACHE_DIR": str(tmp / "cache"), **(env or {})})
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(hook_repo), hook, "--all-files",
         "--verbose"], cwd=repo, env=full, capture_output=True, text=True, timeout=300)


def test_the_hooks_are_citelsp_check_installed_by_pip() -> None:
    hooks = {h["id"]: h for h in yaml.safe_load(HOOKS.read_text(encoding="utf-8"))}
    assert set(hooks) == {"citelsp", "citelsp-offline"}
    assert {h["language"] for h in hooks.values()} == {"python"}
    assert hooks["citelsp"]["entry"] == "citelsp check --allow-unchecked"
    assert hooks["citelsp-offline"]["entry"] == "citelsp check --offline --allow-unchecked"


@pytest.mark.parametrize("hook", ["citelsp-offline", "citelsp"])
def test_the_hook_blocks_a_dangling_citation_and_passes_once_fixed(tmp_path, hook) -> None:
    hooks = system_hooks(tmp_path / "hooks")
    # No network for either hook: every source on a closed loopback port.
    broken = try_repo(manuscript_repo(tmp_path / "broken", " [@missing2020]"), hooks, hook,
                      tmp_path, offline_env())
    assert broken.returncode == 1, broken.stdout + broken.stderr
    assert "Failed" in broken.stdout
    assert "paper.md:5:" in broken.stdout and "DANGLING_CITATION missing2020" in broken.stdout
    assert "package.json" not in broken.stdout

    fixed = try_repo(manuscript_repo(tmp_path / "fixed", ""), hooks, hook, tmp_path,
                     offline_env())
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "Passed" in fixed.stdout
    # It says what it could not check, and does not block the commit for it.
    assert "could not be checked" in fixed.stdout


@pytest.mark.slow
def test_the_real_hook_installs_from_this_repository(tmp_path) -> None:
    """``language: python``: pre-commit pip-installs this repository (needs the package
    index for the dependencies)."""
    repo = manuscript_repo(tmp_path / "paper", " [@missing2020]")
    done = try_repo(repo, ROOT, "citelsp-offline", tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "DANGLING_CITATION missing2020" in done.stdout
