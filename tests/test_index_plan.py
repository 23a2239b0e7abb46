"""The local index as the first resolver (DESIGN.md §12), against the loopback API server.

The index is built from snapshot-format files written from the same recorded bodies the server
answers with, so a reference checked with the index must get the grade it gets without it,
with no request; what the index cannot match goes to the services as before.
"""

from __future__ import annotations

import asyncio
import json
from datetime import date
from pathlib import Path

import pytest

from citelsp.config import Settings
from citelsp.index.adapter import open_index
from citelsp.index.build import LAYOUT_VERSION, IndexWriter
from tests.apiserver import ApiServer, load_default_routes
from tests.judged import judge_all
from tests.snapshots import arxiv_papers, crossref_works, write_snapshots
from tests.test_check_e2e import BIB, run_cli
from tests.test_engine import FAST_RECHECK, bib_refs

RECORDED_ARXIV_IDS = ("0808.05394", "1605.08386", "1707.08567", "astro-ph/0601001")
"""arXiv papers recorded from ``id_list`` (the others come from search feeds, which a
lookup by id is not served)."""


def sample_bib() -> str:
    """Every recorded Crossref work as its authors would cite it, and the arXiv papers."""
    out = []
    for n, work in enumerate(crossref_works()):
        title = (work.get("title") or [""])[0]
        year = (work.get("issued", {}).get("date-parts") or [[None]])[0][0]
        authors = " and ".join(f"{a['family']}, {a.get('given', '')}"
                               for a in work.get("author", [])[:3] if a.get("family"))
        if title and year:
            out.append(f"@article{{c{n},\n title={{{title}}},\n author={{{authors or 'Anon'}}},"
                       f"\n year={{{year}}},\n doi={{{work['DOI']}}}\n}}\n")
    for paper in arxiv_papers():
        if paper["id"] in RECORDED_ARXIV_IDS:
            authors = " and ".join(f"{p[0]}, {p[1]}" for p in paper["authors_parsed"])
            out.append(f"@misc{{{paper['id'].replace('/', '_')},\n title={{{paper['title']}}},\n"
                       f" author={{{authors}}},\n eprint={{{paper['id']}}},\n"
                       " archivePrefix={arXiv}\n}\n")
    return "".join(out)


