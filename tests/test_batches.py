"""Batch lookups give the single lookups' answers, on the same recorded bodies (issue 9).

Each source's batch form is compared with one single lookup per key; the loopback server
answers batches by assembling the recorded single bodies the way the API does
(``tests/apibatch.py``), except arXiv's recorded two-id list, which is a real batch answer.
Then the ``Batcher``: keys asked together leave together, in the order asked, one key alone
takes the single endpoint, and a failed batch falls back to single lookups.
"""

from __future__ import annotations

import asyncio

import pytest

from citelsp.resolution.batching import Batcher
from citelsp.resolution.http import HttpClient
from citelsp.resolution.lookups import Lookups
from citelsp.resolution.outcome import Found, Unreachable
from citelsp.resolution.semantic_scholar import FIELDS
from citelsp.resolution.sources import Sources
from tests.apiserver import ApiServer, fixture


@pytest.fixture
def sources(http_client: HttpClient, api_settings) -> Sources:
    return Sources.create(http_client, api_settings)


def same(batched, single) -> bool:
    """Equal answers: the same kind, and for records the same records (a not-found answer's
    wording names the endpoint, which differs)."""
    if isinstance(single, Found):
        return isinstance(batched, Found) and batched.records == single.records
    return type(batched) is type(single)


async def singles(ask, keys):
    return {k: await ask(k) for k in keys}


CROSSREF_DOIS = [
    "10.1038/s42256-024-00832-8",
    "10.1016/j.addr.2015.01.008",
    "10.1073/pnas.1414271111",
    "10.1023/a:1007154515475",
    "10.1371/notarealdoi",
    "10.48550/arxiv.2312.07559",
]


OPENALEX_DOIS = [
    "10.1016/j.addr.2015.01.008",
    "10.1073/pnas.1414271111",
    "10.1890/0012-9658(2006)87[2832:tiopma]2.0.co;2",
    "10.1046/j.1365-2699.2003.00795",
    "10.5281/zenodo.7955181",
    "10.1371/notarealdoi",
]


@pytest.mark.parametrize(("source", "keys", "size_key"), [
    ("crossref", CROSSREF_DOIS, "rows"),
    ("openalex", OPENALEX_DOIS, "per-page"),
])
async def test_doi_filter_batch_equals_single_lookups(sources, api_server, source, keys,
                                                      size_key):
    client = getattr(sources, source)
    batched = await client.by_dois(keys)
    request = api_server.requests[-1]
    assert request.query[size_key] == str(len(keys))
    assert request.query["filter"].startswith("doi:")
    alone = await singles(client.by_doi, keys)
    assert all(same(batched[d], alone[d]) for d in keys), (batched, alone)
    assert sum(isinstance(a, Found) for a in batched.values()) == 4


S2_IDS = [
    "DOI:10.1038/s42256-024-00832-8",
    "DOI:10.1063/1.4938384",
    "DOI:10.1101/2024.04.01.587366",
    "DOI:10.48550/arxiv.2312.07559",
    "DOI:10.1/never-recorded",
]


async def test_semantic_scholar_batch_equals_single_lookups(sources, api_server):
    batched = await sources.semantic_scholar.by_ids(S2_IDS)
    request = api_server.requests[-1]
    assert (request.method, request.query["fields"]) == ("POST", FIELDS)
    alone = await singles(sources.semantic_scholar.by_id, S2_IDS)
    assert all(same(batched[i], alone[i]) for i in S2_IDS), (batched, alone)
    assert sum(isinstance(a, Found) for a in batched.values()) == 3


async def test_arxiv_recorded_id_list_equals_single_lookups(sources, api_server):
    """Recorded by arxiv.py: ``id_list=0808.05394,1707.08567`` (one entry; the first id has
    none) and each id alone."""
    ids = ["0808.05394", "1707.08567"]
    batched = await sources.arxiv.by_arxiv_ids(ids)
    assert api_server.requests[-1].query == {"id_list": ",".join(ids), "max_results": "2"}
    alone = await singles(sources.arxiv.by_arxiv_id, ids)
    assert all(same(batched[i], alone[i]) for i in ids), (batched, alone)
    assert isinstance(batched["1707.08567"], Found)


async def test_arxiv_assembled_id_list_equals_single_lookups(sources):
    ids = ["1605.08386", "1111.2011v2", "quant-ph/0201082v1", "0000.0000"]
    batched = await sources.arxiv.by_arxiv_ids(ids)
    alone = await singles(sources.arxiv.by_arxiv_id, ids)
    assert all(same(batched[i], alone[i]) for i in ids), (batched, alone)


