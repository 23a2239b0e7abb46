import itertools
import json
import random
from pathlib import Path

import jsonschema

from citelsp.documents.model import Person, Severity, Work
from citelsp.resolution.identifiers import Identifier, ReferenceIds
from citelsp.resolution.outcome import FieldConflict, Outcome, Record, Retraction
from citelsp.verdict.checklist import Judgement, build_judgement
from citelsp.verdict.reasons import (
    PRIORITY_ORDER,
    README_URL,
    REASONS,
    doc_url,
    priority_severity,
)
from citelsp.verdict.reduce import reduce_lookup_verified, summary_outcomes

ROOT = Path(__file__).resolve().parents[1]
SUMMARY_SCHEMA = json.loads(
    (ROOT / "schemas/citation_verification_summary.schema.json").read_text()
)
ITEM_SCHEMA = json.loads((ROOT / "schemas/checklist_item.schema.json").read_text())

# --- reducer (seed 000) -------------------------------------------------------------------


def o(resolver, status, queried_by=None, *, refutes=False, reason=None, record=None, **kw):
    return Outcome(
        resolver,
        status,
        queried_by,
        f"{resolver} {status}",
        reason=reason,
        refutes_identifier=refutes,
        record=record,
        **kw,
    )


def test_reducer_seed_000_rules():
    assert reduce_lookup_verified({}) == "unresolvable"
    assert reduce_lookup_verified({"a": o("a", "skipped")}) == "unresolvable"
    assert reduce_lookup_verified({"a": o("a", "unreachable")}) == "unresolvable"
    assert reduce_lookup_verified({"a": o("a", "unmatched", "title")}) == "unresolvable"
    assert reduce_lookup_verified({"a": o("a", "unmatched", "id")}) == "false"
    bogus = {n: o(n, "unmatched", "id") for n in ("a", "b", "c")} | {"d": o("d", "unreachable")}
    assert reduce_lookup_verified(bogus) == "false"
    assert reduce_lookup_verified(bogus | {"e": o("e", "matched", "title")}) == "true"


def test_reducer_reads_seed_000_dicts():
    outcomes = {
        "crossref": {"status": "unmatched", "queried_by": "id"},
        "openalex": {"status": "skipped", "queried_by": None},
    }
    assert reduce_lookup_verified(outcomes) == "false"


def test_reducer_counts_a_refuting_outcome_as_id_keyed():
    assert reduce_lookup_verified({"a": o("a", "unmatched", "title", refutes=True)}) == "false"


# --- four-key summary (DESIGN.md §10) ---------------------------------------------------------

STATES = [
    None,
    ("matched", "id"),
    ("matched", "title"),
    ("unmatched", "id"),
    ("unmatched", "title"),
    ("unreachable", None),
    ("skipped", None),
]
RESOLVERS = (
    "crossref",
    "openalex",
    "semantic_scholar",
    "arxiv",
    "datacite",
    "doi_registry",
    "chinese_literature",
)
AUTHORITIES = (None, "crossref", "datacite", "chinese_literature", "doi_registry")


def outcomes_of(states) -> dict[str, Outcome]:
    return {
        name: o(name, s[0], s[1], refutes=s == ("unmatched", "id"))
        for name, s in zip(RESOLVERS, states, strict=False)
        if s is not None
    }


def summary_entry(outcomes, authority, key="k"):
    return {
        "citation_key": key,
        "ref_slug": key,
        "lookup_verified": reduce_lookup_verified(outcomes),
        "anchor_present": False,
        "verification_timestamp": "2025-01-01T00:00:00Z",
        "resolver_outcomes": summary_outcomes(outcomes, authority),
    }


def test_summary_preserves_the_verdict_exhaustively_over_five_resolvers():
    for states in itertools.product(STATES, repeat=5):
        outcomes = outcomes_of(states)
        for authority in AUTHORITIES:
            four = summary_outcomes(outcomes, authority)
            assert set(four) == {"crossref", "openalex", "semantic_scholar", "arxiv"}
            assert reduce_lookup_verified(four) == reduce_lookup_verified(outcomes), (
                states,
                authority,
            )


