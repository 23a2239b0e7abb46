"""A chapter checked on its own uses the bibliography of the document it is part of: a
LaTeX main file, a Quarto project, a bookdown book."""

from __future__ import annotations

from pathlib import Path

import pytest

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


HOPPER = "@misc{hopper52, title = {The Education of a Computer}, author = {Hopper, Grace}, " \
         "year = 1952}\n"
THREE = CHAPTER.replace("[@lamport94]", "[@lamport94; @hopper52]")


@pytest.mark.parametrize(
    ("project", "folder", "own", "missing"),
    [("[a.bib]", None, "c.bib", ["lamport94"]),  # a list in the project: the document's added
     ("a.bib", None, "[c.bib]", ["lamport94"]),  # a list in the document: added too
     ("a.bib", None, "c.bib", ["knuth84", "lamport94"]),  # two strings: the document's wins
     ("[a.bib]", "[../b.bib]", None, ["hopper52"]),  # project, then each folder's
     ("[a.bib]", "[../b.bib]", "[c.bib]", []),
     ("a.bib", "../b.bib", None, ["hopper52", "knuth84"]),  # the folder's replaces
     ("[a.bib, a.bib]", "[../a.bib]", "[../a.bib, c.bib]", ["lamport94"])],  # each file once
)
def test_quarto_joins_lists_of_bibliographies_across_project_folder_and_document(
        tmp_path, project, folder, own, missing):
    """Quarto merges a project's, a folder's and a document's metadata as lodash's
    ``mergeWith`` with Quarto's array rule does: two lists, or a list and a string, are
    joined; a string replaces a string."""
    files = {"_quarto.yml": f"bibliography: {project}\n", "a.bib": KNUTH, "b.bib": LAMPORT,
             "part/c.bib": HOPPER,
             "part/ch.qmd": THREE if own is None else
             THREE.replace("title: Intro", f"bibliography: {own}")}
    if folder is not None:
        files["part/_metadata.yml"] = f"bibliography: {folder}\n"
    write(tmp_path, **files)
    chapter = tmp_path / "part/ch.qmd"
    workspace, errors = Workspace.for_paths([chapter], Settings())
    assert errors == [] and dangling(workspace, chapter) == missing
    used = [b.uri for b in workspace.graph.bibliographies(workspace.document(chapter.as_uri()))]
    assert len(used) == len(set(used))


def test_a_document_s_own_unreadable_bibliography_is_not_said_to_come_from_the_project(
        tmp_path):
    write(tmp_path, **{"_quarto.yml": "bibliography: [gone.bib]\n",
                       "ch.qmd": CHAPTER.replace("title: Intro", "bibliography: [lost.bib]")})
    _, errors = Workspace.for_paths([tmp_path / "ch.qmd"], Settings())
    assert errors == [
        f"{tmp_path / 'ch.qmd'}: its bibliography gone.bib cannot be read (no such file; "
        f"named in {tmp_path / '_quarto.yml'})",
        f"{tmp_path / 'ch.qmd'}: its bibliography lost.bib cannot be read (no such file)"]


def test_outside_a_project_folder_metadata_does_not_apply(tmp_path):
    write(tmp_path, **{"_metadata.yml": "bibliography: a.bib\n", "a.bib": KNUTH})
    assert Projects().markdown_project(tmp_path / "ch.md") is None


def test_a_broken_or_silent_project_file_names_nothing(tmp_path):
    write(tmp_path, **{"_quarto.yml": "project: [unclosed\n", "sub/_quarto.yml": "project:\n"})
    projects = Projects()
    assert projects.markdown_project(tmp_path / "ch.md") is None
    assert projects.markdown_project(tmp_path / "sub/ch.md") is None


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


MAIN = ("\\documentclass{book}\n\\begin{document}\n\\include{chapters/ch1}\n"
        "% \\input{chapters/commented}\n\\bibliography{bib/refs}\n\\end{document}\n")
CH = "See \\cite{knuth84} and \\cite{lamport94}.\n"


