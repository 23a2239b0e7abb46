"""LaTeX decoding, title normalization (seed 004), Chinese titles (seed 001), name folding."""

import random

import pytest

from citelsp.documents.text import (
    GENERIC_TITLES,
    cheap_title_key,
    clean_markup,
    cn_titles_equal,
    fold_name,
    has_han,
    is_generic_title,
    latex_decode,
    lcs_length,
    normalize_cn_title,
    normalize_title,
    normalize_title_acronym,
    plain_title,
    title_similarity,
    titles_equal,
)


@pytest.mark.parametrize(
    ("raw", "decoded"),
    [
        ('{\\"u}ber', "über"),
        ("R\\&D", "R&D"),
        ("{BERT}: Pre-training", "BERT: Pre-training"),
        ("10.1000/a\\_b", "10.1000/a_b"),
        ("pages 1--10", "pages 1\u201310"),
        ("a---b", "a\u2014b"),
        ("Jane~Doe", "Jane Doe"),
        ("{\\'E}mile {\\v{S}}koda", "Émile Škoda"),
        ("$\\alpha$-helix", "α-helix"),
        ("\\emph{Deep}   learning", "Deep learning"),
        ("plain  text\n here", "plain text here"),
        ("1--10", "1\u201310"),
        ("{BERT} gains 50% more", "BERT gains 50% more"),
        ("50\\% of {X}", "50% of X"),
    ],
)
def test_latex_decode(raw, decoded):
    assert latex_decode(raw) == decoded


@pytest.mark.parametrize("broken", ["unbalanced {x", "un}bal", "\\", "{\\", "$x", "\\foo{"])
def test_latex_decode_never_raises_and_drops_braces(broken):
    result = latex_decode(broken)
    assert "{" not in result and "}" not in result


def test_normalize_title_base_and_acronym():
    assert normalize_title("  Deep   Learning: A Review! ") == "deep learning a review"
    assert normalize_title("R.A.G. models") == "r a g models"
    assert normalize_title_acronym("R.A.G. models") == "rag models"
    assert normalize_title("snake_case—and “quotes”") == "snake case and quotes"
    # A/B, R&D and spaced initials are not dotted runs
    assert normalize_title_acronym("A/B testing for R&D") == "a b testing for r d"
    assert normalize_title_acronym("D. H. Lawrence") == "d h lawrence"


def test_titles_equal_is_base_or_acronym_equal():
    assert titles_equal("R.A.G. for Question Answering", "RAG for question answering.")
    # seed 004 §0.13: base-equal while only one side is a contiguous initialism
    assert titles_equal("D.H. Lawrence", "D. H. Lawrence")
    assert titles_equal("Attention is all you need", "Attention Is All You Need.")
    assert not titles_equal("Attention is all you need", "Attention is not all you need")
    assert not titles_equal("", "")
    assert not titles_equal("!!!", "...")


def test_title_similarity_takes_the_max_over_both_forms():
    assert title_similarity("R.A.G.", "RAG") == 1.0
    assert title_similarity("D.H. Lawrence", "D. H. Lawrence") == 1.0
    assert title_similarity("Deep residual learning", "Deep residual learning for images") > 0.7
    assert title_similarity("BERT", "Graph neural networks for chemistry") < 0.5


def _lcs_by_table(a: str, b: str) -> int:
    row = [0] * (len(b) + 1)
    for x in a:
        diagonal = 0
        for j, y in enumerate(b, 1):
            diagonal, row[j] = row[j], diagonal + 1 if x == y else max(row[j], row[j - 1])
    return row[-1]


def test_lcs_length_agrees_with_the_table():
    rng = random.Random(7)
    pairs = [("", ""), ("abc", ""), ("", "abc"), ("abc", "abc"), ("abcbdab", "bdcaba"),
             ("attention is all you need", "attention is not all you need")]
    pairs += [("".join(rng.choice("abc ") for _ in range(rng.randint(0, 80))),
               "".join(rng.choice("abcd ") for _ in range(rng.randint(0, 80))))
              for _ in range(300)]
    for a, b in pairs:
        assert lcs_length(a, b) == _lcs_by_table(a, b), (a, b)