def test_summary_preserves_the_verdict_and_schema_over_random_seven_resolvers():
    rng = random.Random(431)
    validator = jsonschema.Draft202012Validator(SUMMARY_SCHEMA)
    for _ in range(1500):
        outcomes = outcomes_of([rng.choice(STATES) for _ in RESOLVERS])
        authority = rng.choice(AUTHORITIES)
        entry = summary_entry(outcomes, authority)
        validator.validate(entry)
        assert reduce_lookup_verified(entry["resolver_outcomes"]) == entry["lookup_verified"]


def test_crossref_key_takes_the_authoritative_resolver_when_stronger():
    outcomes = {
        "crossref": o("crossref", "skipped"),
        "datacite": Outcome("datacite", "matched", "id", "Dataset title"),
    }
    four = summary_outcomes(outcomes, "datacite")
    assert four["crossref"] == {
        "status": "matched",
        "queried_by": "id",
        "response_summary": "datacite: Dataset title",
    }
    assert four["arxiv"] == {"status": "skipped", "queried_by": None, "response_summary": "not run"}


def test_crossref_key_keeps_its_own_outcome_on_a_tie():
    outcomes = {
        "crossref": o("crossref", "unmatched", "title"),
        "doi_registry": o("doi_registry", "unmatched", "title"),
    }
    assert summary_outcomes(outcomes, None)["crossref"]["response_summary"] == "crossref unmatched"


def test_summary_order_of_strength():
    outcomes = {
        "crossref": o("crossref", "unreachable"),
        "doi_registry": o("doi_registry", "unmatched", "id", refutes=True),
    }
    assert summary_outcomes(outcomes, None)["crossref"]["queried_by"] == "id"


def test_summary_schema_invariants():
    outcomes = {
        "crossref": Outcome("crossref", "unreachable", "id", "timeout"),
        "openalex": Outcome("openalex", "unmatched", None, "no record"),
        "arxiv": Outcome("arxiv", "unmatched", "title", "no entry twice", refutes_identifier=True),
    }
    four = summary_outcomes(outcomes, "crossref")
    assert four["crossref"]["queried_by"] is None
    assert four["openalex"]["queried_by"] == "title"
    assert four["arxiv"]["queried_by"] == "id"
    jsonschema.validate(summary_entry(outcomes, "crossref"), SUMMARY_SCHEMA)


# --- reasons table --------------------------------------------------------------------------

DESIGN_TABLE = {
    "P0": ["DOI_REFUTED", "ARXIV_ID_REFUTED", "DOI_TITLE_MISMATCH", "ARXIV_TITLE_MISMATCH"],
    "P1": [
        "NOT_FOUND_IN_INDEXES",
        "NEAR_MATCH_ONLY",
        "DOI_TITLE_UNCONFIRMED",
        "METADATA_CONFLICT",
        "RETRACTED",
        "PUBMED_INDEXED_BUT_COORDINATE_MISS",
        "PUBMED_COORDINATE_AMBIGUOUS",
    ],
    "P2": [
        "DOI_EXISTS_TITLE_UNVERIFIABLE",
        "DOI_RA_UNRESOLVED",
        "GENERIC_TITLE",
        "METADATA_DETAIL",
        "UNREACHABLE",
        "PARTIAL_COVERAGE",
        "PUBMED_COORDINATE_CANDIDATE_UNVERIFIED",
    ],
    "P3": [
        "NO_AUTOMATED_SOURCE",
        "INSUFFICIENT_METADATA",
        "INSUFFICIENT_PUBMED_COORDINATES",
        "NO_ISSN_MAPPING",
        "JOURNAL_NOT_INDEXED",
        "DOI_RA_OUT_OF_SCOPE",
        "NCBI_EMAIL_MISSING",
    ],
}
LOCAL = {
    "DANGLING_CITATION": Severity.ERROR,
    "ORPHAN_REFERENCE": Severity.HINT,
    "DUPLICATE_KEY": Severity.ERROR,
    "DUPLICATE_WORK": Severity.WARNING,
    "MALFORMED_ENTRY": Severity.ERROR,
    "MALFORMED_MARKER": Severity.ERROR,
    "INVALID_IDENTIFIER": Severity.WARNING,
    "NO_LOCATOR": Severity.WARNING,
    "BAD_ANCHOR": Severity.WARNING,
}


