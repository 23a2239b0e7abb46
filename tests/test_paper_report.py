"""The eighteen-reference paper of ``tests/lsp_fixtures/eighteen`` on the command line,
offline: one finding per reference and place, human decisions in the counts, and words that
neither repeat nor contradict each other."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PAPER = Path(__file__).parent / "lsp_fixtures" / "eighteen"
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def paper(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(PAPER, root)
    return root


def citelsp(paper: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CITELSP_")}
    env.update(CITELSP_CACHE_DIR=str(paper.parent / "cache"), PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "citelsp", *args], cwd=paper, env=env,
                          capture_output=True, text=True, timeout=120)


def check(paper: Path, *args: str, paths: tuple[str, ...] = ("paper.md",)) -> list[str]:
    done = citelsp(paper, "check", *paths, "--offline", "--fail-on", "never", *args)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_a_rejected_reference_shows_the_rejection_alone_and_decisions_are_counted(paper):
    assert citelsp(paper, "decide", "invented2021", "--rejected").returncode == 0
    assert citelsp(paper, "decide", "lieber1997", "--verified").returncode == 0
    lines = check(paper)
    assert [line.split()[2] for line in lines if " invented2021: " in line] == [
        "HUMAN_REJECTED"]
    assert not any(" lieber1997: " in line for line in lines)
    assert lines[-2].startswith(
        "18 references: 1 verified (1 by a human), 1 refuted (1 by a human), 16 unresolvable;")


def test_each_entry_of_a_duplicated_key_lists_where_it_is_cited_once(paper):
    lines = [line for line in check(paper) if " UNREACHABLE kuschel2014: " in line]
    assert len(lines) == 2
    assert all(line.endswith("[cited at paper.md:21:28]") for line in lines), lines


def test_a_reference_not_checked_says_why_in_a_few_words(paper):
    """Once per reference, short, and without a "Tried:" list that contradicts "no index
    could be asked"; the summary says it once for all."""
    lines = check(paper)
    unreachable = [line for line in lines if " P2 UNREACHABLE " in line]
    assert len(unreachable) == 18
    for line in unreachable:
        message = re.sub(r" \[cited at .*\]$", "", line.split(": ", 2)[2])
        assert message == "Not checked: offline, no cached answer — pending human check.", line
    assert lines[-1] == "18 of 18 references could not be checked (offline)"


def test_orphans_are_not_said_to_be_uncited_by_open_manuscripts(paper):
    bib = paper / "refs.bib"
    bib.write_text(bib.read_text(encoding="utf-8") + "\n@misc{unused2020,\n  title = {Never "
                   "cited},\n  year = {2020},\n}\n", encoding="utf-8")
    lines = check(paper, paths=("paper.md", "refs.bib"))
    orphan = [line for line in lines if "ORPHAN_REFERENCE" in line]
    assert orphan and orphan[0].endswith("'unused2020' is not cited by any manuscript checked")


def test_a_doi_is_shown_as_it_is_cited(paper):
    markdown = "\n".join(check(paper, "--format", "markdown"))
    assert "doi:10.1002/JOR.1100150407" in markdown
    assert "<https://doi.org/10.1002/JOR.1100150407>" in markdown
    assert "jor.1100150407" not in markdown


def test_no_user_facing_text_sends_readers_to_a_file_the_repository_does_not_ship(paper):
    assert not (ROOT / "DESIGN.md").exists()
    shipped = [p for folder in ("citelsp", "editors") for p in (ROOT / folder).rglob("*")
               if p.is_file() and p.suffix in (".py", ".json", ".ts", ".lua", ".md", ".el",
                                                ".toml", ".vim")]
    shipped += [ROOT / "README.md", ROOT / "pyproject.toml"]
    assert [str(p.relative_to(ROOT)) for p in shipped
            if "DESIGN.md" in p.read_text(encoding="utf-8", errors="replace")] == []
    done = citelsp(paper, "check", "--help")
    assert "DESIGN" not in done.stdout


def test_min_priority_says_how_many_findings_it_hides(paper):
    summary = check(paper, "--min-priority", "P1")[-2]
    assert summary.endswith("findings: 4 P0, 0 P1 (18 P2 hidden: below P1)"), summary


def test_the_checklist_lists_what_it_counts_under_headings_that_fit(paper):
    """Local errors are not "identifier evidence"; an uncited entry counted as P3 has its
    P3 section; a hidden priority is counted, not listed."""
    bib = paper / "refs.bib"
    bib.write_text(bib.read_text(encoding="utf-8") + "\n@misc{unused2020,\n  title = {Never "
                   "cited},\n  year = {2020},\n}\n", encoding="utf-8")
    lines = check(paper, "--format", "markdown", paths=("paper.md", "refs.bib"))
    headings = [line for line in lines if line.startswith("## ")]
    assert headings == ["## P0 — errors in the manuscripts and bibliographies",
                        "## P2 — could not be confirmed automatically",
                        "## P3 — hints on the manuscripts and bibliographies"], headings
    counts = re.search(r"on this list: (\d+) P0, (\d+) P1, (\d+) P2, (\d+) P3", lines[2])
    sections = {h[3:5]: 0 for h in headings}
    current = None
    for line in lines:
        if line.startswith("## "):
            current = line[3:5]
        elif line.startswith("- [") and current:
            sections[current] += 1
    assert [int(n) for n in counts.groups()] == [sections.get(p, 0)
                                                 for p in ("P0", "P1", "P2", "P3")]
    hidden = check(paper, "--format", "markdown", "--min-priority", "P1",
                   paths=("paper.md", "refs.bib"))
    assert hidden[2].endswith("on this list: 2 P0, 0 P1 (19 P2, 1 P3 hidden: below P1)")
    assert not any(line.startswith("## P2") for line in hidden)
