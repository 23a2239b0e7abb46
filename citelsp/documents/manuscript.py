"""A manuscript's citations, parse problems and declared bibliographies, by language.

Markdown reads its YAML front matter, ``<!--ref:-->`` markers and pandoc citations; LaTeX reads
``\\cite``-family commands and ``\\bibliography``/``\\addbibresource``; plain text reads markers
only. Code (fenced blocks, and code spans in Markdown) is masked before any scanner runs.
"""

from __future__ import annotations

import re
from pathlib import PurePath
from typing import Literal

import yaml

from citelsp.documents import latex, markers, myst, pandoc
from citelsp.documents.bibitems import parse_bibitems
from citelsp.documents.markdown import YamlBlock, scan_blocks
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
_NOT_PROSE = frozenset({"bibliography", "references", "nocite"})
"""Metadata fields whose values are not text that cites: paths, the inline bibliography, and
``nocite`` (read on its own)."""


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
    if language != "markdown":  # markers outside fenced code
        fences = scan_blocks(text, front=None, indented=False).code
        manuscript.citations, problems = markers.parse_markers(uri, pandoc.mask(text, fences))
        manuscript.problems.extend(problems)
        return manuscript
    blocks = scan_blocks(text, front=front_matter(text))
    metadata = _read_metadata(manuscript, blocks.yaml)
    hidden = blocks.code + [block.span for block in blocks.yaml]
    roles: list[Citation] = []
    if "{cite" in text:  # MyST roles look like code spans
        outside = pandoc.disjoint(hidden + pandoc.html_comments(text))
        roles = myst.parse_myst_roles(uri, pandoc.mask(text, outside))
    hidden = pandoc.disjoint(hidden + pandoc.code_spans(text, blocks.code))
    prose = pandoc.mask(text, hidden)
    manuscript.citations, problems = markers.parse_markers(uri, prose)
    manuscript.problems.extend(problems)
    manuscript.citations += metadata + roles + pandoc.parse_pandoc(uri, prose, blocks.examples)
    manuscript.citations.sort(key=lambda c: c.span)
    return manuscript


def front_matter(text: str) -> YamlBlock | None:
    """The front matter: ``---`` on the first line (not followed by a blank line, which
    would make it a rule) up to a ``---`` or ``...`` line."""
    opening = _FRONT_MATTER_OPEN.match(text)
    if opening is None:
        return None
    closing = _FRONT_MATTER_CLOSE.search(text, opening.end())
    if closing is None:
        return None
    return YamlBlock(Span(0, closing.end()), Span(opening.end(), closing.start()))


def _read_metadata(manuscript: Manuscript, blocks: list[YamlBlock]) -> list[Citation]:
    """Bibliographies and inline references into ``manuscript`` from its YAML metadata blocks
    (a later block's field replaces an earlier one's, as in pandoc); the citations returned
    are the ``nocite:`` keys and those in the text of other fields (a title or an abstract
    cites like the body)."""
    text = manuscript.text
    fields: dict[str, tuple[YamlBlock, yaml.Node]] = {}
    for block in blocks:
        try:
            root = yaml.compose(text[block.body.start:block.body.end], Loader=yaml.SafeLoader)
        except (yaml.YAMLError, RecursionError) as error:
            manuscript.problems.append(_yaml_problem(text, block, error))
            continue
        if isinstance(root, yaml.MappingNode):
            for name, value in root.value:
                if isinstance(name, yaml.ScalarNode):
                    fields[name.value] = (block, value)
    citations: list[Citation] = []
    if "bibliography" in fields:
        _, node = fields["bibliography"]
        manuscript.bibliography_listed = isinstance(node, yaml.SequenceNode)
        items = node.value if isinstance(node, yaml.SequenceNode) else [node]
        manuscript.bibliography_paths += [
            item.value for item in items if isinstance(item, yaml.ScalarNode) and item.value]
    if "references" in fields and fields["references"][1].value:
        from citelsp.documents.csl import parse_csl_yaml  # CSL parsing only when needed

        block, _ = fields["references"]
        manuscript.inline = parse_csl_yaml(manuscript.uri, text, block.body.start,
                                           block.body.end)
    if "nocite" in fields and fields["nocite"][1].value:
        block, node = fields["nocite"]
        offset = block.body.start
        citations += pandoc.parse_nocite(manuscript.uri, text, offset + node.start_mark.index,
                                         offset + node.end_mark.index)
    for name, (block, node) in fields.items():
        if name not in _NOT_PROSE and not name.endswith("_"):
            for scalar in _scalars(node):
                citations += _value_citations(manuscript.uri, text, scalar, Span(
                    block.body.start + scalar.start_mark.index,
                    block.body.start + scalar.end_mark.index))
    return citations


def _value_citations(uri: str, text: str, scalar: yaml.ScalarNode,
                     span: Span) -> list[Citation]:
    """The citations of a metadata value, which pandoc reads as a Markdown document of its
    own; each placed where its key is written in ``span`` (YAML escapes aside)."""
    found = parse_markdown_citations(uri, scalar.value)
    citations: list[Citation] = []
    pos = span.start
    for citation in found:
        at = text.find(citation.key, pos, span.end)
        key = Span(at, at + len(citation.key)) if at != -1 else span
        pos = key.end if at != -1 else pos
        citations.append(Citation(key=citation.key, span=key, uri=uri, syntax="pandoc",
                                  full_span=key))
    return citations


def parse_markdown_citations(uri: str, text: str) -> list[Citation]:
    """The pandoc citations of a Markdown document without metadata: code blocks, code spans
    and example list labels apart."""
    blocks = scan_blocks(text)
    hidden = pandoc.disjoint(blocks.code + pandoc.code_spans(text, blocks.code))
    return pandoc.parse_pandoc(uri, pandoc.mask(text, hidden), blocks.examples)


def _scalars(node: yaml.Node) -> list[yaml.ScalarNode]:
    """The scalar values under ``node`` that could cite (mapping keys are names, not text);
    each node once, however often aliases repeat it."""
    found: list[yaml.ScalarNode] = []
    seen: set[int] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, yaml.ScalarNode):
            if "@" in item.value:
                found.append(item)
        elif isinstance(item, yaml.SequenceNode):
            stack += item.value
        elif isinstance(item, yaml.MappingNode):
            stack += [value for _, value in item.value]
    return found


def _yaml_problem(text: str, front: YamlBlock, error: Exception) -> Problem:
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
