"""The one place that converts between citelsp and the protocol: code-point spans ↔ the
client's positions (UTF-16 unless negotiated), problems → diagnostics, edits → workspace
edits, and each feature's answer (``citelsp.workspace``) → its LSP type."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable

from lsprotocol import types
from pygls.protocol import default_converter

from citelsp.documents.model import Location, Problem
from citelsp.reports.markup import Markup
from citelsp.spans import Edit, LineIndex, Span
from citelsp.verdict.reasons import doc_url
from citelsp.workspace.completion import Completions, Details
from citelsp.workspace.fixes import Fix
from citelsp.workspace.symbols import Symbol

log = logging.getLogger(__name__)

# -- positions ----------------------------------------------------------------------------


class LineIndexes:
    """One LineIndex per open document text, rebuilt only when the text object changes and
    dropped when the document closes."""

    def __init__(self) -> None:
        self._indexes: dict[str, tuple[str, LineIndex]] = {}

    def of(self, uri: str, text: str) -> LineIndex:
        cached = self._indexes.get(uri)
        if cached is not None and cached[0] is text:
            return cached[1]
        index = LineIndex(text)
        self._indexes[uri] = (text, index)
        return index

    def put(self, uri: str, text: str, index: LineIndex) -> None:
        """``index`` is the index of ``text`` (made by an edit from the last one)."""
        self._indexes[uri] = (text, index)

    def forget(self, uri: str) -> None:
        self._indexes.pop(uri, None)


def _units(text: str, encoding: str) -> int:
    if encoding == types.PositionEncodingKind.Utf32 or text.isascii():
        return len(text)
    if encoding == types.PositionEncodingKind.Utf8:
        return len(text.encode("utf-8"))
    return len(text.encode("utf-16-le")) // 2


def lsp_position(index: LineIndex, offset: int, encoding: str) -> types.Position:
    line, column = index.position(offset)
    start = index.line_start(line)
    return types.Position(line=line, character=_units(index.text[start:start + column], encoding))


def lsp_range(index: LineIndex, span: Span, encoding: str) -> types.Range:
    return types.Range(
        start=lsp_position(index, span.start, encoding),
        end=lsp_position(index, span.end, encoding),
    )


def offset_of(index: LineIndex, position: types.Position, encoding: str) -> int:
    """The code-point offset of a request's position (a line past the end is the last)."""
    line = min(position.line, index.line_count - 1)
    return offset_at(index, types.Position(line=line, character=position.character), encoding)


def offset_at(index: LineIndex, position: types.Position, encoding: str) -> int:
    """The code-point offset of a client position, clamped to its line (a line past the end
    is the end of the text)."""
    if position.line >= index.line_count:
        return len(index.text)
    start = index.line_start(position.line)
    line = index.line_text(position.line)
    return start + code_points(line, max(position.character, 0), encoding)


def code_points(line: str, units: int, encoding: str) -> int:
    """How many code points of ``line`` the first ``units`` client units cover."""
    if encoding == types.PositionEncodingKind.Utf32 or line.isascii():
        return min(units, len(line))
    width = 1 if encoding == types.PositionEncodingKind.Utf16 else 0
    counted = 0
    for i, ch in enumerate(line):
        if counted >= units:
            return i
        if width:
            counted += 2 if ord(ch) > 0xFFFF else 1
        else:
            counted += len(ch.encode("utf-8"))
    return len(line)


# -- diagnostics --------------------------------------------------------------------------

RangeFor = Callable[[str, Span], types.Range | None]
"""(uri, span) → range in that document, or None when the document cannot be read."""

_TAGS = {"ORPHAN_REFERENCE": [types.DiagnosticTag.Unnecessary]}
_CONVERTER = default_converter()
"""pygls's converter: a diagnostic's JSON is what pygls would send."""


def lsp_diagnostic(problem: Problem, range_: types.Range, range_for: RangeFor) -> types.Diagnostic:
    related = []
    for loc in problem.related:
        other = range_for(loc.uri, loc.span)
        if other is not None:
            related.append(types.DiagnosticRelatedInformation(
                location=types.Location(uri=loc.uri, range=other),
                message=loc.label or (f"also '{problem.key}'" if problem.key else "related"),
            ))
    return types.Diagnostic(
        range=range_,
        message=problem.message,
        severity=types.DiagnosticSeverity(int(problem.severity)),
        code=problem.code,
        code_description=types.CodeDescription(href=doc_url(problem.code)),
        source="citelsp",
        related_information=related or None,
        tags=_TAGS.get(problem.code),
    )


