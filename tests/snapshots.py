"""Snapshot-format files written from the recorded API bodies in ``fixtures/api`` (the services'
API objects are the snapshots' objects): OpenAlex ``updated_date`` folders, Crossref JSON Lines
and ``{"items": […]}`` files, DataCite JSON Lines, arXiv's Kaggle JSON Lines (from the Atom
entries), and a ``dblp.xml.gz`` written from Crossref works (DBLP has no recorded body)."""

from __future__ import annotations

import gzip
import json
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path
from xml.sax.saxutils import escape

from citelsp.resolution.records import person_from_name
from tests.apiserver import FIXTURES

ATOM = "{http://www.w3.org/2005/Atom}"
ARXIV = "{http://arxiv.org/schemas/atom}"


def _json(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


def openalex_works() -> list[dict]:
    """Every work object recorded from OpenAlex (single works and search results), once each."""
    works: dict[str, dict] = {}
    for path in sorted((FIXTURES / "openalex").glob("*.json")):
        body = _json(path)
        found = body.get("results") if isinstance(body.get("results"), list) else [body]
        for work in found:
            if isinstance(work, dict) and str(work.get("id", "")).startswith("https://openalex"):
                works.setdefault(work["id"], work)
    return list(works.values())


def crossref_works() -> list[dict]:
    works: dict[str, dict] = {}
    for path in sorted((FIXTURES / "crossref").glob("*.json")):
        if "derived" in path.name:
            continue
        body = _json(path)
        if not isinstance(body, dict):
            continue
        message = body.get("message")
        items = message.get("items") if body.get("message-type") == "work-list" else [message]
        for work in items or []:
            if isinstance(work, dict) and work.get("DOI"):
                works.setdefault(work["DOI"].lower(), work)
    return list(works.values())


def datacite_records() -> list[dict]:
    return [_json(p)["data"] for p in sorted((FIXTURES / "datacite").glob("*.json"))
            if isinstance(_json(p), dict) and isinstance(_json(p).get("data"), dict)]


def arxiv_papers() -> list[dict]:
    """The Atom entries recorded from arXiv as lines of Kaggle's metadata snapshot."""
    papers: dict[str, dict] = {}
    for path in sorted((FIXTURES / "arxiv").glob("*.xml")):
        try:
            root = ET.fromstring(path.read_bytes())
        except ET.ParseError:
            continue
        for entry in root.iter(f"{ATOM}entry"):
            url = entry.findtext(f"{ATOM}id") or ""
            if "/abs/" not in url:
                continue
            versioned = url.split("/abs/", 1)[1]
            base, _, version = versioned.rpartition("v") if "v" in versioned.split("/")[-1] \
                else (versioned, "", "1")
            names = [a.findtext(f"{ATOM}name") or "" for a in entry.findall(f"{ATOM}author")]
            published = entry.findtext(f"{ATOM}published") or ""
            papers.setdefault(base, {
                "id": base,
                "title": entry.findtext(f"{ATOM}title"),
                "authors": ", ".join(names),
                "authors_parsed": [[p.family, p.given, ""] for n in names
                                   if (p := person_from_name(n))],
                "journal-ref": entry.findtext(f"{ARXIV}journal_ref"),
                "doi": entry.findtext(f"{ARXIV}doi"),
                "versions": [{"version": f"v{i + 1}", "created": _rfc2822(published)}
                             for i in range(int(version or 1))],
                "update_date": (entry.findtext(f"{ATOM}updated") or "")[:10],
            })
    return list(papers.values())


def _rfc2822(iso: str) -> str:
    """``2016-05-26T17:59:46Z`` as Kaggle writes version dates (``Thu, 26 May 2016 …``)."""
    from datetime import datetime
    from email.utils import format_datetime
    if not iso:
        return ""
    return format_datetime(datetime.fromisoformat(iso.replace("Z", "+00:00")), usegmt=True)


def dblp_xml(works: Iterable[dict]) -> bytes:
    """A ``dblp.xml`` of Crossref works as DBLP would list them (entities as DBLP writes them)."""
    out = ['<?xml version="1.0" encoding="ISO-8859-1"?>', '<!DOCTYPE dblp SYSTEM "dblp.dtd">',
           "<dblp>"]
    for n, work in enumerate(works):
        title = (work.get("title") or [""])[0]
        if not title:
            continue
        year = (work.get("issued", {}).get("date-parts") or [[None]])[0][0]
        authors = "".join(
            f"<author>{_entities(escape(a.get('given', '') + ' ' + a['family']).strip())}"
            "</author>" for a in work.get("author", []) if a.get("family"))
        venue = (work.get("container-title") or ["Unknown"])[0]
        out.append(f'<article mdate="2025-06-01" key="journals/test/W{n}">{authors}'
                   f"<title>{_entities(escape(title))}.</title><year>{year}</year>"
                   f"<journal>{escape(venue)}</journal>"
                   f"<ee>https://doi.org/{escape(work['DOI'])}</ee></article>")
    out.append("</dblp>")
    return "\n".join(out).encode("latin-1", "xmlcharrefreplace")


def _entities(text: str) -> str:
    """Accented letters as DBLP's DTD entities (``ü`` → ``&uuml;``)."""
    from html.entities import codepoint2name
    return "".join(f"&{codepoint2name[ord(c)]};" if ord(c) > 127 and ord(c) in codepoint2name
                   else c for c in text)


def jsonl(objects: Iterable[dict]) -> bytes:
    return b"".join(json.dumps(o, ensure_ascii=False).encode() + b"\n" for o in objects)


def write_gz(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(data))
    return path


def write_snapshots(root: Path) -> dict[str, Path]:
    """Every source's snapshot files under ``root``; the path each reader is given."""
    crossref = crossref_works()
    half = len(crossref) // 2
    write_gz(root / "openalex/works/updated_date=2025-09-30/part_000.gz", jsonl(openalex_works()))
    write_gz(root / "crossref/0.jsonl.gz", jsonl(crossref[:half]))
    write_gz(root / "crossref/1.json.gz", json.dumps({"items": crossref[half:]}).encode())
    write_gz(root / "datacite/dois/updated_2025-08/part_0.jsonl.gz", jsonl(datacite_records()))
    (root / "arxiv").mkdir(parents=True, exist_ok=True)
    (root / "arxiv/arxiv-metadata-oai-snapshot.json").write_bytes(jsonl(arxiv_papers()))
    write_gz(root / "dblp/dblp.xml.gz", dblp_xml(crossref[:20]))
    return {"openalex": root / "openalex", "crossref": root / "crossref",
            "datacite": root / "datacite", "arxiv": root / "arxiv/arxiv-metadata-oai-snapshot.json",
            "dblp": root / "dblp/dblp.xml.gz"}
