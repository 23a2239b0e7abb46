"""``\\bibliography{IEEEabrv,refs}``: a bibliography TeX finds in its own trees is used, as
BibTeX and biber use it, and is not reported on."""

from __future__ import annotations

import os
import stat

import pytest

from citelsp.config import Settings
from citelsp.workspace import Workspace
from citelsp.workspace.texmf import texmf_bibliography

ABBREVIATIONS = b'@string{IEEE_J_AC = "IEEE Trans. Autom. Control"}\n% Caf\xe9 (Latin-1)\n'
REFS = "@article{kalman60, title = {A New Approach}, journal = IEEE_J_AC, year = 1960}\n"
PAPER = "\\cite{kalman60}\n\\bibliographystyle{IEEEtran}\n\\bibliography{IEEEabrv,refs}\n"


@pytest.fixture
def tex_tree(tmp_path, monkeypatch):
    """A fake ``kpsewhich`` on PATH that knows one file and logs what it was asked."""
    tree = tmp_path / "texmf" / "IEEEabrv.bib"
    tree.parent.mkdir()
    tree.write_bytes(ABBREVIATIONS)
    program = tmp_path / "bin" / "kpsewhich"
    program.parent.mkdir()
    program.write_text(f'#!/bin/sh\necho "$@" >> {tmp_path / "asked"}\n'
                       f'[ "$2" = IEEEabrv.bib ] && echo {tree} && exit 0\nexit 1\n')
    program.chmod(program.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{program.parent}{os.pathsep}{os.environ['PATH']}")
    texmf_bibliography.cache_clear()
    yield tmp_path
    texmf_bibliography.cache_clear()


def test_a_bibliography_in_the_tex_trees_is_used_and_left_alone(tex_tree):
    (tex_tree / "paper").mkdir()
    (tex_tree / "paper/refs.bib").write_text(REFS)
    (tex_tree / "paper/paper.tex").write_text(PAPER)
    workspace, errors = Workspace.for_paths([tex_tree / "paper/paper.tex"], Settings())
    assert errors == []
    snapshot = workspace.snapshot()
    assert [p.code for _, p in snapshot.problems] == [], "no UNREADABLE, FILE_ENCODING, macro"
    (ref,) = [r for b in workspace.graph.bibliographies(workspace.corpus.get(
        (tex_tree / "paper/paper.tex").as_uri())) for r in b.references]
    assert ref.fields["journal"].value == "IEEE Trans. Autom. Control"


def test_only_bare_names_missing_beside_the_paper_are_looked_up(tex_tree):
    (tex_tree / "refs.bib").write_text(REFS)
    (tex_tree / "IEEEabrv.bib").write_text('@string{IEEE_J_AC = "Local"}\n')
    (tex_tree / "paper.tex").write_text(
        PAPER.replace("IEEEabrv,refs", "IEEEabrv,refs,-version,sub/gone"))
    workspace, errors = Workspace.for_paths([tex_tree / "paper.tex"], Settings())
    assert not (tex_tree / "asked").exists(), "the local IEEEabrv.bib wins; no option, no path"
    assert [e.split("(")[-1] for e in errors] == ["no such file)", "no such file)"]


def test_without_tex_the_missing_file_is_an_error_as_before(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    texmf_bibliography.cache_clear()
    (tmp_path / "refs.bib").write_text(REFS)
    (tmp_path / "paper.tex").write_text(PAPER)
    workspace, errors = Workspace.for_paths([tmp_path / "paper.tex"], Settings())
    texmf_bibliography.cache_clear()
    assert errors == [f"{tmp_path / 'paper.tex'}: its bibliography IEEEabrv.bib cannot be read "
                      "(no such file)"]
    (problem,) = [p for p in workspace.local_problems((tmp_path / "paper.tex").as_uri())
                  if p.code == "UNREADABLE_BIBLIOGRAPHY"]
    assert PAPER[problem.span.start:problem.span.end] == "IEEEabrv", "where it is written"


@pytest.mark.skipif(texmf_bibliography("IEEEabrv.bib") is None,
                    reason="no TeX installation with IEEEtran (.ci/run installs one)")
def test_the_real_kpsewhich_finds_ieeetran_abbreviations():
    assert texmf_bibliography("IEEEabrv.bib").name == "IEEEabrv.bib"
    assert texmf_bibliography("surely-no-such-bibliography.bib") is None


def test_a_new_entry_goes_to_the_writers_bibliography_not_tex_s_or_a_macro_file(tex_tree):
    """``\\bibliography{IEEEabrv,abbrev,refs}``: "create the entry" must not edit TeX's own
    file, nor the writer's file of ``@string`` abbreviations."""
    import asyncio
    from types import SimpleNamespace

    from citelsp.resolution.outcome import Record

    (tex_tree / "abbrev.bib").write_text('@string{NIPS = "NeurIPS"}\n')
    (tex_tree / "refs.bib").write_text(REFS)
    paper = tex_tree / "paper.tex"
    paper.write_text(PAPER.replace("IEEEabrv,refs", "IEEEabrv,abbrev,refs") + "\\cite{new}\n")
    workspace, _ = Workspace.for_paths([paper], Settings())

    async def record_for(identifier):
        return Record(source="crossref", title="A New Work", years=(2020,), doi=identifier)

    workspace.verifier.engine = SimpleNamespace(record_for=record_for)
    entry = asyncio.run(workspace.new_entry(paper.as_uri(), "new", "10.1000/new"))
    assert entry.uri == (tex_tree / "refs.bib").as_uri()
    assert "@misc{new," in entry.text and "doi = {10.1000/new}" in entry.text
