"""Text folding for comparison: LaTeX decoding, title normalization, name folding.

Every function here is pure and total: it never raises on odd input, because the input is
whatever a user or an API wrote. Title rules follow seed 004 (base and dotted-acronym
normalization, the generic-title list) and seed 001 (Chinese-aware equality).
"""

from __future__ import annotations

import difflib
import html
import re
import unicodedata
from functools import lru_cache

from pylatexenc import latex2text
from pylatexenc.latex2text import LatexNodes2Text, MacroTextSpec
from pylatexenc.latexwalker import get_default_latex_context_db
from pylatexenc.macrospec import LatexContextDb
from rapidfuzz.distance import LCSseq

_LATEX_TRIGGERS = frozenset("\\{}~$")
_BRACES = re.compile(r"[{}]")
_ESCAPED_CHAR = re.compile(r"\\([&%$#_{}~^])")
_BARE_SPECIAL = re.compile(r"(?<!\\)[%&]")
_SIMPLE_ESCAPE = re.compile(r"\\[&%#_]")


def _only_grouping(s: str) -> bool:
    """Only grouping braces, ``~`` and ``\\&``-style escapes: decodable without a parser
    (most titles in large libraries look like this, e.g. ``{BERT}: Pre-training``)."""
    return "$" not in s and "\\" not in _SIMPLE_ESCAPE.sub("", s)


def collapse_whitespace(s: str) -> str:
    """Runs of whitespace to one space, ends stripped (``str.split`` and ``\\s`` agree on what
    whitespace is; splitting is several times faster than a regex substitution)."""
    return " ".join(s.split())


@lru_cache(maxsize=1)
def _latex_converter() -> LatexNodes2Text:
    """Built on first use: constructing pylatexenc's tables is slow. ``\\textasciicircum``
    prints the ASCII circumflex (pylatexenc reads U+02C6; citelsp writes ``^`` so)."""
    context = latex2text.get_default_latex_context_db()
    context.add_context_category("citelsp", prepend=True, macros=[
        MacroTextSpec("textasciicircum", simplify_repl="^")])
    return LatexNodes2Text(math_mode="text", latex_context=context)


@lru_cache(maxsize=1)
def _parse_specs() -> LatexContextDb:
    """pylatexenc's parser tables, built once: its parser builds them afresh on every call
    unless given them, which took longer than most parses."""
    return get_default_latex_context_db()


def _ligatures(s: str) -> str:
    """TeX's text ligatures, as pylatexenc reads them: ``!` `` ¡, ``?` `` ¿, ``` `` ``` “,
    ``''`` ”, ``---`` —, ``--`` –. Every path applies them before dropping braces, which
    break a ligature (``-{}-`` stays two hyphens), so all paths agree."""
    if "`" in s:
        s = s.replace("!`", "\u00a1").replace("?`", "\u00bf").replace("``", "\u201c")
    if "''" in s:
        s = s.replace("''", "\u201d")
    if "--" in s:
        s = s.replace("---", "\u2014").replace("--", "\u2013")
    return s


@lru_cache(maxsize=65536)
def latex_decode(s: str) -> str:
    """Decode LaTeX escapes, accents and grouping braces to plain Unicode text.

    ``{\\"u}`` → ü, ``\\&`` → &, ``{BERT}`` → BERT, ``\\_`` → _, ``--`` → –, ``~`` → space;
    math is kept as text. Never raises: on a parser failure the braces are simply dropped.
    """
    if _LATEX_TRIGGERS.isdisjoint(s):
        return collapse_whitespace(_ligatures(s))
    if "\\" in s:
        s = _KEPT_TEXT.sub("", _LOGO.sub(lambda m: _LOGOS[m.group(1)], s))
    if _only_grouping(s):
        plain = _BRACES.sub("", _ligatures(_SIMPLE_ESCAPE.sub(lambda m: m.group(0)[1], s)))
        return collapse_whitespace(plain.replace("~", " "))
    common = _common_latex(s)
    if common is not None:
        return common
    return _pylatexenc_decode(s)


