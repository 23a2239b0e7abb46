"""Every ``--format`` of ``citelsp check`` over one bibliography, through the real CLI.

SARIF is validated against the official SARIF 2.1.0 schema (``schemas/sarif-2.1.0-rtm.5.json``,
copied from the OASIS release as packaged by ``@microsoft/jest-sarif``); JSON and ARS summaries
against the seed-000 schema; checklist items against ``schemas/checklist_item.schema.json``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import jsonschema
import pytest

from citelsp.documents.bibtex import parse_bibtex
from citelsp.reports.json import _encode
from citelsp.resolution.outcome import Outcome
from citelsp.resolution.resolve import unchecked_resolution
from citelsp.verdict.judge import judge
from citelsp.workspace.snapshot import ReferenceResult, Snapshot
from tests.apiserver import ApiServer
from tests.test_check_e2e import BIB, SCHEMAS, assert_valid_report, run_cli, schema, start_server

HOSTILE = r"""
@article{hostile,
  title = {Click [here](https://evil.example.com) <b>now</b> `code` \& more},
  author = {Mallory, Eve},
  year = {2021},
  journal = {Journal of Mischief},
}
"""


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> Iterator[dict[str, str]]:
    """stdout of every format over the same bibliography (one server, one warm cache)."""
    server: ApiServer = start_server()
    server.fail("dblp", 503)  # so that one reference stays unchecked: the summary says which
    work = tmp_path_factory.mktemp("reports")
    (work / "refs.bib").write_text(BIB + HOSTILE, encoding="utf-8")
    out = {}
    try:
        for fmt in ("json", "text", "markdown", "ars", "ledger", "sarif"):
            done = run_cli(server, "check", "refs.bib", "--format", fmt, "--fail-on", "never",
                           cache_dir=work / "cache", cwd=work)
            assert done.returncode == 0, done.stderr
            out[fmt] = done.stdout
    finally:
        server.stop()
    return out


def test_json_is_valid_and_complete(rendered):
    report = json.loads(rendered["json"])
    assert_valid_report(report)
    keys = {s["citation_key"] for s in report["summaries"]}
    assert {o["citation_key"] for o in report["outcomes"]} == keys
    for outcome in report["outcomes"]:
        assert set(outcome["resolvers"]) == {"crossref", "openalex", "semantic_scholar", "arxiv",
                                             "datacite", "doi_registry", "chinese_literature",
                                             "dblp"}
    for d in report["diagnostics"]:
        assert d["severity"] in ("error", "warning", "information", "hint")
        assert d["range"]["start"]["line"] >= 0


def test_sarif_validates_against_the_official_schema(rendered):
    sarif = json.loads(rendered["sarif"])
    official = json.loads((SCHEMAS / "sarif-2.1.0-rtm.5.json").read_text())
    jsonschema.Draft4Validator(official).validate(sarif)
    report = json.loads(rendered["json"])
    results = sarif["runs"][0]["results"]
    assert len(results) == len(report["diagnostics"])
    rules = [r["id"] for r in sarif["runs"][0]["tool"]["driver"]["rules"]]
    assert all(rules[r["ruleIndex"]] == r["ruleId"] for r in results)
    refuted = [r for r in results if r["ruleId"] == "DOI_REFUTED"]
    assert refuted and refuted[0]["level"] == "error"
    assert refuted[0]["properties"]["priority"] == "P0"


def test_text_has_one_line_per_diagnostic_then_a_summary(rendered):
    lines = rendered["text"].splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("13 references: "))
    diagnostics, summary = lines[:at], lines[at:]
    pattern = re.compile(r"^refs\.bib:\d+:\d+: P[0-3] [A-Z][A-Z0-9_]* [\w-]+: .+$")
    assert diagnostics and all(pattern.match(line) for line in diagnostics), diagnostics
    assert len(diagnostics) == len(json.loads(rendered["json"])["diagnostics"])
    assert re.match(r"^13 references: 5 verified, 2 refuted, 6 unresolvable; "
                    r"findings: \d+ P0, \d+ P1, \d+ P2, \d+ P3$", summary[0])
    assert summary[1:] == ["1 of 13 references could not be checked (Crossref, OpenAlex, "
                           "Semantic Scholar and DBLP unreachable)"], summary
    assert any(" P0 DOI_REFUTED nodoi: " in line for line in diagnostics)


def test_markdown_lists_the_checklist_most_urgent_first_and_inert(rendered):
    md = rendered["markdown"]
    assert md.startswith("# Reference check\n")
    headings = [line for line in md.splitlines() if line.startswith("## ")]
    assert [h[3:5] for h in headings] == sorted(h[3:5] for h in headings)
    assert headings[0].startswith("## P0")
    assert "**nodoi**" in md and "`DOI_REFUTED`" in md
    assert "](https://evil" not in md and "<b>" not in md
    assert "- <https://doi.org/10.1371/notarealdoi>" in md


def test_ars_is_the_summaries_alone(rendered):
    ars = json.loads(rendered["ars"])

    def timeless(summaries: list[dict]) -> list[dict]:
        """Outages are asked again each run, so the latest timestamp may move."""
        return [{k: v for k, v in s.items() if k != "verification_timestamp"} for s in summaries]

    assert timeless(ars) == timeless(json.loads(rendered["json"])["summaries"])
    summary_schema = schema("citation_verification_summary.schema.json")
    for summary in ars:
        jsonschema.validate(summary, summary_schema)


def test_ledger_has_one_fact_per_reference(rendered):
    facts = {f["claim"].split("'")[1]: f for f in json.loads(rendered["ledger"])}
    assert len(facts) == 13
    assert facts["real"]["verification"] == "verified"
    assert facts["nodoi"]["verification"] == "refuted"
    assert facts["invented"]["verification"] == "undetermined"
    assert all(f["approval"] == "pending" for f in facts.values())
    real_sources = {s["domain"]: s for s in facts["real"]["sources"]}
    assert real_sources["crossref"]["state"] == "ai_verified"
    assert all(s["url"].startswith("https://") for f in facts.values()
               for s in f["sources"] if "url" in s)


def test_checklist_items_as_json_are_their_fields():
    import dataclasses

    from citelsp.verdict.checklist import ChecklistItem

    item = ChecklistItem("k", "P1", "NOT_FOUND_IN_INDEXES", "unresolvable", "A (2020)",
                         [{"resolver": "crossref", "status": "unmatched"}], ["https://doi.org/x"],
                         "search", other_reasons=["GENERIC_TITLE"], message="m")
    assert item.to_dict() == dataclasses.asdict(item)


def test_a_record_with_a_lone_surrogate_is_written_escaped():
    """An API may send ``\\ud800`` in a title: not UTF-8, so that record is escaped."""
    assert json.loads(_encode({"title": "caf\u00e9"})) == {"title": "caf\u00e9"}
    assert _encode({"title": "caf\u00e9"}) == '{"title":"caf\u00e9"}'.encode()
    escaped = _encode({"title": "a\ud800b"})
    assert escaped == b'{"title": "a\\ud800b"}'
    assert json.loads(escaped) == {"title": "a\ud800b"}


def test_each_cause_of_references_not_checked_is_said_once_with_every_source():
    """Two references that could not reach different sources: one cause, both sources (the
    checklist's header listed "source unreachable: …" once per set of sources)."""
    refs = parse_bibtex("file:///r.bib", "@article{a, title={A study}}\n"
                                         "@article{b, title={B study}}\n").references

    def down(ref, names: list[str]) -> ReferenceResult:
        resolution = unchecked_resolution(ref, "pending", "not looked up yet")
        resolution.outcomes.update({n: Outcome(n, "unreachable", None, f"{n}: HTTP 503",
                                               unchecked="outage") for n in names})
        return ReferenceResult(ref, resolution, judge(ref, resolution))

    snapshot = Snapshot({}, [], [down(refs[0], ["crossref", "openalex"]),
                                 down(refs[1], ["crossref", "datacite"])])
    assert snapshot.coverage().statement() == (
        "2 of 2 references could not be checked (Crossref, OpenAlex and DataCite "
        "unreachable)")
