"""Batch requests answered from the recorded single bodies, assembled as each API does.

Few batch answers were ever recorded, so ``ApiServer`` builds one from the single lookups it
would serve for each key (DESIGN.md §4 "Request plan"): outcomes of a batch must equal those of
the single lookups, and this way both come from the same recorded bodies.

- Crossref ``GET /works?filter=doi:a,doi:b&rows=N``: a ``work-list`` whose items are the
  ``message`` of each ``/works/{doi}`` body; a DOI answered 404 is simply absent.
- OpenAlex ``GET /works?filter=doi:a|b&per-page=N``: ``{"meta", "results"}`` with each
  ``/works/doi:{doi}`` body; a 404 is absent.
- Semantic Scholar ``POST /paper/batch`` ``{"ids": [...]}``: a list aligned with the ids, each
  ``/paper/{id}`` body or ``null`` for a 404.
- arXiv ``?id_list=a,b``: one Atom feed holding the entries of each ``id_list={id}`` feed, its
  ``totalResults`` their count; an error feed for one id is the answer for the whole list, as
  arXiv refuses a list with a malformed id.
- doi.org ``/doiRA/a,b``: the rows of each ``/doiRA/{prefix}`` body, concatenated.

When a single lookup would not be a plain answer (a fault, a delay, another status), the batch
is answered the same way, so a fault on one key fails the batch and the client falls back.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

if TYPE_CHECKING:
    from tests.apiserver import Route, Seen

ATOM = "http://www.w3.org/2005/Atom"
OPENSEARCH = "http://a9.com/-/spec/opensearch/1.1/"
ET.register_namespace("", ATOM)
ET.register_namespace("opensearch", OPENSEARCH)
ET.register_namespace("arxiv", "http://arxiv.org/schemas/atom")

Find = Callable[["Seen"], "Route | None"]
BATCH_KEYS = ("filter", "id_list")
"""Query keys a route names when it answers batch requests (besides a recorded body)."""


def is_batch(seen: Seen) -> bool:
    return len(questions(seen)) > 1 or (
        seen.method == "POST" and seen.endpoint == "semantic_scholar") or (
        seen.query.get("filter", "").startswith("doi:"))


def batch_route(seen: Seen, find: Find, make: Callable[..., Route]) -> Route | None:
    """A route answering ``seen`` if it is a batch request, else None. ``find`` looks up
    the route a single request would get; ``make`` builds a Route (endpoint, method, body)."""
    query = seen.query
    if seen.endpoint == "crossref" and seen.path == "/works" and \
            query.get("filter", "").startswith("doi:"):
        keys = [v[len("doi:"):] for v in query["filter"].split(",")]
        return _json_list(seen, find, make, keys, lambda k: f"/works/{quote(k)}", {},
                          _crossref_list(query))
    if seen.endpoint == "openalex" and seen.path == "/works" and \
            query.get("filter", "").startswith("doi:"):
        keys = [v.removeprefix("https://doi.org/") for v in
                query["filter"][len("doi:"):].split("|")]
        return _json_list(seen, find, make, keys, lambda k: f"/works/doi:{quote(k)}", {},
                          _openalex_list(query))
    if seen.endpoint == "semantic_scholar" and seen.method == "POST" and \
            seen.path == "/paper/batch":
        try:
            ids = json.loads(seen.body)["ids"]
        except (ValueError, KeyError, TypeError):
            return None
        return _json_list(seen, find, make, ids, lambda k: f"/paper/{quote(k)}",
                          {"fields": query.get("fields", "")}, lambda bodies: bodies,
                          keep_missing=True)
    if seen.endpoint == "arxiv" and "," in query.get("id_list", ""):
        return _arxiv(seen, find, make, query["id_list"].split(","))
    if seen.endpoint == "doi_registry" and seen.path.startswith("/doiRA/") and "," in seen.path:
        prefixes = seen.decoded_path[len("/doiRA/"):].split(",")
        return _json_list(seen, find, make, prefixes, lambda k: f"/doiRA/{k}", {},
                          lambda rows: [row for body in rows for row in body],
                          missing_is_failure=True)
    return None


def questions(seen: Seen) -> list[tuple[str | None, str]]:
    """The single lookups ``seen`` stands for, as (endpoint, decoded path or ``id_list``): one
    for a single request, one per key for a batch."""
    query = seen.query
    if seen.endpoint == "crossref" and query.get("filter", "").startswith("doi:"):
        return [("crossref", f"/works/{v[len('doi:'):]}") for v in query["filter"].split(",")]
    if seen.endpoint == "openalex" and query.get("filter", "").startswith("doi:"):
        return [("openalex", f"/works/doi:{v.removeprefix('https://doi.org/')}")
                for v in query["filter"][len("doi:"):].split("|")]
    if seen.endpoint == "semantic_scholar" and seen.method == "POST":
        try:
            return [("semantic_scholar", f"/paper/{i}") for i in json.loads(seen.body)["ids"]]
        except (ValueError, KeyError, TypeError):
            return [("semantic_scholar", seen.decoded_path)]
    if seen.endpoint == "arxiv" and "id_list" in query:
        return [("arxiv", f"id_list={i}") for i in query["id_list"].split(",")]
    if seen.endpoint == "doi_registry" and seen.decoded_path.startswith("/doiRA/"):
        return [("doi_registry", f"/doiRA/{p}")
                for p in seen.decoded_path[len("/doiRA/"):].split(",")]
    return [(seen.endpoint, seen.decoded_path)]


def _single(seen: Seen, path: str, query: dict[str, str], method: str = "GET") -> Seen:
    return seen._replace(method=method, path=path, query=query, body=b"")


def _json_list(seen: Seen, find: Find, make: Callable[..., Route], keys: list[str],
               path_of: Callable[[str], str], query: dict[str, str],
               assemble: Callable[[list[Any]], Any], *, keep_missing: bool = False,
               missing_is_failure: bool = False) -> Route:
    bodies = []
    for key in keys:
        route = find(_single(seen, path_of(key), query))
        if route is None or route.status == 404:
            if missing_is_failure:
                return route or make(seen.endpoint, seen.method, 404, b'{"apiserver": "no route"}')
            if keep_missing:
                bodies.append(None)
            continue
        if route.status != 200 or route.delay or route.fault:
            return route
        try:
            bodies.append(json.loads(route.body))
        except ValueError:
            return route
    return make(seen.endpoint, seen.method, 200, json.dumps(assemble(bodies)).encode())


def _crossref_list(query: dict[str, str]) -> Callable[[list[Any]], Any]:
    rows = int(query.get("rows") or 20)

    def assemble(bodies: list[Any]) -> Any:
        items = [b["message"] for b in bodies][:rows]
        return {"status": "ok", "message-type": "work-list", "message-version": "1.0.0",
                "message": {"facets": {}, "total-results": len(bodies), "items": items,
                            "items-per-page": rows, "query": {"start-index": 0,
                                                              "search-terms": None}}}
    return assemble


def _openalex_list(query: dict[str, str]) -> Callable[[list[Any]], Any]:
    per_page = int(query.get("per-page") or 25)

    def assemble(bodies: list[Any]) -> Any:
        return {"meta": {"count": len(bodies), "page": 1, "per_page": per_page},
                "results": bodies[:per_page]}
    return assemble


def _arxiv(seen: Seen, find: Find, make: Callable[..., Route], ids: list[str]) -> Route:
    entries: list[ET.Element] = []
    for arxiv_id in ids:
        route = find(_single(seen, "", {"id_list": arxiv_id}))
        if route is None or route.status != 200 or route.delay or route.fault:
            return route or make(seen.endpoint, seen.method, 404, b'{"apiserver": "no route"}')
        feed = ET.fromstring(route.body)
        if any("arxiv.org/api/errors" in (e.findtext(f"{{{ATOM}}}id") or "")
               for e in feed.iter(f"{{{ATOM}}}entry")):
            return route
        entries += feed.findall(f"{{{ATOM}}}entry")
    limit = int(seen.query.get("max_results") or 10)
    feed = ET.Element(f"{{{ATOM}}}feed")
    ET.SubElement(feed, f"{{{ATOM}}}id").text = "https://arxiv.org/api/apiserver-batch"
    ET.SubElement(feed, f"{{{ATOM}}}title").text = f"arXiv Query: id_list={','.join(ids)}"
    ET.SubElement(feed, f"{{{OPENSEARCH}}}itemsPerPage").text = str(limit)
    ET.SubElement(feed, f"{{{OPENSEARCH}}}totalResults").text = str(len(entries))
    ET.SubElement(feed, f"{{{OPENSEARCH}}}startIndex").text = "0"
    feed.extend(entries[:limit])
    body = b"<?xml version='1.0' encoding='UTF-8'?>\n" + ET.tostring(feed)
    return make(seen.endpoint, seen.method, 200, body, "application/atom+xml")