@pytest.fixture(scope="module")
def index_file(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("plan")
    writer = IndexWriter(root / "works.sqlite", fresh=True)
    for source, path in write_snapshots(root / "snapshots").items():
        writer.add(source, path)
    writer.close()
    return root / "works.sqlite"


@pytest.fixture()
def server():
    with ApiServer() as api:
        load_default_routes(api)
        yield api


def check(settings, text: str):
    async def run():
        from citelsp.resolution.engine import Engine
        engine = Engine(settings, arxiv_recheck_delay=FAST_RECHECK)
        try:
            return await judge_all(engine, bib_refs(text))
        finally:
            await engine.aclose()
    return {d.reference.key: d for d in asyncio.run(run())}


def grades(done) -> dict:
    return {key: (d.judgement.verdict, sorted((f.priority, f.reason_code)
                                              for f in d.judgement.findings))
            for key, d in done.items()}


def test_grades_equal_and_no_request_for_works_the_index_holds(server, index_file, tmp_path):
    bib = sample_bib()
    settings = server.settings(use_cache=False)
    without = check(settings, bib)
    asked = len(server.requests)
    assert asked > 100
    with_index = check(settings.with_changes(index=(index_file,)), bib)
    assert len(server.requests) == asked  # not one request
    assert grades(with_index) == grades(without)
    assert sum(v == "true" for v, _ in grades(with_index).values()) > 90
    outcome = with_index["c0"].resolution.outcomes["crossref"]
    assert outcome.summary.startswith("Crossref snapshot 2026-07: DOI ")
    assert outcome.details["snapshot"] == "Crossref snapshot 2026-07"
    skipped = with_index["c0"].resolution.outcomes["openalex"]
    assert skipped.summary == "not needed: matched by Crossref snapshot 2026-07"


def test_what_the_index_cannot_match_goes_to_the_services(server, index_file):
    settings = server.settings(use_cache=False)
    without = check(settings, BIB)
    before = len(server.requests)
    with_index = check(settings.with_changes(index=(index_file,)), BIB)
    assert grades(with_index) == grades(without)
    # a DOI absent from every snapshot still goes to the DOI registry and is refuted there
    assert "DOI_REFUTED" in grades(with_index)["nodoi"][1][0]
    assert server.count("handle", "10.1371/notarealdoi") >= 1 + 1  # once per run
    # a DOI whose snapshot records name another work: the services decide, as without
    assert grades(with_index)["otherwork"] == grades(without)["otherwork"]
    assert server.asked("crossref", "10.1016/j.addr.2015.01.008") >= 2
    # a title-only reference the index holds is matched by title from it, asking nothing
    assert with_index["titleonly"].judgement.verdict == "true"
    assert with_index["titleonly"].resolution.outcomes["crossref"].summary.startswith(
        "Crossref snapshot")
    assert len(server.requests) > before


def test_offline_with_an_index_checks_what_it_holds(index_file, tmp_path):
    settings = Settings(offline=True, use_cache=False, index=(index_file,))
    done = check(settings, BIB)
    assert done["real"].judgement.verdict == "true"
    assert done["real"].resolution.complete
    assert not done["nodoi"].resolution.complete  # said as not checked, never a verdict
    assert done["nodoi"].judgement.verdict == "unresolvable"


def test_cli_names_the_snapshot_and_asks_nothing(server, index_file, tmp_path):
    (tmp_path / "refs.bib").write_text(sample_bib())
    done = run_cli(server, "check", "refs.bib", "--format", "json", "--fail-on", "never",
                   cache_dir=tmp_path / "cache", cwd=tmp_path,
                   env={"CITELSP_INDEX": str(index_file)})
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert server.requests == []
    summaries = {o["citation_key"]: o["resolvers"] for o in report["outcomes"]}
    assert summaries["c0"]["crossref"]["response_summary"].startswith("Crossref snapshot 2026-07")
    assert summaries["c0"]["crossref"]["checked_at"].startswith("2026-07")


def test_an_unusable_or_old_index_is_said_once(index_file, tmp_path):
    settings = Settings(index=(index_file,), index_stale_days=120)
    _, notes = open_index(settings, today=date(2027, 6, 1))
    [note] = notes  # said once, naming every old snapshot
    assert "older than 120 days" in note and "OpenAlex snapshot 2025-09 (609 days)" in note
    (tmp_path / "bad.sqlite").write_text("not an index")
    index, notes = open_index(settings.with_changes(index=(tmp_path / "bad.sqlite",)))
    assert index is None and notes[0].startswith("citelsp: local index not used:")


def test_index_build_command(tmp_path):
    from citelsp.cli import main
    paths = write_snapshots(tmp_path / "s")
    assert main(["index", "build", str(tmp_path / "i.sqlite"), "--crossref",
                 str(paths["crossref"]), "--years", "2020-2030"]) == 0
    assert main(["index", "update", str(tmp_path / "i.sqlite"), "--dblp",
                 str(paths["dblp"])]) == 0
    assert main(["index", "status", str(tmp_path / "i.sqlite")]) == 0
    assert main(["index", "build", str(tmp_path / "j.sqlite")]) == 2
    assert main(["index", "update", str(tmp_path / "none.sqlite"), "--dblp",
                 str(paths["dblp"])]) == 2


async def test_the_editor_hover_names_the_snapshot(server, index_file, tmp_path):
    from tests.lsp_session import lsp_session, open_file, wait_until
    from tests.test_lsp_verify import hover_at, position_of, verified

    root = tmp_path / "ws"
    root.mkdir()
    entries = sample_bib().split("@article")[1:4]
    (root / "refs.bib").write_text("".join(f"@article{e}" for e in entries))
    keys = [e.split("{", 1)[1].split(",", 1)[0] for e in entries]
    cites = " ".join(f"[@{k}]" for k in keys)
    (root / "paper.md").write_text(f"---\nbibliography: refs.bib\n---\nSee {cites}.\n")
    env = {**server.env(), "CITELSP_CACHE_DIR": str(tmp_path / "cache"),
           "CITELSP_INDEX": str(index_file)}
    async with lsp_session(root, env) as lsp:
        md = open_file(lsp, root / "paper.md", "markdown")
        await wait_until(lsp, verified(md, keys[0]))
        card = await hover_at(lsp, md, position_of(root / "paper.md", f"@{keys[0]}"))
    assert "found — the work exists as cited" in card
    assert "Crossref snapshot 2026-07: DOI" in card
    assert "(Crossref snapshot 2026-07)" in card
    assert server.requests == []


def test_an_entry_made_from_an_identifier_comes_from_the_index(index_file):
    from citelsp.resolution.engine import Engine

    async def run():
        engine = Engine(Settings(offline=True, use_cache=False, index=(index_file,)))
        try:
            return (await engine.record_for("https://doi.org/10.1016/j.addr.2015.01.008"),
                    await engine.record_for("arXiv:1605.08386"))
        finally:
            await engine.aclose()
    by_doi, by_arxiv = asyncio.run(run())
    assert by_doi.source == "crossref" and by_doi.doi == "10.1016/j.addr.2015.01.008"
    assert (by_arxiv.source, by_arxiv.title) == (
        "arxiv", "Heat-bath random walks with Markov bases")


@pytest.mark.parametrize("said", [f"{LAYOUT_VERSION}+records4", "1"])  # older parsers; the
# first index layout, from before the parsers' version was written down
def test_an_index_parsed_by_older_parsers_is_not_trusted(server, index_file, tmp_path, capsys,
                                                         said):
    """Its records may say what today's parsers no longer would (CACHE_VERSION 5 changed what
    they give): status says to build it again, update refuses to mix, a check asks the
    services as without an index and says why once."""
    import shutil
    import sqlite3

    from citelsp.cli import main

    stale = tmp_path / "stale.sqlite"
    shutil.copy(index_file, stale)
    with sqlite3.connect(stale) as db:
        db.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (said,))
    assert main(["index", "status", str(stale)]) == 2
    err = capsys.readouterr().err
    assert "build it again" in err
    assert ("its records were parsed by another citelsp's record parsers (version 4" in err) \
        == (said != "1")
    assert main(["index", "update", str(stale), "--dblp", str(index_file)]) == 2
    assert "build it again" in capsys.readouterr().err
    (tmp_path / "refs.bib").write_text(sample_bib())
    done = run_cli(server, "check", "refs.bib", "--format", "json", "--fail-on", "never",
                   cache_dir=tmp_path / "cache", cwd=tmp_path, env={"CITELSP_INDEX": str(stale)})
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("local index not used") == 1, done.stderr
    assert server.requests  # the services answer, as without an index
    summaries = [r["response_summary"] for o in json.loads(done.stdout)["outcomes"]
                 for r in o["resolvers"].values()]
    assert not any("snapshot" in (s or "") for s in summaries)


