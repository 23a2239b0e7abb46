"""CSL-JSON files and CSL-YAML front matter → references with exact key and field spans.

``json`` reports no positions, so CSL-JSON is read by a small scanner that walks the
structure itself and hands every value to the C-accelerated ``json`` scanner, recording
where each one starts and ends. CSL-YAML uses PyYAML's node graph, whose marks carry
code-point indexes. Field names are lowercased (``DOI`` → ``doi``) so other modules read
BibTeX and CSL fields alike; ``Reference.csl`` keeps the item exactly as written.
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from json.decoder import JSONDecodeError, scanstring
from typing import Any

import yaml
from yaml.constructor import SafeConstructor

from citelsp.documents.bibtex import paused_gc
from citelsp.documents.model import Bibliography, Field, Problem, Reference, Severity
from citelsp.spans import Span

# The item types of CSL 1.0.2; an array of objects is CSL only if it uses them.
# fmt: off
CSL_TYPES = frozenset({
    "article", "article-journal", "article-magazine", "article-newspaper", "bill", "book",
    "broadcast", "chapter", "classic", "collection", "dataset", "document", "entry",
    "entry-dictionary", "entry-encyclopedia", "event", "figure", "graphic", "hearing", "interview",
    "legal_case", "legislation", "manuscript", "map", "motion_picture", "musical_score",
    "pamphlet", "paper-conference", "patent", "performance", "periodical",
    "personal_communication", "post", "post-weblog", "regulation", "report", "review",
    "review-book", "software", "song", "speech", "standard", "thesis", "treaty", "webpage",
})
# fmt: on

# CSL name variables: rendered as "Family, Given and Family2, Given2" in Field.value.
# fmt: off
NAME_VARIABLES = frozenset({
    "author", "chair", "collection-editor", "compiler", "composer", "container-author",
    "contributor", "curator", "director", "editor", "editorial-director", "executive-producer",
    "guest", "host", "illustrator", "interviewer", "narrator", "organizer", "original-author",
    "performer", "producer", "recipient", "reviewed-author", "script-writer", "series-creator",
    "translator",
})
# fmt: on

_WS = re.compile(r"[ \t\n\r]*")
_PLAIN_NAME = re.compile(r'[ \t\n\r]*"([^"\\\x00-\x1f]*)"[ \t\n\r]*:[ \t\n\r]*')
_SEPARATOR = re.compile(r"[ \t\n\r]*([,}])[ \t\n\r]*")
_scan_value = json.JSONDecoder().scan_once


# --- CSL-JSON --------------------------------------------------------------------------------


class _JsonItem:
    """One object of the items array with the spans of its own properties."""

    __slots__ = ("start", "end", "properties")

    def __init__(self, start: int) -> None:
        self.start = start
        self.end = start
        self.properties: list[tuple[str, Any, Span, Span]] = []
        """(name, value, value span, name span); string spans exclude the quotes."""


def parse_csl_json(uri: str, text: str) -> Bibliography | None:
    """A CSL-JSON bibliography, or None when the JSON is not CSL (package.json, tsconfig).

    Invalid JSON that looks meant as CSL (an array mentioning ``"id"`` and ``"type"``) gives
    a MALFORMED_ENTRY problem at the error, and the items read before the error are kept.
    """
    scanner = _JsonScanner(text)
    try:
        with paused_gc():
            scanner.document()
        error = None
    except JSONDecodeError as e:
        error = e
    items = scanner.items
    if error is None and not _is_csl(items):
        return None
    if error is not None and not _looks_like_csl(text):
        return None
    bib = Bibliography(uri=uri, text=text, source_format="csl-json")
    with paused_gc():
        for item in items:
            _add_item(bib, uri, item.start, item.end, item.properties)
    if error is not None:
        bib.problems.append(_json_problem(text, error))
    return bib


def _json_problem(text: str, error: JSONDecodeError) -> Problem:
    """Where and why the JSON broke; a trailing comma (the usual cause) is named and marked."""
    pos, why = error.pos, error.msg
    if pos < len(text) and text[pos] in "]}":
        comma = len(text[:pos].rstrip()) - 1
        if comma >= 0 and text[comma] == ",":
            pos, why = comma, f"a comma before '{text[error.pos]}' (JSON allows no trailing comma)"
    return _malformed(text, pos, f"Invalid JSON: {why}.")


def _looks_like_csl(text: str) -> bool:
    """Broken JSON meant as CSL: an array (or an ``items`` list) mentioning ids and types."""
    shaped = text.lstrip("\ufeff \t\r\n").startswith("[") or '"items"' in text
    return shaped and '"id"' in text and '"type"' in text


_WORK_VARIABLES = frozenset({"title", "author", "editor", "issued", "DOI", "container-title",
                             "URL", "publisher"})


def _is_csl(items: list[_JsonItem] | None) -> bool:
    """CSL when some item has an ``id`` and a CSL ``type`` (other JSON rarely has both), or
    when every item has an ``id`` and describes a work (a title, authors, a date…): pandoc
    reads items without a type."""
    if not items:
        return False
    if any(_has_csl_identity(item) for item in items):
        return True
    return all(_describes_work(item) for item in items)


def _describes_work(item: _JsonItem) -> bool:
    names = {name for name, _, _, _ in item.properties}
    return "id" in names and not names.isdisjoint(_WORK_VARIABLES)


def _has_csl_identity(item: _JsonItem) -> bool:
    values = {name: value for name, value, _, _ in item.properties}
    item_type = values.get("type")
    return "id" in values and isinstance(item_type, str) and item_type in CSL_TYPES


class _JsonScanner:
    """Finds the items array (top level, or an object's ``items``) and records positions.

    ``items`` stays None when the document has no items array; values outside the items
    are skipped by the C scanner without recording anything.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.items: list[_JsonItem] | None = None

    def ws(self, pos: int) -> int:
        return _WS.match(self.text, pos).end()

    def expect(self, pos: int, char: str) -> int:
        if self.text[pos : pos + 1] != char:
            raise JSONDecodeError(f"Expecting '{char}'", self.text, pos)
        return pos + 1

    def value(self, pos: int) -> tuple[Any, int]:
        try:
            return _scan_value(self.text, pos)
        except StopIteration as stop:
            raise JSONDecodeError("Expecting value", self.text, stop.value) from None
        except RecursionError:
            raise JSONDecodeError("Value nested too deeply", self.text, pos) from None

    def document(self) -> None:
        text = self.text
        pos = self.ws(1 if text.startswith("\ufeff") else 0)  # editors may keep a BOM
        if text.startswith("[", pos):
            end = self.items_array(pos)
        elif text.startswith("{", pos):
            end = self.top_object(pos)
        else:
            _, end = self.value(pos)
        end = self.ws(end)
        if end != len(text):
            raise JSONDecodeError("Extra data", text, end)

    def top_object(self, pos: int) -> int:
        text = self.text
        pos = self.ws(pos + 1)
        if text.startswith("}", pos):
            return pos + 1
        while True:
            name, pos = scanstring(text, self.expect(pos, '"'))
            pos = self.ws(self.expect(self.ws(pos), ":"))
            if name == "items" and text.startswith("[", pos):
                pos = self.items_array(pos)
            else:
                _, pos = self.value(pos)
            pos = self.ws(pos)
            if text.startswith("}", pos):
                return pos + 1
            pos = self.ws(self.expect(pos, ","))

    def items_array(self, pos: int) -> int:
        text = self.text
        self.items = []
        pos = self.ws(pos + 1)
        if text.startswith("]", pos):
            return pos + 1
        while True:
            if text.startswith("{", pos):
                item = _JsonItem(pos)
                pos = self.item_object(item, pos)
                self.items.append(item)
            else:
                _, pos = self.value(pos)
            pos = self.ws(pos)
            if text.startswith("]", pos):
                return pos + 1
            pos = self.ws(self.expect(pos, ","))

    def item_object(self, item: _JsonItem, pos: int) -> int:
        text = self.text
        pos = self.ws(pos + 1)
        if text.startswith("}", pos):
            item.end = pos + 1
            return item.end
        while True:
            plain = _PLAIN_NAME.match(text, pos)
            if plain is not None:  # the usual case, one regex call
                name, name_span, pos = plain.group(1), Span(*plain.span(1)), plain.end()
            else:
                pos = self.ws(pos)
                name, end = scanstring(text, self.expect(pos, '"'))
                name_span = Span(pos + 1, end - 1)
                pos = self.ws(self.expect(self.ws(end), ":"))
            value, end = self.value(pos)
            span = Span(pos + 1, end - 1) if isinstance(value, str) else Span(pos, end)
            item.properties.append((name, value, span, name_span))
            separator = _SEPARATOR.match(text, end)
            if separator is None:
                raise JSONDecodeError("Expecting ',' delimiter", text, self.ws(end))
            if separator.group(1) == "}":
                item.end = separator.end(1)
                return item.end
            pos = separator.end()


# --- CSL-YAML --------------------------------------------------------------------------------


class _YamlConstructor(SafeConstructor):
    """Safe construction, but dates stay strings as written: CSL dates are not timestamps,
    and the item must stay JSON-serializable."""


_YamlConstructor.add_constructor("tag:yaml.org,2002:timestamp", SafeConstructor.construct_yaml_str)


def parse_csl_yaml(uri: str, text: str, start: int, end: int) -> Bibliography:
    """The ``references:`` of a YAML front matter body ``text[start:end]`` (no fences),
    with spans in whole-document coordinates. Broken YAML is a problem, never an error."""
    bib = Bibliography(uri=uri, text=text, source_format="csl-yaml")
    try:
        root = yaml.compose(text[start:end], Loader=yaml.SafeLoader)
    except RecursionError:
        bib.problems.append(_malformed(text, start, "Invalid YAML: nested too deeply."))
        return bib
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
        pos = start + (mark.index if mark is not None else 0)
        what = getattr(e, "problem", None) or getattr(e, "context", None) or str(e)
        bib.problems.append(
            _malformed(text, min(pos, max(end - 1, start)), f"Invalid YAML: {what}.")
        )
        return bib
    references = mapping_value(root, "references")
    if not isinstance(references, yaml.SequenceNode):
        return bib
    constructor = _YamlConstructor()
    sizes: dict[int, int] = {}
    seen: set[int] = set()
    for node in references.value:
        item_span = _node_span(text, node, start)
        item_start, item_end = item_span.start, item_span.end
        if not isinstance(node, yaml.MappingNode):
            bib.problems.append(
                _problem(Span(item_start, item_end), "A CSL-YAML reference must be a mapping.")
            )
            continue
        if id(node) in seen:  # ``- *ref``: the same reference again
            bib.problems.append(_problem(
                Span(item_start, item_end), "This reference is repeated through a YAML alias: "
                "it is read once.", Severity.WARNING))  # fmt: skip
            continue
        seen.add(id(node))
        allowance = EXPANSION_RATIO * (item_end - item_start)
        if _expanded_size(node, sizes) > allowance:
            bib.problems.append(_problem(
                Span(item_start, item_end), "This reference expands through YAML aliases to "
                f"more than {allowance:,} characters, {EXPANSION_RATIO} times its own length: "
                "it is not read (aliases that repeat aliases multiply the file)."))  # fmt: skip
            continue
        properties = []
        for key_node, value_node in node.value:
            try:
                name = constructor.construct_object(key_node, deep=True)
                value = _from_markdown(constructor.construct_object(value_node, deep=True))
                if name == "id" and isinstance(value_node, yaml.ScalarNode):
                    value = _pandoc_id(value_node)
            except (yaml.YAMLError, RecursionError) as e:
                span = _node_span(text, value_node, start)
                what = "nested too deeply" if isinstance(e, RecursionError) else e
                bib.problems.append(_problem(span, f"Invalid YAML value: {what}."))
                continue
            properties.append(
                (
                    str(name),
                    value,
                    _node_span(text, value_node, start),
                    _node_span(text, key_node, start),
                )
            )
        _add_item(bib, uri, item_start, item_end, properties)
    return bib


_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_CLASS_SPAN = re.compile(r"\[([^\[\]]*)\]\{\.(?:nocase|smallcaps|underline)\}")
_YAML_INT = re.compile(r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+")
_YAML_FLOAT = re.compile(r"[-+]?[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?")


def _from_markdown(value: Any) -> Any:
    """A CSL-YAML value as pandoc reads it: Markdown, so ``\\_`` is ``_``, ``\\"`` is ``"``
    and a ``[Bottom-up]{.nocase}`` span is its text (pandoc writes all three)."""
    if isinstance(value, str):
        if "\\" in value or "]{." in value:
            value = _ESCAPE.sub(r"\1", _CLASS_SPAN.sub(r"\1", value))
        return value
    if isinstance(value, list):
        return [_from_markdown(item) for item in value]
    if isinstance(value, dict):
        return {name: _from_markdown(item) for name, item in value.items()}
    return value


def _pandoc_id(node: yaml.ScalarNode) -> str | None:
    """An item's ``id`` typed as pandoc types it (YAML 1.2's core schema, then text): ``0017``
    is ``17``, ``1e3`` is ``1000``, ``1_000`` stays as written, ``true`` and ``null`` are no
    id. Quoted ids are text."""
    raw = node.value
    if node.style is not None:
        return _from_markdown(raw)
    if raw in ("", "~", "null", "Null", "NULL", "true", "True", "TRUE", "false", "False",
               "FALSE"):
        return None
    if _YAML_INT.fullmatch(raw):
        base = 16 if raw.startswith("0x") else 8 if raw.startswith("0o") else 10
        return str(int(raw[2:] if base != 10 else raw, base))
    if _YAML_FLOAT.fullmatch(raw):
        number = Decimal(raw).normalize()
        return f"{number:f}" if number != number.to_integral() else str(int(number))
    return _from_markdown(raw)


def _expanded_size(node: yaml.Node, sizes: dict[int, int]) -> int | float:
    """Characters and nodes ``node`` stands for with every alias expanded, each node's count
    worked out once (``sizes``, by node identity): a billion laughs costs its nodes, not its
    expansion. An alias inside its own anchor stands for an endless value (``inf``)."""
    stack: list[tuple[yaml.Node, bool]] = [(node, False)]
    open_nodes: set[int] = set()
    while stack:
        current, children_done = stack.pop()
        key = id(current)
        if key in sizes:
            continue
        if isinstance(current, yaml.ScalarNode):
            sizes[key] = 1 + len(current.value)
            continue
        children = [n for pair in current.value for n in pair] if isinstance(
            current, yaml.MappingNode) else list(current.value)
        if children_done:
            open_nodes.discard(key)
            sizes[key] = 1 + sum(sizes[id(c)] for c in children)
            continue
        if key in open_nodes:  # an alias inside its own anchor
            return math.inf
        open_nodes.add(key)
        stack.append((current, True))
        stack += [(c, False) for c in children if id(c) not in sizes]
    return sizes[id(node)]


def mapping_value(node: yaml.Node | None, key: str) -> yaml.Node | None:
    """The node of ``key``'s value in a YAML mapping node, with its marks."""
    if not isinstance(node, yaml.MappingNode):
        return None
    for key_node, value_node in node.value:
        if isinstance(key_node, yaml.ScalarNode) and key_node.value == key:
            return value_node
    return None


def _node_span(text: str, node: yaml.Node, offset: int) -> Span:
    """A node's span; a quoted scalar's excludes its quotes, a block collection's the
    line breaks PyYAML counts into it."""
    start, end = offset + node.start_mark.index, offset + node.end_mark.index
    if isinstance(node, yaml.ScalarNode) and node.style in ("'", '"'):
        return Span(start + 1, end - 1)
    while end > start and text[end - 1].isspace():
        end -= 1
    return Span(start, end)


# --- Shared ----------------------------------------------------------------------------------


def _add_item(
    bib: Bibliography,
    uri: str,
    start: int,
    end: int,
    properties: list[tuple[str, Any, Span, Span]],
) -> None:
    """Turn one item's properties into a Reference, or a problem when it has no ``id``."""
    properties = _checked(bib, properties)
    csl = {name: value for name, value, _, _ in properties}
    fields: dict[str, Field] = {}
    key_span = None
    for name, value, span, name_span in properties:
        lowered = name.lower()
        if lowered not in fields:
            fields[lowered] = Field(lowered, render_value(name, value), span, name_span)
        if name == "id":
            key_span = span
    item_id = csl.get("id")
    if key_span is None or item_id is None or item_id == "" or isinstance(item_id, dict | list):
        bib.problems.append(
            _problem(
                _first_line(bib.text, start, end), 'CSL item without an "id": it cannot be cited.'
            )
        )
        return
    entry_type = csl.get("type")
    if entry_type is None:
        bib.problems.append(_problem(
            key_span, 'CSL item without a "type": read as pandoc reads it, as a work of no '
            'particular type (add one, such as "article-journal" or "book")', Severity.HINT))
    bib.references.append(
        Reference(
            key=str(item_id),
            uri=uri,
            source_format=bib.source_format,
            entry_type=entry_type if isinstance(entry_type, str) else "",
            key_span=key_span,
            span=Span(start, end),
            fields=fields,
            csl=csl,
        )
    )


EXPANSION_RATIO = 16
"""A CSL-YAML reference may stand for at most this many times its own text (``bibtex``'s
bound on ``@string`` macros, for YAML aliases)."""
MAX_DEPTH = 16
"""CSL values nest a few levels (a date's ``date-parts``: 3). A deeper value is dropped, so
nothing downstream can exhaust the stack on it."""
_SURROGATE = re.compile("[\ud800-\udfff]")


def _checked(bib: Bibliography, properties: list[tuple[str, Any, Span, Span]]
             ) -> list[tuple[str, Any, Span, Span]]:
    """The properties without over-deep values, lone surrogates replaced (a JSON
    ``"\\ud800"`` escape decodes to one, and it cannot be written out as UTF-8); a warning
    on the value for each."""
    kept = []
    for name, value, span, name_span in properties:
        if _too_deep(value):
            bib.problems.append(_problem(
                span, f"The value of '{name}' is nested more than {MAX_DEPTH} levels deep: "
                "it is ignored.", Severity.WARNING,
            ))  # fmt: skip
            continue
        clean_name, clean_value = _without_surrogates(name), _without_surrogates(value)
        if clean_name != name or clean_value != value:
            bib.problems.append(_problem(
                span, f"'{clean_name}' holds an invalid character (a lone UTF-16 surrogate): "
                "it is replaced by U+FFFD.", Severity.WARNING,
            ))  # fmt: skip
        kept.append((clean_name, clean_value, span, name_span))
    return kept


def _too_deep(value: Any) -> bool:
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth >= MAX_DEPTH:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack += [(child, depth + 1) for child in children]
    return False


def _without_surrogates(value: Any) -> Any:
    """``value`` with lone surrogates replaced in every string (depth already bounded)."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value) if not value.isascii() else value
    if isinstance(value, list):
        return [_without_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_without_surrogates(k): _without_surrogates(v) for k, v in value.items()}
    return value


def render_value(name: str, value: Any) -> str:
    """A CSL value as one string: names as ``Family, Given and …``, dates as their parts."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if name in NAME_VARIABLES and isinstance(value, list):
        return " and ".join(render_name(person) for person in value)
    if isinstance(value, dict) and ("date-parts" in value or "raw" in value or "literal" in value):
        return render_date(value)
    if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
        return ", ".join(str(v) for v in value)
    return json.dumps(value, ensure_ascii=False)


def render_name(person: Any) -> str:
    if not isinstance(person, dict):
        return str(person)
    if person.get("literal"):
        return str(person["literal"])
    family = " ".join(
        str(p) for p in (person.get("non-dropping-particle"), person.get("family")) if p
    )
    given = str(person.get("given") or "")
    return f"{family}, {given}" if given else family


def render_date(date: dict) -> str:
    parts = date.get("date-parts")
    if isinstance(parts, list) and parts:
        return "/".join(
            "-".join(str(p) for p in d) if isinstance(d, list) else str(d) for d in parts
        )
    return str(date.get("raw") or date.get("literal") or "")


def _first_line(text: str, start: int, end: int) -> Span:
    line_end = text.find("\n", start, end)
    return Span(start, end if line_end == -1 else line_end)


def _malformed(text: str, pos: int, message: str) -> Problem:
    pos = max(0, min(pos, len(text)))
    line_end = text.find("\n", pos)
    end = len(text) if line_end == -1 else line_end
    return _problem(Span(pos, max(end, min(pos + 1, len(text)))), message)


def _problem(span: Span, message: str, severity: Severity = Severity.ERROR) -> Problem:
    return Problem(code="MALFORMED_ENTRY", span=span, message=message, severity=severity)
