"""Screening many manuscripts in one run: one shared plan (each distinct work asked once), and a
per-manuscript summary (CSV and JSON) beside the usual reports."""

from __future__ import annotations

import csv
import json

from tests.apiserver import ApiServer, load_default_routes
from tests.test_check_e2e import BIB, run_cli

ENTRIES = {e.split("{", 1)[1].split(",", 1)[0]: "@" + e for e in BIB.split("@")[1:]}
ENTRY, INVENTED = ENTRIES["real"], ENTRIES["nodoi"]
"""A real work and an invented DOI, from the end-to-end bibliography."""


def test_a_folder_of_submissions_gets_one_row_each_and_one_lookup_per_work(tmp_path):
    for n in range(3):
        paper = tmp_path / "submissions" / f"paper{n}"
        paper.mkdir(parents=True)
        (paper / "refs.bib").write_text(ENTRY + (INVENTED if n == 1 else ""))
        cites = "[@real; @nodoi]" if n == 1 else "[@real]"
        (paper / "paper.md").write_text(f"---\nbibliography: refs.bib\n---\nAs shown {cites}.\n")
    with ApiServer() as server:
        load_default_routes(server)
        done = run_cli(server, "check", "submissions", "--format", "json", "--fail-on", "never",
                       "--summary-csv", "summary.csv", "--summary-json", "summary.json",
                       cache_dir=tmp_path / "cache", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert server.asked("crossref", "10.1038/s42256-024-00832-8") == 1  # one plan for all
        again = run_cli(server, "check", "submissions", "--format", "json", "--fail-on",
                        "never", cache_dir=tmp_path / "cache", cwd=tmp_path)
        assert again.returncode == 0, again.stderr
        # a run after an interruption resumes: what was answered comes from the cache
        assert server.asked("crossref", "10.1038/s42256-024-00832-8") == 1
    rows = list(csv.DictReader((tmp_path / "summary.csv").open()))
    assert [(r["manuscript"].split("/")[-2], r["references"], r["P0"], r["P0_keys"])
            for r in rows] == [("paper0", "1", "0", ""), ("paper1", "2", "1", "nodoi"),
                               ("paper2", "1", "0", "")]
    as_json = json.loads((tmp_path / "summary.json").read_text())
    assert [r["P0"] for r in as_json] == [0, 1, 0] and as_json[1]["checked"] == 2
