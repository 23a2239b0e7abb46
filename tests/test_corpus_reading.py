"""How the workspace reads files: encodings, invalid characters, macros shared in order."""

from __future__ import annotations

from pathlib import Path

from citelsp.config import Settings
from citelsp.documents.encoding import decode, without_surrogates
from citelsp.documents.model import Severity
from citelsp.uris import path_to_uri
from citelsp.workspace import Workspace
from citelsp.workspace.corpus import Corpus

LATIN1 = "@article{m, author = {Peter Müller}, title = {Über Abschluß}}\n".encode("latin-1")


def test_utf8_is_read_as_is_and_a_bom_dropped():
    decoded = decode("\ufeff@misc{ü}".encode())
    assert (decoded.text, decoded.encoding, decoded.invalid_at) == ("@misc{ü}", "utf-8", None)


def test_latin1_file_is_decoded_with_a_guess_and_a_warning(tmp_path):
    path = tmp_path / "old.bib"
    path.write_bytes(LATIN1)
    bib = Corpus(Settings(), [tmp_path]).load(path_to_uri(path))
    (ref,) = bib.references
    assert ref.value("author") == "Peter Müller" and ref.value("title") == "Über Abschluß"
    problem = bib.problems[0]
    assert (problem.code, problem.severity) == ("FILE_ENCODING", Severity.WARNING)
    assert "not UTF-8" in problem.message and "1252" in problem.message
    assert bib.text[problem.span.start] == "ü"
    ws, errors = Workspace.for_paths([path], Settings())  # the command line's way in
    assert errors == []
    assert [p.code for p in ws.local_problems(path_to_uri(path))] == ["FILE_ENCODING"]


def test_utf8_with_a_latin1_part_keeps_its_utf8():
    decoded = decode("@misc{a, title = {Ünïcode}}\n".encode() + LATIN1)
    assert "Ünïcode" in decoded.text and "Peter Müller" in decoded.text
    assert decoded.invalid_at == decoded.text.index("Müller") + 1


def test_lone_surrogates_are_replaced_keeping_offsets():
    text, problem = without_surrogates("ab\ud800c\udfffd")
    assert text == "ab\ufffdc\ufffdd"
    assert (problem.span.start, problem.span.end, problem.severity) == (2, 3, Severity.WARNING)
    assert without_surrogates("plain é") == ("plain é", None)
    bib = Corpus(Settings()).update("file:///w/s.bib", "@misc{k, title = {Bad \udc80 char}}\n")
    assert bib.references[0].value("title") == "Bad \ufffd char"
    assert bib.problems[0].code == "MALFORMED_ENTRY"


def write(tmp_path: Path, name: str, text: str) -> str:
    (tmp_path / name).write_text(text, encoding="utf-8")
    return path_to_uri(tmp_path / name)


def test_macros_flow_through_a_manuscripts_bibliographies_in_order(tmp_path):
    write(tmp_path, "abbrev.bib", '@string{jcp = "J. Comp. Phys."}\n')
    refs = write(tmp_path, "refs.bib", "@article{a, title = {T}, journal = jcp}\n")
    ws = Workspace(Settings(), [tmp_path])
    alone = ws.corpus.load(refs)
    assert alone.references[0].value("journal") == ""
    assert [p.code for p in alone.problems] == ["UNDEFINED_MACRO"]
    text = "---\nbibliography: [abbrev.bib, refs.bib]\n---\n[@a]\n"
    manuscript = ws.open(write(tmp_path, "paper.md", text), text)
    _, used = ws.graph.bibliographies(manuscript)
    assert used.references[0].value("journal") == "J. Comp. Phys."
    assert used.problems == [] and ws.document(refs) is used
    assert not [p for p in ws.local_problems(refs) if p.code == "UNDEFINED_MACRO"]


def test_open_bibliography_keeps_the_macros_it_was_given(tmp_path):
    write(tmp_path, "abbrev.bib", '@string{jcp = "J. Comp. Phys."}\n')
    refs = write(tmp_path, "refs.bib", "@article{a, journal = jcp}\n")
    ws = Workspace(Settings(), [tmp_path])
    tex = "\\cite{a}\\bibliography{abbrev,refs}\n"
    ws.graph.bibliographies(ws.open(write(tmp_path, "paper.tex", tex), tex))
    edited = ws.open(refs, "@article{a, journal = jcp, year = 2000}\n")
    assert edited.references[0].value("journal") == "J. Comp. Phys."


def test_deeply_nested_slug_map_is_ignored_not_fatal(tmp_path):
    (tmp_path / "slugs.json").write_text("[" * 5000 + "]" * 5000)
    ws = Workspace(Settings(slug_map="slugs.json"), [tmp_path])
    assert ws.graph.slug_map() == {}
