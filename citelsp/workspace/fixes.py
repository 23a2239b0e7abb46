"""Fixes (code actions): open the DOI or arXiv page, search the title, apply verified
metadata, add a DOI, correct a mistyped key, create a missing entry, record a human
decision, re-verify.

Edits are shown to the writer before they apply; nothing is written silently. Commands are
run by the language server (``lsp.commands``) when the writer picks them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from citelsp import links
from citelsp.documents import bibtex_writer as bib
from citelsp.documents.bibtex_blocks import is_unicode_space, space_name
from citelsp.documents.model import PRINTED, Field, Manuscript, Problem, Reference
from citelsp.documents.parse import Document
from citelsp.resolution.identifiers import normalize_arxiv, normalize_doi
from citelsp.resolution.outcome import Record
from citelsp.spans import Edit, Span
from citelsp.verdict.placement import field_of
from citelsp.workspace.entries import csl_names
from citelsp.workspace.navigation import similar_keys
from citelsp.workspace.snapshot import ReferenceResult
from citelsp.workspace.view import View

OPEN_URL = "citelsp.openUrl"
DECIDE = "citelsp.decide"
REVERIFY = "citelsp.reverify"
CREATE_ENTRY = "citelsp.createEntry"

FIXABLE = ("title", "year", "author", "venue", "volume", "issue")
"""Fields whose verified value can replace the cited one (pages need a human)."""



@dataclass(frozen=True)
class Fix:
    """One action the writer can pick: edits to apply, or a command to run."""

    title: str
    edits: tuple[Edit, ...] = ()
    command: str | None = None
    arguments: tuple[str, ...] = ()


def fixes(view: View, doc: Document, offset: int, *, client_prompts: bool = False
          ) -> list[Fix]:
    """Every action at ``offset``, each title once (a key defined twice must not list every
    action twice). ``client_prompts``: the client's plugin asks the writer for a DOI or arXiv
    id a command leaves out."""
    found = [Fix(title, tuple(edits)) for title, edits in space_actions(
        doc.uri, doc.problems, doc.text, offset)]  # the parser's: no check runs here
    refs = view.references_at(doc, offset)
    for ref in refs:
        result = view.result(ref)
        source = view.document(ref.uri)
        if result is not None and source is not None:
            found += [Fix(title, tuple(edits))
                      for title, edits in edit_actions(ref, result, source.text)]
        found += link_actions(ref, result)
        found += decision_actions(ref, view.decision_identity(ref))
    citation = view.citation_at(doc, offset)
    if isinstance(doc, Manuscript) and citation is not None and not citation.wildcard \
            and not refs:
        found += [Fix(f"Did you mean '{key}'?", (Edit(doc.uri, citation.span, key),))
                  for key in similar_keys(view, doc, citation.key)]
        found += create_entry_actions(doc.uri, citation.key, client_prompts)
    return distinct(found)


def _command(title: str, name: str, *args: str) -> Fix:
    return Fix(title, command=name, arguments=args)


def link_actions(ref: Reference, result: ReferenceResult | None) -> list[Fix]:
    ids = result.resolution.ids if result is not None else None
    found = []
    if ids is not None and ids.doi is not None:
        found.append(_command(f"Open DOI {ids.doi.shown} for a human check", OPEN_URL,
                                links.doi_url(ids.doi.shown)))
    if ids is not None and ids.arxiv is not None:
        found.append(_command(f"Open arXiv {ids.arxiv.value} for a human check", OPEN_URL,
                                links.arxiv_url(ids.arxiv.value)))
    title = ref.work.title
    if title:
        found.append(_command("Search Crossref for this title", OPEN_URL,
                                links.title_search_url("crossref", title)))
        found.append(_command("Search Google Scholar for this title", OPEN_URL,
                                links.title_search_url("google_scholar", title)))
    return found


def create_entry_actions(uri: str, key: str, client_prompts: bool) -> list[Fix]:
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
                          [Edit(uri, p.span, " ")]))
    return found


def distinct(found: list[Fix]) -> list[Fix]:
    """One action per title."""
    seen: set[str] = set()
    out = []
    for action in found:
        if action.title not in seen:
            seen.add(action.title)
            out.append(action)
    return out


def decision_actions(ref: Reference, identity: str) -> list[Fix]:
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
    """(title, edits) for metadata fixes."""
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
        cited = ids.doi or ids.short_doi  # a shortDOI doi.org did not resolve is still cited
        if matched.doi and cited is None:
            if (edit := _insert_field(ref, "doi", matched.doi, text)) is not None:
                found.append((f"Add DOI {matched.doi} to '{ref.key}'", [edit]))
        elif matched.doi and cited is not None and matched.doi.lower() != cited.value \
                and result.judgement.item is not None \
                and result.judgement.item.priority == "P0":
            edit = _doi_edit(ref, ref.fields[cited.field], matched.doi, text) \
                if cited.field in ref.fields else None
            if edit is not None:
                found.append((f"Replace the cited DOI with the matched work's {matched.doi}",
                              [edit]))
    elif judgement.near_matches:
        near = judgement.near_matches[0]
        edits = [e for name in ("title", "year", "author")
                 if (e := _field_edit(ref, name, near, text)) is not None]
        ids = result.resolution.ids
        if near.doi and ids.doi is None and ids.short_doi is None \
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
            return Edit(ref.uri, field.span, json.dumps(value, ensure_ascii=False)[1:-1])
        return Edit(ref.uri, field.span, json.dumps(value, ensure_ascii=False))
    before, after = text[start - 1:start], text[end:end + 1]
    if before == "{" and after == "}":
        return Edit(ref.uri, field.span, value)
    if before == '"' and after == '"':  # a " in the value would end a quoted one
        return Edit(ref.uri, Span(start - 1, end + 1), "{" + value + "}")
    return Edit(ref.uri, field.span, "{" + value + "}")


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
        return Edit(ref.uri, Span(end, end), f', "{name.upper()}": ' + json.dumps(value))
    written = bib.verbatim_value(value)
    if written is None:
        return None
    return Edit(ref.uri, Span(end, end), f",\n  {name} = {{{written}}}")
