"""The workspace model without a front end: the citation graph, what closing keeps, human
decisions and the priority filter — the answers both the server and the CLI rely on."""

from __future__ import annotations

from pathlib import Path

from citelsp.config import Settings
from citelsp.documents.model import Manuscript
from citelsp.reports import json as json_report
from citelsp.reports.rows import rows
from citelsp.resolution.asking import Resolution
from citelsp.resolution.identifiers import reference_ids
from citelsp.resolution.outcome import Outcome
from citelsp.verdict.decisions import Decision
from citelsp.verdict.reduce import summary_outcomes
from citelsp.workspace import Workspace

BIB = """@article{a, title = {Deep Learning for Cats}, author = {Doe, Jane}, year = 2020,
  doi = {10.1000/abc}}
@article{b, title = {Another Work}, author = {Roe, Rick}, year = 2021}
@book{c, title = {Never Cited}}
"""
PAPER = """---
bibliography: refs.bib
---
See [@a; @b] and <!--ref:cats--> and [@missing].
"""
TEX = r"""\cite{a} \bibliography{refs}"""


def workspace(tmp_path: Path, **settings) -> tuple[Workspace, dict[str, str]]:
    files = {"refs.bib": BIB, "paper.md": PAPER, "paper.tex": TEX}
    uris = {}
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        uris[name] = (tmp_path / name).resolve().as_uri()
    ws = Workspace(Settings(slug_map={"cats": "a"}, **settings), [tmp_path])
    return ws, uris


def codes(problems) -> list[str]:
    return sorted(p.code for p in problems)


def test_citations_resolve_and_references_know_their_citations(tmp_path):
    ws, uris = workspace(tmp_path)
    md = ws.open(uris["paper.md"], PAPER)
    tex = ws.open(uris["paper.tex"], TEX)
    assert isinstance(md, Manuscript) and isinstance(tex, Manuscript)
    bib = ws.document(uris["refs.bib"])  # read from disk for the manuscript, not opened
    assert bib is not None and not ws.corpus.is_open(bib.uri)
    a = ws.graph.key_index(bib)["a"][0]
    cited_a = ws.graph.citations_of(a)
    assert [(c.uri, c.key) for c in cited_a] == [
        (uris["paper.md"], "a"), (uris["paper.md"], "cats"), (uris["paper.tex"], "a")]
    assert {m.uri for m in ws.graph.users(bib.uri)} == {uris["paper.md"], uris["paper.tex"]}
    missing = next(c for c in md.citations if c.key == "missing")
    assert ws.graph.references_of(md, missing).references == ()
    assert codes(ws.local_problems(uris["paper.md"])) == ["DANGLING_CITATION", "NO_LOCATOR"]


def test_closing_a_bibliography_a_manuscript_uses_keeps_its_disk_copy(tmp_path):
    ws, uris = workspace(tmp_path)
    ws.open(uris["refs.bib"], BIB + "@misc{onlyopen, title = {Unsaved}}\n")
    md = ws.open(uris["paper.md"], PAPER.replace("[@missing]", "[@onlyopen]"))
    assert "DANGLING_CITATION" not in codes(ws.local_problems(md.uri))
    ws.close(uris["refs.bib"])
    assert ws.document(uris["refs.bib"]) is not None, "the disk copy takes over"
    assert codes(ws.local_problems(md.uri)).count("DANGLING_CITATION") == 1
    ws.close(md.uri)
    ws.close(uris["refs.bib"])
    assert ws.document(md.uri) is None and ws.graph.users(uris["refs.bib"]) == []


def test_orphans_only_while_a_manuscript_using_the_bibliography_is_open(tmp_path):
    ws, uris = workspace(tmp_path)
    ws.open(uris["refs.bib"], BIB)
    assert "ORPHAN_REFERENCE" not in codes(ws.local_problems(uris["refs.bib"]))
    ws.open(uris["paper.md"], PAPER)
    orphans = [p.key for p in ws.local_problems(uris["refs.bib"])
               if p.code == "ORPHAN_REFERENCE"]
    assert orphans == ["c"]
    ws.close(uris["paper.md"])
    assert "ORPHAN_REFERENCE" not in codes(ws.local_problems(uris["refs.bib"]))