def test_a_latex_chapter_uses_the_bibliography_of_the_main_file_that_includes_it(tmp_path):
    write(tmp_path, **{"thesis/main.tex": MAIN, "thesis/bib/refs.bib": KNUTH,
                       "thesis/chapters/ch1.tex": CH, "thesis/chapters/commented.tex": CH,
                       "thesis/other.tex": "\\input{elsewhere}\n"})
    chapter = tmp_path / "thesis/chapters/ch1.tex"
    workspace, errors = Workspace.for_paths([chapter], Settings())
    assert errors == [] and dangling(workspace, chapter) == ["lamport94"]
    commented = tmp_path / "thesis/chapters/commented.tex"  # only in a comment: not included
    _, errors = Workspace.for_paths([commented], Settings())
    assert any("no bibliography found" in e for e in errors)


def test_nested_inputs_are_followed_to_the_main_file(tmp_path):
    """main.tex includes parts/p1.tex, which inputs parts/s1.tex (written relative to the
    main file's folder, where TeX reads it) and a file of its own folder with ``\\subimport``."""
    write(tmp_path, **{"main.tex": "\\include{parts/p1}\n\\addbibresource{refs.bib}\n",
                       "refs.bib": KNUTH + LAMPORT, "parts/p1.tex": "\\input{parts/s1}\n"
                       "\\subimport{./}{s2}\n", "parts/s1.tex": CH, "parts/s2.tex": CH})
    for name in ("parts/s1.tex", "parts/s2.tex"):
        workspace, errors = Workspace.for_paths([tmp_path / name], Settings())
        assert errors == [] and dangling(workspace, tmp_path / name) == []


def test_a_magic_root_comment_or_the_subfiles_class_names_the_main_file(tmp_path):
    write(tmp_path, **{"book/main.tex": MAIN.replace("bib/refs", "refs"),
                       "book/refs.bib": LAMPORT,
                       "notes/a.tex": "% !TeX root = ../book/main.tex\n" + CH,
                       "book/sub/b.tex": "\\documentclass[../main]{subfiles}\n" + CH})
    for name in ("notes/a.tex", "book/sub/b.tex"):
        workspace, errors = Workspace.for_paths([tmp_path / name], Settings())
        assert errors == [] and dangling(workspace, tmp_path / name) == ["knuth84"]


def test_a_latex_file_that_names_its_own_bibliography_keeps_it(tmp_path):
    write(tmp_path, **{"main.tex": MAIN, "bib/refs.bib": KNUTH, "other.bib": LAMPORT,
                       "chapters/ch1.tex": "\\bibliography{../other}\n" + CH})
    chapter = tmp_path / "chapters/ch1.tex"
    workspace, _ = Workspace.for_paths([chapter], Settings())
    assert dangling(workspace, chapter) == ["knuth84"]


def test_a_bibliography_named_in_a_preamble_the_main_file_inputs(tmp_path):
    """``main.tex`` inputs ``settings/preamble.tex``, which holds ``\\addbibresource``:
    the path is relative to the main file's folder, where biber reads it."""
    write(tmp_path, **{
        "main.tex": "\\documentclass{book}\n\\input{settings/preamble}\n\\begin{document}\n"
                    "\\cite{knuth84}\n\\include{chapters/ch1}\n\\printbibliography\n"
                    "\\end{document}\n",
        "settings/preamble.tex": "\\usepackage{biblatex}\n\\input{settings/fonts}\n"
                                 "\\addbibresource{bib/refs.bib}\n",
        "settings/fonts.tex": "\\usepackage{lmodern}\n",
        "bib/refs.bib": KNUTH, "chapters/ch1.tex": CH})
    for name in ("main.tex", "chapters/ch1.tex"):
        workspace, errors = Workspace.for_paths([tmp_path / name], Settings())
        assert errors == [], name
        assert dangling(workspace, tmp_path / name) == (["lamport94"] if "ch1" in name else [])


def orphans(workspace: Workspace, path: Path) -> list[str]:
    return sorted(p.key for p in workspace.local_problems(path.as_uri())
                  if p.code == "ORPHAN_REFERENCE")


