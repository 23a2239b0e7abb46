"""Relative spans of Field and Reference, and the BibTeX re-parse that moves them in place."""

import random

import pytest

from citelsp.documents.bibtex import parse_bibtex
from citelsp.documents.model import Field, Reference, SpanBase
from citelsp.spans import Span


def at(text, span):
    return text[span.start : span.end]


def relative_reference(base):
    fields = {"title": Field.relative(base, "title", "T", 20, 21, 12, 17)}
    return Reference.relative(base, "k", "file:///r.bib", "bibtex", "misc", 6, 7, 0, 23, fields)


# --- model --------------------------------------------------------------------------------


def test_absolute_constructors_keep_their_spans():
    field = Field("title", "T", Span(20, 21), Span(12, 17))
    ref = Reference(
        key="k",
        uri="file:///r.bib",
        source_format="bibtex",
        entry_type="misc",
        key_span=Span(6, 7),
        span=Span(0, 23),
        fields={"title": field},
    )
    assert (field.name, field.value, field.span, field.name_span) == (
        "title", "T", Span(20, 21), Span(12, 17)
    )  # fmt: skip
    assert ref.key_span == Span(6, 7) and ref.span == Span(0, 23) and ref.csl is None
    assert ref.span_of("title") == Span(20, 21) and ref.span_of(None) == Span(6, 7)


def test_relative_spans_follow_their_shared_base():
    base = SpanBase(100)
    ref = relative_reference(base)
    title = ref.fields["title"]
    assert ref.span == Span(100, 123) and ref.key_span == Span(106, 107)
    assert title.span == Span(120, 121) and title.name_span == Span(112, 117)
    base.offset = 7
    assert ref.span == Span(7, 30) and ref.key_span == Span(13, 14)
    assert title.span == Span(27, 28) and ref.span_of("title") == Span(27, 28)


def test_field_is_an_immutable_value():
    absolute = Field("title", "T", Span(20, 21), Span(12, 17))
    moved = Field.relative(SpanBase(10), "title", "T", 10, 11, 2, 7)
    assert absolute == moved and hash(absolute) == hash(moved)
    assert absolute != Field("title", "U", Span(20, 21), Span(12, 17))
    assert absolute != Field("title", "T", Span(21, 22), Span(12, 17))
    assert "span=Span(start=20, end=21)" in repr(moved)
    with pytest.raises(AttributeError):
        absolute.value = "U"
    with pytest.raises(AttributeError):
        absolute.span = Span(0, 1)


def test_reference_is_compared_by_identity_and_caches_its_work():
    base = SpanBase(0)
    one, two = relative_reference(base), relative_reference(base)
    assert one != two and len({one, two}) == 2
    assert one.work.title == "T" and one.work is one.work
    base.offset = 50
    assert "work" in one.__dict__ and one.work.title == "T"


# --- re-parse -----------------------------------------------------------------------------

URI = "file:///model.bib"


def entry(i, title=None):
    return f"@article{{key{i},\n  title = {{{title or f'Title {i}'}}},\n  journal = jn,\n}}\n\n"


def assert_spans_match(text, bib):
    """Every span of every reference points at what it names in ``text``."""
    for ref in bib.references:
        assert at(text, ref.key_span) == ref.key
        assert at(text, ref.span).startswith("@") and at(text, ref.span).endswith("}")
        for f in ref.fields.values():
            assert at(text, f.name_span).lower() == f.name
            if f.name != "journal":  # a macro's span is its name, not its value
                assert at(text, f.span) == f.value


def test_insert_before_entries_moves_the_same_reference_objects():
    text = '@string{jn = "J"}\n' + "".join(entry(i) for i in range(50))
    first = parse_bibtex(URI + "1", text)
    works = [r.work for r in first.references]
    edit = text.index("Title 0")
    edited = text[:edit] + "New " + text[edit:]
    second = parse_bibtex(URI + "1", edited, previous=first)
    assert second.references[0] is not first.references[0]
    assert second.references[0].value("title") == "New Title 0"
    assert all(a is b for a, b in zip(first.references[1:], second.references[1:], strict=True))
    reused = zip(second.references[1:], works[1:], strict=True)
    assert all(r.__dict__["work"] is w for r, w in reused)
    assert_spans_match(edited, second)


