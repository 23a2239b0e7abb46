"""The language server presents verification: graded diagnostics, progress, hover cards,
code actions, commands and human decisions, against recorded bodies on a loopback server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lsprotocol import types

from tests.apiserver import ApiServer, fixture, load_default_routes
from tests.lsp_session import codes, lsp_session, open_file, wait_until

REAL_DOI = "10.1038/s42256-024-00832-8"
REAL_TITLE = "Augmenting large language models with chemistry tools"
FAKE_DOI = "10.1371/notarealdoi"
HOSTILE = "[click](command:citelsp.decide) <img src=x onerror=alert(1)> **bold** `code`"

BIB = f"""@article{{bran2024,
  title   = {{{REAL_TITLE}}},
  author  = {{Bran, Andres M. and Cox, Sam and Schilter, Oliver and Baldassari, Carlo
             and White, Andrew D. and Schwaller, Philippe}},
  journal = {{Nature Machine Intelligence}},
  year    = {{2024}},
  doi     = {{{REAL_DOI}}},
}}

@article{{wrongyear,
  title   = {{{REAL_TITLE}}},
  author  = {{Bran, Andres M. and Cox, Sam}},
  journal = {{Nature Machine Intelligence}},
  year    = {{2019}},
  doi     = {{{REAL_DOI}}},
}}

@article{{fake,
  title   = {{A Unified Benchmark of Hallucinated Citations}},
  author  = {{Smith, Jane}},
  journal = {{Journal of Imaginary Results}},
  year    = {{2023}},
  doi     = {{{FAKE_DOI}}},
}}

@article{{invented,
  title   = {{Quantum Gravitational Effects in Medieval Bread Baking}},
  author  = {{Nobody, Ann}},
  journal = {{Annals of Things}},
  year    = {{2021}},
}}

@article{{down,
  author  = {{Offline, Olga}},
  year    = {{2020}},
  doi     = {{10.9999/down.1}},
}}

@misc{{handbook,
  title    = {{Internal lab handbook}},
  author   = {{Lab, The}},
  year     = {{2020}},
  citelsp  = {{manual}},
}}

