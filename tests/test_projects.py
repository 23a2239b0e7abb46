"""Quarto and bookdown projects: a chapter inherits the bibliography its project names."""

from __future__ import annotations

from pathlib import Path

from citelsp.config import Settings
from citelsp.workspace import Workspace
from citelsp.workspace.projects import Projects

KNUTH = "@book{knuth84, title = {The TeXbook}, author = {Knuth, Donald E.}, year = 1984}\n"
LAMPORT = "@book{lamport94, title = {LaTeX}, author = {Lamport, Leslie}, year = 1994}\n"
CHAPTER = "---\ntitle: Intro\n---\nAs in [@knuth84] and [@lamport94].\n"


def write(root: Path, **files: str) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def dangling(workspace: Workspace, path: Path) -> list[str]:
    return sorted(p.key for p in workspace.local_problems(path.as_uri())
                  if p.code == "DANGLING_CITATION")


def test_a_chapter_checked_alone_uses_the_project_bibliography(tmp_path):
    write(tmp_path, **{"_quarto.yml": "project:\n  type: book\nbibliography:\n  - refs/a.bib\n"
                                      "  - refs/b.bib\n",
                       "refs/a.bib": KNUTH, "refs/b.bib": LAMPORT,
                       "chapters/intro.qmd": CHAPTER})
    chapter = tmp_path / "chapters/intro.qmd"
    workspace, errors = Workspace.for_paths([chapter], Settings())
    assert errors == [] and dangling(workspace, chapter) == []


def test_the_nearest_folder_metadata_wins_and_its_paths_are_its_own(tmp_path):
    write(tmp_path, **{"_quarto.yml": "bibliography: a.bib\n", "a.bib": KNUTH,
                       "part2/_metadata.yml": "bibliography: ../b.bib\n", "b.bib": LAMPORT,
                       "part2/deeper/ch.md": CHAPTER, "part1/ch.md": CHAPTER})
    workspace, _ = Workspace.for_paths([tmp_path / "part2/deeper/ch.md",
                                        tmp_path / "part1/ch.md"], Settings())
    assert dangling(workspace, tmp_path / "part2/deeper/ch.md") == ["knuth84"]
    assert dangling(workspace, tmp_path / "part1/ch.md") == ["lamport94"]


def test_front_matter_still_wins_and_latex_is_not_a_quarto_document(tmp_path):
    write(tmp_path, **{"_quarto.yml": "bibliography: a.bib\n", "a.bib": KNUTH, "b.bib": LAMPORT,
                       "own.md": CHAPTER.replace("title: Intro", "bibliography: b.bib"),
                       "paper.tex": "\\cite{knuth84}\n"})
    workspace, errors = Workspace.for_paths([tmp_path / "own.md", tmp_path / "paper.tex"],
                                            Settings())
    assert dangling(workspace, tmp_path / "own.md") == ["knuth84"]
    assert any("paper.tex: no bibliography found" in e for e in errors)


def test_outside_a_project_folder_metadata_does_not_apply(tmp_path):
    write(tmp_path, **{"_metadata.yml": "bibliography: a.bib\n", "a.bib": KNUTH})
    assert Projects().bibliographies(tmp_path / "ch.md") is None


def test_a_broken_or_silent_project_file_names_nothing(tmp_path):
    write(tmp_path, **{"_quarto.yml": "project: [unclosed\n", "sub/_quarto.yml": "project:\n"})
    projects = Projects()
    assert projects.bibliographies(tmp_path / "ch.md") is None
    assert projects.bibliographies(tmp_path / "sub/ch.md") is None


def test_an_unreadable_inherited_bibliography_names_the_file_that_named_it(tmp_path):
    write(tmp_path, **{"_quarto.yml": "bibliography: gone.bib\n", "ch.qmd": CHAPTER})
    _, errors = Workspace.for_paths([tmp_path / "ch.qmd"], Settings())
    assert errors == [f"{tmp_path / 'ch.qmd'}: its bibliography gone.bib cannot be read (no "
                      f"such file; named in {tmp_path / '_quarto.yml'})"]


def test_an_edited_project_file_is_read_again(tmp_path):
    """The editor: saving ``_quarto.yml`` (or a change on disk) re-links the chapters."""
    write(tmp_path, **{"_quarto.yml": "bibliography: a.bib\n", "a.bib": KNUTH, "b.bib": LAMPORT,
                       "ch.qmd": CHAPTER})
    chapter = tmp_path / "ch.qmd"
    workspace = Workspace(Settings(), [tmp_path])
    workspace.open(chapter.as_uri(), CHAPTER)
    assert dangling(workspace, chapter) == ["lamport94"]
    write(tmp_path, **{"_quarto.yml": "bibliography: [a.bib, b.bib]\n"})
    workspace.files_changed([(tmp_path / "_quarto.yml").as_uri()])
    assert dangling(workspace, chapter) == []


def test_a_bookdown_chapter_uses_the_bibliography_of_index_rmd(tmp_path):
    write(tmp_path, **{"_bookdown.yml": 'book_filename: "b"\n', "book.bib": KNUTH,
                       "packages.bib": LAMPORT, "01-intro.Rmd": "# Intro\n\nSee @knuth84.\n",
                       "index.Rmd": "---\ntitle: B\nbibliography: [book.bib, packages.bib]\n---\n"
                                    "# Preface\n\nSee [@lamport94].\n"})
    chapter = tmp_path / "01-intro.Rmd"
    workspace, errors = Workspace.for_paths([chapter, tmp_path / "index.Rmd"], Settings())
    assert errors == [] and dangling(workspace, chapter) == []
    assert dangling(workspace, tmp_path / "index.Rmd") == []
