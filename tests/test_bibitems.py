"""A LaTeX document's own ``thebibliography`` (``documents/bibitems.py``): what is read from
BibTeX's real output in eight styles and from hand-typed items, what is left unread rather
than guessed, and the whole check over it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citelsp.documents.bibitems import parse_bibitems
from citelsp.documents.parse import parse_document
from citelsp.resolution.identifiers import reference_ids
from tests.lsp_session import lsp_session, open_file, wait_until
from tests.test_cli import citelsp, run_cli, write
from tests.test_lsp_verify import (  # noqa: F401  (fixtures)
    FAKE_DOI,
    api,
    env,
    hover_at,
    position_of,
    verified,
)

BBL = Path(__file__).resolve().parent.parent / "fixtures" / "bibitems"
WOLF = ("Ancient dog introgression into the Iberian wolf genome may have facilitated "
        "adaptation to human-dominated landscapes")
PAPERQA = "PaperQA: Retrieval-augmented generative agent for scientific research"


def read(text: str) -> dict[str, tuple]:
    """key → (entry type, title, year, DOI) as the check sees them."""
    bib = parse_bibitems("file:///w/paper.tex", text)
    assert bib is not None
    return {r.key: (r.entry_type, r.work.title, r.work.year, r.value("doi"))
            for r in bib.references}


def folded(title: str | None) -> str | None:
    return None if title is None else title.casefold()


# BibTeX styles → what is read of each entry: (type, title or None, year, DOI or None).
WOLF_DOI, SOLO_DOI = "10.1101/gr.279093.124", "10.9999/imaginary.2021.0001234567890123456789"
NEWBLOCK = {  # plain, abbrv, apalike: authors \newblock title \newblock venue (no DOIs)
    "wolf": ("article", WOLF, 2025, None),
    "vaswani": ("inproceedings", "Attention is all you need", 2017, None),
    "paperqa": ("misc", PAPERQA, 2023, None),
    "knuth": ("misc", "The TeXbook", 1984, None),
    "solo": ("article", "A single author paper on BERT and GPT", 2021, None),
}
WITH_DOIS = {**NEWBLOCK, "wolf": NEWBLOCK["wolf"][:3] + (WOLF_DOI,),
             "solo": NEWBLOCK["solo"][:3] + (SOLO_DOI,)}
UNTOLD = {  # "Authors: Title. Venue" and "A. Author, Title, Venue": where the title ends is
    # a guess, so no title is read, only identifiers and the year
    key: ("misc", None, year, doi) for key, (_, _, year, doi) in WITH_DOIS.items()}
STYLES = {
    "plain": NEWBLOCK, "abbrv": NEWBLOCK, "apalike": NEWBLOCK, "plainnat": WITH_DOIS,
    "IEEEtran": {**NEWBLOCK, "knuth": ("misc", None, 1984, None)},  # italic title: not told
    "ACM-Reference-Format": {**WITH_DOIS, "vaswani": ("inproceedings",
                                                      "Attention is All you Need", 2017, None)},
    "splncs04": UNTOLD, "elsarticle-num": UNTOLD,
}


@pytest.mark.parametrize("style", sorted(STYLES))
def test_what_is_read_from_bibtex_output_in_each_style(style):
    found = read((BBL / f"{style}.bbl").read_text(encoding="utf-8"))
    expected = STYLES[style]
    assert {k: (t, folded(title), y, d) for k, (t, title, y, d) in found.items()} == {
        k: (t, folded(title), y, d) for k, (t, title, y, d) in expected.items()}


def test_arxiv_ids_in_the_text_are_identifiers():
    bib = parse_bibitems("file:///w/p.tex", (BBL / "elsarticle-num.bbl").read_text())
    ids = {r.key: reference_ids(r) for r in bib.references}
    assert ids["paperqa"].arxiv.value == "2312.07559" and ids["wolf"].arxiv is None


HAND_TYPED = r"""\begin{thebibliography}{99}
\bibitem{vaswani}
Vaswani, A., Shazeer, N., Parmar, N., Uszkoreit, J., Jones, L., Gomez, A. N., Kaiser, \L{}.,
\& Polosukhin, I. (2017). Attention is all you need. \textit{Advances in Neural Information
Processing Systems}, 30.

\bibitem{devlin}
J. Devlin, M.-W. Chang, K. Lee, and K. Toutanova, "BERT: Pre-training of deep bidirectional
transformers for language understanding," in \textit{Proc. NAACL-HLT}, 2019, pp. 4171--4186.
doi:10.18653/v1/N19-1423.