def test_title_similarity_floor_only_drops_scores_below_it():
    """The cheap bounds never hide or change a score at or above the floor."""
    rng = random.Random(11)
    words = ["deep", "residual", "learning", "graph", "neural", "network", "language", "of", "a"]
    titles = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 9))) for _ in range(150)]
    for a, b in zip(titles, reversed(titles), strict=True):
        exact = title_similarity(a, b)
        floored = title_similarity(a, b, 0.70)
        assert floored == exact if exact >= 0.70 else floored < 0.70, (a, b)


def test_generic_titles_are_the_closed_list():
    assert len(GENERIC_TITLES) == 68
    for title in ("Editorial", "Short Communication", "Case Report", "Publisher Correction."):
        assert is_generic_title(title)
    assert is_generic_title("  LETTER TO THE EDITOR ")
    # byte-equality, not substring or suffix
    for title in (
        "Case Report of a Rare Tumor",
        "A Brief Report on Climate Models",
        "Deep Learning Review",
        "Discussion of Bell's Theorem",
    ):
        assert not is_generic_title(title)


def test_has_han():
    assert has_han("深度学习")
    assert has_han("A study of 𠀀")  # CJK extension B
    assert not has_han("Deep learning")
    assert not has_han("ひらがな")


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("ProEXC蛋白研究", "ＰｒｏＥＸＣ蛋白研究"),  # fullwidth Latin
        ("基于深度学习的图像识别", "基于深度学习的图像识别。"),  # terminal full stop
        ("基于 BERT 的文本分类", "基于BERT的文本分类"),  # spaces touching Han
        ("『深度学习』", "【深度学习】"),  # outer wrappers
        ("“人工智能伦理”", "人工智能伦理"),  # curly quote wrapper
        ("《人工智能伦理》", "人工智能伦理．"),  # wrapper; fullwidth full stop folded
    ],
)
def test_cn_titles_equal(a, b):
    assert cn_titles_equal(a, b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("PD L1 与肿瘤", "PDL 1 与肿瘤"),  # spaces between Latin tokens kept
        ("P53 与肿瘤", "p53 与肿瘤"),  # case kept
        ("2²的研究", "22的研究"),  # no NFKC
        ("ER+乳腺癌", "ER-乳腺癌"),  # symbols kept
        ("是否有效？", "是否有效"),  # question marks kept
        ("基于深度学习的图像识别", "基于深度学习的语音识别"),
    ],
)
def test_cn_titles_differ(a, b):
    assert not cn_titles_equal(a, b)


def test_normalize_cn_title_keeps_inner_text_and_case():
    assert normalize_cn_title("  《ＰｒｏＥＸＣ 蛋白 研究》。 ") == "ProEXC蛋白研究"
    assert normalize_cn_title("《红楼梦》研究") == "《红楼梦》研究"  # not an outer wrapper
    assert normalize_cn_title("Deep  Learning") == "Deep Learning"
    assert not cn_titles_equal("", "")


def test_clean_markup():
    assert clean_markup("Fish &amp;amp; Chips") == "Fish & Chips"
    assert clean_markup("The <i>E. coli</i> genome") == "The E. coli genome"
    mathml = (
        'Efficient <mml:math xmlns:mml="http://www.w3.org/1998/Math/MathML"><mml:mi>k</mml:mi>'
        '<mml:annotation encoding="application/x-tex">k</mml:annotation></mml:math>-means'
    )
    assert normalize_title(clean_markup(mathml)) == "efficient k means"
    assert clean_markup("&lt;b&gt;bold&lt;/b&gt; text") == "bold text"


@pytest.mark.parametrize(("rich", "plain"), [
    ("Cu<sub>2</sub>O nanowires", "Cu2O nanowires"),
    ("<scp>K</scp>orean patients", "Korean patients"),
    ("H<jats:sub>2</jats:sub>O", "H2O"),
    ("&lt;i&gt;E. coli&lt;/i&gt;", "E. coli"),
    ("one<br/>two", "one two"),
    ("Main title&lt;subtitle&gt;A subtitle&lt;/subtitle&gt;", "Main title: A subtitle"),
])
def test_markup_is_dropped_without_splitting_a_word(rich, plain):
    assert clean_markup(rich) == plain


def test_fold_name():
    assert fold_name("Müller") == fold_name("MULLER") == "muller"
    assert fold_name('M{\\"u}ller') == "muller"
    assert fold_name("Núñez") == "nunez"
    assert fold_name("Straße") == "strasse"