class Diagnostics:
    """Each document's problems → its diagnostics, reusing the last publication's object when
    a problem and its line did not change (an edit shifts offsets, not most lines: 8,000
    hints stay cheap, and ``params_json`` serializes each once). While the text is the same,
    a problem object published before is not placed on a line again: a publication after a
    few verdicts arrived converts those, not the library's findings."""

    def __init__(self) -> None:
        self._converted: dict[str, dict[tuple, types.Diagnostic]] = {}
        self._placed: dict[str, tuple[LineIndex, str, dict[int, tuple]]] = {}
        """uri → the line index and encoding of its last publication, and id(problem) →
        (problem, its key in ``_converted``, its diagnostic) for each problem published."""
        self._json: dict[str, dict[int, tuple[types.Diagnostic, str]]] = {}
        """uri → id(diagnostic) → (diagnostic, its JSON) for its last publication."""

    def convert(self, uri: str, problems: Iterable[Problem], index: LineIndex, encoding: str,
                range_for: RangeFor) -> list[types.Diagnostic]:
        previous = self._converted.get(uri, {})
        held = self._placed.get(uri)
        known = held[2] if held is not None and held[0] is index and held[1] == encoding else {}
        ascii_text = index.text.isascii()  # then columns are the same in every encoding
        converted: dict[tuple, types.Diagnostic] = {}
        placed: dict[int, tuple] = {}
        diagnostics = []
        for problem in problems:
            try:
                if problem.related:
                    diagnostics.append(lsp_diagnostic(
                        problem, lsp_range(index, problem.span, encoding), range_for))
                    continue
                hit = known.get(id(problem))
                if hit is not None and hit[0] is problem:
                    key, found = hit[1], hit[2]
                else:
                    line, column = index.position(problem.span.start)
                    key = (problem.code, problem.message, problem.severity, line, column,
                           index.position(problem.span.end),
                           None if ascii_text else index.line_text(line))
                    found = previous.get(key) or converted.get(key) or lsp_diagnostic(
                        problem, lsp_range(index, problem.span, encoding), range_for)
                converted[key] = found
                placed[id(problem)] = (problem, key, found)
                diagnostics.append(found)
            except Exception:  # one bad finding must not hide the others
                log.exception("cannot convert %s", problem.code)
        self._converted[uri] = converted
        self._placed[uri] = (index, encoding, placed)
        return diagnostics

    def params_json(self, uri: str, version: int | None,
                    diagnostics: list[types.Diagnostic]) -> str:
        """``PublishDiagnosticsParams`` as JSON, each diagnostic serialized once while it is
        published: a library edit re-sends thousands of unchanged hints, and serializing them
        again (cattrs, then ``json``) was most of the cost of its re-publish."""
        held = self._json.get(uri, {})
        texts: dict[int, tuple[types.Diagnostic, str]] = {}
        for d in diagnostics:
            hit = held.get(id(d))
            if hit is None or hit[0] is not d:
                hit = (d, json.dumps(_CONVERTER.unstructure(d, types.Diagnostic)))
            texts[id(d)] = hit
        self._json[uri] = texts
        shown = "" if version is None else f'"version":{int(version)},'
        return (f'{{"uri":{json.dumps(uri)},{shown}"diagnostics":['
                + ",".join(texts[id(d)][1] for d in diagnostics) + "]}")

    def forget(self, uri: str) -> None:
        self._converted.pop(uri, None)
        self._placed.pop(uri, None)
        self._json.pop(uri, None)


# -- feature answers ----------------------------------------------------------------------


def markup_for(capabilities: types.ClientCapabilities) -> Markup:
    """Markdown unless the client prefers plain text for hovers."""
    hover = capabilities.text_document and capabilities.text_document.hover
    formats = (hover and hover.content_format) or [types.MarkupKind.Markdown]
    return Markup(markdown=formats[0] == types.MarkupKind.Markdown)


def lsp_hover(text: str, m: Markup, range_: types.Range | None) -> types.Hover:
    kind = types.MarkupKind.Markdown if m.markdown else types.MarkupKind.PlainText
    return types.Hover(contents=types.MarkupContent(kind=kind, value=text), range=range_)


