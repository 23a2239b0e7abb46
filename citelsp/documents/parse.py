"""Any document → its parsed form, chosen by file name or the editor's language id."""

from __future__ import annotations

from citelsp.documents.bibtex import parse_bibtex
from citelsp.documents.csl import parse_csl_json
from citelsp.documents.manuscript import language_for_path, parse_manuscript
from citelsp.documents.model import Bibliography, Manuscript
from citelsp.uris import uri_to_path

Document = Manuscript | Bibliography
BIBLIOGRAPHY_SUFFIXES = (".bib", ".json")
MANUSCRIPT_SUFFIXES = (".md", ".markdown", ".qmd", ".rmd", ".tex", ".ltx", ".latex")
_EDITOR_LANGUAGES = {"tex": "latex", "quarto": "markdown", "rmd": "markdown"}


def parse_document(uri: str, text: str, language: str | None = None) -> Document | None:
    """Parse by file type; ``None`` for files citelsp does not read (e.g. non-CSL JSON)."""
    path = uri_to_path(uri)
    suffix = path.suffix.lower()
    if suffix == ".bib" or language in ("bibtex", "bib"):
        return parse_bibtex(uri, text)
    if suffix == ".json" or language in ("json", "csl-json"):
        return parse_csl_json(uri, text)
    lang = language_for_path(str(path))
    if lang is None and language in ("markdown", "latex", "tex", "plaintext", "quarto", "rmd"):
        lang = _EDITOR_LANGUAGES.get(language, language)
    if lang is None:
        return None
    return parse_manuscript(uri, text, lang)