@pytest.mark.parametrize(
    ("raw", "plain"),
    [
        ('M{\\"u}ller and {BERT}', "Müller and BERT"),
        ("{\\'\\i}ndice \\aa{}ngstr\\\"om", "índice ångström"),
        ("R.A.G. \\& Friends", "RAG & friends"),
        ("\\textbf{Bold} $\\alpha$ test", "Bold α test"),
        ("深度 学习", "深度学习"),
    ],
)
def test_cheap_title_key_agrees_with_decoding(raw, plain):
    assert cheap_title_key(raw) == cheap_title_key(latex_decode(raw)) == cheap_title_key(plain)


@pytest.mark.parametrize(
    "rich",
    [
        '<i>Deep</i> learning &amp; <span class="nocase">more</span>',
        "CO<sub>2</sub> &eacute;missions",
        'Efficient <mml:math><mml:mi>k</mml:mi><mml:annotation encoding="tex">k</mml:annotation>'
        "</mml:math>-means",
    ],
)
def test_cheap_title_key_agrees_with_markup_cleaning(rich):
    assert cheap_title_key(rich) == cheap_title_key(clean_markup(rich))


def test_cheap_title_key_separates_different_titles():
    assert cheap_title_key("Deep learning") != cheap_title_key("Deep earning")


PARITY = [
    ("Don\\&apos;t Stop Pretraining", "Don&#39;t Stop Pretraining"),
    ("Don&amp;apos;t Stop Pretraining", "Don't Stop Pretraining"),
    ("Don&#x27;t Stop Pretraining", "Don\u2019t Stop Pretraining"),
    ("Don\u02bct Stop Pretraining", "Don't Stop Pretraining"),
    ("Q&amp;amp;A over Tables", "Q&A over Tables"),
    ("Q\\&A over {T}ables", "Q&amp;A over Tables"),
    ("$x$ &amp; $y$ Matter", "x & y Matter"),
    ("The <i>E. coli</i> Genome", "The E. coli Genome"),
    ("&lt;em&gt;Lavandula&lt;/em&gt; Genotypes", "Lavandula Genotypes"),
    ('Efficient <mml:math xmlns:mml="x"><mml:mi>k</mml:mi></mml:math>-means', "Efficient k-means"),
    ("$\\mathcal{O}(n)$ Sorting", "$\\mathcal{O}(n)$ Sorting"),
    ("Schro\u0308dinger Bridges", "Schrödinger Bridges"),
    ("\ufb01ne-Tuning at Scale", "Fine-Tuning at Scale"),
    ("\uff21\uff29 Safety", "AI Safety"),
    ("Learning\u2010to\u2010Rank", "Learning-to-Rank"),
]


@pytest.mark.parametrize(("a", "b"), PARITY)
def test_titles_are_cleaned_alike_on_both_sides(a, b):
    """DESIGN.md §4: one cleaning for the cited title and every record title."""
    assert titles_equal(a, b) and titles_equal(b, a)
    assert normalize_title(a) == normalize_title(b)
    assert cheap_title_key(a) == cheap_title_key(b)


def test_cleaning_keeps_what_is_not_markup():
    assert plain_title("AT&T Labs &c. R&D") == "AT&T Labs &c. R&D"
    assert plain_title("Predicting the <mask> token") == "Predicting the <mask> token"
    assert plain_title("When x<y and z>w") == "When x<y and z>w"
    assert not titles_equal("Learning to rank", "Learning to rant")
    assert not titles_equal("The <i>E. coli</i> Genome", "The E. coli Proteome")


def test_han_titles_are_cleaned_of_markup_but_not_folded():
    assert cn_titles_equal("&lt;b&gt;深度学习&lt;/b&gt;综述", "深度学习综述")
    assert not cn_titles_equal("\uff21\uff29安全", "ＡＩ安全研究")


def test_logo_and_text_commands_keep_their_text():
    from citelsp.documents.text import latex_decode

    assert latex_decode(r"The {\TeX}book") == "The TeXbook"
    assert latex_decode(r"The \LaTeX{} Companion") == "The LaTeX Companion"
    assert latex_decode(r"\TeX nical") == "TeXnical", "spaces after a control word are eaten"
    assert latex_decode(r"Using \texttt{grep} in \mbox{x-y}") == "Using grep in x-y"
    assert latex_decode(r"\AmS-\LaTeX") == "AMS-LaTeX"
