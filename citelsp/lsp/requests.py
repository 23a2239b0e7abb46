"""Requests: each converts the client's position in, asks a feature of ``citelsp.workspace``
on a read-only view, and converts the answer out. What notifications left to do first is
done first: the document's own pending edits are parsed, and find-references and rename
wait for the background read of the workspace's files; the features change nothing."""

from __future__ import annotations

from lsprotocol import types

from citelsp.lsp.convert import (
    completion_data,
    inserts_or_replaces,
    lsp_code_actions,
    lsp_completion_list,
    lsp_hover,
    lsp_locations,
    lsp_range,
    lsp_resolved_completion,
    lsp_symbols,
    markup_for,
    resolves_details,
)
from citelsp.lsp.session import CitelspServer
from citelsp.reports.cards import hover_text
from citelsp.workspace import completion, fixes, hover, navigation, symbols
from citelsp.workspace.view import View


def complete(ls: CitelspServer, params: types.CompletionParams) -> types.CompletionList | None:
    if (query := ls.query(params.text_document.uri, params.position)) is None:
        return None
    found = completion.completions(
        *query, detailed=not resolves_details(ls.client_capabilities))
    if found is None:
        return None
    uri = params.text_document.uri
    replace = inserts_or_replaces(ls.client_capabilities) and ls.range_for(uri, found.replace)
    return lsp_completion_list(found, uri, ls.range_for(uri, found.span), replace or None)


def resolve_completion(ls: CitelspServer, item: types.CompletionItem) -> types.CompletionItem:
    """The authors, year, title and venue of the item the client shows."""
    if (data := completion_data(item)) is None:
        return item
    uri, key = data
    ls.parse_pending(uri)
    doc = ls.ws.document(uri)
    found = None if doc is None else completion.details(View(ls.ws), doc, key)
    return lsp_resolved_completion(item, found)


def on_hover(ls: CitelspServer, params: types.HoverParams) -> types.Hover | None:
    if (query := ls.query(params.text_document.uri, params.position)) is None:
        return None
    found = hover.hover(*query)
    if found is None:
        return None
    m = markup_for(ls.client_capabilities)
    return lsp_hover(hover_text(found, m), m, ls.range_for(query[1].uri, found.span))


def definition(ls: CitelspServer, params: types.DefinitionParams) -> list[types.Location]:
    if (query := ls.query(params.text_document.uri, params.position)) is None:
        return []
    return lsp_locations(navigation.definitions(*query), ls.range_for)


async def find_references(ls: CitelspServer, params: types.ReferenceParams
                          ) -> list[types.Location]:
    await ls.workspace_read()  # the unopened files it reaches, read after the last change
    if (query := ls.query(params.text_document.uri, params.position)) is None:
        return []
    found = navigation.references_at(
        *query, include_declaration=params.context.include_declaration)
    return lsp_locations(found, ls.range_for)


def prepare_rename(ls: CitelspServer, params: types.PrepareRenameParams) -> types.Range | None:
    if (query := ls.query(params.text_document.uri, params.position)) is None:
        return None
    _, doc, offset = query
    span = navigation.key_span_at(doc, offset)
    return ls.range_for(doc.uri, span) if span is not None else None


async def rename(ls: CitelspServer, params: types.RenameParams) -> types.WorkspaceEdit | None:
    await ls.workspace_read()
    if (query := ls.query(params.text_document.uri, params.position)) is None:
        return None
    edits = navigation.rename(*query, params.new_name)
    return None if edits is None else ls.workspace_edit(edits)


def document_symbol(ls: CitelspServer, params: types.DocumentSymbolParams
                    ) -> list[types.DocumentSymbol]:
    ls.parse_pending(params.text_document.uri)
    doc = ls.ws.document(params.text_document.uri)
    if doc is None:
        return []
    index = ls.lines.of(doc.uri, doc.text)
    return lsp_symbols(symbols.symbols(doc), lambda span: lsp_range(index, span, ls.encoding))


def code_action(ls: CitelspServer, params: types.CodeActionParams
                ) -> list[types.CodeAction | types.Command] | None:
    if (query := ls.query(params.text_document.uri, params.range.start)) is None:
        return None
    ours = [d for d in params.context.diagnostics if d.source == "citelsp"] or None
    found = fixes.fixes(*query, client_prompts=ls.client_prompts_for_identifiers)
    return lsp_code_actions(found, ls.range_for, ours)


def register(server: CitelspServer) -> None:
    server.feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(
        trigger_characters=completion.TRIGGER_CHARACTERS, resolve_provider=True))(complete)
    server.feature(types.COMPLETION_ITEM_RESOLVE)(resolve_completion)
    server.feature(types.TEXT_DOCUMENT_HOVER)(on_hover)
    server.feature(types.TEXT_DOCUMENT_DEFINITION)(definition)
    server.feature(types.TEXT_DOCUMENT_REFERENCES)(find_references)
    server.feature(types.TEXT_DOCUMENT_PREPARE_RENAME)(prepare_rename)
    server.feature(types.TEXT_DOCUMENT_RENAME)(rename)
    server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)(document_symbol)
    server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix]))(code_action)