_LOGOS = {
    "TeX": "TeX", "LaTeX": "LaTeX", "LaTeXe": "LaTeX2ε", "BibTeX": "BibTeX",
    "BibLaTeX": "BibLaTeX", "XeTeX": "XeTeX", "XeLaTeX": "XeLaTeX", "LuaTeX": "LuaTeX",
    "LuaLaTeX": "LuaLaTeX", "pdfTeX": "pdfTeX", "pdfLaTeX": "pdfLaTeX", "eTeX": "ε-TeX",
    "ConTeXt": "ConTeXt", "AmS": "AMS", "AmSTeX": "AMS-TeX", "AMSTeX": "AMS-TeX",
    "AmSLaTeX": "AMS-LaTeX", "METAFONT": "METAFONT", "MF": "METAFONT", "MP": "MetaPost",
    "SliTeX": "SliTeX", "PiCTeX": "PiCTeX", "Xe": "Xe",
}  # fmt: skip
"""Logos that name software in titles (``The {\\TeX}book``): pylatexenc reads them as
nothing, which would make "The TeXbook" "The book"."""
_LOGO = re.compile(r"\\(" + "|".join(sorted(_LOGOS, key=len, reverse=True))
                   + r")(?![^\W\d_])(?:\{\}|[ \t]*)")
_KEPT_TEXT = re.compile(
    r"\\(?:texttt|textsf|textup|textmd|textnormal|mbox|hbox|textsuperscript|textsubscript)"
    r"(?![^\W\d_])\s*(?=\{)"
)
"""Commands whose argument is the text: pylatexenc drops the argument too."""


def _pylatexenc_decode(s: str) -> str:
    """The general path: pylatexenc, about a millisecond a string."""
    try:
        # A bare "%" or "&" in a field is a percent sign or an ampersand (or an HTML entity's
        # start) to its author, not a LaTeX comment or alignment tab.
        decoded = _latex_converter().latex_to_text(
            _BARE_SPECIAL.sub(r"\\\g<0>", s), latex_context=_parse_specs()
        )
    except Exception:  # pylatexenc is tolerant, but a decoder must never break a parse
        decoded = _BRACES.sub("", _ligatures(_ESCAPED_CHAR.sub(r"\1", s)))
    return collapse_whitespace(decoded.replace("\xa0", " "))


_ACCENTS = {
    '"': "\u0308", "'": "\u0301", "`": "\u0300", "^": "\u0302", "~": "\u0303", "=": "\u0304",
    ".": "\u0307", "u": "\u0306", "v": "\u030c", "H": "\u030b", "c": "\u0327", "k": "\u0328",
    "r": "\u030a", "d": "\u0323", "b": "\u0331",
}  # fmt: skip
_LETTERS = {
    "ss": "ß", "o": "ø", "O": "Ø", "ae": "æ", "AE": "Æ", "aa": "å", "AA": "Å", "l": "ł",
    "L": "Ł", "oe": "œ", "OE": "Œ", "i": "ı", "j": "ȷ",
}  # fmt: skip
_SYMBOLS = {"-": "\xad", ",": " ", " ": " ", ";": " ", ":": " ", "/": "\ue002", "!": "\ue002",
            "&": "&", "%": "%", "_": "_", "#": "#", "$": "$", "{": "\ue000", "}": "\ue001"}
"""Control symbols. Escaped braces wait as private-use characters while braces are dropped;
U+E002 marks where a command read as nothing, so no dash ligature forms across it."""
_SYMBOL_ACCENT = re.compile(
    r"""\\(["'`^~=.])\s*(?:\{\s*([A-Za-z]|\\[ij](?![^\W\d_]))\s*\}"""
    r"""|([A-Za-z]|\\[ij](?![^\W\d_])\s*+)(?![\u0300-\u036f]))"""
)
_LETTER_ACCENT = re.compile(
    r"\\([uvHckrdb])(?:\s*\{\s*([A-Za-z]|\\[ij](?![^\W\d_]))\s*\}"
    r"|\s+([A-Za-z])(?![\u0300-\u036f]))"
)
_LETTER = re.compile(r"\\(ss|ae|AE|aa|AA|oe|OE|[oOlLij])(?![^\W\d_])(?:\{\}|\s*)")
_ELLIPSIS = re.compile(r"\\(?:ldots|dots)(?![^\W\d_])(?:\{\}|\s*)")
_SWITCH = re.compile(r"\\(?:em|it|bf|sc|rm|tt|sl|sf)(?![^\W\d_])(?:\{\}|\s*)")
_TEXT_COMMAND = re.compile(
    r"\\(?:emph|textbf|textit|textsc|textrm|textsl|text)(?![^\W\d_])\s*(?=\{)"
)
_PLACEHOLDERS = frozenset("\ue000\ue001\ue002")
_CONTROL_WORD = re.compile(r"\\([^\W\d_]+)(?:\{\}|\s*)")
_SYMBOL = re.compile(r"\\([-,;: /!&%_#${}])")
_BARE_MATH = re.compile(r"(?<!\\)[#^_]")
_PARAGRAPH = re.compile(r"\n\s*\n")