def test_min_priority_filters_local_and_verification_problems_alike(tmp_path):
    ws, uris = workspace(tmp_path, min_priority="P1")
    ws.open(uris["refs.bib"], BIB)
    ws.open(uris["paper.md"], PAPER)
    assert "ORPHAN_REFERENCE" not in codes(ws.problems(uris["refs.bib"]))  # a Hint is P3
    assert "DANGLING_CITATION" in codes(ws.problems(uris["paper.md"]))  # an Error is P0


def refuted(ws: Workspace, key: str) -> None:
    """Store a resolution for ``key`` whose DOI does not exist, as the engine would."""
    ref = next(r for r in ws.references() if r.key == key)
    outcome = Outcome("crossref", "unmatched", "id", "DOI does not exist",
                      reason="DOI_REFUTED", refutes_identifier=True)
    ws.verifier.results[ws.verifier.identity(ref)] = Resolution(
        key, reference_ids(ref), {"crossref": outcome})


def test_a_rejection_shows_on_the_key_and_every_citation_with_its_note(tmp_path):
    ws, uris = workspace(tmp_path)
    ws.open(uris["refs.bib"], BIB)
    ws.open(uris["paper.md"], PAPER)
    ws.open(uris["paper.tex"], TEX)
    refuted(ws, "a")
    a = next(r for r in ws.references() if r.key == "a")
    ws.record(Decision("a", ws.decision_identity(a), "rejected", "invented"))
    placed = {uri: [p for p in ws.problems(uri) if p.code == "HUMAN_REJECTED"]
              for uri in uris.values()}
    assert [len(placed[uris[n]]) for n in ("refs.bib", "paper.md", "paper.tex")] == [1, 2, 1]
    assert all("(invented)" in p.message for ps in placed.values() for p in ps)
    assert "DOI_REFUTED" not in codes(ws.problems(uris["paper.tex"])), "one finding per place"


def test_a_verified_decision_hides_the_verdict_until_the_entry_changes(tmp_path):
    ws, uris = workspace(tmp_path)
    ws.open(uris["refs.bib"], BIB)
    refuted(ws, "a")
    a = next(r for r in ws.references() if r.key == "a")
    ws.record(Decision("a", ws.decision_identity(a), "verified"))
    assert "DOI_REFUTED" not in codes(ws.problems(uris["refs.bib"]))
    ws.open(uris["refs.bib"], BIB.replace("2020", "2019"))
    refuted(ws, "a")
    result = ws.result(next(r for r in ws.references() if r.key == "a"))
    assert result is not None and result.decision_stale
    assert "DOI_REFUTED" in codes(ws.problems(uris["refs.bib"]))


def test_snapshot_reports_open_documents_and_their_bibliographies(tmp_path):
    ws, uris = workspace(tmp_path)
    ws.open(uris["paper.md"], PAPER)
    refuted(ws, "a")
    snapshot = ws.snapshot()
    assert set(snapshot.documents) == {uris["paper.md"], uris["refs.bib"]}
    assert [r.reference.key for r in snapshot.results] == ["a"]
    assert [c.key for c in snapshot.results[0].citations] == ["a", "cats"]
    assert {s["ref_slug"] for s in snapshot.summaries()} == {"cats"}


def test_findings_move_with_their_entry_when_an_edit_above_shifts_it(tmp_path):
    ws, uris = workspace(tmp_path)
    ws.open(uris["refs.bib"], BIB)
    refuted(ws, "a")
    before = {p.code: p.span for p in ws.problems(uris["refs.bib"])}
    shifted = "% a comment line\n" + BIB
    ws.open(uris["refs.bib"], shifted)
    after = {p.code: p.span for p in ws.problems(uris["refs.bib"])}
    moved = len("% a comment line\n")
    assert after["DOI_REFUTED"] == before["DOI_REFUTED"].shifted(moved)
    assert shifted[after["DOI_REFUTED"].start:after["DOI_REFUTED"].end] == "10.1000/abc"