async def test_arxiv_error_feed_refuses_the_whole_list(sources, api_server):
    api_server.add("arxiv", "GET", "", query={"id_list": "abc"}, status=400,
                   body=fixture("arxiv/id_abc.400.xml"))
    answer = await sources.arxiv.by_arxiv_ids(["1605.08386", "abc"])
    assert not isinstance(answer, dict), "one malformed id: no per-id answers at all"


PREFIXES = ["10.1038", "10.5281", "10.99999", "10.1016"]


async def test_doira_prefix_list_equals_single_lookups(sources, api_server):
    batched = await sources.doi_registry.agencies(PREFIXES)
    assert api_server.requests[-1].decoded_path == "/doiRA/" + ",".join(PREFIXES)
    alone = await singles(sources.doi_registry.agency, PREFIXES)
    assert batched == alone
    assert batched["10.99999"].name is None and batched["10.5281"].name == "DataCite"


# --- the Batcher ----------------------------------------------------------------------------


async def test_keys_asked_together_leave_in_one_request(sources, api_server):
    lookups = Lookups(sources, _http(sources))
    answers = await asyncio.gather(*(lookups.crossref.ask(d) for d in CROSSREF_DOIS))
    assert [r.endpoint for r in api_server.requests] == ["crossref"]
    alone = await singles(sources.crossref.by_doi, CROSSREF_DOIS)
    assert all(same(a, alone[d]) for a, d in zip(answers, CROSSREF_DOIS, strict=True))


async def test_one_key_alone_takes_the_single_endpoint(sources, api_server):
    lookups = Lookups(sources, _http(sources))
    await lookups.crossref.ask(CROSSREF_DOIS[0])
    assert api_server.requests[-1].decoded_path == f"/works/{CROSSREF_DOIS[0]}"


async def test_a_lone_key_waits_for_a_single_record_slot_not_a_list_slot(
        sources, api_server, monkeypatch):
    """Crossref paces lists at a third of the single-record rate: a lone DOI, asked with
    ``/works/{doi}``, must reserve (and not waste) a slot of the single-record lane; keys
    that leave together reserve a list slot."""
    pacer = _http(sources)._pacer
    reserved: list[str] = []
    reserve = pacer.reserve

    async def recording(origin, lane="all"):
        reserved.append(lane)
        await reserve(origin, lane)

    monkeypatch.setattr(pacer, "reserve", recording)
    await Lookups(sources, _http(sources)).crossref.ask(CROSSREF_DOIS[0])
    assert reserved == ["single"]
    lookups = Lookups(sources, _http(sources))
    await asyncio.gather(*(lookups.crossref.ask(d) for d in CROSSREF_DOIS))
    assert reserved[-1] == "list"


async def test_a_failed_batch_falls_back_to_single_lookups(sources, api_server: ApiServer):
    """One DOI's single lookup fails (503): the batch carrying it fails as a whole, and the
    single lookups give every other DOI its answer."""
    api_server.fail("crossref", 503, path=f"/works/{CROSSREF_DOIS[2]}")
    lookups = Lookups(sources, _http(sources))
    answers = await asyncio.gather(*(lookups.crossref.ask(d) for d in CROSSREF_DOIS))
    assert isinstance(answers[2], Unreachable)
    assert all(isinstance(a, Found) for a in answers[:2])
    paths = [r.decoded_path for r in api_server.requests]
    assert paths[0] == "/works" and len(paths) == 1 + len(CROSSREF_DOIS)


def echoing() -> tuple[list[list], dict]:
    """What each request carried, and the ``ask_many``/``ask_one`` of a batcher that answers
    every key with itself."""
    sent: list[list] = []

    async def many(keys):
        sent.append(keys)
        return {k: k for k in keys}

    async def one(key):
        sent.append([key])
        return key

    return sent, {"ask_many": many, "ask_one": one}


async def test_batches_keep_the_order_keys_were_asked_in():
    sent, asks = echoing()
    batcher: Batcher[int, int] = Batcher(size=3, **asks)
    assert await asyncio.gather(*(batcher.ask(k) for k in range(7))) == list(range(7))
    assert sent == [[0, 1, 2], [3, 4, 5], [6]]


async def test_conflicting_keys_never_share_a_batch():
    sent, asks = echoing()
    batcher: Batcher[str, str] = Batcher(size=10, conflicts=lambda k: k.split("v")[0], **asks)
    await asyncio.gather(*(batcher.ask(k) for k in ("1605.08386v1", "1605.08386v2", "1111.2011")))
    assert sent == [["1605.08386v1", "1111.2011"], ["1605.08386v2"]]


def _http(sources: Sources) -> HttpClient:
    return sources.crossref._http