def _accented(m: re.Match[str]) -> str:
    letter = m.group(2) or m.group(3)
    base = letter[1] if letter.startswith("\\") else letter  # \\"\\i is ï
    return unicodedata.normalize("NFC", base + _ACCENTS[m.group(1)])


def _unknown_dropped(m: re.Match[str]) -> str:
    """A command pylatexenc does not know reads as nothing (``\\TeX``, ``\\acro{X}`` → X,
    with the spaces after it, as TeX eats them); a known one stays for pylatexenc."""
    name = m.group(1)  # pylatexenc ends a name at the first character that is not alpha
    return "\ue002" if name.isalpha() and _unknown_to_pylatexenc(name) else m.group(0)


@lru_cache(maxsize=4096)
def _unknown_to_pylatexenc(name: str) -> bool:
    return (_latex_converter().latex_context.get_macro_spec(name) is None
            and _parse_specs().get_macro_spec(name) is None)


def _common_latex(s: str) -> str | None:
    """The decoding ``_pylatexenc_decode`` gives, for text whose only commands are accents, foreign
    letters, the ellipsis, font switches, a few text commands, character escapes and commands
    pylatexenc does not know, with quotes and dashes (most of those that reach the parser;
    pylatexenc takes about a millisecond a string). None for anything else: math, other
    commands."""
    if "$" in s or not _PLACEHOLDERS.isdisjoint(s):
        return None
    if _BARE_MATH.search(s):  # pylatexenc reads a bare #, ^ or _ as TeX does
        return None
    if _PARAGRAPH.search(s):  # a command's argument cannot span one; pylatexenc knows how
        return None
    t = _CONTROL_WORD.sub(_unknown_dropped, s)
    t = _SYMBOL_ACCENT.sub(_accented, t)
    t = _LETTER_ACCENT.sub(_accented, t)
    t = _LETTER.sub(lambda m: _LETTERS[m.group(1)], t)
    t = _ELLIPSIS.sub("\u2026", t)
    t = _TEXT_COMMAND.sub("", _SWITCH.sub("", t))
    t = _SYMBOL.sub(lambda m: _SYMBOLS[m.group(1)], t)
    if "\\" in t:
        return None
    t = _BRACES.sub("", _ligatures(t)).replace("\ue000", "{").replace("\ue001", "}")
    t = t.replace("\ue002", "")
    return collapse_whitespace(t.replace("~", " "))


def unescape_latex_chars(s: str) -> str:
    """Only the character escapes (``\\_`` → ``_``): for URLs and identifiers, where a full
    decode would turn ``--`` or ``~`` into typography. Most have no backslash at all."""
    return _ESCAPED_CHAR.sub(r"\1", s) if "\\" in s else s


# --- Titles (seed 004 §0.1, §0.12, §0.13) ---------------------------------------------------

_PUNCTUATION = re.compile(r"[^\w\s]|_")
_DOTTED_ACRONYM = re.compile(r"\b(?:[A-Za-z]\.){2,}")

