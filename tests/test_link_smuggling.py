"""Identifiers that try to smuggle a link into a hover, a report or an edit (issue 13, item 1).

Each output is rendered with markdown-it (CommonMark, the parser VS Code uses): every live link
must point at an allowlisted https host, and no raw HTML may survive.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlsplit

from lsprotocol import types
from lsprotocol.converters import get_converter

from citelsp import links
from tests.apiserver import ApiServer, fixture
from tests.lsp_session import lsp_session, open_file, wait_until
from tests.test_check_e2e import run_cli
from tests.test_links import link_targets

SMUGGLING_DOIS = {
    "esc": "10.1234/x%1b<https://evil.example/esc>",
    "phish": "10.1234/a>[click](https://evil.example/phish)",
    "script": "10.1234/<script>alert(1)</script>",
}
REAL_DOI = "10.1038/s42256-024-00832-8"
REAL_TITLE = "Augmenting large language models with chemistry tools"
API_DOI = REAL_DOI + "\x1b<https://evil.example/esc>"


def bib_entry(key: str, doi: str | None, *, title: str = "A title nobody has", year: int = 2021,
              author: str = "Mallory, Eve") -> str:
    field = f"  doi = {{{doi}}},\n" if doi else ""
    return (f"@article{{{key},\n  title = {{{title}}},\n  author = {{{author}}},\n"
            f"  journal = {{Journal of Mischief}},\n  year = {{{year}}},\n{field}}}\n")


def assert_only_allowed_links(markdown: str) -> None:
    for target in link_targets(markdown):
        assert links.allowed(target) == target, target
        assert "evil.example" not in urlsplit(target).netloc


def refuse_by_handle(server: ApiServer, doi: str) -> None:
    """The Handle System's "no such handle" for ``doi`` (responseCode 100, served as 404)."""
    body = json.dumps({"responseCode": 100, "handle": doi})
    server.add("handle", "GET", f"/api/handles/{doi}", status=404, body=body)


def test_markdown_and_json_reports_carry_no_smuggled_link(api_server: ApiServer, tmp_path):
    for doi in SMUGGLING_DOIS.values():
        refuse_by_handle(api_server, doi.lower())
    (tmp_path / "refs.bib").write_text(
        "".join(bib_entry(key, doi) for key, doi in SMUGGLING_DOIS.items()), encoding="utf-8")

    done = run_cli(api_server, "check", "refs.bib", "--format", "markdown", "--fail-on", "never",
                   cache_dir=tmp_path / "cache", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "**phish**" in done.stdout and "**script**" in done.stdout
    assert_only_allowed_links(done.stdout)

    done = run_cli(api_server, "check", "refs.bib", "--format", "json", "--fail-on", "never",
                   cache_dir=tmp_path / "cache", cwd=tmp_path)
    report = json.loads(done.stdout)
    urls = [u for item in report["checklist"] for u in item["verification_urls"]]
    assert urls and all(links.allowed(u) == u for u in urls)
    invalid = [d["range"]["start"]["line"] for d in report["diagnostics"]
               if d["code"] == "INVALID_IDENTIFIER"]
    assert invalid == [position_in(tmp_path / "refs.bib", "x%1b").line]


def hostile_api_record() -> str:
    """Crossref's recorded work for ``REAL_DOI``, but with a DOI carrying ESC and an autolink."""
    body = json.loads(fixture(f"crossref/{REAL_DOI.replace('/', '_')}.json").read_text())
    body["message"]["DOI"] = API_DOI
    return json.dumps(body)


def hostile_search_page() -> str:
    work = json.loads(hostile_api_record())["message"]
    return json.dumps({"status": "ok", "message-type": "work-list",
                       "message": {"items": [work], "total-results": 1}})


async def test_an_api_doi_reaches_neither_a_hover_link_nor_an_add_doi_edit(api_server, tmp_path):
    api_server.add("crossref", "GET", f"/works/{REAL_DOI}", body=hostile_api_record())
    api_server.add("crossref", "GET", "/works", query={"query.title": REAL_TITLE},
                   body=hostile_search_page())
    root = tmp_path / "ws"
    root.mkdir()
    bib_path = root / "refs.bib"
    bib_path.write_text(
        bib_entry("cited", REAL_DOI, title=REAL_TITLE, year=2019, author="Bran, Andres M.")
        + bib_entry("nodoi", None, title=REAL_TITLE, year=2024, author="Bran, Andres M.")
        + bib_entry("escdoi", SMUGGLING_DOIS["esc"], title=REAL_TITLE, year=2024,
                    author="Bran, Andres M."),
        encoding="utf-8")
    env = {**api_server.env(), "CITELSP_CACHE_DIR": str(tmp_path / "cache")}

    async with lsp_session(root, env) as lsp:
        uri = open_file(lsp, bib_path, "bibtex")

        def all_verified(client) -> bool:
            shown = {d.message.split(":")[0] for d in client.diagnostics.get(uri, [])
                     if d.code == "METADATA_CONFLICT"}
            return {"cited", "nodoi", "escdoi"} <= shown

        await wait_until(lsp, all_verified)
        for key in ("cited", "nodoi", "escdoi"):
            at = position_in(bib_path, key + ",")
            hover = await lsp.text_document_hover_async(types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri), position=at))
            card = hover.contents.value
            assert "Matched record" in card
            assert "\x1b" not in card
            assert_only_allowed_links(card)

            actions = await lsp.text_document_code_action_async(types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=types.Range(start=at, end=at),
                context=types.CodeActionContext(diagnostics=[])))
            for action in actions:
                shown = json.dumps(get_converter().unstructure(action))
                assert "\\u001b" not in shown and "evil.example" not in shown, action.title


def position_in(path: Path, needle: str) -> types.Position:
    for row, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        if (col := line.find(needle)) != -1:
            return types.Position(line=row, character=col + 1)
    raise AssertionError(needle)
