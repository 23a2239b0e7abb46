"""LaTeX citation commands and bibliography declarations (DESIGN.md §2)."""


import pytest

from citelsp.documents.latex import entry_sets, parse_latex, visible_source
from citelsp.spans import Span

URI = "file:///paper.tex"


def cut(text: str, span: Span) -> str:
    return text[span.start : span.end]


def keys(text: str) -> list[str]:
    citations, _ = parse_latex(URI, text)
    for c in citations:
        assert cut(text, c.span) == c.key
    return [c.key for c in citations]


@pytest.mark.parametrize(
    "command",
    [
        "cite", "citep", "citet", "parencite", "textcite", "autocite", "footcite", "nocite",
        "Citet", "Textcite", "Autocite", "Parencite", "citeauthor", "citeyear", "citealp",
        "smartcite", "supercite", "fullcite", "citeA", "citeNP", "shortcite", "shortciteNP",
        "citeN", "citefullauthor", "bibentry",
    ],
)  # fmt: skip
def test_every_cite_command_and_its_starred_form(command):
    assert keys(f"x \\{command}{{k1}} y \\{command}*{{k2}}") == ["k1", "k2"]


def test_each_key_has_its_exact_span_and_the_command_is_the_full_span():
    text = "As \\citep[see][p.~4]{alpha, beta,\n   gamma} shows."
    citations, paths = parse_latex(URI, text)
    assert paths == []
    assert [c.key for c in citations] == ["alpha", "beta", "gamma"]
    assert [cut(text, c.span) for c in citations] == ["alpha", "beta", "gamma"]
    assert {cut(text, c.full_span) for c in citations} == {
        "\\citep[see][p.~4]{alpha, beta,\n   gamma}"
    }
    assert all(c.syntax == "latex" and not c.wildcard for c in citations)


def test_optional_arguments_with_braces_and_brackets_inside_braces():
    text = "\\cite[{see [1]}][\\S~3]{a}"
    assert keys(text) == ["a"]


def test_spaces_and_a_newline_between_arguments():
    assert keys("\\textcite [p. 1]\n  {a}") == ["a"]


def test_nocite_star_is_a_wildcard():
    text = "\\nocite{*}"
    [citation], _ = parse_latex(URI, text)
    assert citation.key == "*"
    assert citation.wildcard
    assert cut(text, citation.span) == "*"


def test_star_is_not_a_key_for_other_commands():
    assert keys("\\cite{*}") == []


def test_multicite_lists():
    text = "\\textcites(pre)(post)[see][12]{a,b}[]{c} and \\cites{d}{e}"
    citations, _ = parse_latex(URI, text)
    assert [c.key for c in citations] == ["a", "b", "c", "d", "e"]
    assert cut(text, citations[0].full_span) == "\\textcites(pre)(post)[see][12]{a,b}[]{c}"
    assert cut(text, citations[3].full_span) == "\\cites{d}{e}"


@pytest.mark.parametrize(
    "text",
    [
        "\\citestyle{aa}",
        "\\citation{a}",
        "\\mycite{a}",
        "\\cite",
        "\\cite[unterminated",
        "\\cite{}",
        "\\cite{ , }",
        "\\newcommand{\\mc}[1]{\\cite{#1}}",
        "\\def\\tworef{c8,c9}\\cite{\\tworef}",
        "\\newcommand{\\post}{\\cite{\\glscurrententrylabel}}",
    ],
)
def test_not_citations(text):
    assert keys(text) == []


def test_a_macro_among_the_keys_is_passed_over():
    """``\\cite{c5,\\tworef}`` (collref's sample): the macro's keys are not written here, so
    it is not read as a key named "\\tworef" that no bibliography holds."""
    assert keys("\\def\\tworef{c8,c9}\n\\cite{c5,c6,\\tworef}") == ["c5", "c6"]


