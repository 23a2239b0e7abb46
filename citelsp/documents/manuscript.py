"""A manuscript's citations, parse problems and declared bibliographies, by language.

Markdown reads its YAML front matter, ``<!--ref:-->`` markers and pandoc citations; LaTeX reads
``\\cite``-family commands and ``\\bibliography``/``\\addbibresource``; plain text reads markers
only. Code (fenced blocks, and code spans in Markdown) is masked before any scanner runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePath
from typing import Literal

import yaml

from citelsp.documents import latex, markers, myst, pandoc
from citelsp.documents.bibitems import parse_bibitems
from citelsp.documents.model import Citation, Manuscript, Problem, Severity
from citelsp.spans import Span

Language = Literal["markdown", "latex", "plaintext"]

_LANGUAGES: dict[str, Language] = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".qmd": "markdown",
    ".rmd": "markdown",
    ".tex": "latex",
    ".ltx": "latex",
    ".latex": "latex",
    ".rnw": "latex",  # Sweave and knitr: LaTeX with R chunks
    ".txt": "plaintext",
}

_FRONT_MATTER_OPEN = re.compile(r"\ufeff?---[ \t]*\r?\n(?![ \t]*\r?\n)")
_FRONT_MATTER_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*\r?$\n?", re.M)


@dataclass(frozen=True)
class FrontMatter:
    """The YAML block at the very start of a Markdown file."""

    span: Span
    """The block with its ``---`` fences."""
    body: Span
    """The YAML between the fences."""


def language_for_path(path: str) -> Language | None:
    """The manuscript language of a file name, or None for files that are not manuscripts."""
    return _LANGUAGES.get(PurePath(path).suffix.lower())


def parse_manuscript(uri: str, text: str, language: str) -> Manuscript:
    """Parse ``text``; any language other than markdown or latex is read as plain text."""
    manuscript = Manuscript(uri=uri, text=text)
    if language == "latex":
        manuscript.citations, manuscript.bibliography_paths = latex.parse_latex(uri, text)
        manuscript.root = latex.document_root(text)
        if "defbibentryset" in text:
            manuscript.sets = latex.entry_sets(text)
        if "thebibliography" in text:
            manuscript.inline = parse_bibitems(uri, text)
        if ".bbl" in text:  # \input{paper.bbl}: BibTeX's output pasted in by name
            manuscript.bibliography_paths += [
                p for p in latex.latex_inputs(text) if p.lower().endswith(".bbl")]
        return manuscript
    hidden: list[Span] = []
    start = 0
    nocite: list[Citation] = []
    if language == "markdown" and (front := front_matter(text)) is not None:
        nocite = _read_front_matter(manuscript, front)
        hidden.append(front.span)
        start = front.span.end
    roles: list[Citation] = []
    if language == "markdown" and "{cite" in text:  # MyST roles look like code spans
        outside = hidden + pandoc.code_regions(text, start, inline=False)
        outside = sorted(outside + pandoc.html_comments(text))
        roles = myst.parse_myst_roles(uri, pandoc.mask(text, _disjoint(outside)))
    hidden += pandoc.code_regions(text, start, inline=language == "markdown")
    prose = pandoc.mask(text, hidden)
    manuscript.citations, problems = markers.parse_markers(uri, prose)
    manuscript.problems.extend(problems)
    if language == "markdown":
        manuscript.citations += nocite + roles + pandoc.parse_pandoc(uri, prose)
        manuscript.citations.sort(key=lambda c: c.span)
    return manuscript


def _disjoint(spans: list[Span]) -> list[Span]:
    """Sorted spans merged where they overlap (``mask`` takes them in order, apart)."""
    merged: list[Span] = []
    for span in spans:
        if merged and span.start <= merged[-1].end:
            merged[-1] = Span(merged[-1].start, max(merged[-1].end, span.end))
        else:
            merged.append(span)
    return merged


def front_matter(text: str) -> FrontMatter | None:
    """The front matter: ``---`` on the first line (not followed by a blank line, which
    would make it a rule) up to a ``---`` or ``...`` line."""
    opening = _FRONT_MATTER_OPEN.match(text)
    if opening is None:
        return None
    closing = _FRONT_MATTER_CLOSE.search(text, opening.end())
    if closing is None:
        return None
    return FrontMatter(Span(0, closing.end()), Span(opening.end(), closing.start()))


def _read_front_matter(manuscript: Manuscript, front: FrontMatter) -> list[Citation]:
    """Bibliographies and inline references into ``manuscript``; the ``nocite:`` keys
    returned, to join the text's citations."""
    body = manuscript.text[front.body.start : front.body.end]
    try:
        data = yaml.load(body, Loader=yaml.BaseLoader)  # strings only: no type guessing
    except (yaml.YAMLError, RecursionError) as error:
        manuscript.problems.append(_yaml_problem(manuscript.text, front, error))
        return []
    if not isinstance(data, dict):
        return []
    bibliography = data.get("bibliography")
    manuscript.bibliography_listed = isinstance(bibliography, list)
    if isinstance(bibliography, str):
        bibliography = [bibliography]
    if isinstance(bibliography, list):
        manuscript.bibliography_paths += [p for p in bibliography if isinstance(p, str) and p]
    if data.get("references"):
        from citelsp.documents.csl import parse_csl_yaml  # CSL parsing only when needed

        manuscript.inline = parse_csl_yaml(
            manuscript.uri, manuscript.text, front.body.start, front.body.end
        )
    if not data.get("nocite"):
        return []
    node = _value_node(body, "nocite")
    if node is None:
        return []
    offset = front.body.start
    return pandoc.parse_nocite(manuscript.uri, manuscript.text,
                               offset + node.start_mark.index, offset + node.end_mark.index)


def _value_node(body: str, key: str) -> yaml.Node | None:
    """The node of a top-level key's value, with the marks that place it in ``body``."""
    from citelsp.documents.csl import mapping_value  # YAML nodes only when needed

    try:
        return mapping_value(yaml.compose(body, Loader=yaml.SafeLoader), key)
    except (yaml.YAMLError, RecursionError):
        return None


def _yaml_problem(text: str, front: FrontMatter, error: Exception) -> Problem:
    mark = getattr(error, "problem_mark", None)
    index = getattr(mark, "index", None)
    if index is None:
        index = getattr(error, "position", None)
    if isinstance(index, int):
        start = min(front.body.start + index, front.body.end)
        line_end = text.find("\n", start, front.span.end)
        end = front.span.end if line_end == -1 else line_end
        if end > start and text[end - 1] == "\r":
            end -= 1
        span = Span(start, max(end, min(start + 1, front.span.end)))
    else:
        span = front.span
    if isinstance(error, RecursionError):
        problem = "nested too deeply"
    else:
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
    return Problem(
        code="MALFORMED_ENTRY",
        span=span,
        message=f"front matter is not valid YAML: {problem}",
        severity=Severity.ERROR,
    )
