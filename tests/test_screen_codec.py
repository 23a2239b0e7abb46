"""What a screening worker stores and reads: a reference rebuilt from JSON cites what the
entry cites, and a resolution read back from JSON is the one stored (so a report judges it
as a one-process check does)."""

from __future__ import annotations

import json

from citelsp.documents.bibtex import parse_bibtex
from citelsp.documents.csl import parse_csl_json
from citelsp.resolution.engine import Engine
from citelsp.resolution.identifiers import reference_ids
from citelsp.resolution.identity import reference_identity
from citelsp.screen import codec
from citelsp.screen.works import portable, reference_from, work_key
from citelsp.verdict.judge import judge
from tests.test_check_e2e import BIB, add_scenario_routes

CSL = json.dumps([{"id": "csl1", "type": "article-journal", "title": "Augmenting large "
                   "language models with chemistry tools", "DOI": "10.1038/s42256-024-00832-8",
                   "author": [{"family": "Bran", "given": "Andres M."}], "issued":
                   {"date-parts": [[2024]]}}])
INHERITING = r"""
@inproceedings{part, title = {A chapter}, author = {Writer, Anne}, crossref = {whole}}
@proceedings{whole, title = {The whole book}, year = {2001}, booktitle = {The whole book}}
"""


def _through_json(data):
    return json.loads(json.dumps(data))


def test_a_reference_rebuilt_from_json_cites_what_the_entry_cites():
    refs = [*parse_bibtex("file:///s/refs.bib", BIB + INHERITING).references,
            *parse_csl_json("file:///s/refs.json", CSL).references]
    for ref in refs:
        copy = reference_from(_through_json(portable(ref)))
        assert copy.work == ref.work, ref.key
        assert reference_ids(copy) == reference_ids(ref)
        assert reference_identity(copy) == reference_identity(ref)
        assert work_key(copy) == work_key(ref)
    keys = {ref.key: work_key(ref) for ref in refs}
    assert keys["real"] == keys["csl1"] == "doi:10.1038/s42256-024-00832-8"
    assert keys["titleonly"] == keys["conflict"]  # one title, one job: each judged alone
    assert keys["generic"] == "title:introduction"


async def test_a_stored_resolution_reads_back_as_it_was_and_grades_the_same(api_server,
                                                                             api_settings):
    add_scenario_routes(api_server)
    refs = parse_bibtex("file:///s/refs.bib", BIB).references
    engine = Engine(api_settings, arxiv_recheck_delay=0)
    try:
        resolutions = await engine.resolve_all(refs)
    finally:
        await engine.aclose()
    statuses = set()
    for ref, resolution in zip(refs, resolutions, strict=True):
        back = codec.decode(_through_json(codec.encode(resolution)))
        assert back == resolution, ref.key
        assert judge(ref, back) == judge(ref, resolution)
        statuses |= {o.status for o in resolution.outcomes.values()}
    assert {"matched", "unmatched", "skipped"} <= statuses  # records, misses and skips


def test_what_is_not_a_stored_resolution_is_refused():
    for data in ({}, {"key": "k"}, {"key": "k", "ids": {}, "outcomes": {"x": {}}}):
        try:
            codec.decode(data)
        except ValueError as exc:
            assert "not a stored resolution" in str(exc)
        else:
            raise AssertionError(f"{data} was read as a resolution")