def test_reason_table_covers_design_priorities():
    for priority, codes in DESIGN_TABLE.items():
        for code in codes:
            info = REASONS[code]
            assert (info.priority, info.severity) == (priority, priority_severity(priority))
            assert info.action
    for code, severity in LOCAL.items():
        assert (REASONS[code].priority, REASONS[code].severity) == (None, severity)


def test_reason_fields_and_links():
    assert REASONS["DOI_REFUTED"].field == "doi"
    assert REASONS["ARXIV_ID_REFUTED"].field == "arxiv"
    assert doc_url("DOI_REFUTED") == README_URL + "#doi_refuted"
    assert PRIORITY_ORDER == ("P0", "P1", "P2", "P3")
    assert [priority_severity(p) for p in PRIORITY_ORDER] == [
        Severity.ERROR,
        Severity.WARNING,
        Severity.INFORMATION,
        Severity.HINT,
    ]


def test_summaries_obey_the_wording_rule():
    for info in REASONS.values():
        assert "fabricat" not in info.summary.lower()
        if info.priority != "P0":
            assert "does not exist" not in info.summary
            assert "names another work" not in info.summary


# --- checklist ------------------------------------------------------------------------------

TITLE = "Attention Is All You Need"
AUTHORS = (Person("Vaswani", "Ashish"), Person("Shazeer", "Noam"))
WORK = Work(title=TITLE, authors=AUTHORS, year=2017, venue="NeurIPS")
DOI = Identifier("doi", "10.5555/fake.1", "doi", "10.5555/FAKE.1")
IDS = ReferenceIds(doi=DOI)
RECORD = Record(
    "crossref",
    TITLE,
    (TITLE,),
    authors=AUTHORS,
    years=(2017,),
    venue="Advances in Neural Information Processing Systems",
    doi="10.5555/real.1",
)


ITEM_VALIDATOR = jsonschema.Draft202012Validator(ITEM_SCHEMA)


def check_contract(v: Judgement) -> None:
    """DESIGN.md §6 for any verification: one item unless clean true, valid item, wording."""
    prioritized = [f for f in v.findings if f.priority is not None]
    assert (v.item is None) == (not prioritized)
    if v.verdict != "true":
        assert v.item is not None
    for f in v.findings:
        text = f.message.lower()
        if v.verdict != "false":
            assert "fabricat" not in text, f
        if f.priority != "P0":
            assert "does not exist" not in text and "names another work" not in text, f
        if f.priority in ("P1", "P2", "P3"):
            assert "pending human check" in text and ("tried" in text or "no source" in text), f
    if v.item is not None:
        ITEM_VALIDATOR.validate(v.item.to_dict())
        assert v.item.human_result is None
        assert v.item.message == v.findings[0].message
        assert v.item.reason_code not in v.item.other_reasons


def verify(outcomes, *, work=WORK, ids=IDS, entry_type="inproceedings", **kw) -> Judgement:
    v = build_judgement("vaswani2017", entry_type, work, ids, outcomes, **kw)
    check_contract(v)
    return v


