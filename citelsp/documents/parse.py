"""Any document → its parsed form, chosen by file name or the editor's language id."""

from __future__ import annotations

import re

from citelsp.documents.biber_bbl import is_biber_bbl, parse_biber_bbl
from citelsp.documents.bibitems import parse_bibitems
from citelsp.documents.bibtex import BibtexBibliography, parse_bibtex
from citelsp.documents.csl import parse_csl_json, parse_csl_yaml
from citelsp.documents.encoding import without_surrogates
from citelsp.documents.manuscript import front_matter, language_for_path, parse_manuscript
from citelsp.documents.model import Bibliography, Manuscript
from citelsp.uris import uri_to_path

Document = Manuscript | Bibliography
BIBLIOGRAPHY_SUFFIXES = (".bib", ".json")
"""The bibliographies a folder search and the workspace scan find."""
CSL_YAML_SUFFIXES = (".yaml", ".yml")
"""CSL-YAML bibliographies, read only where they are named: most YAML files in a project
configure something."""
MANUSCRIPT_SUFFIXES = (".md", ".markdown", ".qmd", ".rmd", ".tex", ".ltx", ".latex", ".rnw")
_REFERENCES_KEY = re.compile(r"^references[ \t]*:", re.MULTILINE)
_EDITOR_LANGUAGES = {"tex": "latex", "quarto": "markdown", "rmd": "markdown"}


def parse_document(
    uri: str,
    text: str,
    language: str | None = None,
    *,
    previous: Document | None = None,
    macros: dict[str, str] | None = None,
) -> Document | None:
    """Parse by file type; ``None`` for files citelsp does not read (e.g. non-CSL JSON).

    ``previous`` (the last parse of the same document) lets a ``.bib`` be re-parsed
    incrementally, keeping the ``@string`` macros it was given unless ``macros`` (those of
    the bibliographies listed before it) replaces them. Lone surrogates (which no report can
    encode) are replaced first, with a warning."""
    text, invalid = without_surrogates(text)
    doc = _parse(uri, text, language, previous, macros)
    if doc is not None and invalid is not None:
        doc.problems.insert(0, invalid)
    return doc


def _parse(uri: str, text: str, language: str | None, previous: Document | None,
           macros: dict[str, str] | None) -> Document | None:
    path = uri_to_path(uri)
    suffix = path.suffix.lower()
    if suffix == ".bib" or language in ("bibtex", "bib"):
        last = previous if isinstance(previous, BibtexBibliography) else None
        if macros is None and last is not None:
            macros = last.incoming
        return parse_bibtex(uri, text, previous=last, macros=macros)
    if suffix == ".bbl":  # biber's entries, or BibTeX's thebibliography of \bibitems
        return parse_biber_bbl(uri, text) if is_biber_bbl(text) else parse_bibitems(uri, text)
    if suffix == ".json" or language in ("json", "csl-json"):
        return parse_csl_json(uri, text)
    if suffix in CSL_YAML_SUFFIXES or language == "csl-yaml":
        return _csl_yaml_file(uri, text)
    lang = language_for_path(str(path))
    if lang is None and language in ("markdown", "latex", "tex", "plaintext", "quarto", "rmd"):
        lang = _EDITOR_LANGUAGES.get(language, language)
    if lang is None:
        return None
    return parse_manuscript(uri, text, lang)


def _csl_yaml_file(uri: str, text: str) -> Bibliography | None:
    """A CSL-YAML bibliography as pandoc reads one: a top-level ``references:`` list, with or
    without ``---`` fences; None for YAML without one (a configuration file), unparsed."""
    front = front_matter(text)
    start, end = (front.body.start, front.body.end) if front is not None else (0, len(text))
    if _REFERENCES_KEY.search(text, start, end) is None:
        return None
    return parse_csl_yaml(uri, text, start, end)