@pytest.mark.parametrize(
    "text",
    ["\\citefield{title}{Thiselton99}", "\\citefield[67]{year}{Thiselton99}",
     "\\citefield{Thiselton99}{title}", "\\citefield{Thiselton99}[emph]{title}"],
)
def test_citefield_key_in_either_order(text):
    """biblatex's ``\\citefield{key}{field}`` and jurabib's ``\\citefield{field}{key}``."""
    assert keys(text) == ["Thiselton99"]


@pytest.mark.parametrize(
    "text",
    ["\\cite<see>[p.~4]{a}", "\\citeA<e.g.,>{a}", "\\citeNP <e.g.,> [p. 3] {a}",
     "\\citetalias{a}", "\\citepalias[p.~3]{a}", "\\volcite{2}[45]{a}",
     "\\volcite[see]{II}{a}", "\\Avolcite{3}[12--14]{a}"],
)
def test_apacite_prenotes_natbib_aliases_and_biblatex_volume_citations(text):
    """apacite's ``<prenote>``, natbib's ``\\citetalias``, biblatex's ``\\volcite{volume}``:
    the key is read past them (the volume is not a key)."""
    assert keys(text) == ["a"]
    assert keys(text.replace("{a}", "")) == []


def test_comments_are_ignored_but_escaped_percent_is_not_a_comment():
    text = (
        "% \\cite{gone}\n50\\% \\cite{kept} % \\cite{gone2}\n\\\\% \\cite{gone3}\n\\cite{a,% b\n c}"
    )
    assert keys(text) == ["kept", "a", "c"]


def test_verbatim_and_verb_are_ignored():
    text = (
        "\\verb|\\cite{v}| \\cite{a}\n"
        "\\begin{verbatim}\n\\cite{b}\n\\end{verbatim}\n"
        "\\begin{lstlisting}\\cite{c}\\end{lstlisting}\\cite{d}\n"
        "\\begin{comment}\\cite{e}\n"
    )
    assert keys(text) == ["a", "d"]


def test_visible_source_keeps_offsets_and_lines():
    text = "a % note\r\nb"
    source = visible_source(text)
    assert len(source) == len(text)
    assert source == "a       \r\nb"


def test_bibliography_and_addbibresource():
    text = (
        "\\bibliographystyle{plain}\n\\bibliography{refs, more.bib,Other.BIB}\n"
        "\\addbibresource[location=local]{lib/x.bib}\n\\addglobalbib{g.bib}\n"
        "% \\bibliography{commented}\n"
    )
    citations, paths = parse_latex(URI, text)
    assert citations == []
    assert paths == ["refs.bib", "more.bib", "Other.BIB", "lib/x.bib", "g.bib"]


def test_spans_are_code_points_after_non_ascii_text():
    text = "Ünïcödé 😀 中文 \\cite{clé, 键}"
    assert keys(text) == ["clé", "键"]


def test_crlf():
    text = "a\r\n\\cite{x,\r\n y}\r\n% \\cite{z}\r\n"
    assert keys(text) == ["x", "y"]


@pytest.mark.parametrize(
    "hostile",
    [
        "\\cite{" * 170_000,
        "\\cite[" * 170_000,
        "\\cite[{" * 140_000,
        "\\verb|" * 160_000,
        "\\begin{verbatim}" * 60_000,
        "%" * 1_000_000,
        "\\" * 1_000_000,
        "\\cites" + "{a}" * 100_000,
        "\0" * 1_000_000 + "\\cite{a}",
        "\\iffalse \\cite{a} " * 60_000,
    ],
    ids=[
        "open-keys",
        "open-opt",
        "open-opt-brace",
        "verb",
        "verbatim",
        "percent",
        "backslashes",
        "multicite",
        "nul",
        "unclosed-iffalse",
    ],
)
@pytest.mark.timeout(120)
def test_hostile_input_is_read_without_crashing(hostile):
    """Growth with size is measured by ``bench/parser_scaling.py`` (a wall-clock bound here
    failed under load); this checks what the reading yields. The timeout only stops a hang."""
    citations, _ = parse_latex(URI, hostile)
    assert all(hostile[c.span.start : c.span.end] == c.key for c in citations)
    if hostile.startswith("\\cites{a}"):
        assert {c.key for c in citations} == {"a"}