def test_clean_true_has_no_item():
    record = Record(
        "crossref", TITLE, (TITLE,), authors=AUTHORS, years=(2017,), venue="NeurIPS", doi=DOI.value
    )
    v = verify({"crossref": o("crossref", "matched", "id", record=record)})
    assert (v.verdict, v.item, v.findings, v.matched) == ("true", None, [], record)


def test_refuted_doi_without_match_is_p0_false():
    v = verify(
        {
            "crossref": o("crossref", "unmatched", "id", refutes=True, reason="DOI_REFUTED"),
            "openalex": o("openalex", "unmatched", "title"),
        }
    )
    assert v.verdict == "false"
    assert (v.item.priority, v.item.reason_code, v.item.verdict_contribution) == (
        "P0",
        "DOI_REFUTED",
        "false",
    )
    assert "does not exist" in v.item.message and "fabricated" in v.item.message
    assert v.findings[0].field == "doi"
    assert "https://doi.org/10.5555/FAKE.1" in v.item.verification_urls  # as cited
    assert v.item.human_result is None


def test_refuted_doi_with_title_match_is_still_p0_but_not_fabricated():
    v = verify(
        {
            "crossref": o("crossref", "unmatched", "id", refutes=True, reason="DOI_REFUTED"),
            "openalex": o("openalex", "matched", "title", record=RECORD),
        }
    )
    assert v.verdict == "true"
    assert (v.item.priority, v.item.reason_code) == ("P0", "DOI_REFUTED")
    assert "fabricat" not in v.item.message
    assert "correct the identifier" in v.item.message
    assert v.matched is RECORD


def test_impossible_arxiv_id_is_refuted_without_lookup():
    arxiv = Identifier("arxiv", "2613.12345", "eprint", "2613.12345", impossible=True)
    v = verify({"arxiv": o("arxiv", "skipped")}, ids=ReferenceIds(arxiv=arxiv))
    assert v.verdict == "false"
    assert v.outcomes["arxiv"].refutes_identifier
    assert (v.item.reason_code, v.findings[0].field) == ("ARXIV_ID_REFUTED", "eprint")
    assert "https://arxiv.org/abs/2613.12345" in v.item.verification_urls


def test_title_mismatch_is_p0():
    v = verify(
        {"crossref": o("crossref", "unmatched", "id", refutes=True, reason="DOI_TITLE_MISMATCH")}
    )
    assert v.item.reason_code == "DOI_TITLE_MISMATCH" and "names another work" in v.item.message


def test_not_found_in_indexes_needs_two_answers_and_an_article():
    outcomes = {
        "crossref": o("crossref", "unmatched", "title"),
        "openalex": o("openalex", "unmatched", "title"),
        "semantic_scholar": o("semantic_scholar", "unreachable"),
        "arxiv": o("arxiv", "skipped"),
    }
    v = verify(outcomes, ids=ReferenceIds())
    assert (v.verdict, v.item.priority, v.item.reason_code) == (
        "unresolvable",
        "P1",
        "NOT_FOUND_IN_INDEXES",
    )
    assert "pending human check" in v.item.message and "Tried: crossref" in v.item.message
    assert any(
        u.startswith("https://search.crossref.org/search/works?q=")
        for u in v.item.verification_urls
    )
    assert any(
        u.startswith("https://scholar.google.com/scholar?q=") for u in v.item.verification_urls
    )
    assert [a["resolver"] for a in v.item.attempts] == list(outcomes)

    csl = verify(outcomes, ids=ReferenceIds(), entry_type="article-journal")
    assert csl.item.reason_code == "NOT_FOUND_IN_INDEXES"


def test_partial_coverage_when_fewer_than_two_answered():
    v = verify(
        {
            "crossref": o("crossref", "unmatched", "title"),
            "openalex": o("openalex", "unreachable"),
        },
        ids=ReferenceIds(),
        entry_type="article",
    )
    assert (v.item.priority, v.item.reason_code) == ("P2", "PARTIAL_COVERAGE")


