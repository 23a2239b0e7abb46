"""Smoke test of the HALLMARK benchmark (bench/hallmark_eval.py) on a small, fixed sample."""

from __future__ import annotations

import re

import pytest

from bench.hallmark_eval import (
    CLEAN,
    JOURNAL_POOL,
    UNPARSED,
    RowResult,
    build_index,
    dev_rows,
    evaluate,
    read_jsonl,
    render_bibtex,
    summarize,
)
from bench.simindex import SimIndex, real_works
from citelsp.documents.bibtex import parse_bibtex


@pytest.fixture(scope="module")
def rows():
    return dev_rows()


@pytest.fixture(scope="module")
def index(rows):
    return build_index(rows)


def sample(rows):
    """The first 14 VALID rows and the first row of every hallucination type (~30 rows)."""
    valid = [r for r in rows if r.label == "VALID"][:14]
    firsts = {}
    for r in rows:
        if r.label == "HALLUCINATED":
            firsts.setdefault(r.hallucination_type, r)
    return valid + list(firsts.values())


def test_canaries_are_dropped_and_every_row_renders(rows):
    journal = read_jsonl(JOURNAL_POOL)
    assert len(journal) == 80
    assert not any("canary" in r["bibtex_key"] for r in journal)
    assert len(rows) == 1119
    assert {r.label for r in rows} == {"VALID", "HALLUCINATED"}
    bib = parse_bibtex("file:///dev.bib", render_bibtex(rows))
    assert len(bib.references) + len(bib.problems) == len(rows)


def test_the_index_holds_real_works_only(rows, index):
    fabricated = [r for r in rows if r.hallucination_type == "fabricated_doi"]
    assert fabricated and all(index.doi(r.fields["doi"]) is None for r in fabricated)
    # A versioned arXiv DOI is looked up unversioned (DESIGN.md §2), so the index holds that.
    valid_dois = [re.sub(r"v\d+$", "", r.fields["doi"])
                  for r in rows if r.label == "VALID" and "doi" in r.fields]
    assert len(valid_dois) == 241
    assert [d for d in valid_dois if index.doi(d) is None] == []


def test_title_search_returns_near_matches_too():
    works = real_works([
        ("inproceedings", {"title": "Self-Consistency Improves Chain of Thought Reasoning",
                           "author": "Xuezhi Wang and Jason Wei", "year": "2023"}),
        ("article", {"title": "An Unrelated Study of Graphs", "author": "A. B", "year": "2020"}),
    ])
    hits = SimIndex(works).search("Self-Consistency Improves Chain of Thought Inference",
                                  lambda w: True)
    assert [w.title for w in hits][0] == "Self-Consistency Improves Chain of Thought Reasoning"


def test_summary_counts():
    results = [
        RowResult("v1", "VALID", None, CLEAN, verdict="true"),
        RowResult("v2", "VALID", None, "P1", verdict="true", reason_code="METADATA_CONFLICT"),
        RowResult("v3", "VALID", None, "P0", verdict="false", reason_code="DOI_REFUTED",
                  doi="10.1/x", doi_in_index=False, doi_resolves=True),
        RowResult("h1", "HALLUCINATED", "fabricated_doi", "P0", verdict="false",
                  reason_code="DOI_REFUTED", doi="10.9/y", doi_in_index=False,
                  doi_resolves=False),
        RowResult("h2", "HALLUCINATED", "swapped_authors", "P0", verdict="false",
                  reason_code="DOI_REFUTED", doi="10.2/z", doi_in_index=False, doi_resolves=True),
        RowResult("h3", "HALLUCINATED", "swapped_authors", "P1", verdict="true",
                  reason_code="METADATA_CONFLICT", doi="10.3/w", doi_in_index=True),
        RowResult("h4", "HALLUCINATED", "wrong_venue", CLEAN, verdict="true"),
        RowResult("h5", "HALLUCINATED", "wrong_venue", UNPARSED),
    ]
    s = summarize(results)
    assert (s["rows"], s["valid"], s["hallucinated"]) == (8, 3, 5)
    assert s["valid_grades"] == {"P0": 1, "P1": 1, "P2": 0, "P3": 0, CLEAN: 1, UNPARSED: 0}
    assert s["valid_p0"] == {"doi_not_in_index": ["v3"], "engine": []}
    assert s["hallucinated_graded"] == 4
    assert s["hallucinated_p0_share"] == pytest.approx(2 / 4)
    assert s["hallucinated_p0_or_p1_share"] == pytest.approx(3 / 4)
    assert s["hallucinated_p0_closed_world"] == 1
    assert s["by_type"]["swapped_authors"] == {
        "n": 2, "P0": 1, "P1": 1, "doi_cited": 2, "doi_in_index": 1, "p0_closed_world": 1}
    assert s["by_type"]["wrong_venue"] == {
        "n": 2, CLEAN: 1, UNPARSED: 1, "doi_cited": 0, "doi_in_index": 0, "p0_closed_world": 0}


async def test_sample_run_grades_no_valid_row_p0(rows, index):
    chosen = sample(rows)
    results, seconds, requests = await evaluate(chosen, index)
    s = summarize(results)

    assert [r.key for r in results] == [r.key for r in chosen]
    assert s["valid"] + s["hallucinated"] == len(chosen)
    assert sum(s["valid_grades"].values()) == s["valid"]
    assert sum(s["hallucinated_grades"].values()) == s["hallucinated"]
    assert sum(c["n"] for c in s["by_type"].values()) == s["hallucinated"]
    assert len(s["by_type"]) == 14

    valid_p0 = [(r.key, r.reason_code) for r in results if r.label == "VALID" and r.grade == "P0"]
    assert valid_p0 == []
    fabricated = next(r for r in results if r.hallucination_type == "fabricated_doi")
    assert (fabricated.grade, fabricated.reason_code) == ("P0", "DOI_REFUTED")
    assert sum(requests.values()) > 0 and seconds > 0