_GENERIC_TITLE_LIST = """
editorial, guest editorial, editorial comment, introduction, preface, foreword,
letter, letters, letter to the editor, letters to the editor, reply, comment,
commentary, response, correspondence, book review, book reviews, review, news,
obituary, in memoriam, acknowledgements, front matter, back matter,
table of contents, abstracts, abstract, proceedings, keynote, panel discussion,
workshop summary, special issue, untitled, note, notes, highlights, errata,
erratum, corrigendum, addendum, author correction, publisher correction,
retraction, expression of concern, short communication, rapid communication,
brief communication, short report, brief report, technical report, meeting report,
conference report, case report, case study, research article, original article,
original research, short paper, perspective, perspectives, viewpoint, opinion,
discussion, summary, conclusion, conclusions, abstract only, supplementary material
"""
GENERIC_TITLES: frozenset[str] = frozenset(t.strip() for t in _GENERIC_TITLE_LIST.split(","))
"""Seed 004 §0.12.2, copied exactly: normalized titles that never match on title alone."""


@lru_cache(maxsize=65536)
def normalize_title(s: str) -> str:
    """Base normalization of ``comparable_title(s)``: lowercase, punctuation to space,
    whitespace collapsed. Every title comparison goes through here, so the cited title and
    the record titles are always cleaned alike, however each was stored.

    Memoized: matching compares one cited title with many candidates and variants."""
    return collapse_whitespace(_PUNCTUATION.sub(" ", comparable_title(s).lower()))


@lru_cache(maxsize=65536)
def normalize_title_acronym(s: str) -> str:
    """Base normalization after collapsing dotted acronym runs (``R.A.G.`` → ``rag``)."""
    if "." not in s:
        return normalize_title(s)
    s = comparable_title(s)
    return normalize_title(_DOTTED_ACRONYM.sub(lambda m: m.group(0).replace(".", ""), s))


def titles_equal(a: str, b: str) -> bool:
    """Exact normalized equality: base-equal OR acronym-equal (seed 004 §0.13). Empty titles
    never compare equal: they carry no evidence."""
    base_a, base_b = normalize_title(a), normalize_title(b)
    if base_a and base_a == base_b:
        return True
    acr_a = normalize_title_acronym(a)
    return bool(acr_a) and acr_a == normalize_title_acronym(b)


def title_similarity(a: str, b: str, floor: float = 0.0) -> float:
    """Max of SequenceMatcher ratios over the base and acronym forms; the acronym pre-pass
    can only raise a score (seed 004 §0.1, F4).

    With ``floor``, a pair whose cheap upper bounds are already below it scores 0.0 without
    the full comparison: scores at or above ``floor`` are exact, lower ones only "below".
    """
    base_a, base_b = normalize_title(a), normalize_title(b)
    acr_a, acr_b = normalize_title_acronym(a), normalize_title_acronym(b)
    base = _ratio(base_a, base_b, floor)
    if (acr_a, acr_b) == (base_a, base_b):
        return base  # no dotted acronyms: the second ratio would be the same
    return max(base, _ratio(acr_a, acr_b, floor))


def _ratio(a: str, b: str, floor: float) -> float:
    """SequenceMatcher's ratio, or 0.0 when an upper bound already falls below ``floor``.

    Its matching blocks are a common subsequence, so ``2·LCS / (len a + len b)`` bounds the
    ratio from above (and is itself bounded by the length ratio); both are far cheaper than
    the ratio, which most candidate titles of a search miss by a wide margin."""
    if floor:
        total = len(a) + len(b)
        if total and (2.0 * min(len(a), len(b)) / total < floor
                      or 2.0 * lcs_length(a, b) / total < floor):
            return 0.0
    return difflib.SequenceMatcher(None, a, b).ratio()


def lcs_length(a: str, b: str) -> int:
    """Length of a longest common subsequence (rapidfuzz's bit-parallel LCS, in C: the
    pure-Python one took a tenth of a cached reopen, scoring near matches)."""
    return int(LCSseq.similarity(a, b))


def is_generic_title(s: str) -> bool:
    """Byte-equality of the normalized title with the closed list; never a substring test."""
    return normalize_title(s) in GENERIC_TITLES


# --- Chinese titles (seed 001, "Chinese title matching") ------------------------------------