def resolves_details(capabilities: types.ClientCapabilities) -> bool:
    """The client asks completionItem/resolve for an item's detail (VS Code, nvim-cmp); one
    that does not list it (Neovim's own completion) gets the details with the list."""
    completion = capabilities.text_document and capabilities.text_document.completion
    item = completion and completion.completion_item
    resolving = item and item.resolve_support
    return bool(resolving and "detail" in resolving.properties)


def inserts_or_replaces(capabilities: types.ClientCapabilities) -> bool:
    """The client takes an edit that either inserts or replaces, as its user chose (VS Code's
    ``editor.suggest.insertMode``)."""
    completion = capabilities.text_document and capabilities.text_document.completion
    item = completion and completion.completion_item
    return bool(item and item.insert_replace_support)


def lsp_completion_list(found: Completions, uri: str, insert: types.Range | None,
                        replace: types.Range | None = None) -> types.CompletionList:
    """Items with the details the feature gave (else ``lsp_resolved_completion`` adds them to
    the item the client shows: ``data`` names the manuscript and the key). ``sortText``
    keeps the feature's order among items the client scores alike; the edit replaces the
    typed text, which may hold characters a client's word does not (``doe:2020``), or with
    ``replace`` (a client that ``inserts_or_replaces``) the whole key the cursor is in."""
    def edit(key: str) -> types.TextEdit | types.InsertReplaceEdit | None:
        if insert is None:
            return None
        if replace is None:
            return types.TextEdit(range=insert, new_text=key)
        return types.InsertReplaceEdit(new_text=key, insert=insert, replace=replace)

    return types.CompletionList(is_incomplete=not found.complete, items=[types.CompletionItem(
        label=c.key, kind=types.CompletionItemKind.Reference, filter_text=c.filter_text,
        detail=c.details and c.details.detail,
        documentation=c.details and c.details.documentation,
        sort_text=f"{i:04d}", insert_text=c.key, text_edit=edit(c.key),
        data={"uri": uri, "key": c.key}) for i, c in enumerate(found.items)])


def completion_data(item: types.CompletionItem) -> tuple[str, str] | None:
    """The manuscript and key ``lsp_completion_list`` put in an item."""
    data = item.data
    if isinstance(data, dict) and isinstance(uri := data.get("uri"), str) and isinstance(
            key := data.get("key"), str):
        return uri, key
    return None


def lsp_resolved_completion(item: types.CompletionItem, found: Details | None
                            ) -> types.CompletionItem:
    """The item the client sent back, with what the feature found (unchanged when the key is
    no longer there)."""
    if found is not None:
        item.detail, item.documentation = found.detail, found.documentation
    return item


_SYMBOL_KINDS = {"entry": types.SymbolKind.Class, "field": types.SymbolKind.Field}


def lsp_symbols(symbols: Iterable[Symbol], range_of: Callable[[Span], types.Range]
                ) -> list[types.DocumentSymbol]:
    return [types.DocumentSymbol(
        name=s.name, detail=s.detail, kind=_SYMBOL_KINDS[s.kind], range=range_of(s.span),
        selection_range=range_of(s.selection),
        children=lsp_symbols(s.children, range_of) if s.kind == "entry" else None,
    ) for s in symbols]


def lsp_locations(found: Iterable[Location], range_for: RangeFor) -> list[types.Location]:
    out = []
    for loc in found:
        range_ = range_for(loc.uri, loc.span)
        if range_ is not None:
            out.append(types.Location(uri=loc.uri, range=range_))
    return out


def lsp_workspace_edit(edits: Iterable[Edit], range_for: RangeFor) -> types.WorkspaceEdit:
    changes: dict[str, list[types.TextEdit]] = {}
    for uri, span, new_text in edits:
        range_ = range_for(uri, span)
        if range_ is not None:
            changes.setdefault(uri, []).append(types.TextEdit(range=range_, new_text=new_text))
    return types.WorkspaceEdit(changes=changes)


def lsp_code_actions(fixes: Iterable[Fix], range_for: RangeFor,
                     diagnostics: list[types.Diagnostic] | None
                     ) -> list[types.CodeAction | types.Command]:
    """Edits as quick fixes for the client's ``diagnostics``; a command alone as a bare
    Command (LSP allows ``(Command | CodeAction)[]``), which every client reads the same
    way."""
    return [types.CodeAction(title=f.title, kind=types.CodeActionKind.QuickFix,
                             edit=lsp_workspace_edit(f.edits, range_for),
                             diagnostics=diagnostics)
            if f.command is None else
            types.Command(title=f.title, command=f.command, arguments=list(f.arguments))
            for f in fixes]
