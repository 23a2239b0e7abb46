"""Shortcuts taken for speed give exactly what the longer way gives."""

import json
import re
import sys
from datetime import date

import pytest

from citelsp.documents import text
from citelsp.documents.bibtex import parse_bibtex
from citelsp.documents.model import Field, Span
from citelsp.documents.text import collapse_whitespace
from citelsp.resolution.identifiers import _by_folded_name, identifiers_of


def test_collapse_whitespace_splits_on_what_a_regex_calls_whitespace():
    spaces = [c for c in map(chr, range(sys.maxunicode + 1)) if re.fullmatch(r"\s", c)]
    assert spaces == [c for c in map(chr, range(sys.maxunicode + 1)) if c.isspace()]
    for c in spaces:
        s = f"{c}a{c}{c}b {c}\u200bc{c}"
        assert collapse_whitespace(s) == re.sub(r"\s+", " ", s).strip()


@pytest.mark.parametrize(
    "names",
    [[], ["doi", "url"], ["DOI", "doi"], ["doi", "DOI"], ["archivepreﬁx", "archiveprefix"],
     ["howpubliſhed"], ["issn-l", "x_1"], ["123"], ["straße", "doi"], ["Kelvin", "k"]],
)
def test_fields_by_folded_name_agree_with_folding_each(names):
    fields = {name: Field(name, "v", Span(0, 1), Span(0, 1)) for name in names}
    folded: dict = {}
    for name, f in fields.items():
        folded.setdefault(name.casefold(), f)
    assert _by_folded_name(fields) == folded
    assert list(_by_folded_name(fields)) == list(folded)


def test_remembered_identifiers_are_read_again_for_another_day():
    (ref,) = parse_bibtex("file:///m.bib", "@misc{k, eprint = {2512.01234}}\n").references
    assert identifiers_of(ref, date(2025, 6, 1)).arxiv.impossible
    assert not identifiers_of(ref, date(2026, 1, 1)).arxiv.impossible
    assert identifiers_of(ref, date(2026, 1, 1)) is identifiers_of(ref, date(2026, 1, 1))


@pytest.mark.parametrize(
    ("raw", "decoded"),
    [("The ``Other'' Career of {Wilbur}", "The \u201cOther\u201d Career of Wilbur"),
     ("Those obscure accents {\\ldots}", "Those obscure accents \u2026"),
     ("{``Poor man's''} {\\TeX}\\dots\\ here", "\u201cPoor man's\u201d TeX\u2026 here"),
     ("``{Hola}'' !`", "\u201cHola\u201d \u00a1")],
)
def test_quotes_and_ellipses(raw, decoded):
    assert text.latex_decode(raw) == decoded


@pytest.mark.parametrize(
    ("raw", "decoded"),
    [("``Verheissung und Versprechen'', a", "\u201cVerheissung und Versprechen\u201d, a"),
     ("?`Qu\\'e pasa?", "\u00bfQu\u00e9 pasa?"),
     ("!`Hola! {Madrid}", "\u00a1Hola! Madrid"),
     ("Pages 1--2 and 3---4", "Pages 1\u20132 and 3\u20144"),
     ("One -{}- two", "One -- two")],
)
def test_ligatures_read_alike_on_every_path(raw, decoded):
    """TeX's ligatures, as pylatexenc reads them, whichever shortcut a text takes: with or
    without braces, and as a title (``plain_title`` has a shortcut of its own)."""
    assert text.latex_decode(raw) == decoded
    assert text._pylatexenc_decode(raw) == decoded
    assert text.plain_title(raw) == text.clean_markup(text.latex_decode(raw)) == decoded


@pytest.mark.parametrize(
    ("raw", "decoded"),
    [(r'Na\"\i ve Bayes', "Na\u00efve Bayes"), (r'\"\i  x', "\u00efx"), ('\\^\\j\na', "\u0135a"),
     (r'\" \i x', "\u00efx"), (r'\"{\i} x', "\u00ef x"), (r'\"\i{} x', "\u00ef x")],
)
def test_an_accented_dotless_letter_eats_the_spaces_after_it(raw, decoded):
    """``\\i`` is a control word, so TeX (and pylatexenc) drop the spaces after it when it is
    an accent's bare argument: ``Na\\"\\i ve`` is "Naïve"."""
    assert text._common_latex(raw) == text._pylatexenc_decode(raw) == decoded
    assert text.latex_decode(raw) == decoded


def test_identity_json_is_json_dumps():
    from citelsp.resolution.identity import _TO_JSON

    for parts in (["", "", "", "", []], ["10.1/a\"b", "2401.1", "t\\itle\n\x00\u2028é王\ud800",
                                         "2020", ["o'neil", "müller", "\x7f"]]):
        assert _TO_JSON(parts) == json.dumps(parts, ensure_ascii=False, separators=(",", ":"))
