"""``citelsp check`` end to end: the real CLI in a subprocess against the loopback API server.

Every answer is a recorded body from ``fixtures/api`` (see its README); the one retraction is
derived from a recorded Crossref body and says so. Each case of the "Verification engine"
acceptance text is one reference in ``BIB`` or one test below.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest

from tests.apiserver import PREFIXES, ApiServer, fixture, load_default_routes

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "schemas"

BIB = r"""
@article{real,
  title = {Augmenting large language models with chemistry tools},
  author = {Bran, Andres M. and Cox, Sam and others},
  year = {2024},
  journal = {Nature Machine Intelligence},
  doi = {10.1038/s42256-024-00832-8},
}
@article{nodoi,
  title = {A study of things that never were},
  author = {Nobody, Ann},
  year = {2020},
  journal = {Journal of Nothing},
  doi = {10.1371/notarealdoi},
}
@article{otherwork,
  title = {Developing functional musculoskeletal tissues through hypoxia and lysyl
           oxidase-induced collagen cross-linking},
  author = {Makris, Eleftherios A. and Responte, Donald J.},
  year = {2014},
  journal = {Proceedings of the National Academy of Sciences},
  doi = {10.1016/j.addr.2015.01.008},
}
@misc{zenodo,
  title = {Signal Integration At Spherical Bushy Cells Enhances Representation Of Temporal
           Structure But Limits Its Range},
  author = {Keine, Christian and R{\"u}bsamen, Rudolf and others},
  year = {2017},
  doi = {10.5281/zenodo.1001813},
}
@article{arxivdoi,
  title = {Crowdsourcing open citations with CROCI -- An analysis of the current status of
           open citations, and a proposal},
  author = {Heibi, Ivan and Peroni, Silvio and others},
  year = {2019},
  doi = {10.48550/arXiv.1902.02534},
}
@article{titleonly,
  title = {Augmenting large language models with chemistry tools},
  author = {Bran, Andres M. and Cox, Sam and others},
  year = {2024},
  journal = {Nature Machine Intelligence},
}
@article{invented,
  title = {askldjrq3rjaw938h},
  author = {Nobody, Ann},
  year = {2020},
  journal = {Journal of Nothing},
}
@article{nearmiss,
  title = {Effect of native oxide layers on copper thin-film tensile properties: A study},
  author = {Skarlinski, Michael D. and Quesnel, David J.},
  year = {2015},
  journal = {Journal of Applied Physics},
}
@article{generic,
  title = {Introduction},
  author = {Smith, John},
  year = {2019},
  journal = {Journal of Things},
}
@article{conflict,
  title = {Augmenting large language models with chemistry tools},
  author = {Smith, John and Cox, Sam},
  year = {2010},
  journal = {Nature Machine Intelligence},
}
@article{retracted,
  title = {Effect of native oxide layers on copper thin-film tensile properties: A reactive
           molecular dynamics study},
  author = {Skarlinski, Michael D. and Quesnel, David J.},
  year = {2015},
  journal = {Journal of Applied Physics},
  doi = {10.1063/1.4938384},
}
@book{manual,
  title = {A book I hold in my hands},
  author = {Writer, Anne},
  year = {1999},
  publisher = {Press},
  citelsp = {manual},
}
"""

REAL_ONLY = BIB.split("@article{nodoi")[0]


def add_scenario_routes(server: ApiServer) -> None:
    """Routes the recorded defaults do not give, each from a recorded (or derived) body.

    Search bodies with no hits do not depend on the query, so the recorded empty Crossref and
    Semantic Scholar answers also answer the invented title and the generic one.
    """
    empty_crossref = fixture("crossref/search/title_askldjrq3rjaw938h.json")
    empty_s2 = fixture("semantic_scholar/search/n0_r3sult_s3arch_t3rm.json")
    server.add("semantic_scholar", "GET", "/paper/search", query={"query": "askldjrq3rjaw938h"},
               body=empty_s2)
    server.add("crossref", "GET", "/works", query={"query.title": "Introduction"},
               body=empty_crossref)
    server.add("semantic_scholar", "GET", "/paper/search", query={"query": "Introduction"},
               body=empty_s2)
    server.add("crossref", "GET", "/works/10.1063/1.4938384",
               body=fixture("crossref/10.1063_1.4938384.derived_retraction.json"))


def start_server() -> ApiServer:
    server = ApiServer().start()
    load_default_routes(server)
    add_scenario_routes(server)
    return server


def run_cli(server: ApiServer, *args: str, cache_dir: Path, cwd: Path,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m citelsp ARGS`` with every base URL on ``server`` and a private cache."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("CITELSP_")}
    full_env.update(server.env())
    full_env["CITELSP_CACHE_DIR"] = str(cache_dir)
    full_env["PYTHONPATH"] = str(ROOT)
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "citelsp", *args],
        env=full_env, cwd=cwd, capture_output=True, text=True, timeout=120,
    )


def check_json(server: ApiServer, bib: Path, cache_dir: Path, *extra: str) -> dict:
    done = run_cli(server, "check", str(bib), "--format", "json", "--fail-on", "never", *extra,
                   cache_dir=cache_dir, cwd=bib.parent)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def schema(name: str) -> dict:
    return json.loads((SCHEMAS / name).read_text())


def assert_valid_report(report: dict) -> None:
    """Every summary and checklist item against its schema (DESIGN.md §6, §10)."""
    summary_schema = schema("citation_verification_summary.schema.json")
    item_schema = schema("checklist_item.schema.json")
    for summary in report["summaries"]:
        jsonschema.validate(summary, summary_schema,
                            format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    for item in report["checklist"]:
        jsonschema.validate(item, item_schema)


def cache_entries(cache_dir: Path) -> int:
    """Entries in the answer cache (diskcache), 0 when it was never created."""
    import diskcache

    if not (cache_dir / "cache.db").exists():
        return 0
    with diskcache.Cache(str(cache_dir)) as cache:
        return len(cache)


def by_key(report: dict) -> dict[str, dict]:
    """Per citation key: summary, outcome entry and checklist item (or None)."""
    items = {i["citation_key"]: i for i in report["checklist"]}
    outcomes = {o["citation_key"]: o for o in report["outcomes"]}
    return {
        s["citation_key"]: {"summary": s, "outcome": outcomes[s["citation_key"]],
                            "item": items.get(s["citation_key"])}
        for s in report["summaries"]
    }


def reasons(item: dict | None) -> set[str]:
    return set() if item is None else {item["reason_code"], *item["other_reasons"]}


# --- one run over the whole bibliography --------------------------------------------------------


@pytest.fixture(scope="module")
def scenario_server() -> Iterator[ApiServer]:
    server = start_server()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def scenario(scenario_server: ApiServer, tmp_path_factory) -> dict:
    work = tmp_path_factory.mktemp("scenario")
    bib = work / "refs.bib"
    bib.write_text(BIB, encoding="utf-8")
    report = check_json(scenario_server, bib, work / "cache")
    return {"report": report, "keys": by_key(report), "server": scenario_server}


CASES = [
    # key, verdict, checklist priority (None: no item), reason the item must carry
    ("real", "true", None, None),
    ("nodoi", "false", "P0", "DOI_REFUTED"),
    ("otherwork", "false", "P0", "DOI_TITLE_MISMATCH"),
    ("zenodo", "true", None, None),
    ("arxivdoi", "true", None, None),
    ("titleonly", "true", None, None),
    ("invented", "unresolvable", "P1", "NOT_FOUND_IN_INDEXES"),
    ("nearmiss", "unresolvable", "P1", "NEAR_MATCH_ONLY"),
    ("generic", "unresolvable", None, "GENERIC_TITLE"),
    ("conflict", "unresolvable", "P1", "METADATA_CONFLICT"),
    ("retracted", "true", "P1", "RETRACTED"),
    ("manual", "unresolvable", "P3", "NO_AUTOMATED_SOURCE"),
]


@pytest.mark.parametrize(("key", "verdict", "priority", "reason"), CASES,
                         ids=[c[0] for c in CASES])
def test_each_case_gets_its_verdict_and_reason(scenario, key, verdict, priority, reason):
    entry = scenario["keys"][key]
    assert entry["summary"]["lookup_verified"] == verdict
    item = entry["item"]
    if priority is None and reason is None:
        assert item is None
    else:
        assert item is not None
        if priority is not None:
            assert item["priority"] == priority
            assert item["reason_code"] == reason
        else:
            assert reason in reasons(item)
        assert item["verdict_contribution"] == verdict
        assert item["human_result"] is None


def test_every_summary_and_item_validates(scenario):
    report = scenario["report"]
    assert {s["citation_key"] for s in report["summaries"]} == {c[0] for c in CASES}
    assert_valid_report(report)
    assert set(report) == {"summaries", "outcomes", "checklist", "diagnostics"}


def test_refuted_doi_is_crossref_404_plus_handle_100(scenario):
    crossref = scenario["keys"]["nodoi"]["summary"]["resolver_outcomes"]["crossref"]
    assert (crossref["status"], crossref["queried_by"]) == ("unmatched", "id")
    assert "Handle System answers 100" in crossref["response_summary"]
    server = scenario["server"]
    assert server.asked("crossref", "/works/10.1371/notarealdoi") == 1
    assert server.asked("handle", "/api/handles/10.1371/notarealdoi") == 1


def test_other_works_doi_is_an_identifier_mismatch(scenario):
    summary = scenario["keys"]["otherwork"]["summary"]["resolver_outcomes"]["crossref"]
    assert (summary["status"], summary["queried_by"]) == ("unmatched", "id")
    assert "names another work" in summary["response_summary"]
    assert "Pharmacokinetics" in summary["response_summary"]


@pytest.mark.parametrize(("key", "doi"), [("zenodo", "10.5281/zenodo.1001813"),
                                          ("arxivdoi", "10.48550/arxiv.1902.02534")])
def test_datacite_dois_are_judged_by_datacite_not_crossref(scenario, key, doi):
    resolvers = scenario["keys"][key]["outcome"]["resolvers"]
    assert resolvers["datacite"]["status"] == "matched"
    assert resolvers["crossref"]["status"] == "skipped"
    assert scenario["server"].asked("crossref", f"/works/{doi}") == 0
    assert scenario["server"].asked("datacite", f"/dois/{doi}") == 1
    summary = scenario["keys"][key]["summary"]["resolver_outcomes"]["crossref"]
    assert summary["status"] == "matched" and summary["response_summary"].startswith("datacite")


def test_title_only_work_matches_by_title(scenario):
    crossref = scenario["keys"]["titleonly"]["summary"]["resolver_outcomes"]["crossref"]
    assert (crossref["status"], crossref["queried_by"]) == ("matched", "title")


def test_conflict_names_year_and_author(scenario):
    crossref = scenario["keys"]["conflict"]["summary"]["resolver_outcomes"]["crossref"]
    assert "year '2010' vs '2024'" in crossref["response_summary"]
    assert "author 'Smith'" in crossref["response_summary"]


def test_manual_entry_skips_every_resolver(scenario):
    entry = scenario["keys"]["manual"]
    assert {o["status"] for o in entry["outcome"]["resolvers"].values()} == {"skipped"}
    assert {o["status"] for o in entry["summary"]["resolver_outcomes"].values()} == {"skipped"}
    assert scenario["server"].count(None, "A book I hold") == 0


def test_diagnostics_point_into_the_bibliography(scenario):
    diagnostics = scenario["report"]["diagnostics"]
    refuted = [d for d in diagnostics if d["code"] == "DOI_REFUTED"]
    assert refuted and refuted[0]["severity"] == "error"
    assert refuted[0]["path"].endswith("refs.bib")
    line = BIB.splitlines()[refuted[0]["range"]["start"]["line"]]
    assert "10.1371/notarealdoi" in line


def test_only_cited_identifiers_are_looked_up(scenario):
    """Every identifier in a request path is one the bibliography cites (or its prefix)."""
    cited = {m.lower() for m in re.findall(r"doi = \{([^}]+)\}", BIB)}
    prefixes = {doi.split("/")[0] for doi in cited}
    looked_up = [path.lower() for _endpoint, path in scenario["server"].questions()
                 if "10." in path]
    assert len(looked_up) > len(cited)
    for path in looked_up:
        tail = re.sub(r"^/(works|dois|doira|api/handles)/", "", path.split("doi:")[-1])
        assert tail in cited or tail in prefixes, path


# --- outages and the cache ----------------------------------------------------------------------


def test_manual_entry_still_gets_the_retraction_check(api_server, tmp_path):
    add_scenario_routes(api_server)
    bib = tmp_path / "refs.bib"
    bib.write_text(
        "@article{manualretracted,\n  title = {Something else entirely},\n"
        "  author = {Writer, Anne},\n  year = {2015},\n  doi = {10.1063/1.4938384},\n"
        "  citelsp = {manual},\n}\n",
        encoding="utf-8",
    )
    entry = by_key(check_json(api_server, bib, tmp_path / "cache"))["manualretracted"]
    assert {o["status"] for o in entry["outcome"]["resolvers"].values()} == {"skipped"}
    assert "RETRACTED" in reasons(entry["item"])
    assert "NO_AUTOMATED_SOURCE" in reasons(entry["item"])
    assert [s.endpoint for s in api_server.requests] == ["crossref"]


def test_every_source_unreachable_is_unresolvable_p2_and_nothing_cached(api_server, tmp_path):
    for endpoint in PREFIXES:
        api_server.fail(endpoint, 503)
    bib = tmp_path / "refs.bib"
    bib.write_text(REAL_ONLY, encoding="utf-8")
    cache_dir = tmp_path / "cache"
    entry = by_key(check_json(api_server, bib, cache_dir))["real"]
    assert entry["summary"]["lookup_verified"] == "unresolvable"
    assert (entry["item"]["priority"], entry["item"]["reason_code"]) == ("P2", "UNREACHABLE")
    assert cache_entries(cache_dir) == 0
    first = len(api_server.requests)
    check_json(api_server, bib, cache_dir)
    assert len(api_server.requests) == 2 * first


def test_one_source_down_and_others_matched_is_true(api_server, tmp_path):
    """Triangulating, so that the sources a Crossref match makes unnecessary are asked."""
    api_server.fail("openalex", 503)
    api_server.fail("semantic_scholar", 500)
    bib = tmp_path / "refs.bib"
    bib.write_text(REAL_ONLY, encoding="utf-8")
    entry = by_key(check_json(api_server, bib, tmp_path / "cache", "--triangulate"))["real"]
    assert entry["summary"]["lookup_verified"] == "true"
    assert entry["outcome"]["resolvers"]["openalex"]["status"] == "unreachable"
    assert entry["item"] is None


def test_a_crossref_match_makes_the_other_sources_unnecessary(api_server, tmp_path):
    bib = tmp_path / "refs.bib"
    bib.write_text(REAL_ONLY, encoding="utf-8")
    entry = by_key(check_json(api_server, bib, tmp_path / "cache"))["real"]
    resolvers = entry["outcome"]["resolvers"]
    assert resolvers["crossref"]["status"] == "matched"
    for name in ("openalex", "semantic_scholar"):
        assert resolvers[name]["status"] == "skipped"
        assert resolvers[name]["response_summary"] == "not needed: matched by Crossref"
    assert {s.endpoint for s in api_server.requests} == {"doi_registry", "crossref"}


def test_datacite_doi_survives_crossref_404_when_the_agency_is_unknown(api_server, tmp_path):
    """doiRA down: Crossref is asked and says 404, the Handle is unreachable; DataCite decides."""
    api_server.fail("doi_registry", 503)
    api_server.fail("crossref", 404)
    api_server.fail("handle", 503)
    bib = tmp_path / "refs.bib"
    bib.write_text(BIB, encoding="utf-8")
    keys = by_key(check_json(api_server, bib, tmp_path / "cache"))
    for key in ("zenodo", "arxivdoi"):
        assert keys[key]["summary"]["lookup_verified"] == "true"
        assert "P0" not in {(keys[key]["item"] or {}).get("priority")}
    zenodo = keys["zenodo"]["outcome"]["resolvers"]
    assert zenodo["crossref"]["status"] == "unmatched"
    assert zenodo["datacite"]["status"] == "matched"


# --- command-line options -----------------------------------------------------------------------


def write_bib(tmp_path: Path, text: str = BIB) -> Path:
    bib = tmp_path / "refs.bib"
    bib.write_text(text, encoding="utf-8")
    return bib


@pytest.mark.parametrize(("text", "fail_on", "code"), [
    (BIB, "P0", 1),
    (BIB, "never", 0),
    (REAL_ONLY, "P0", 0),
    (REAL_ONLY, "P3", 0),
])
def test_fail_on_exit_codes(api_server, tmp_path, text, fail_on, code):
    add_scenario_routes(api_server)
    bib = write_bib(tmp_path, text)
    done = run_cli(api_server, "check", str(bib), "--fail-on", fail_on,
                   cache_dir=tmp_path / "cache", cwd=tmp_path)
    assert done.returncode == code, done.stdout + done.stderr


def test_fail_on_counts_priorities_at_or_above(api_server, tmp_path):
    bib = write_bib(tmp_path, "@article{nearmiss,\n  title = {Effect of native oxide layers on "
                    "copper thin-film tensile properties: A study},\n  author = {Skarlinski, M.},"
                    "\n  year = {2015},\n  journal = {J. Appl. Phys.},\n}\n")
    common = {"cache_dir": tmp_path / "cache", "cwd": tmp_path}
    assert run_cli(api_server, "check", str(bib), "--fail-on", "P1", **common).returncode == 1
    assert run_cli(api_server, "check", str(bib), "--fail-on", "P0", **common).returncode == 0


@pytest.mark.parametrize("args", [
    ("check", "refs.bib", "--format", "yaml"),
    ("check", "refs.bib", "--fail-on", "P9"),
    ("check", "missing.bib"),
    ("check",),
])
def test_usage_errors_exit_2(api_server, tmp_path, args):
    write_bib(tmp_path, REAL_ONLY)
    done = run_cli(api_server, *args, cache_dir=tmp_path / "cache", cwd=tmp_path)
    assert done.returncode == 2
    assert api_server.requests == []


def test_offline_makes_no_request_and_uses_cached_answers(api_server, tmp_path):
    bib = write_bib(tmp_path, REAL_ONLY)
    cache_dir = tmp_path / "cache"
    online = by_key(check_json(api_server, bib, cache_dir))["real"]
    asked = len(api_server.requests)
    offline = by_key(check_json(api_server, bib, cache_dir, "--offline"))["real"]
    assert len(api_server.requests) == asked
    assert offline["summary"]["lookup_verified"] == online["summary"]["lookup_verified"] == "true"
    assert offline["outcome"]["resolvers"]["crossref"]["from_cache"] is True


def test_offline_without_cache_asks_nothing(api_server, tmp_path):
    bib = write_bib(tmp_path)
    keys = by_key(check_json(api_server, bib, tmp_path / "cache", "--offline"))
    assert api_server.requests == []
    assert all(k["summary"]["lookup_verified"] != "false" for k in keys.values())
    statuses = {o["status"] for k in keys.values() for o in k["outcome"]["resolvers"].values()}
    assert "matched" not in statuses and "unreachable" not in statuses


def test_no_cache_neither_reads_nor_writes(api_server, tmp_path):
    bib = write_bib(tmp_path, REAL_ONLY)
    cache_dir = tmp_path / "cache"
    check_json(api_server, bib, cache_dir, "--no-cache")
    first = len(api_server.requests)
    assert first > 0 and cache_entries(cache_dir) == 0
    check_json(api_server, bib, cache_dir)
    assert len(api_server.requests) == 2 * first
    check_json(api_server, bib, cache_dir, "--no-cache")
    assert len(api_server.requests) == 3 * first


def test_progress_goes_to_stderr_only_on_a_terminal(api_server, tmp_path):
    bib = write_bib(tmp_path, REAL_ONLY)
    piped = run_cli(api_server, "check", str(bib), cache_dir=tmp_path / "c1", cwd=tmp_path)
    assert "Verifying references" not in piped.stderr + piped.stdout

    import pty

    leader, follower = pty.openpty()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CITELSP_")}
    env.update(api_server.env(), CITELSP_CACHE_DIR=str(tmp_path / "c2"), PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "citelsp", "check", str(bib)], env=env,
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=follower)
    os.close(follower)
    out, _ = proc.communicate(timeout=120)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    terminal = b"".join(chunks).decode()
    assert "Verifying references" in terminal and "1/1" in terminal  # a bar with rate and ETA
    assert b"Verifying" not in out


# --- human decisions ------------------------------------------------------------------------------


def test_decisions_verified_exempts_rejected_errors_and_rejection_is_permanent(
        api_server, tmp_path):
    bib = write_bib(tmp_path, BIB.split("@article{otherwork")[0])
    cache = tmp_path / "cache"
    common = {"cache_dir": cache, "cwd": tmp_path}
    assert run_cli(api_server, "check", "refs.bib", **common).returncode == 1

    decided = run_cli(api_server, "decide", "nodoi", "--verified", "--note", "checked", **common)
    assert decided.returncode == 0, decided.stderr
    assert run_cli(api_server, "check", "refs.bib", **common).returncode == 0
    entry = by_key(check_json(api_server, bib, cache))["nodoi"]
    assert entry["outcome"]["human_decision"]["decision"] == "verified"
    assert entry["summary"]["lookup_verified"] == "false"

    assert run_cli(api_server, "decide", "real", "--rejected", **common).returncode == 0
    text = run_cli(api_server, "check", "refs.bib", **common)
    assert text.returncode == 1
    assert re.search(r"refs\.bib:\d+:\d+: P0 HUMAN_REJECTED real: ", text.stdout)
    again = run_cli(api_server, "decide", "real", "--verified", **common)
    assert again.returncode == 1 and "permanent" in again.stderr
    report = check_json(api_server, bib, cache)
    assert by_key(report)["real"]["outcome"]["human_decision"]["decision"] == "rejected"
    assert_valid_report(report)
