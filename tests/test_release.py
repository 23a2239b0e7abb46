"""The release: one version everywhere, a changelog entry for it, and an sdist and a wheel
that install into a fresh virtual environment and run there.

The venv sees the system's site-packages for the dependencies (pygls, httpx, ...), so the test
needs no package index; citelsp itself comes only from the wheel (checked: its files live in
the venv, not in this tree or an editable install).
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
import venv
import zipfile
from pathlib import Path

import citelsp

ROOT = Path(__file__).resolve().parents[1]
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("CITELSP_") and k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return {**env, **extra}


def test_the_version_is_written_once_and_read_everywhere() -> None:
    assert citelsp.__version__ == importlib.metadata.version("citelsp") == VERSION
    shown = subprocess.run([sys.executable, "-m", "citelsp", "--version"], capture_output=True,
                           text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert shown.stdout.strip() == f"citelsp {VERSION}"
    assert f'"{VERSION}"' not in (ROOT / "citelsp" / "__init__.py").read_text(encoding="utf-8")
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert re.search(r"^## (\S+)", changelog, re.M).group(1) == VERSION
    extension = json.loads((ROOT / "editors" / "vscode" / "package.json").read_text("utf-8"))
    assert extension["version"] == VERSION


def test_the_sdist_and_wheel_install_and_run_in_a_fresh_venv(tmp_path: Path) -> None:
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", "fixtures", "tests", "bench", "editors", "build", "dist", "*.egg-info",
        "__pycache__", "node_modules", ".citelsp", ".venv"))
    dist = tmp_path / "dist"
    built = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(source)],
        capture_output=True, text=True, timeout=300, env=clean_env())
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    sdist, = dist.glob(f"citelsp-{VERSION}.tar.gz")
    wheel, = dist.glob(f"citelsp-{VERSION}-py3-none-any.whl")  # built from the sdist

    with tarfile.open(sdist) as archive:
        names = archive.getnames()
    for needed in ("LICENSE", "CHANGELOG.md", "README.md", "examples/paper.md",
                   "examples/refs.bib"):
        assert f"citelsp-{VERSION}/{needed}" in names
    inside = zipfile.ZipFile(wheel).namelist()
    assert "citelsp/schemas/citation_verification_summary.schema.json" in inside
    assert "citelsp/data/chinese_journals.json" in inside
    assert f"citelsp-{VERSION}.dist-info/licenses/LICENSE" in inside

    env_dir = tmp_path / "venv"
    venv.create(env_dir, system_site_packages=True, with_pip=True)
    bin_dir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    installed = subprocess.run(
        [str(bin_dir / "python"), "-m", "pip", "install", "--no-deps", "--no-index", str(wheel)],
        capture_output=True, text=True, timeout=300, env=clean_env())
    assert installed.returncode == 0, installed.stderr

    where = subprocess.run(
        [str(bin_dir / "python"), "-c", "import citelsp; print(citelsp.__file__)"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path, env=clean_env())
    assert Path(where.stdout.strip()).is_relative_to(env_dir), where.stdout + where.stderr

    env = clean_env(CITELSP_CACHE_DIR=str(tmp_path / "cache"), CITELSP_OFFLINE="1")
    version = subprocess.run([str(bin_dir / "citelsp"), "--version"], capture_output=True,
                             text=True, timeout=60, env=env)
    assert version.stdout.strip() == f"citelsp {VERSION}"

    with tarfile.open(sdist) as archive:
        archive.extractall(tmp_path / "unpacked", filter="data")
    example = tmp_path / "unpacked" / f"citelsp-{VERSION}"
    checked = subprocess.run(
        [str(bin_dir / "citelsp"), "check", "examples/paper.md", "--format", "json"],
        capture_output=True, text=True, timeout=120, cwd=example, env=env)
    assert checked.returncode in (0, 1, 3), checked.stderr
    report = json.loads(checked.stdout)
    keys = {s["citation_key"] for s in report["summaries"]}
    assert {"vaswani2017attention", "smith2023hallucinated"} <= keys
    assert any(d["code"] == "NO_LOCATOR" for d in report["diagnostics"])

