"""Code actions: open the DOI or arXiv page, search the title, apply verified metadata, add a
DOI, record a human decision, re-verify.

Edits are WorkspaceEdits the user sees before they apply; nothing is written silently.
"""

from __future__ import annotations

import json

from lsprotocol import types

from citelsp import links
from citelsp.documents import bibtex_writer as bib
from citelsp.documents.bibtex_blocks import is_unicode_space, space_name
from citelsp.documents.model import PRINTED, Field, Problem, Reference
from citelsp.resolution.identifiers import normalize_arxiv, normalize_doi
from citelsp.resolution.outcome import Record
from citelsp.spans import Span
from citelsp.verdict.placement import field_of
from citelsp.workspace.entries import csl_names
from citelsp.workspace.snapshot import ReferenceResult

OPEN_URL = "citelsp.openUrl"
DECIDE = "citelsp.decide"
REVERIFY = "citelsp.reverify"
CLEAR_CACHE = "citelsp.clearCache"
SHOW_CHECKLIST = "citelsp.showChecklist"
EXPORT_REPORT = "citelsp.exportReport"
CREATE_ENTRY = "citelsp.createEntry"
COMMANDS = [OPEN_URL, DECIDE, REVERIFY, CLEAR_CACHE, SHOW_CHECKLIST, EXPORT_REPORT,
            CREATE_ENTRY]

FIXABLE = ("title", "year", "author", "venue", "volume", "issue")
"""Fields whose verified value can replace the cited one (pages need a human)."""

Edit = tuple[str, Span, str]
"""(uri, span to replace, new text)."""


def _command(title: str, name: str, *args) -> types.Command:
    """A command-only action is sent as a bare Command (LSP allows ``(Command | CodeAction)[]``),
    which every client reads the same way."""
    return types.Command(title=title, command=name, arguments=list(args))


def link_actions(ref: Reference, result: ReferenceResult | None) -> list[types.Command]:
    ids = result.resolution.ids if result is not None else None
    actions = []
    if ids is not None and ids.doi is not None:
        actions.append(_command(f"Open DOI {ids.doi.shown} for a human check", OPEN_URL,
                                links.doi_url(ids.doi.shown)))
    if ids is not None and ids.arxiv is not None:
        actions.append(_command(f"Open arXiv {ids.arxiv.value} for a human check", OPEN_URL,
                                links.arxiv_url(ids.arxiv.value)))
    title = ref.work.title
    if title:
        actions.append(_command("Search Crossref for this title", OPEN_URL,
                                links.title_search_url("crossref", title)))
        actions.append(_command("Search Google Scholar for this title", OPEN_URL,
                                links.title_search_url("google_scholar", title)))
    return actions


def create_entry_actions(uri: str, key: str, client_prompts: bool) -> list[types.Command]:
    """Create the missing entry from a DOI or arXiv id: the key itself when it is one,
    else the one the client's plugin asks the writer for (only offered where it can)."""
    if normalize_doi(key) is not None or normalize_arxiv(key) is not None:
        return [_command(f"Create an entry for '{key}' from {key}", CREATE_ENTRY,
                         uri, key, key)]
    if client_prompts:
        return [_command(f"Create an entry for '{key}' from a DOI or arXiv id…",
                         CREATE_ENTRY, uri, key)]
    return []


def space_actions(uri: str, problems: list[Problem], text: str, offset: int
                  ) -> list[tuple[str, list[Edit]]]:
    """Replace the Unicode space a MALFORMED_ENTRY warning marks (BibTeX does not read it as
    a space) with a plain one."""
    found = []
    for p in problems:
        start, end = p.span.start, p.span.end
        if p.code == "MALFORMED_ENTRY" and end == start + 1 and start <= offset <= end \
                and is_unicode_space(text[start:end]):
            found.append((f"Replace {space_name(text[start])} with a plain space",
                          [(uri, p.span, " ")]))
    return found


def distinct(found: list[types.CodeAction | types.Command]) -> list:
    """One action per title: a key defined twice must not list every action twice."""
    seen: set[str] = set()
    out = []
    for action in found:
        if action.title not in seen:
            seen.add(action.title)
            out.append(action)
    return out


def decision_actions(ref: Reference, identity: str) -> list[types.Command]:
    return [
        _command(f"Mark '{ref.key}' as checked by a human: verified", DECIDE,
                 ref.key, identity, "verified", ""),
        _command(f"Mark '{ref.key}' as checked by a human: rejected", DECIDE,
                 ref.key, identity, "rejected", ""),
        _command(f"Re-verify '{ref.key}' now", REVERIFY, ref.key),
    ]


UNCONFIRMED = "VENUE_UNCONFIRMED"
"""A note, not a disagreement: the preprint's venue is no fix for the cited one."""


