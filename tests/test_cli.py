"""The command line behaves like a good linter: help that explains, inputs found or refused
with a clear message, coverage stated, exit codes that mean something, filters and colour.

Runs the real ``citelsp`` in a subprocess; every base URL points at the loopback API server
(DESIGN.md §11), and the no-network cases at a closed loopback port.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.apiserver import ApiServer
from tests.test_check_e2e import ROOT, run_cli, start_server

FAKE = """@article{fake,
  title = {A study of things that never were},
  author = {Nobody, Ann},
  year = {2020},
  journal = {Journal of Nothing},
  doi = {10.1371/notarealdoi},
}
"""
PAPER = """---
bibliography: refs.bib
---
Here [@fake] and [@fake] again, and [@fakee] with a typo.
"""


@pytest.fixture(scope="module")
def api() -> ApiServer:
    server = start_server()
    yield server
    server.stop()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def offline_env() -> dict[str, str]:
    """Every source on a loopback port nothing listens on: the network is 'down'."""
    base = f"http://127.0.0.1:{closed_port()}"
    names = ("CROSSREF", "OPENALEX", "SEMANTIC_SCHOLAR", "ARXIV", "DOI_REGISTRY", "HANDLE",
             "DATACITE", "EUTILS")
    return {f"CITELSP_{n}_BASE_URL": f"{base}/{n.lower()}" for n in names}


def citelsp(*args: str, cwd: Path, env: dict[str, str] | None = None,
            stdin: int | None = subprocess.DEVNULL) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("CITELSP_")}
    full.update({"PYTHONPATH": str(ROOT), "CITELSP_CACHE_DIR": str(cwd / ".cache")})
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "citelsp", *args], cwd=cwd, env=full,
                          stdin=stdin, capture_output=True, text=True, timeout=120)


def write(folder: Path, **files: str) -> Path:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder


def test_help_names_the_formats_exit_codes_and_examples(tmp_path):
    done = citelsp("check", "--help", cwd=tmp_path)
    assert done.returncode == 0
    for text in ("PATH", "sarif", "markdown", "exit status:", "3  no reference could be",
                 "examples:", "--ignore", "--color", "--quiet", "--locations"):
        assert text in done.stdout, text
    decide = citelsp("decide", "--help", cwd=tmp_path).stdout
    assert "--clear" in decide and "permanent" in decide


def test_a_bare_citelsp_on_a_terminal_prints_help_instead_of_waiting(tmp_path):
    import pty

    leader, follower = pty.openpty()
    try:
        done = citelsp(cwd=tmp_path, stdin=follower)
    finally:
        os.close(leader)
        os.close(follower)
    assert done.returncode == 0
    assert "citelsp check PATH" in done.stdout


def test_offline_says_so_fast_and_exits_three(tmp_path):
    write(tmp_path, **{"refs.bib": FAKE, "paper.md": PAPER.replace(" [@fakee]", "")})
    done = citelsp("check", "paper.md", cwd=tmp_path, env=offline_env())
    assert done.returncode == 3, done.stderr
    assert "the network is down" in done.stderr
    assert "1 of 1 reference could not be checked (offline)" in done.stdout
    assert "P2 UNREACHABLE fake" in done.stdout and "offline, no cached answer" in done.stdout
    never = citelsp("check", "paper.md", "--fail-on", "never", cwd=tmp_path, env=offline_env())
    assert never.returncode == 0
    hook = citelsp("check", "paper.md", "--allow-unchecked", cwd=tmp_path, env=offline_env())
    assert hook.returncode == 0, hook.stderr
    assert "1 of 1 reference could not be checked (offline)" in hook.stdout


KNUTH = "@book{knuth84, title = {The TeXbook}, author = {Knuth, Donald E.}, year = 1984}\n"


def test_a_thesis_main_file_is_checked_with_its_chapters_and_a_vignette_as_latex(tmp_path):
    """``citelsp check thesis.tex`` checks the citations of the chapters it inputs (it said
    "0 references" before); a Sweave/knitr ``.Rnw`` is LaTeX, also in a folder search."""
    write(tmp_path, **{
        "thesis.tex": "\\begin{document}\n\\include{chapters/one}\n"
                      "\\bibliography{refs}\n\\end{document}\n",
        "chapters/one.tex": "As \\cite{knuth84} and \\cite{nowhere}.\n", "refs.bib": KNUTH,
        "vignettes/intro.Rnw": "<<setup>>=\nx %in% y\n@\nSee \\citep{knuth84}.\n"
                               "\\bibliography{../refs}\n"})
    done = citelsp("check", "thesis.tex", "--offline", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "chapters/one.tex:1:29: P0 DANGLING_CITATION nowhere" in done.stdout
    assert "[cited at chapters/one.tex:1:10]" in done.stdout
    assert "1 reference: 0 verified" in done.stdout
    folder = citelsp("check", "vignettes", "--offline", "--fail-on", "never", cwd=tmp_path)
    assert folder.returncode == 0, folder.stderr
    assert "[cited at vignettes/intro.Rnw:4:12]" in folder.stdout


def test_an_offline_check_never_loads_the_http_stack(tmp_path):
    """httpx is loaded at the first request (``resolution.http``): an offline check sends
    none, so it does not pay for the import."""
    write(tmp_path, **{"refs.bib": FAKE})
    probe = ("import sys; from citelsp import cli; "
             "code = cli.main(['check', '--offline', '--quiet', 'refs.bib']); "
             "print(code, 'httpx._client' in sys.modules, file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)
    assert done.stderr.split()[-2:] == ["3", "False"], done.stderr
    assert "P2 UNREACHABLE fake" in done.stdout


def test_one_line_per_item_at_the_entry_with_its_citations(api, tmp_path):
    write(tmp_path, **{"refs.bib": FAKE, "paper.md": PAPER})
    done = run_cli(api, "check", "paper.md", cache_dir=tmp_path / "c", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    refuted = [line for line in lines if " DOI_REFUTED " in line]
    assert len(refuted) == 1 and refuted[0].startswith("refs.bib:6:")
    assert "[cited at paper.md:4:8, paper.md:4:20]" in refuted[0]
    assert lines[-1].startswith("1 reference: 0 verified, 1 refuted, 0 unresolvable; "
                                "findings: ")
    every = run_cli(api, "check", "paper.md", "--locations", "all",
                    cache_dir=tmp_path / "c", cwd=tmp_path)
    assert sum(" DOI_REFUTED " in line for line in every.stdout.splitlines()) == 3


def test_inputs_directories_globs_and_bad_files(api, tmp_path):
    write(tmp_path, **{"paper/refs.bib": FAKE, "paper/paper.md": PAPER,
                       "chapters/one.md": "No citations.\n", "empty.bib": "",
                       "binary.bib": "", "notes.bib": "just some words\n"})
    (tmp_path / "binary.bib").write_bytes(b"\x00\x01\x02@article")
    done = run_cli(api, "check", "paper/", "chapters/*.md", "--fail-on", "never",
                   cache_dir=tmp_path / "c", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "DOI_REFUTED" in done.stdout and "paper/refs.bib" in done.stdout
    bad = run_cli(api, "check", "paper/paper.md", "empty.bib", "binary.bib", "notes.bib",
                  "missing.md", "nothing/*.tex", cache_dir=tmp_path / "c", cwd=tmp_path)
    assert bad.returncode == 2
    for message in ("empty.bib: empty file", "binary.bib: a binary file",
                    "notes.bib: no BibTeX entries found", "missing.md: no such file",
                    "nothing/*.tex: no file matches"):
        assert message in bad.stderr, message
    assert "DOI_REFUTED" in bad.stdout, "the other inputs are still checked"


def test_a_folder_search_passes_over_files_that_are_not_ours(api, tmp_path):
    """``citelsp check .`` in a paper's repository: its ``package.json``, a data file, an
    empty note and a binary file with a ``.bib`` name are not inputs the writer gave, so they
    are passed over in silence; named, each is still an error."""
    write(tmp_path, **{"repo/refs.bib": FAKE, "repo/paper.md": PAPER,
                       "repo/package.json": '{"name": "paper", "version": "1.0.0"}\n',
                       "repo/data/points.json": "[1, 2, 3]\n", "repo/notes.md": "",
                       "repo/figure.bib": ""})
    (tmp_path / "repo/figure.bib").write_bytes(b"\x00\x01@article")
    done = run_cli(api, "check", "repo", cache_dir=tmp_path / "c", cwd=tmp_path)
    assert done.returncode == 1, done.stderr  # the fabricated DOI
    assert "DOI_REFUTED" in done.stdout
    assert "package.json" not in done.stderr and "points.json" not in done.stderr
    assert "notes.md" not in done.stderr and "figure.bib" not in done.stderr
    named = run_cli(api, "check", "repo", "repo/package.json", cache_dir=tmp_path / "c",
                    cwd=tmp_path)
    assert named.returncode == 2
    assert "repo/package.json: not a manuscript" in named.stderr
    # a file that cannot be read is an error even where a search found it
    with open(tmp_path / "repo/huge.bib", "wb") as huge:
        huge.truncate(33 * 1024 * 1024)
    unread = run_cli(api, "check", "repo", cache_dir=tmp_path / "c", cwd=tmp_path)
    assert unread.returncode == 2
    assert "repo/huge.bib: cannot read (larger than 32 MiB)" in unread.stderr
    (tmp_path / "repo/huge.bib").unlink()
    # a folder that holds none of ours is told as an empty one is; the rest is still checked
    both = run_cli(api, "check", "repo/data", "repo", cache_dir=tmp_path / "c", cwd=tmp_path)
    assert both.returncode == 2
    assert both.stderr.splitlines()[0] == \
        "citelsp: repo/data: no manuscript or bibliography in this directory"
    assert "DOI_REFUTED" in both.stdout


def test_a_csl_yaml_bibliography_file_is_checked(api, tmp_path):
    """pandoc's ``bibliography: refs.yaml``: its items are read and looked up like any
    others, findings at the item; a configuration YAML beside it is not an input."""
    write(tmp_path, **{
        "paper/refs.yaml": "---\nreferences:\n- id: fake\n  type: article-journal\n"
                           "  title: A study of things that never were\n"
                           "  DOI: 10.1371/notarealdoi\n- id: uncited\n  type: book\n"
                           "  title: Never cited\n---\n",
        "paper/paper.md": PAPER.replace("refs.bib", "refs.yaml"),
        "paper/mkdocs.yml": "site_name: paper\n"})
    done = run_cli(api, "check", "paper", cache_dir=tmp_path / "c", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "paper/refs.yaml:6:8: P0 DOI_REFUTED fake:" in done.stdout, done.stdout  # on the DOI
    assert "DANGLING_CITATION fakee" in done.stdout and "mkdocs" not in done.stderr
    assert "paper/refs.yaml:7:7: P3 ORPHAN_REFERENCE uncited:" in done.stdout, done.stdout


def test_glossaries_and_macro_files_in_a_project_are_left_alone(api, tmp_path):
    """A thesis folder holds a bib2gls glossary and a file of @string abbreviations beside
    its bibliography: both are valid BibTeX without works, told and skipped, not errors."""
    write(tmp_path, **{
        "thesis/refs.bib": FAKE, "thesis/paper.md": PAPER,
        "thesis/glossary.bib": "@entry{duck, name = {duck}, description = {a bird}}\n"
                               "@symbol{pi, name = {\\ensuremath{\\pi}}, description = {pi}}\n",
        "thesis/abbrev.bib": "@string{ieee = {IEEE}}\n"})
    done = run_cli(api, "check", "thesis/", "--fail-on", "P0",
                   cache_dir=tmp_path / "c", cwd=tmp_path)
    assert done.returncode == 1, done.stderr  # the fabricated DOI, not a usage error
    assert "DOI_REFUTED" in done.stdout
    assert "thesis/glossary.bib: only @entry, @symbol entries (glossary or tool data), no " \
        "works: left alone" in done.stderr
    assert "thesis/abbrev.bib: only @string macros, no works: left alone" in done.stderr
    alone = run_cli(api, "check", "thesis/glossary.bib", "-q", cache_dir=tmp_path / "c",
                    cwd=tmp_path)
    assert (alone.returncode, alone.stderr) == (0, "")


def test_a_manuscript_without_a_bibliography_is_told_so(api, tmp_path):
    write(tmp_path, **{"paper.md": "See [@fake].\n", "refs.bib": FAKE,
                       "elsewhere.md": "---\nbibliography: gone.bib\n---\n[@fake]\n"})
    done = run_cli(api, "check", "paper.md", cache_dir=tmp_path / "c", cwd=tmp_path)
    assert done.returncode == 2
    assert "no bibliography found" in done.stderr and "--bib" in done.stderr
    assert "DANGLING_CITATION" in done.stdout, "refs.bib beside it is not used unasked"
    given = run_cli(api, "check", "paper.md", "--bib", "refs.bib",
                    cache_dir=tmp_path / "c", cwd=tmp_path)
    assert "DOI_REFUTED" in given.stdout
    gone = run_cli(api, "check", "elsewhere.md", cache_dir=tmp_path / "c", cwd=tmp_path)
    assert "gone.bib cannot be read" in gone.stderr


def test_ignore_rules_and_comments(api, tmp_path):
    bib = FAKE + "@book{orphan, title = {Never cited}}\n"
    write(tmp_path, **{"refs.bib": bib, "paper.md": PAPER})
    base = run_cli(api, "check", "paper.md", "refs.bib", "--fail-on", "never",
                   cache_dir=tmp_path / "c", cwd=tmp_path).stdout
    assert "ORPHAN_REFERENCE" in base and "DANGLING_CITATION" in base
    ignored = run_cli(api, "check", "paper.md", "refs.bib", "--ignore",
                      "ORPHAN_REFERENCE,dangling_citation", "--fail-on", "never",
                      cache_dir=tmp_path / "c", cwd=tmp_path).stdout
    assert "ORPHAN_REFERENCE" not in ignored and "DANGLING_CITATION" not in ignored
    write(tmp_path, **{"refs.bib": "% citelsp: ignore ORPHAN_REFERENCE\n" + bib.replace(
        "@book", "@book"), "paper.md": PAPER.replace(
        "[@fakee] with a typo.", "[@fakee] with a typo. <!-- citelsp: ignore -->")})
    commented = run_cli(api, "check", "paper.md", "refs.bib", "--fail-on", "never",
                        cache_dir=tmp_path / "c", cwd=tmp_path).stdout
    assert "DANGLING_CITATION" not in commented
    assert "ORPHAN_REFERENCE fake" not in commented, "the comment covers the entry below it"
    assert "ORPHAN_REFERENCE orphan" in commented, "but not the next one"


def test_colour_on_request_never_with_no_color(api, tmp_path):
    write(tmp_path, **{"refs.bib": FAKE})
    always = run_cli(api, "check", "refs.bib", "--color", "always",
                     cache_dir=tmp_path / "c", cwd=tmp_path).stdout
    assert "\x1b[1;31mP0 DOI_REFUTED\x1b[0m" in always
    auto = run_cli(api, "check", "refs.bib", cache_dir=tmp_path / "c", cwd=tmp_path,
                   env={"NO_COLOR": "1"}).stdout
    assert "\x1b[" not in auto


def test_quiet_prints_the_report_only(api, tmp_path):
    write(tmp_path, **{"refs.bib": FAKE})
    done = run_cli(api, "check", "refs.bib", "--format", "json", "--quiet",
                   cache_dir=tmp_path / "c", cwd=tmp_path)
    assert done.stderr == ""
    json.loads(done.stdout)
    loud = run_cli(api, "check", "refs.bib", "--format", "json",
                   cache_dir=tmp_path / "c", cwd=tmp_path)
    assert "1 reference: 0 verified, 1 refuted" in loud.stderr


def test_keys_and_fields_cannot_drive_the_terminal(api, tmp_path):
    write(tmp_path, **{"refs.bib": "@article{evil\x1b[2J,\n  title = {Bell\x07 and NUL},\n}\n"})
    done = run_cli(api, "check", "refs.bib", "--fail-on", "never",
                   cache_dir=tmp_path / "c", cwd=tmp_path)
    assert "\x1b[2J" not in done.stdout and "\x07" not in done.stdout
    assert "\\x1b[2J" in done.stdout


def test_a_decision_can_be_cleared(tmp_path):
    write(tmp_path, **{"refs.bib": FAKE})
    assert citelsp("decide", "fake", "--rejected", "--note", "made up", cwd=tmp_path
                   ).returncode == 0
    again = citelsp("decide", "fake", "--verified", cwd=tmp_path)
    assert again.returncode == 1 and "permanent" in again.stderr
    cleared = citelsp("decide", "fake", "--clear", cwd=tmp_path)
    assert cleared.returncode == 0 and "cleared: 1 decision for fake" in cleared.stdout
    assert citelsp("decide", "fake", "--verified", cwd=tmp_path).returncode == 0