def test_orphans_count_the_whole_latex_document(tmp_path):
    """What the chapters cite is cited: the main file alone knows it from the files it
    includes; a chapter alone, whose main file is not open, says nothing of orphans."""
    write(tmp_path, **{
        "main.tex": "\\include{chapters/ch1}\n\\input{chapters/ch2}\n\\bibliography{refs}\n",
        "chapters/ch1.tex": "\\cite{a}\n", "chapters/ch2.tex": "\\cite{b}\n",
        "refs.bib": "@book{a, title={A}}\n@book{b, title={B}}\n@book{c, title={C}}\n"})
    refs = tmp_path / "refs.bib"
    for opened in (["main.tex"], ["main.tex", "chapters/ch1.tex"]):
        workspace, _ = Workspace.for_paths([tmp_path / p for p in opened], Settings())
        workspace.snapshot()
        assert orphans(workspace, refs) == ["c"], opened
    workspace, _ = Workspace.for_paths([tmp_path / "chapters/ch1.tex"], Settings())
    assert orphans(workspace, refs) == []
    write(tmp_path, **{"chapters/ch2.tex": "\\nocite{*}\n"})
    workspace, _ = Workspace.for_paths([tmp_path / "main.tex"], Settings())
    assert orphans(workspace, refs) == []


@pytest.mark.parametrize(("name", "config"), [
    ("myst.yml", "version: 1\nproject:\n  bibliography:\n    - refs/a.bib\n"),
    ("_config.yml", "title: Book\nbibtex_bibfiles:\n  - refs/a.bib\n"),
])
def test_a_myst_or_jupyter_book_chapter_uses_the_book_bibliography(tmp_path, name, config):
    write(tmp_path, **{name: config, "refs/a.bib": KNUTH,
                       "ch/intro.md": "As {cite:p}`knuth84,lamport94`.\n"})
    chapter = tmp_path / "ch/intro.md"
    workspace, errors = Workspace.for_paths([chapter], Settings())
    assert errors == [] and dangling(workspace, chapter) == ["lamport94"]


def test_a_jekyll_config_is_not_a_jupyter_book(tmp_path):
    write(tmp_path, **{"_config.yml": "theme: minima\nscholar:\n  bibliography: a.bib\n"})
    assert Projects().markdown_project(tmp_path / "post.md") is None


def test_a_quarto_chapter_alone_counts_what_the_whole_book_cites_for_orphans(tmp_path):
    """The other chapters are read from disk: an entry only they cite is no orphan, one no
    chapter cites is, whether the book is open whole or one chapter is (as in an editor)."""
    write(tmp_path, **{"_quarto.yml": "bibliography: refs.bib\n",
                       "refs.bib": KNUTH + LAMPORT + "@book{uncited, title = {U}}\n",
                       "intro.qmd": "See @knuth84.\n", "parts/more.qmd": "See @lamport94.\n",
                       "_drafts/old.qmd": "Quarto skips this folder: @uncited.\n",
                       "node_modules/x/readme.md": "Not a chapter: @uncited.\n"})
    chapters = [tmp_path / "intro.qmd", tmp_path / "parts/more.qmd"]
    workspace, _ = Workspace.for_paths(chapters, Settings())
    assert orphans(workspace, tmp_path / "refs.bib") == ["uncited"]
    workspace, _ = Workspace.for_paths(chapters[:1], Settings())
    assert orphans(workspace, tmp_path / "refs.bib") == ["uncited"]
    write(tmp_path, **{"parts/more.qmd": "---\nnocite: '@*'\n---\nSee @lamport94.\n"})
    workspace, _ = Workspace.for_paths(chapters[:1], Settings())
    assert orphans(workspace, tmp_path / "refs.bib") == []  # a chapter cites everything