def _work(n: int) -> str:
    doi = f", doi = {{10.1000/w{n}}}" if n % 2 else ""
    return (f"@article{{w{n}, title = {{Work number {n}}}, author = {{Doe, Jane}}, "
            f"year = 2020{doi}}}\n")


MANY = "".join(map(_work, range(6))) + "@misc{manual, title = {A Talk}, note = {manual}}\n"


async def test_offline_references_share_the_outcomes_of_sources_not_asked(tmp_path):
    """Offline with nothing cached, references of one shape share each "not asked" outcome,
    and the reports render each shared set once: what they write must be what rendering
    every reference on its own writes."""
    (tmp_path / "refs.bib").write_text(MANY + BIB, encoding="utf-8")
    ws = Workspace(Settings(offline=True, cache_dir=tmp_path / "cache"), [tmp_path])
    ws.open((tmp_path / "refs.bib").resolve().as_uri(), MANY + BIB)
    refuted(ws, "a")  # one reference with an answer among those without
    await ws.verify_now()
    snapshot = ws.snapshot()
    by_key = {r.reference.key: r.resolution.outcomes for r in snapshot.results}
    assert by_key["w0"]["arxiv"] is by_key["w2"]["arxiv"]  # "not asked: no arXiv id"
    assert by_key["w1"]["crossref"] is by_key["w3"]["crossref"]  # "offline: no cached answer"

    sections = json_report.sections(snapshot)
    summaries = snapshot.summaries()
    assert [s["resolver_outcomes"] for s in summaries] == [
        summary_outcomes(r.resolution.outcomes, r.resolution.authoritative)
        for r in snapshot.results]
    assert [o["resolvers"] for o in sections["outcomes"]] == [
        {n: json_report.outcome_dict(o) for n, o in r.resolution.outcomes.items()}
        for r in snapshot.results]
    assert len({len(s["resolver_outcomes"]) for s in summaries}) == 1
    assert {s["citation_key"]: s["lookup_verified"] for s in summaries}["a"] == "false"


def test_rows_are_placed_once_per_snapshot(tmp_path):
    """The report, the summary and the exit status of one check share one placing; a new
    snapshot (after an edit) is placed anew."""
    ws, uris = workspace(tmp_path)
    ws.open(uris["paper.md"], PAPER)
    refuted(ws, "a")
    first = ws.snapshot()
    assert rows(first) is rows(first)
    assert "DOI_REFUTED" in {r.code for r in rows(first)}
    ws.open(uris["paper.md"], PAPER.replace("[@missing]", ""))
    again = ws.snapshot()
    assert rows(again) is not rows(first)
    assert "DANGLING_CITATION" in {r.code for r in rows(first)} - {r.code for r in rows(again)}


async def test_findings_moved_with_their_entries_are_those_placed_anew(tmp_path):
    """After edits above and inside entries, the findings the workspace moved with their
    entries (instead of placing them again) are the ones a fresh workspace places."""
    text = MANY + BIB
    uri = (tmp_path / "refs.bib").resolve().as_uri()
    settings = Settings(offline=True, cache_dir=tmp_path / "cache")
    ws = Workspace(settings, [tmp_path])
    ws.open(uri, text)
    refuted(ws, "a")
    await ws.verify_now()
    assert ws.problems(uri)
    for edited in ("% a comment line\n" + text, text + "% and one at the end\n",
                   text.replace("Work number 3", "Work number three")):
        ws.open(uri, edited)
        await ws.verify_now()
        fresh = Workspace(settings, [tmp_path])
        fresh.open(uri, edited)
        refuted(fresh, "a")
        await fresh.verify_now()
        assert ws.problems(uri) == fresh.problems(uri)
        text = edited
