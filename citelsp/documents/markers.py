"""``<!--ref:slug-->`` markers, their ``<!--anchor:KIND:VALUE-->`` locators and their lint.

Grammar and lint rules: the README's marker syntax and local checks. The scan reads every
``<!--`` once; a comment ends at the first ``-->`` before the next ``<!--``, so an
unterminated marker never swallows the markers after it and hostile input stays linear.
Callers mask code the scan must not read (``citelsp.documents.pandoc.mask``); offsets are
those of the document.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote

from citelsp.documents.model import Anchor, Citation, Problem, Severity
from citelsp.spans import Span

ANCHOR_KINDS = ("quote", "page", "section", "paragraph", "none")
MAX_QUOTE_WORDS = 25

_OPEN = "<!--"
_CLOSE = "-->"
_REF = "ref:"
_ANCHOR = "anchor:"

_COMMENT_OPEN = re.compile(re.escape(_OPEN))
_SLUG = re.compile(r"[A-Za-z][A-Za-z0-9_:-]*")
_TAIL = re.compile(r"\s+(?P<status>[A-Z][A-Z0-9_]*(?:-[A-Z0-9_]+)*)(?:\s+\S+)*\s*|\s*")
_WHITESPACE = re.compile(r"\s*")


@dataclass
class _Ref:
    """A ``<!--ref:`` comment as read; ``problem`` says why it is malformed."""

    span: Span
    slug: str | None
    slug_span: Span | None = None
    status: str | None = None
    problem: str | None = None


@dataclass
class _AnchorMark:
    """A ``<!--anchor:`` comment; ``anchor`` is None when it is unterminated."""

    span: Span
    anchor: Anchor | None
    problem: str | None


def parse_markers(uri: str, text: str) -> tuple[list[Citation], list[Problem]]:
    """Citations for the valid ref markers of ``text`` and one problem per lint finding."""
    marks = _read_marks(text)
    citations: list[Citation] = []
    problems: list[Problem] = []
    for i, mark in enumerate(marks):
        if isinstance(mark, _AnchorMark):
            before = marks[i - 1] if i > 0 else None
            owner = before if isinstance(before, _Ref) else None
            attached = owner is not None and _adjacent(text, owner.span, mark.span)
            if mark.problem is not None:
                key = owner.slug if owner is not None and attached else None
                problems.append(_bad_anchor(mark.span, mark.problem, key))
            elif not attached:
                orphan = "orphan anchor: not directly after a ref marker"
                problems.append(_bad_anchor(mark.span, orphan, None))
            continue
        if mark.problem is not None or mark.slug is None or mark.slug_span is None:
            problems.append(_malformed(mark))
            continue
        after = marks[i + 1] if i + 1 < len(marks) else None
        follower = after if isinstance(after, _AnchorMark) else None
        anchored = follower is not None and _adjacent(text, mark.span, follower.span)
        anchor = follower.anchor if follower is not None and anchored else None
        citations.append(
            Citation(
                key=mark.slug,
                span=mark.slug_span,
                uri=uri,
                syntax="marker",
                full_span=mark.span,
                anchor=anchor,
                status=mark.status,
            )
        )
        if not anchored:
            problems.append(_no_locator(mark, "ref marker has no anchor"))
        elif anchor is not None and anchor.kind == "none":
            problems.append(_no_locator(mark, "ref marker's anchor is 'none'"))
    problems.sort(key=lambda p: p.span)
    return citations, problems


def _read_marks(text: str) -> list[_Ref | _AnchorMark]:
    opens = [m.start() for m in _COMMENT_OPEN.finditer(text)]
    marks: list[_Ref | _AnchorMark] = []
    for i, start in enumerate(opens):
        limit = opens[i + 1] if i + 1 < len(opens) else len(text)
        body = start + len(_OPEN)
        if text.startswith(_REF, body):
            marks.append(_read_ref(text, start, body + len(_REF), limit))
        elif text.startswith(_ANCHOR, body):
            marks.append(_read_anchor(text, start, body + len(_ANCHOR), limit))
    return marks


def _read_ref(text: str, start: int, body: int, limit: int) -> _Ref:
    close = text.find(_CLOSE, body, limit)
    if close == -1:
        span = Span(start, _line_end(text, start, limit))
        return _Ref(span, None, problem="unterminated ref marker (missing '-->')")
    span = Span(start, close + len(_CLOSE))
    slug = _SLUG.match(text, body, close)
    if slug is None:
        if body == close or text[body].isspace():
            return _Ref(span, None, problem="ref marker has no slug")
        return _Ref(span, None, problem=f"slug must start with a letter, not {text[body]!r}")
    slug_span = Span(slug.start(), slug.end())
    tail = _TAIL.fullmatch(text, slug.end(), close)
    if tail is not None:
        return _Ref(span, slug.group(), slug_span, tail.group("status"))
    after = text[slug.end()]
    if after.isspace():
        problem = "after the slug a ref marker takes a status token such as VERIFIED"
    else:
        problem = f"invalid character {after!r} in slug (allowed: letters, digits, _ : -)"
    return _Ref(span, slug.group(), slug_span, problem=problem)


def _read_anchor(text: str, start: int, body: int, limit: int) -> _AnchorMark:
    close = text.find(_CLOSE, body, limit)
    if close == -1:
        span = Span(start, _line_end(text, start, limit))
        return _AnchorMark(span, None, "unterminated anchor comment (missing '-->')")
    span = Span(start, close + len(_CLOSE))
    kind, _, raw = text[body:close].partition(":")
    anchor = Anchor(kind=kind, value=unquote(raw), span=span)
    return _AnchorMark(span, anchor, _anchor_problem(kind, raw, anchor.value))


def _anchor_problem(kind: str, raw: str, value: str) -> str | None:
    if kind not in ANCHOR_KINDS:
        return f"unknown anchor kind {kind!r} (expected one of {', '.join(ANCHOR_KINDS)})"
    if kind == "none":
        return None
    if not value.strip():
        return f"empty value for anchor kind {kind!r}"
    if kind != "quote":
        return None
    if "--" in raw or raw.endswith("-"):
        return "raw '-' run in a quote anchor would break the comment: write '-' as %2D"
    words = len(value.split())
    if words > MAX_QUOTE_WORDS:
        return f"quote anchor has {words} words (at most {MAX_QUOTE_WORDS})"
    return None


def _adjacent(text: str, first: Span, second: Span) -> bool:
    """True when only whitespace (newlines included) separates ``first`` from ``second``."""
    return _WHITESPACE.match(text, first.end, second.start).end() == second.start


def _line_end(text: str, start: int, limit: int) -> int:
    end = text.find("\n", start, limit)
    end = limit if end == -1 else end
    return end - 1 if end > start and text[end - 1] == "\r" else end


def _malformed(ref: _Ref) -> Problem:
    return Problem(
        code="MALFORMED_MARKER",
        span=ref.span,
        message=ref.problem or "malformed ref marker",
        severity=Severity.ERROR,
        key=ref.slug,
    )


def _no_locator(ref: _Ref, why: str) -> Problem:
    return Problem(
        code="NO_LOCATOR",
        span=ref.span,
        message=f"{why}: add <!--anchor:quote|page|section|paragraph:VALUE-->",
        severity=Severity.WARNING,
        key=ref.slug,
    )


def _bad_anchor(span: Span, message: str, key: str | None) -> Problem:
    return Problem(
        code="BAD_ANCHOR", span=span, message=message, severity=Severity.WARNING, key=key
    )