@pytest.mark.parametrize(("text", "keys"), [
    ("\\cite{a}\n\\iffalse\nold \\cite{b}\n\\fi\n\\cite{c}", ["a", "c"]),
    ("\\iffalse \\cite{b} \\else \\cite{c} \\fi", ["c"]),  # the \else branch is typeset
    ("\\iffalse \\ifx\\a\\b \\cite{b} \\fi $p \\iff q$ \\cite{d} \\fi \\cite{c}", ["c"]),
    ("\\iffalse never closed \\cite{b}", ["b"]),  # not hidden: safer to over-report
    ("\\iffalsefriend \\cite{b}", ["b"]),  # another command
])
def test_an_iffalse_passage_is_commented_out(text, keys):
    """``\\iffalse … \\fi`` is how LaTeX writers comment out a passage: TeX never reads its
    citations, so neither does citelsp."""
    citations, _ = parse_latex("file:///p.tex", text)
    assert [c.key for c in citations] == keys


def test_dynamic_entry_sets_are_read_outside_comments():
    text = ("\\defbibentryset{pair}{a, b}\n% \\defbibentryset{old}{c}\n"
            "\\defbibentryset {trio} {c,d,e}\n")
    assert entry_sets(text) == {"pair": ("a", "b"), "trio": ("c", "d", "e")}


@pytest.mark.parametrize(
    "text",
    ["\\lstinline|\\cite{a}| \\cite{b}", "\\lstinline[language=TeX]{\\cite{a}} \\cite{b}",
     "\\mintinline{latex}{\\cite{a}} \\cite{b}", "\\mintinline[lineos]{tex}!\\cite{a}! \\cite{b}",
     "\\MakeShortVerb{\\|}\n|\\cite{a}| \\cite{b}", "\\MakeShortVerb*\\+ +\\cite{a}+ \\cite{b}",
     "\\DefineShortVerb[fontsize=\\small]{\\|} |\\cite{a}| \\cite{b}"],
)
def test_inline_code_and_short_verbatim_are_not_read(text):
    """listings' ``\\lstinline``, minted's ``\\mintinline`` and, after ``\\MakeShortVerb{\\|}``
    (ltxdoc's manuals), ``|…|`` show code: a ``\\cite`` in them cites nothing."""
    assert keys(text) == ["b"]


def test_short_verbatim_starts_where_it_is_declared_and_needs_a_closing_character():
    text = "|\\cite{a}| \\MakeShortVerb{\\|} |\\cite{b}| \\cite{c} |open \\cite{d}\n|\\cite{e}|"
    assert keys(text) == ["a", "c", "d"]


def test_multibib_commands_cite_and_name_bibliographies():
    """multibib's ``\\newcites{sec,web}{…}`` makes ``\\citesec``, ``\\nocitesec`` and
    ``\\bibliographysec``; a suffix that makes natbib's ``\\citep`` leaves it natbib's."""
    text = ("\\newcites{sec,web,p}{Secondary,Web,P}\n"
            "\\cite{a} \\citesec{b} \\citeweb[p.~3]{c} \\nocitesec{d} \\citep{e} \\citesecx{f}\n"
            "\\bibliography{main}\\bibliographysec{secondary}\\bibliographyweb{web.bib}\n")
    _, paths = parse_latex(URI, text)
    assert keys(text) == ["a", "b", "c", "d", "e"]
    assert paths == ["main.bib", "secondary.bib", "web.bib"]
    assert keys(text.replace("\\newcites", "\\renewcommand")) == ["a", "e"]
