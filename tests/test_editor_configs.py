"""Editor configurations shipped in editors/: Emacs with eglot, driven headless (``emacs
--batch`` loads editors/emacs/citelsp.el, opens a LaTeX manuscript, connects to the server and
receives its diagnostics and a hover), and Helix, which Debian does not package: its
languages.toml is checked as TOML and against the copy in editors/README.md."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from tests.test_neovim import REFS
from tests.test_pre_commit import citelsp_shim

ROOT = Path(__file__).resolve().parents[1]
EDITORS = ROOT / "editors"
EMACS = shutil.which("emacs")

PAPER = """\
\\documentclass{article}
\\begin{document}
Residual networks \\cite{he2016deep} changed vision; not \\cite{missing2020}.
\\bibliography{refs}
\\end{document}
"""

PROBE = """\
(require 'package)
(package-activate-all)
(load (getenv "CITELSP_PROBE_CONFIG"))
(require 'eglot)
(require 'json)
(require 'flymake)
(defvar probe-diagnostics nil)
(advice-add 'eglot-handle-notification :before
            (lambda (_server method &rest params)
              (when (eq method 'textDocument/publishDiagnostics)
                (push params probe-diagnostics))))
(defun probe-codes ()
  (let (codes)
    (dolist (params probe-diagnostics)
      (seq-doseq (d (plist-get params :diagnostics))
        (push (plist-get d :code) codes)))
    codes))
(find-file (getenv "CITELSP_PROBE_FILE"))
;; eglot-ensure (in the config's hooks) waits for a command loop that batch mode lacks.
(apply #'eglot (eglot--guess-contact))
(with-timeout (60 nil)
  (while (not (member "DANGLING_CITATION" (probe-codes)))
    (accept-process-output nil 0.1)))
(with-timeout (20 nil)
  (while (not (flymake-diagnostics))
    (flymake-start)
    (accept-process-output nil 0.2)))
(goto-char (point-min))
(search-forward "he2016deep")
(let* ((server (eglot--current-server-or-lose))
       (hover (jsonrpc-request server :textDocument/hover (eglot--TextDocumentPositionParams)))
       (seen (list :mode (symbol-name major-mode)
                   :hooked (and (memq #'eglot-ensure latex-mode-hook) t)
                   :server (plist-get (eglot--server-info server) :name)
                   :codes (vconcat (probe-codes))
                   :flymake (vconcat (mapcar #'flymake-diagnostic-text (flymake-diagnostics)))
                   :hover (plist-get hover :contents))))
  (with-temp-file (getenv "CITELSP_PROBE_OUT")
    (insert (json-encode seen))))
(kill-emacs 0)
"""


def eglot_available() -> bool:
    if EMACS is None:
        return False
    found = subprocess.run(
        [EMACS, "--batch", "--eval", "(progn (require 'package) (package-activate-all) "
                                     "(princ (if (require 'eglot nil t) \"yes\" \"no\")))"],
        capture_output=True, text=True, timeout=60)
    return found.stdout.strip().endswith("yes")


@pytest.mark.skipif(not eglot_available(),
                    reason="emacs with eglot is not installed (apt install emacs-nox elpa-eglot)")
def test_eglot_connects_and_shows_diagnostics_and_hover(tmp_path: Path) -> None:
    project = tmp_path / "paper"
    project.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    (project / "paper.tex").write_text(PAPER, encoding="utf-8")
    (project / "refs.bib").write_text(REFS, encoding="utf-8")
    (tmp_path / "probe.el").write_text(PROBE, encoding="utf-8")
    output = tmp_path / "probe.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CITELSP_")}
    env.update({
        "PATH": f"{citelsp_shim(tmp_path)}{os.pathsep}{env.get('PATH', '')}",
        "PYTHONPATH": str(ROOT), "HOME": str(tmp_path / "home"),
        "CITELSP_OFFLINE": "1", "CITELSP_CACHE_DIR": str(tmp_path / "cache"),
        "CITELSP_PROBE_CONFIG": str(EDITORS / "emacs" / "citelsp.el"),
        "CITELSP_PROBE_FILE": str(project / "paper.tex"), "CITELSP_PROBE_OUT": str(output),
    })
    done = subprocess.run([EMACS, "--batch", "-l", str(tmp_path / "probe.el")], cwd=project,
                          env=env, capture_output=True, text=True, timeout=180)
    assert output.exists(), done.stderr[-3000:]
    seen = json.loads(output.read_text(encoding="utf-8"))
    assert seen["mode"] == "latex-mode" and seen["hooked"] is True, done.stderr[-3000:]
    assert seen["server"] == "citelsp"
    assert "DANGLING_CITATION" in seen["codes"]
    assert any("'missing2020' is not in any bibliography" in text for text in seen["flymake"])
    # Eglot without markdown-mode asks for plain text: the card, without Markdown.
    assert seen["hover"]["kind"] == "plaintext"
    assert "Deep Residual Learning for Image Recognition." in seen["hover"]["value"]
    assert "|---" not in seen["hover"]["value"]


def test_helix_languages_toml_parses_and_names_citelsp_for_each_language() -> None:
    text = (EDITORS / "helix" / "languages.toml").read_text(encoding="utf-8")
    config = tomllib.loads(text)
    assert config["language-server"]["citelsp"]["command"] == "citelsp"
    languages = {entry["name"]: entry["language-servers"] for entry in config["language"]}
    assert set(languages) == {"markdown", "latex", "bibtex"}
    assert all("citelsp" in servers for servers in languages.values())
    # The README shows the same configuration.
    readme = (EDITORS / "README.md").read_text(encoding="utf-8")
    shown = re.search(r"## Helix.*?```toml\n(.*?)```", readme, re.S).group(1)
    assert tomllib.loads(shown) == config