def edit_actions(ref: Reference, result: ReferenceResult, text: str
                 ) -> list[tuple[str, list[Edit]]]:
    """(title, edits) for metadata fixes; the caller turns them into WorkspaceEdits."""
    if ref.source_format == "csl-yaml" or ref.source_format in PRINTED:  # fixed by hand
        return []
    judgement = result.judgement
    found: list[tuple[str, list[Edit]]] = []
    matched = judgement.matched
    if matched is not None:
        edits = [e for c in judgement.conflicts if c.field in FIXABLE and c.reason != UNCONFIRMED
                 if (e := _field_edit(ref, c.field, matched, text)) is not None]
        if edits:
            found.append((f"Apply verified metadata from {matched.source} to '{ref.key}'", edits))
        ids = result.resolution.ids
        if matched.doi and ids.doi is None:
            if (edit := _insert_field(ref, "doi", matched.doi, text)) is not None:
                found.append((f"Add DOI {matched.doi} to '{ref.key}'", [edit]))
        elif matched.doi and ids.doi is not None and matched.doi.lower() != ids.doi.value \
                and result.judgement.item is not None \
                and result.judgement.item.priority == "P0":
            edit = _doi_edit(ref, ref.fields[ids.doi.field], matched.doi, text) \
                if ids.doi.field in ref.fields else None
            if edit is not None:
                found.append((f"Replace the cited DOI with the matched work's {matched.doi}",
                              [edit]))
    elif judgement.near_matches:
        near = judgement.near_matches[0]
        edits = [e for name in ("title", "year", "author")
                 if (e := _field_edit(ref, name, near, text)) is not None]
        if near.doi and result.resolution.ids.doi is None \
                and (edit := _insert_field(ref, "doi", near.doi, text)) is not None:
            edits.append(edit)
        if edits:
            found.append((f"Did you mean “{near.title}”? Apply its metadata to '{ref.key}'",
                          edits))
    return found


def _value(record: Record, logical: str, csl: bool):
    """The record's value for ``logical``: CSL data for a CSL-JSON entry, else the inside of a
    braced BibTeX value (``bibtex_writer``: inert whatever the service sent)."""
    if logical == "author":
        if not record.authors:
            return None
        return csl_names(record.authors) if csl else bib.name_list(record.authors)
    value = {"title": record.title, "year": record.year, "venue": record.venue,
             "volume": record.volume, "issue": record.issue}.get(logical)
    if value is None or value == "":
        return None
    if csl:
        return {"date-parts": [[value]]} if logical == "year" else bib.clean_text(str(value))
    return bib.text_value(str(value)) or None


def _field_edit(ref: Reference, logical: str, record: Record, text: str) -> Edit | None:
    value = _value(record, logical, ref.source_format == "csl-json")
    name = field_of(ref, logical)
    if value is None or name is None:
        return None
    return _replace(ref, ref.fields[name], value, text)


def _replace(ref: Reference, field: Field, value, text: str) -> Edit:
    """``field``'s value replaced by ``value`` (CSL data, or the inside of a braced BibTeX
    value): a quoted, bare or concatenated BibTeX value becomes one braced value."""
    start, end = field.span.start, field.span.end
    if ref.source_format == "csl-json":
        quoted = start > 0 and text[start - 1] == '"'
        if quoted and isinstance(value, str):
            return (ref.uri, field.span, json.dumps(value, ensure_ascii=False)[1:-1])
        return (ref.uri, field.span, json.dumps(value, ensure_ascii=False))
    before, after = text[start - 1:start], text[end:end + 1]
    if before == "{" and after == "}":
        return (ref.uri, field.span, value)
    if before == '"' and after == '"':  # a " in the value would end a quoted one
        return (ref.uri, Span(start - 1, end + 1), "{" + value + "}")
    return (ref.uri, field.span, "{" + value + "}")


def _doi_edit(ref: Reference, field: Field, doi: str, text: str) -> Edit | None:
    """``field`` (where the cited DOI is: ``doi``, or a doi.org link in ``url``) set to
    ``doi`` in the same form; None when it cannot be written."""
    if field.name.casefold() == "url":
        doi = links.doi_url(doi)
    if ref.source_format == "csl-json":
        return _replace(ref, field, doi, text)
    value = bib.verbatim_value(doi)
    return _replace(ref, field, value, text) if value is not None else None


def _insert_field(ref: Reference, name: str, value: str, text: str) -> Edit | None:
    """A new identifier field after the key; None when the value cannot be written."""
    end = ref.key_span.end
    if ref.source_format == "csl-json":
        if end < len(text) and text[end] == '"':
            end += 1
        return (ref.uri, Span(end, end), f', "{name.upper()}": ' + json.dumps(value))
    written = bib.verbatim_value(value)
    if written is None:
        return None
    return (ref.uri, Span(end, end), f",\n  {name} = {{{written}}}")