@article{{hostile,
  title   = {{{HOSTILE}}},
  author  = {{Mallory, Eve}},
  journal = {{Nature Machine Intelligence}},
  year    = {{2024}},
  doi     = {{10.5555/hostile.1}},
}}
"""

PAPER = """---
bibliography: refs.bib
---
Chemistry agents [@bran2024] and again [@wrongyear].
A fabricated one [@fake] and an invented one [@invented].
Unreachable [@down], manual [@handbook], hostile [@hostile].
"""

TEX = r"""\documentclass{article}
\begin{document}
Chemistry \cite{bran2024} and \citep[p.~3]{fake}.
\bibliography{refs}
\end{document}
"""

CSL = [
    {"id": "cslfake", "type": "article-journal", "title": "Another Fabricated Work",
     "author": [{"family": "Doe", "given": "John"}], "issued": {"date-parts": [[2022]]},
     "DOI": FAKE_DOI},
    {"id": "cslreal", "type": "article-journal", "title": REAL_TITLE,
     "author": [{"family": "Bran", "given": "Andres M."}], "issued": {"date-parts": [[2024]]},
     "container-title": "Nature Machine Intelligence", "DOI": REAL_DOI},
]


def hostile_record() -> str:
    body = json.loads(fixture(f"crossref/{REAL_DOI.replace('/', '_')}.json").read_text())
    body["message"]["DOI"] = "10.5555/hostile.1"
    body["message"]["title"] = [HOSTILE + " [evil](https://evil.example/x)"]
    body["message"]["author"] = [{"family": "Mallory <script>", "given": "Eve"}]
    return json.dumps(body)


@pytest.fixture
def api() -> ApiServer:
    server = ApiServer().start()
    # Catch-all searches first: recorded real answers that match nothing cited here.
    server.add("crossref", "GET", "/works",
               body=fixture("crossref/search/title_askldjrq3rjaw938h.json"))
    server.add("openalex", "GET", "/works", body=fixture(
        "openalex/search/title_PaperQA_Retrieval-Augmented_Generative_Agent_for_Scientific_Research.json"))
    server.add("semantic_scholar", "GET", "/paper/search",
               body=fixture("semantic_scholar/search/n0_r3sult_s3arch_t3rm.json"))
    load_default_routes(server)
    for endpoint, path in (("crossref", "/works/10.9999/down.1"),
                           ("openalex", "/works/doi:10.9999/down.1"),
                           ("semantic_scholar", "/paper/DOI:10.9999/down.1"),
                           ("doi_registry", "/doiRA/10.9999"),
                           ("datacite", "/dois/10.9999/down.1"),
                           ("handle", "/api/handles/10.9999/down.1")):
        server.fail(endpoint, 503, path=path)
    server.add("doi_registry", "GET", "/doiRA/10.5555",
               body=json.dumps([{"DOI": "10.5555", "RA": "Crossref"}]))
    server.add("crossref", "GET", "/works/10.5555/hostile.1", body=hostile_record())
    yield server
    server.stop()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "refs.bib").write_text(BIB, encoding="utf-8")
    (root / "paper.md").write_text(PAPER, encoding="utf-8")
    (root / "paper.tex").write_text(TEX, encoding="utf-8")
    (root / "refs.json").write_text(json.dumps(CSL, indent=2), encoding="utf-8")
    return root


@pytest.fixture
def env(api: ApiServer, tmp_path: Path) -> dict[str, str]:
    return {**api.env(), "CITELSP_CACHE_DIR": str(tmp_path / "cache")}


def verified(uri: str, *keys: str):
    """Predicate: every key has a verification diagnostic in the document ``uri``."""
    def check(lsp) -> bool:
        shown = {d.message.split(":")[0] for d in lsp.diagnostics.get(uri, [])
                 if d.code not in ("ORPHAN_REFERENCE", "DUPLICATE_WORK", "DANGLING_CITATION")}
        return all(k in shown for k in keys)
    return check


async def test_graded_diagnostics_on_fields_and_citations(workspace, env):
    async with lsp_session(workspace, env) as lsp:
        bib = open_file(lsp, workspace / "refs.bib", "bibtex")
        md = open_file(lsp, workspace / "paper.md", "markdown")
        await wait_until(lsp, verified(bib, "fake", "wrongyear", "invented", "down", "handbook"))
        await wait_until(lsp, verified(md, "fake", "wrongyear", "invented", "down"))
        found = codes(lsp, bib)
        text = (workspace / "refs.bib").read_text().splitlines()

        refuted = found["DOI_REFUTED"][0]
        assert refuted.severity == types.DiagnosticSeverity.Error
        assert FAKE_DOI in text[refuted.range.start.line][refuted.range.start.character:]
        assert refuted.code_description.href.endswith("#doi_refuted")
        assert "does not exist" in refuted.message

        conflict = found["METADATA_CONFLICT"]
        year = [d for d in conflict if d.message.startswith("wrongyear:")][0]
        assert year.severity == types.DiagnosticSeverity.Warning
        assert text[year.range.start.line].strip().startswith("year")

        assert found["NOT_FOUND_IN_INDEXES"][0].severity == types.DiagnosticSeverity.Warning
        assert found["UNREACHABLE"][0].severity == types.DiagnosticSeverity.Information
        assert found["NO_AUTOMATED_SOURCE"][0].severity == types.DiagnosticSeverity.Hint
        assert not any(d.message.startswith("bran2024:") for ds in found.values() for d in ds
                       if d.code not in ("DUPLICATE_WORK", "ORPHAN_REFERENCE"))

        manuscript = codes(lsp, md)
        cited = {d.message.split(":")[0]: d for ds in manuscript.values() for d in ds}
        assert cited["fake"].code == "DOI_REFUTED"
        assert cited["wrongyear"].code == "METADATA_CONFLICT"
        assert "handbook" not in cited  # P3 stays in the bibliography
        line = (workspace / "paper.md").read_text().splitlines()[cited["fake"].range.start.line]
        start = cited["fake"].range.start.character
        assert line[start:cited["fake"].range.end.character] == "fake"
        for d in manuscript.get("NOT_FOUND_IN_INDEXES", []):
            assert "pending human check" in d.message and "fabricated" not in d.message