_HAN_CLASS = (
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
    "\U00020000-\U0002a6df\U0002a700-\U0002ebef\U00030000-\U0003134f"
)
_HAN = re.compile(f"[{_HAN_CLASS}]")
_SPACE_TOUCHING_HAN = re.compile(f"\\s+(?=[{_HAN_CLASS}])|(?<=[{_HAN_CLASS}])\\s+")
_FULLWIDTH_ASCII = {cp: cp - 0xFEE0 for cp in range(0xFF01, 0xFF5F)}
_WRAPPERS = {"《": "》", "「": "」", "『": "』", "【": "】", "\u201c": "\u201d", "\u2018": "\u2019"}


def has_han(s: str) -> bool:
    return not s.isascii() and _HAN.search(s) is not None


def _unwrap(s: str) -> str:
    while len(s) >= 2 and _WRAPPERS.get(s[0]) == s[-1]:
        s = s[1:-1].strip()
    return s


def normalize_cn_title(s: str) -> str:
    """Conservative Chinese-aware form: fold fullwidth ASCII only, collapse whitespace, drop
    whitespace touching Han, strip outer title wrappers and one terminal ``。``/``.``.
    Case is kept and NFKC is not applied: either would merge distinct scientific names."""
    s = collapse_whitespace(s.translate(_FULLWIDTH_ASCII))
    s = _unwrap(_SPACE_TOUCHING_HAN.sub("", s))
    if s.endswith(("。", ".")):
        s = s[:-1].rstrip()
    return _unwrap(s)


def cn_titles_equal(a: str, b: str) -> bool:
    """Exact equality after ``plain_title`` and Chinese-aware normalization; the fuzzy ratio
    plays no part."""
    norm_a = normalize_cn_title(plain_title(a))
    return bool(norm_a) and norm_a == normalize_cn_title(plain_title(b))


# --- Titles from entries and APIs alike (normalization parity) ------------------

_ANNOTATION = re.compile(
    r"<(?:\w+:)?annotation(?:-xml)?\b[^>]*>.*?</(?:\w+:)?annotation(?:-xml)?\s*>", re.S | re.I
)
_MARKUP_NAMES = (
    # HTML inline markup and JATS (Crossref titles)
    "a|abbr|b|big|bold|br|cite|code|del|div|em|font|i|ins|italic|mark|monospace|p|q|s|sc|scp"
    "|small|span|strike|strong|styled-content|named-content|sub|sup|tt|u|underline|var|wbr"
    "|inline-formula|tex-math|alternatives|title|subtitle|break"
    # MathML presentation elements
    "|math|semantics|annotation|annotation-xml|maction|maligngroup|malignmark|menclose|merror"
    "|mfenced|mfrac|mglyph|mi|mlabeledtr|mmultiscripts|mn|mo|mover|mpadded|mphantom"
    "|mprescripts|mroot|mrow|ms|mspace|msqrt|mstyle|msub|msubsup|msup|mtable|mtd|mtext|mtr"
    "|munder|munderover|none"
)
_MARKUP_TAG = re.compile(
    rf"</?(?:[A-Za-z][\w.-]*:[A-Za-z][\w.-]*|(?:{_MARKUP_NAMES}))(?:\s[^<>]*)?/?>", re.I
)
"""A markup tag: any namespaced tag (``mml:mi``, ``jats:italic``) or a known HTML, JATS or
MathML element. Other text in angle brackets ("a <mask> token", "x<y and z>w") is kept."""
_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_QUOTES = str.maketrans(
    {c: "'" for c in "\u2018\u2019\u201a\u201b\u2032\u02bc\u02b9\u00b4\u0060"}
    | {c: '"' for c in "\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb"}
    | {c: "-" for c in "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\u2043\ufe58\ufe63\uff0d"}
)


def unescape_entities(s: str) -> str:
    """HTML character references unescaped until stable (``&amp;apos;`` happens). Only
    complete references (``&name;``, ``&#39;``, ``&#x27;``) are read, so "AT&T" and
    "R&D" stay as written."""
    for _ in range(5):
        if "&" not in s:
            break
        unescaped = _ENTITY.sub(lambda m: html.unescape(m.group(0)), s)
        if unescaped == s:
            break
        s = unescaped
    return s