def test_unreachable_when_nothing_could_be_asked():
    v = verify(
        {"crossref": o("crossref", "unreachable"), "openalex": o("openalex", "skipped")},
        ids=ReferenceIds(),
    )
    assert (v.verdict, v.item.reason_code) == ("unresolvable", "UNREACHABLE")


def test_books_without_a_match_have_no_automated_source():
    outcomes = {
        "crossref": o("crossref", "unmatched", "title"),
        "openalex": o("openalex", "unmatched", "title"),
    }
    v = verify(outcomes, ids=ReferenceIds(), entry_type="book")
    assert (v.item.priority, v.item.reason_code) == ("P3", "NO_AUTOMATED_SOURCE")


def test_a_misc_entry_that_names_a_preprint_server_is_graded_as_a_paper():
    """DESIGN.md §4 "Entries that are papers whatever their type"."""
    outcomes = {
        "crossref": o("crossref", "unmatched", "title"),
        "openalex": o("openalex", "unmatched", "title"),
    }
    for claims in ({"names_preprint": True}, {"names_proceedings": True}):
        paper = Work(title=TITLE, year=2017, **claims)
        for kind in ("misc", "online", "unpublished", "manuscript"):
            v = verify(outcomes, work=paper, ids=ReferenceIds(), entry_type=kind)
            assert (v.item.priority, v.item.reason_code) == ("P1", "NOT_FOUND_IN_INDEXES")
    web_page = Work(title="PyTorch documentation", url="https://pytorch.org/docs")
    v = verify(outcomes, work=web_page, ids=ReferenceIds(), entry_type="misc")
    assert (v.item.priority, v.item.reason_code) == ("P3", "NO_AUTOMATED_SOURCE")
    book = Work(title=TITLE, names_preprint=True)
    assert verify(outcomes, work=book, ids=ReferenceIds(), entry_type="book").item.priority == "P3"


def test_a_placeholder_identifier_is_a_p1_item_even_when_the_title_matched():
    from citelsp.resolution.identifiers import IdentifierProblem

    problem = IdentifierProblem("doi", "PLACEHOLDER_IDENTIFIER",
                                "DOI '10.xxxx/abc' is a placeholder: the real DOI is missing")
    record = Record("crossref", TITLE, (TITLE,), authors=AUTHORS, years=(2017,))
    v = verify({"crossref": o("crossref", "matched", "title", record=record)},
               ids=ReferenceIds(problems=(problem,)))
    assert v.verdict == "true"
    assert (v.item.priority, v.item.reason_code) == ("P1", "PLACEHOLDER_IDENTIFIER")
    assert "the real DOI is missing" in v.item.message
    assert REASONS["PLACEHOLDER_IDENTIFIER"].local  # the field shows the local diagnostic


def test_conflict_messages_name_the_field_both_values_and_the_source():
    crossref = Record("crossref", TITLE, (TITLE,), authors=AUTHORS, years=(2017,),
                      venue="Advances in Neural Information Processing Systems")
    s2 = Record("semantic_scholar", TITLE, (TITLE,), authors=AUTHORS, years=(2017,),
                venue="Neural Information Processing Systems")
    cited = Work(title=TITLE, authors=AUTHORS, year=2017, venue="ICML")
    v = verify({"crossref": o("crossref", "matched", "id", record=crossref),
                "semantic_scholar": o("semantic_scholar", "matched", "id", record=s2)},
               work=cited)
    [finding] = [f for f in v.findings if f.field == "venue"]
    assert ("venue cited as \u201cICML\u201d; Crossref has \u201cAdvances in Neural Information "
            "Processing Systems\u201d; Semantic Scholar has \u201cNeural Information Processing "
            "Systems\u201d") in finding.message