def venue_snapshots(tmp_path: Path) -> None:
    """An OpenAlex review known by its journal's full name only, Crossref's record of another
    paper of the journal with its abbreviation, and a bibliography citing the review by it."""
    import copy

    from tests.snapshots import jsonl, openalex_works, write_gz

    journal = "Annual Review of Pathology: Mechanisms of Disease"
    [other] = [w for w in crossref_works()
               if w["DOI"].lower() == "10.1146/annurev.pathol.4.110807.092311"]
    assert other["short-container-title"] == ["Annu. Rev. Pathol. Mech. Dis."]
    review = copy.deepcopy(openalex_works()[0])
    review.update(id="https://openalex.org/W4000000001", doi="https://doi.org/10.1146/x.test.1",
                  type="article", title="Heat Stress and the Pathology of the Aging Kidney",
                  publication_year=2019, publication_date="2019-01-24")
    review["primary_location"]["source"].update(display_name=journal, type="journal",
                                                issn_l=None, issn=None)
    review["biblio"] = {"volume": "14", "issue": None, "first_page": "1", "last_page": "20"}
    first = review["authorships"][0]["author"]["display_name"]
    write_gz(tmp_path / "openalex/works/updated_date=2025-09-30/part_000.gz", jsonl([review]))
    write_gz(tmp_path / "crossref/0.jsonl.gz", jsonl([other]))
    (tmp_path / "refs.bib").write_text(
        f"@article{{review,\n title={{{review['title']}}},\n author={{{first}}},\n"
        " journal={Annu. Rev. Pathol. Mech. Dis.},\n year={2019},\n volume={14},\n"
        " pages={1--20},\n doi={10.1146/x.test.1}\n}\n")


def test_a_venue_name_the_snapshots_give_one_venue_confirms_it(server, tmp_path):
    """The venue lists in grading: OpenAlex knows a review by its journal's full name only;
    the paper cites the journal's abbreviation, which no rule here expands. Crossref's
    snapshot gives that abbreviation to the same journal (another paper's
    short-container-title), so the cited venue agrees; an index without that knowledge leaves
    the disagreement as it was: a name the snapshots do not link is no evidence either way."""
    venue_snapshots(tmp_path)

    def checklist(*sources: str) -> list[tuple[str, str, str]]:
        index = tmp_path / f"{'-'.join(sources)}.sqlite"
        writer = IndexWriter(index, fresh=True)
        for source in sources:
            writer.add(source, tmp_path / source)
        writer.close()
        done = run_cli(server, "check", "refs.bib", "--offline", "--format", "json",
                       "--fail-on", "never", cache_dir=tmp_path / f"cache-{len(sources)}",
                       cwd=tmp_path, env={"CITELSP_INDEX": str(index)})
        assert done.returncode == 0, done.stderr
        return [(item["reason_code"], item["priority"], item["message"].split(":")[1])
                for item in json.loads(done.stdout)["checklist"]]

    assert checklist("openalex") == [
        ("METADATA_CONFLICT", "P1", " venue cited as “Annu. Rev. Pathol. Mech. Dis.”; OpenAlex "
         "has “Annual Review of Pathology")]
    assert checklist("openalex", "crossref") == []
    assert server.requests == []


def test_venue_links_outlive_the_index(tmp_path):
    """A resolution keeps what the venue lists said: judged again after its engine (and the
    index) closed, as an edit of the entry does, the venue stays confirmed (this crashed)."""
    from citelsp.resolution.engine import Engine
    from citelsp.verdict.judge import judge

    venue_snapshots(tmp_path)
    writer = IndexWriter(tmp_path / "i.sqlite", fresh=True)
    for source in ("openalex", "crossref"):
        writer.add(source, tmp_path / source)
    writer.close()
    [ref] = bib_refs((tmp_path / "refs.bib").read_text())

    async def resolve():
        engine = Engine(Settings(offline=True, use_cache=False, index=(tmp_path / "i.sqlite",)))
        try:
            return await engine.resolve(ref)
        finally:
            await engine.aclose()

    judgement = judge(ref, asyncio.run(resolve()))
    assert (judgement.verdict, judgement.findings) == ("true", [])