def test_a_main_file_checks_the_chapters_it_inputs(tmp_path):
    """``citelsp check thesis.tex`` checks the whole document: the chapters it ``\\input``s
    and ``\\include``s (not a preamble, which cites nothing), as if each were named."""
    write(tmp_path, **{
        "main.tex": "\\input{settings/preamble}\n\\begin{document}\n\\include{chapters/ch1}\n"
                    "\\input{chapters/ch2.tex}\n\\end{document}\n",
        "settings/preamble.tex": "\\usepackage{biblatex}\n\\addbibresource{refs.bib}\n",
        "chapters/ch1.tex": "\\cite{knuth84}\n", "chapters/ch2.tex": "\\cite{missing}\n",
        "refs.bib": KNUTH + LAMPORT})
    workspace, errors = Workspace.for_paths([tmp_path / "main.tex"], Settings())
    assert errors == []
    opened = sorted(Path(d.uri).name for d in workspace.corpus.open_documents())
    assert opened == ["ch1.tex", "ch2.tex", "main.tex"]
    assert dangling(workspace, tmp_path / "chapters/ch2.tex") == ["missing"]
    assert [r.key for r in workspace.wanted()] == ["knuth84"]
    assert orphans(workspace, tmp_path / "refs.bib") == ["lamport94"]


def test_a_chapter_s_own_bibliography_path_is_read_from_the_main_file_s_folder(tmp_path):
    """TeX runs in the main file's folder, so a chapter's ``\\bibliography{bib/refs}`` (as
    chapterbib writes it) names ``bib/refs.bib`` beside the main file."""
    write(tmp_path, **{"main.tex": "\\include{chapters/ch1}\n",
                       "chapters/ch1.tex": "\\cite{knuth84}\n\\bibliography{bib/refs}\n",
                       "bib/refs.bib": KNUTH})
    chapter = tmp_path / "chapters/ch1.tex"
    workspace, errors = Workspace.for_paths([chapter], Settings())
    assert errors == [] and dangling(workspace, chapter) == []


def test_a_chapter_cites_an_entry_set_its_main_file_defines(tmp_path):
    write(tmp_path, **{
        "main.tex": "\\addbibresource{refs.bib}\n\\defbibentryset{both}{knuth84,lamport94}\n"
                    "\\input{chapters/ch1}\n",
        "chapters/ch1.tex": "\\cite{both}\n", "refs.bib": KNUTH + LAMPORT})
    chapter = tmp_path / "chapters/ch1.tex"
    workspace, errors = Workspace.for_paths([chapter], Settings())
    assert errors == [] and dangling(workspace, chapter) == []
    assert sorted(r.key for r in workspace.wanted()) == ["knuth84", "lamport94"]


BIBITEMS = ("\\begin{thebibliography}{9}\n"
            "\\bibitem{knuth84} D.~E. Knuth.\n\\newblock {\\em The \\TeX book}.\n"
            "\\newblock Addison-Wesley, 1984.\n\\end{thebibliography}\n")


@pytest.mark.parametrize("where", ["main", "input"])
def test_a_chapter_cites_the_thebibliography_of_its_main_file(tmp_path, where):
    """A main file that prints its own ``thebibliography`` (or inputs it) is what its
    chapters cite: checked with the main file or alone, they are not dangling."""
    back = BIBITEMS if where == "main" else "\\input{back/biblio}\n"
    write(tmp_path, **{"main.tex": "\\cite{knuth84}\n\\input{chapters/ch1}\n" + back,
                       "back/biblio.tex": BIBITEMS, "chapters/ch1.tex": "\\cite{knuth84}\n"})
    chapter = tmp_path / "chapters/ch1.tex"
    for given in (tmp_path / "main.tex", chapter):
        workspace, errors = Workspace.for_paths([given], Settings())
        assert errors == [] and dangling(workspace, chapter) == []
        assert {r.key for r in workspace.wanted()} == {"knuth84"}


@pytest.mark.parametrize("main", ["thesis.ltx", "report.Rnw"])
def test_a_main_file_need_not_be_a_tex_file(tmp_path, main):
    write(tmp_path, **{main: "\\input{chapters/ch1}\n\\bibliography{refs}\n",
                       "chapters/ch1.tex": "\\cite{knuth84}\n", "refs.bib": KNUTH})
    chapter = tmp_path / "chapters/ch1.tex"
    workspace, errors = Workspace.for_paths([chapter], Settings())
    assert errors == [] and dangling(workspace, chapter) == []