def test_exact_title_rejections_from_several_sources_are_one_conflict():
    rejected = FieldConflict("year", "2012", "2017", by_source=(("crossref", "2017"),))
    also = FieldConflict("year", "2012", "2017", by_source=(("openalex", "2017"),))
    v = verify({"crossref": o("crossref", "unmatched", "title", conflicts=(rejected,)),
                "openalex": o("openalex", "unmatched", "title", conflicts=(also,))},
               ids=ReferenceIds())
    [conflict] = v.conflicts
    assert conflict.by_source == (("crossref", "2017"), ("openalex", "2017"))
    assert "Crossref and OpenAlex have \u201c2017\u201d" in v.item.message


def test_manual_entries_have_no_automated_source():
    manual = Work(title=TITLE, year=2017, manual=True)
    v = verify(
        {n: o(n, "skipped") for n in ("crossref", "openalex")}, work=manual, ids=ReferenceIds()
    )
    assert (v.verdict, v.item.reason_code, v.item.other_reasons) == (
        "unresolvable",
        "NO_AUTOMATED_SOURCE",
        [],
    )


def test_insufficient_metadata():
    v = verify({"crossref": o("crossref", "skipped")}, work=Work(year=2017), ids=ReferenceIds())
    assert v.item.reason_code == "INSUFFICIENT_METADATA"


def test_generic_title():
    v = verify(
        {
            "crossref": o("crossref", "unmatched", "title"),
            "openalex": o("openalex", "unmatched", "title"),
        },
        work=Work(title="Editorial", year=2004),
        ids=ReferenceIds(),
        entry_type="article",
    )
    assert (v.item.priority, v.item.reason_code) == ("P2", "GENERIC_TITLE")


def test_near_match_only():
    near = Record(
        "crossref",
        "Attention Is Not All You Need",
        ("Attention Is Not All You Need",),
        doi="10.1/near",
    )
    v = verify(
        {
            "crossref": o("crossref", "unmatched", "title", near_matches=(near,)),
            "openalex": o("openalex", "unmatched", "title"),
        },
        ids=ReferenceIds(),
    )
    assert (v.item.reason_code, v.near_matches) == ("NEAR_MATCH_ONLY", (near,))
    assert "https://doi.org/10.1/near" in v.item.verification_urls
    assert "NOT_FOUND_IN_INDEXES" not in v.item.other_reasons


def test_exact_title_rejected_by_conflict_is_metadata_conflict():
    conflict = FieldConflict("year", "2017", "2009")
    v = verify(
        {
            "crossref": o(
                "crossref", "unmatched", "title", reason="METADATA_CONFLICT", conflicts=(conflict,)
            ),
            "openalex": o("openalex", "unmatched", "title"),
        },
        ids=ReferenceIds(),
    )
    assert (v.verdict, v.item.reason_code, v.conflicts) == (
        "unresolvable",
        "METADATA_CONFLICT",
        (conflict,),
    )
    assert v.findings[0].field == "year"


def test_accuracy_conflicts_make_one_item_with_other_reasons():
    cited = Work(title=TITLE, authors=AUTHORS, year=2012, venue="NeurIPS", issue="3")
    record = Record(
        "crossref", TITLE, (TITLE,), authors=AUTHORS, years=(2017,), issue="2", doi=DOI.value
    )
    v = verify({"crossref": o("crossref", "matched", "id", record=record)}, work=cited)
    assert v.verdict == "true"
    assert (v.item.priority, v.item.reason_code, v.item.other_reasons) == (
        "P1",
        "METADATA_CONFLICT",
        ["METADATA_DETAIL"],
    )
    assert {(f.reason_code, f.field) for f in v.findings} == {
        ("METADATA_CONFLICT", "year"),
        ("METADATA_DETAIL", "issue"),
    }


def test_title_close_match_conflict_on_title():
    record = Record(
        "crossref",
        "Attention Is All You Need Today",
        ("Attention Is All You Need Today",),
        doi=DOI.value,
    )
    v = verify(
        {"crossref": o("crossref", "matched", "id", reason="METADATA_CONFLICT", record=record)}
    )
    assert v.item.reason_code == "METADATA_CONFLICT"
    assert [f.field for f in v.findings] == ["title"]