def test_changed_macro_rebuilds_only_its_users():
    body = "@misc{plain, title = {x}}\n\n@misc{user, journal = jn}\n"
    first = parse_bibtex(URI + "2", '@string{jn = "Old"}\n' + body)
    text = '@string{jn = "Newer"}\n' + body
    second = parse_bibtex(URI + "2", text, previous=first)
    plain, user = second.references
    assert plain is first.references[0] and user is not first.references[1]
    assert user.value("journal") == "Newer"
    assert at(text, plain.key_span) == "plain" and at(text, user.key_span) == "user"


def test_moved_entry_is_reused_once_per_copy():
    one, two = entry(1), entry(2)
    first = parse_bibtex(URI + "3", one + two)
    swapped = parse_bibtex(URI + "3", two + one + one, previous=first)
    keys = [r.key for r in swapped.references]
    assert keys == ["key2", "key1", "key1"]
    assert len({id(r) for r in swapped.references}) == 3
    assert {id(r) for r in first.references} <= {id(r) for r in swapped.references}
    assert_spans_match(two + one + one, swapped)


def test_problems_move_with_their_chunk():
    broken = "@article{broken,\n  title = {unclosed,\n\n"
    text = entry(1) + broken + entry(2)
    first = parse_bibtex(URI + "4", text)
    edited = "% comment\n" + text
    bib = parse_bibtex(URI + "4", edited, previous=first)
    (problem,) = [p for p in bib.problems if p.code == "MALFORMED_ENTRY"]
    assert problem.code == "MALFORMED_ENTRY" and problem.key == "broken"
    assert at(edited, problem.span).startswith("@article{broken")
    assert_spans_match(edited, bib)


def test_crlf_and_non_ascii_after_edits():
    text = '@string{jn = "J"}\r\n' + "".join(
        entry(i, f"Über {i} 王 😀").replace("\n", "\r\n") for i in range(20)
    )
    bib = parse_bibtex(URI + "5", text)
    for edit in ("é", "😀😀", "\r\n"):
        at_ = text.index("Über 3")
        text = text[:at_] + edit + text[at_:]
        bib = parse_bibtex(URI + "5", text, previous=bib)
        assert len(bib.references) == 20
        assert_spans_match(text, bib)
    assert bib.references[3].value("title").endswith("Über 3 王 😀")


def random_edit(rng, text):
    """One edit as a user makes it: type, delete, add or remove an entry, redefine a macro."""
    kind = rng.choice(["type", "type", "delete", "add", "remove", "macro", "at"])
    pos = rng.randrange(len(text) + 1)
    if kind == "type":
        return text[:pos] + rng.choice("ab{}, =\n\"@é王😀") + text[pos:]
    if kind == "delete":
        return text[:pos] + text[pos + rng.randint(1, 30) :]
    if kind == "add":
        line = text.rfind("\n", 0, pos) + 1
        return text[:line] + entry(rng.randrange(1000, 2000)) + text[line:]
    if kind == "remove":
        start = text.find("@article", pos)
        end = text.find("@", start + 1)
        return text if start == -1 else text[:start] + (text[end:] if end != -1 else "")
    if kind == "macro":
        return f'@string{{jn = "J{rng.randrange(3)}"}}\n' + text
    return text[:pos] + "\n@" + text[pos:]


@pytest.mark.parametrize("seed", range(8))
def test_many_successive_edits_match_a_fresh_parse(seed):
    rng = random.Random(seed)
    uri = f"{URI}-random-{seed}"
    text = '@string{jn = "J"}\n' + "".join(entry(i) for i in range(40))
    kept = parse_bibtex(uri, text)
    for step in range(60):
        text = random_edit(rng, text)
        kept = parse_bibtex(uri, text, previous=kept)
        fresh = parse_bibtex(f"{uri}-fresh-{step}", text)
        assert [(r.key, r.span, r.key_span, r.fields) for r in kept.references] == [
            (r.key, r.span, r.key_span, r.fields) for r in fresh.references
        ]
        assert kept.problems == fresh.problems
        assert len({id(r) for r in kept.references}) == len(kept.references)