\bibitem{godel}
K. G\"odel, "\"Uber formal unentscheidbare S\"atze der Principia Mathematica und verwandter
Systeme I," \emph{Monatshefte f\"ur Mathematik und Physik}, vol. 38, pp. 173--198, 1931.

\bibitem{brown}
Brown, T. et al. Language models are few-shot learners. NeurIPS 2020.

% \bibitem{commented} Not an item.
\bibitem{twoyears}
A. Author. \newblock Reprinted work. \newblock Journal, 1950. Reprint 1999.

\bibitem{wrapped}
A. Author. \newblock A long title. \newblock \url{https://doi.org/10.1000/abcdefghij%
klm}

\bibitem{anonymous}
\newblock Attention is all you need but nobody wrote it.
\newblock \emph{Some Venue}, 2020.
\newblock Curran.
\end{thebibliography}
"""


def test_hand_typed_items_in_apa_ieee_and_newblock_styles():
    found = read(HAND_TYPED)
    assert found["vaswani"] == ("article", "Attention is all you need", 2017, None)
    assert found["devlin"] == (
        "inproceedings", "BERT: Pre-training of deep bidirectional transformers for language "
        "understanding", 2019, "10.18653/v1/N19-1423")  # the DOI without its final period
    assert found["godel"] == ("article", "Über formal unentscheidbare Sätze der Principia "
                              "Mathematica und verwandter Systeme I", 1931, None)


def test_what_cannot_be_told_is_left_unread_not_guessed():
    found = read(HAND_TYPED)
    assert "commented" not in found
    assert found["brown"][1] is None  # no quotes, no \newblock, no (Year). Title. \textit{…}
    assert found["twoyears"][2] is None  # 1950 or 1999?
    assert found["wrapped"][3] is None  # BibTeX broke the DOI's line with %
    assert found["anonymous"][1] is None  # the first part is a title, not names


def test_a_latex_manuscript_carries_its_bibitems_as_its_own_bibliography():
    text = "See \\cite{vaswani}.\n" + HAND_TYPED
    doc = parse_document("file:///w/paper.tex", text)
    assert doc.inline is not None and doc.inline.source_format == "bibitem"
    ref = doc.inline.references[0]
    assert text[ref.key_span.start:ref.key_span.end] == "vaswani"
    title = ref.fields["title"]
    assert text[title.span.start:title.span.end] == "Attention is all you need"
    assert parse_document("file:///w/other.tex", "\\cite{a}\n").inline is None


PAPER = (
    "\\documentclass{article}\\begin{document}\n"
    "Wolves \\cite{lobo} and \\cite{made_up}.\n"
    "\\begin{thebibliography}{9}\n"
    "\\bibitem{lobo} D.~Lobo, H.~E. Morales, and C.~Van~Oosterhout.\n"
    f"\\newblock {WOLF}.\n"
    "\\newblock \\emph{Genome Research}, 35(3):432--445, 2025.\n"
    "\\newblock doi:10.1101/gr.279093.124.\n"
    "\\bibitem{made_up} J.~Smith.\n"
    "\\newblock A study of things that never were.\n"
    f"\\newblock \\emph{{PLOS ONE}}, 12:1--9, 2023. \\doi{{{FAKE_DOI}}}\n"
    "\\end{thebibliography}\n\\end{document}\n")


def test_the_check_reads_a_paper_with_its_own_bibliography(api, tmp_path):  # noqa: F811
    """The wolf paper is found by its DOI, the invented DOI is refuted where it is written,
    and no citation is dangling."""
    text = PAPER
    write(tmp_path, **{"paper.tex": text})
    done = run_cli(api, "check", "paper.tex", cache_dir=tmp_path / "c", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "DANGLING_CITATION" not in done.stdout and "no bibliography" not in done.stderr
    line = text[:text.index(FAKE_DOI)].count("\n") + 1
    column = text.index(FAKE_DOI) - text.rfind("\n", 0, text.index(FAKE_DOI))
    assert f"paper.tex:{line}:{column}: P0 DOI_REFUTED made_up:" in done.stdout, done.stdout
    assert "lobo:" not in done.stdout  # verified and clean
    assert "2 references: 1 verified, 1 refuted" in done.stdout


async def test_the_editor_checks_the_bibitems_of_an_open_paper(tmp_path, env):  # noqa: F811
    text = PAPER
    (tmp_path / "paper.tex").write_text(text, encoding="utf-8")
    async with lsp_session(tmp_path, env) as lsp:
        tex = open_file(lsp, tmp_path / "paper.tex", "latex")
        await wait_until(lsp, verified(tex, "made_up"))
        shown = {(d.code, d.range.start.line, d.range.start.character)
                 for d in lsp.diagnostics[tex]}
        at = text.index(FAKE_DOI)
        line, column = text[:at].count("\n"), at - text.rfind("\n", 0, at) - 1
        assert ("DOI_REFUTED", line, column) in shown
        assert not {c for c, _, _ in shown} & {"DANGLING_CITATION", "ORPHAN_REFERENCE"}
        card = await hover_at(lsp, tex, position_of(tmp_path / "paper.tex", "{lobo}"))
        assert "Ancient dog introgression" in card and "Crossref" in card
        assert "read from its text" in card and "authors not read" in card  # not "no authors"


# --- arXiv sources: the .bbl without the .bib ---------------------------------------------------


MAIN = ("\\documentclass{article}\n\\begin{document}\nWolves \\citep{wolf}, \\cite{missing}.\n"
        "\\bibliographystyle{plainnat}\n\\bibliography{refs}\n\\end{document}\n")


def test_an_arxiv_source_is_checked_against_its_bbl_when_the_bib_is_missing(tmp_path):
    """arXiv sources ship main.tex and BibTeX's main.bbl, rarely refs.bib: LaTeX reads the
    .bbl, so citelsp does, and every item it prints is checked (none is an orphan)."""
    write(tmp_path, **{"main.tex": MAIN,
                       "main.bbl": (BBL / "plainnat.bbl").read_text(encoding="utf-8")})
    done = citelsp("check", "--offline", "--format", "json", "main.tex", cwd=tmp_path)
    report = json.loads(done.stdout)
    codes = {(d["code"], d["path"]) for d in report["diagnostics"]}
    assert ("DANGLING_CITATION", "main.tex") in codes  # 'missing': "[?]" in the PDF
    assert not {c for c, _ in codes} & {"UNREADABLE_BIBLIOGRAPHY", "ORPHAN_REFERENCE"}
    assert sorted(s["citation_key"] for s in report["summaries"]) == [
        "knuth", "paperqa", "solo", "vaswani", "wolf"]
    assert "no bibliography" not in done.stderr


def test_the_bbl_is_the_main_file_s_when_a_preamble_names_the_missing_bib(tmp_path):
    """BibTeX writes ``main.bbl`` for ``main.tex``, whichever input names the ``.bib``."""
    write(tmp_path, **{
        "main.tex": MAIN.replace("\\bibliography{refs}", "\\input{settings}"),
        "settings.tex": "\\bibliography{refs}\n",
        "main.bbl": (BBL / "plainnat.bbl").read_text(encoding="utf-8")})
    done = citelsp("check", "--offline", "--format", "json", "main.tex", cwd=tmp_path)
    assert "UNREADABLE_BIBLIOGRAPHY" not in done.stdout, done.stderr
    assert sorted(s["citation_key"] for s in json.loads(done.stdout)["summaries"]) == [
        "knuth", "paperqa", "solo", "vaswani", "wolf"]


def test_an_empty_bbl_from_a_failed_bibtex_run_leaves_the_missing_bib_reported(tmp_path):
    write(tmp_path, **{"main.tex": MAIN, "main.bbl": ""})
    done = citelsp("check", "--offline", "main.tex", cwd=tmp_path)
    assert "UNREADABLE_BIBLIOGRAPHY" in done.stdout and "no such file" in done.stdout, (
        done.stdout)


def test_a_bib_that_is_there_wins_over_the_bbl_and_an_input_bbl_is_a_bibliography(tmp_path):
    write(tmp_path, **{
        "a/main.tex": MAIN, "a/main.bbl": (BBL / "plain.bbl").read_text(encoding="utf-8"),
        "a/refs.bib": "@article{wolf, title = {Wolves}, author = {Lobo, D.}, year = 2025}\n",
        "b/paper.tex": "\\begin{document}\nWolves \\cite{wolf}.\n\\input{paper.bbl}\n",
        "b/paper.bbl": (BBL / "IEEEtran.bbl").read_text(encoding="utf-8")})
    done = citelsp("check", "--offline", "--format", "json", "a/main.tex", cwd=tmp_path)
    assert [s["citation_key"] for s in json.loads(done.stdout)["summaries"]] == ["wolf"]
    done = citelsp("check", "--offline", "--format", "json", "b/paper.tex", cwd=tmp_path)
    report = json.loads(done.stdout)
    assert not [d for d in report["diagnostics"] if d["code"] == "DANGLING_CITATION"]
    assert len(report["summaries"]) == 5


# --- biber's .bbl (biblatex) -------------------------------------------------------------------


def test_biber_bbl_entries_read_as_their_bib_entries_authors_included():
    text = (BBL / "biblatex.bbl").read_text(encoding="utf-8")
    bib = parse_document("file:///w/main.bbl", text)
    refs = {r.key: r for r in bib.references}
    assert sorted(refs) == ["knuth", "paperqa", "solo", "vaswani", "wolf", "x"]
    wolf = refs["wolf"].work
    assert (wolf.title, wolf.year, wolf.venue, wolf.volume, wolf.issue, wolf.pages) == (
        WOLF, 2025, "Genome Research", "35", "3", "432–445")
    assert [(p.family, p.given) for p in wolf.authors] == [
        ("Lobo", "Diana"), ("Morales", "Hernán E."), ("Van Oosterhout", "Cock")]
    assert refs["wolf"].value("doi") == WOLF_DOI
    assert reference_ids(refs["paperqa"]).arxiv.value == "2312.07559"
    assert refs["vaswani"].work.publisher == "Curran Associates"
    x = refs["x"].work  # {World Health Organization} and von Neumann, John and others
    assert [(p.family, p.literal) for p in x.authors] == [
        ("World Health Organization", True), ("von Neumann", False)]
    assert x.has_et_al and x.title == "Main: Sub" and refs["x"].value("url") == (
        "https://example.org/a_b")
    doi = refs["wolf"].fields["doi"]
    assert text[doi.span.start:doi.span.end] == WOLF_DOI  # findings land on the .bbl's text


def test_a_biblatex_arxiv_source_is_checked_against_its_bbl(tmp_path):
    write(tmp_path, **{
        "main.tex": "\\documentclass{article}\\usepackage{biblatex}\n\\addbibresource{refs.bib}\n"
                    "\\begin{document}\nWolves \\autocite{wolf}.\n\\end{document}\n",
        "main.bbl": (BBL / "biblatex.bbl").read_text(encoding="utf-8")})
    done = citelsp("check", "--offline", "--format", "json", "main.tex", cwd=tmp_path)
    report = json.loads(done.stdout)
    assert not {d["code"] for d in report["diagnostics"]} & {
        "UNREADABLE_BIBLIOGRAPHY", "DANGLING_CITATION", "ORPHAN_REFERENCE"}
    assert len(report["summaries"]) == 6


@pytest.mark.timeout(60)
def test_hostile_bbl_and_bibitem_text_is_read_in_linear_time():
    """Unclosed ``\\entry``s, unclosed fields, quotes that never close: each is read once
    (quadratic reading of the first took 30 s for 10,000 entries)."""
    entries = "\\refsection{0}" + "\\entry{k}{article}{} \\field{title}{T " * 40_000
    bib = parse_document("file:///w/main.bbl", entries)
    assert [r.key for r in bib.references] == ["k"]
    items = "\\begin{thebibliography}{9}\\bibitem{a} " + "`` x \\newblock (2020). " * 40_000
    assert len(parse_bibitems("file:///w/p.tex", items).references) == 1


def test_a_thebibliography_in_a_file_the_paper_inputs_is_its_bibliography(tmp_path):
    """``\\input{bibliography}`` holding the ``\\bibitem``s: no dangling citation, every item
    checked, findings in that file."""
    write(tmp_path, **{
        "main.tex": "\\begin{document}\nWolves \\cite{vaswani} and \\cite{nowhere}.\n"
                    "\\input{back/bibliography}\n\\end{document}\n",
        "back/bibliography.tex": HAND_TYPED})
    done = citelsp("check", "--offline", "--format", "json", "main.tex", cwd=tmp_path)
    report = json.loads(done.stdout)
    dangling = [d for d in report["diagnostics"] if d["code"] == "DANGLING_CITATION"]
    assert [d["message"] for d in dangling] == [
        "citation key 'nowhere' is not in any bibliography of this manuscript"]
    assert len(report["summaries"]) == 7 and "no bibliography" not in done.stderr
    assert {d["path"] for d in report["diagnostics"]} == {"main.tex", "back/bibliography.tex"}


def test_a_bbl_given_on_the_command_line_is_checked_or_told_apart(tmp_path):
    write(tmp_path, **{"good.bbl": (BBL / "plain.bbl").read_text(encoding="utf-8"),
                       "broken.bbl": "garbage\n"})
    done = citelsp("check", "--offline", "good.bbl", "broken.bbl", cwd=tmp_path)
    assert "5 references" in done.stdout and done.returncode == 2
    assert "broken.bbl: a .bbl without \\bibitem or biber entries (a failed BibTeX run?)" \
        in done.stderr