_BREAKING_TAG = re.compile(r"</?(?:\w+:)?(?:br|p|div|break|title)\b[^<>]*>", re.I)
"""Tags that separate words; every other markup tag sits inside a word or beside a space."""
_SUBTITLE = re.compile(r"\s*<(?:\w+:)?subtitle\b[^<>]*>\s*", re.I)
"""A JATS subtitle (sources escape it into titles: ``&lt;subtitle&gt;``) reads ``: Subtitle``."""


def clean_markup(s: str) -> str:
    """Rich text as plain text: HTML entities unescaped until stable (a source's escaped
    ``&lt;i&gt;`` is markup too), markup tags and MathML dropped without splitting the word
    they sit in (``Cu<sub>2</sub>O`` is Cu2O, ``<scp>K</scp>orean`` is Korean; a line or
    paragraph break becomes a space), MathML's TeX annotations dropped so that a formula is
    not read twice."""
    s = unescape_entities(s)
    if "<" in s:
        s = _SUBTITLE.sub(": ", _ANNOTATION.sub(" ", s))
        s = _MARKUP_TAG.sub("", _BREAKING_TAG.sub(" ", s))
    return collapse_whitespace(s)


@lru_cache(maxsize=65536)
def plain_title(s: str) -> str:
    """The one cleaning every title gets, the cited one and every record's: LaTeX decoded
    first (so ``\\&apos;`` becomes ``&apos;``), then ``clean_markup``. Display text."""
    if _LATEX_TRIGGERS.isdisjoint(s) and "&" not in s and "<" not in s:
        return latex_decode(s)  # its first path: no markup to clean
    return clean_markup(latex_decode(s))


@lru_cache(maxsize=65536)
def comparable_title(s: str) -> str:
    """``plain_title`` with Unicode compatibility forms folded (NFKC: ligatures, fullwidth
    and composed or decomposed accents alike) and quotes and dashes folded to ASCII: the form
    Latin-script titles are compared in (``cn_titles_equal`` compares Chinese titles without
    NFKC, as seed 001 asks)."""
    s = plain_title(s)
    if s.isascii():
        return s
    return unicodedata.normalize("NFKC", s).translate(_QUOTES)


def _strip_accents(s: str) -> str:
    if s.isascii():  # nothing to decompose (most names and titles)
        return s
    return "".join(c for c in unicodedata.normalize("NFKD", s) if not unicodedata.combining(c))


@lru_cache(maxsize=65536)
def fold_name(s: str) -> str:
    """A family name folded for comparison: LaTeX decoded, accents dropped, casefolded."""
    if "\\" in s or "{" in s:
        s = latex_decode(s)
    if "&" in s:
        s = unescape_entities(s)
    return collapse_whitespace(_strip_accents(s).casefold())


_LETTER_COMMANDS = re.compile(r"\\(i|j|aa|AA)(?![A-Za-z])")
_CONTROL_SEQUENCE = re.compile(r"\\(?:[A-Za-z]+|.)")
_NOT_KEY_CHAR = re.compile(f"[^a-z0-9{_HAN_CLASS}]+")


def _command_letters(m: re.Match[str]) -> str:
    """The ASCII letter a decoded command leaves (``\\i`` → i, ``\\aa`` → a)."""
    return m.group(1)[0]


def cheap_title_key(raw: str) -> str:
    """A coarse fold of an undecoded title, equal for any two titles that are equal after
    decoding (``latex_decode`` for BibTeX, ``clean_markup`` for CSL rich text) and
    normalization: ASCII letters and digits (accents stripped) and Han characters only;
    LaTeX commands and markup tags dropped. Used to bucket titles before decoding."""
    if "&" in raw:
        raw = unescape_entities(raw)
    if "<" in raw:
        raw = _MARKUP_TAG.sub(" ", _ANNOTATION.sub(" ", raw))
    if "\\" in raw:
        raw = _CONTROL_SEQUENCE.sub("", _LETTER_COMMANDS.sub(_command_letters, raw))
    if not raw.isascii():
        raw = _strip_accents(raw)
    return _NOT_KEY_CHAR.sub("", raw.lower())