def test_retracted():
    record = Record("crossref", TITLE, (TITLE,), doi=DOI.value)
    v = verify(
        {"crossref": o("crossref", "matched", "id", record=record)},
        retraction=Retraction("crossref", notice_doi="10.5555/retraction"),
    )
    assert (v.item.reason_code, v.item.priority, v.findings[0].field) == ("RETRACTED", "P1", "doi")


def test_highest_priority_reason_wins_and_others_follow():
    v = verify(
        {
            "crossref": o("crossref", "unmatched", "id", refutes=True, reason="DOI_REFUTED"),
            "openalex": o("openalex", "unreachable"),
        },
        extra_reasons=("NCBI_EMAIL_MISSING",),
    )
    assert v.item.reason_code == "DOI_REFUTED"
    assert v.item.other_reasons == ["PARTIAL_COVERAGE", "NCBI_EMAIL_MISSING"]
    assert [f.priority for f in v.findings] == ["P0", "P2", "P3"]


def test_unconfirmed_doi_settled_by_another_match_of_that_doi():
    record = Record("openalex", TITLE, (TITLE,), doi=DOI.value)
    v = verify(
        {
            "semantic_scholar": o(
                "semantic_scholar", "unmatched", "title", reason="DOI_TITLE_UNCONFIRMED"
            ),
            "openalex": o("openalex", "matched", "id", record=record),
        }
    )
    assert v.item is None


def test_unconfirmed_doi_is_p1_pending_human_check():
    v = verify(
        {
            "crossref": o("crossref", "unmatched", "title", reason="DOI_TITLE_UNCONFIRMED"),
            "openalex": o("openalex", "unmatched", "title"),
        }
    )
    assert (v.item.priority, v.item.reason_code) == ("P1", "DOI_TITLE_UNCONFIRMED")
    assert "pending human check" in v.item.message
    assert v.item.other_reasons == ["NOT_FOUND_IN_INDEXES"]


OUTCOME_STATES = [
    None,
    ("matched", "id", None),
    ("matched", "title", None),
    ("unmatched", "id", "DOI_REFUTED"),
    ("unmatched", "id", "DOI_TITLE_MISMATCH"),
    ("unmatched", "title", None),
    ("unmatched", "title", "DOI_TITLE_UNCONFIRMED"),
    ("unmatched", "title", "DOI_EXISTS_TITLE_UNVERIFIABLE"),
    ("unreachable", None, None),
    ("skipped", None, None),
]


def test_generated_verifications_obey_the_contract():
    rng = random.Random(6)
    works = [
        WORK,
        Work(title="Editorial"),
        Work(),
        Work(title=TITLE, manual=True),
        Work(title=TITLE, year=1990, volume="2"),
    ]
    near = Record("crossref", "Attention Is Not All You Need", doi="10.1/near")
    for _ in range(600):
        outcomes = {}
        for name in ("crossref", "openalex", "semantic_scholar", "datacite"):
            state = rng.choice(OUTCOME_STATES)
            if state is not None:
                status, queried_by, reason = state
                outcomes[name] = o(
                    name,
                    status,
                    queried_by,
                    reason=reason,
                    refutes=queried_by == "id" and status == "unmatched",
                    record=RECORD if status == "matched" else None,
                    near_matches=(near,) if status == "unmatched" and rng.random() < 0.3 else (),
                )
        verify(
            outcomes,
            work=rng.choice(works),
            ids=rng.choice([IDS, ReferenceIds()]),
            entry_type=rng.choice(["article", "book", "misc", "paper-conference"]),
            retraction=rng.choice([None, Retraction("crossref")]),
        )


def test_every_reason_code_is_documented_in_the_readme():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert [code for code in REASONS if f"\n#### {code}\n" not in readme] == []
