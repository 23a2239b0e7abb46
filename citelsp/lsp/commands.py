"""Commands (``workspace/executeCommand``): the ones the fixes offer (open a link, create an
entry, record a decision, re-verify) and the reports (checklist, export)."""

from __future__ import annotations

from lsprotocol import types

from citelsp import links
from citelsp.lsp.session import CitelspServer
from citelsp.reports import RENDERERS
from citelsp.reports.markdown import render as render_checklist
from citelsp.spans import Edit, Span
from citelsp.verdict.decisions import Decision, DecisionsRefused, PermanentRejection
from citelsp.workspace.fixes import CREATE_ENTRY, DECIDE, OPEN_URL, REVERIFY

CLEAR_CACHE = "citelsp.clearCache"
SHARED_CACHE_KEPT = ("citelsp: the answer cache is shared with your team, so it was kept; "
                     "{} ('citelsp cache clear' empties it for everyone)")
SHOW_CHECKLIST = "citelsp.showChecklist"
EXPORT_REPORT = "citelsp.exportReport"
REPORT_SUFFIX = {"json": "json", "sarif": "sarif", "markdown": "md", "text": "txt",
                 "ars": "json", "ledger": "json"}
"""What ``citelsp.exportReport`` names the file it writes in ``.citelsp/``, by format."""


async def create_entry(ls: CitelspServer, *args):
    uri, key, identifier = (list(args) + ["", "", ""])[:3]
    if not uri or not key or not identifier:
        raise ValueError("usage: citelsp.createEntry MANUSCRIPT_URI KEY DOI_OR_ARXIV_ID")
    try:
        entry = await ls.ws.new_entry(str(uri), str(key), str(identifier))
    except ValueError as exc:  # why there is no entry: for the writer, not a traceback
        message = f"citelsp: no entry was created for '{key}' — {exc}."
        ls.window_show_message(types.ShowMessageParams(
            type=types.MessageType.Warning, message=message))
        return {"applied": False, "reason": message}
    edit = ls.workspace_edit([Edit(entry.uri, Span(entry.offset, entry.offset), entry.text)])
    answer = await ls.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(
        edit=edit, label=f"Add '{key}' to the bibliography"))
    return {"applied": bool(answer and answer.applied), "uri": entry.uri,
            "entry": entry.text}


async def open_url(ls: CitelspServer, *args):
    url = links.allowed(args[0] if args else None)
    if url is None:
        raise ValueError("citelsp opens only https links on doi.org, arxiv.org and the "
                         "other allowlisted hosts")
    window = ls.client_capabilities.window
    if not (window and window.show_document):
        ls.window_show_message(types.ShowMessageParams(
            type=types.MessageType.Info, message=f"citelsp: open {url} to check by hand"))
        return {"opened": None, "url": url}
    result = await ls.window_show_document_async(
        types.ShowDocumentParams(uri=url, external=True))
    return {"opened": url, "success": bool(result and result.success)}


def decide(ls: CitelspServer, *args):
    key, identity, verdict, note = (list(args) + ["", "", "", ""])[:4]
    if verdict not in ("verified", "rejected") or not key or not identity:
        raise ValueError("usage: citelsp.decide KEY IDENTITY verified|rejected [NOTE]")
    try:
        ls.ws.record(Decision(citation_key=str(key), identity=str(identity),
                              decision=verdict, note=str(note or "")))
    except (PermanentRejection, DecisionsRefused) as exc:
        ls.window_show_message(types.ShowMessageParams(
            type=types.MessageType.Warning, message=str(exc)))
        return {"recorded": False}
    ls.publish_open()
    return {"recorded": True, "key": key, "decision": verdict}


def reverify(ls: CitelspServer, *args):
    ls.parse_pending()
    queued = ls.ws.reverify({str(a) for a in args if a} or None)
    ls.publish_open()
    return {"queued": queued}


def clear_cache(ls: CitelspServer, *args):
    queued = ls.ws.clear_cache()
    ls.publish_open()
    if queued is not None:
        done = (f"{queued} reference(s) are being looked up again, and their fresh answers "
                "replace the shared ones") if queued else "nothing can be looked up offline"
        ls.window_show_message(types.ShowMessageParams(
            type=types.MessageType.Info, message=SHARED_CACHE_KEPT.format(done)))
        return {"cleared": False, "shared": True, "queued": queued}
    ls.schedule_verification()
    return {"cleared": True}


async def show_checklist(ls: CitelspServer, *args):
    ls.parse_pending()
    markdown = render_checklist(ls.ws.snapshot())
    path = ls.write_report("checklist.md", markdown)
    if path is None:
        return {"uri": None, "markdown": markdown}
    if ls.client_capabilities.window and ls.client_capabilities.window.show_document:
        await ls.window_show_document_async(types.ShowDocumentParams(
            uri=path.resolve().as_uri(), take_focus=True))
    return {"uri": path.resolve().as_uri(), "markdown": markdown}


def export_report(ls: CitelspServer, *args):
    fmt = str(args[0]) if args else "json"
    if fmt not in RENDERERS:
        raise ValueError(f"unknown report format '{fmt}' (use {', '.join(RENDERERS)})")
    ls.parse_pending()
    path = ls.write_report(f"report.{REPORT_SUFFIX[fmt]}",
                           RENDERERS[fmt](ls.ws.snapshot()))
    return {"uri": path.resolve().as_uri() if path else None, "format": fmt}


def register(server: CitelspServer) -> None:
    server.command(CREATE_ENTRY)(create_entry)
    server.command(OPEN_URL)(open_url)
    server.command(DECIDE)(decide)
    server.command(REVERIFY)(reverify)
    server.command(CLEAR_CACHE)(clear_cache)
    server.command(SHOW_CHECKLIST)(show_checklist)
    server.command(EXPORT_REPORT)(export_report)
