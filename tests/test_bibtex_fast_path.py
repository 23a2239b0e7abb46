"""The one-regex field reader (``_SIMPLE_FIELD``) reads exactly what the reader without it
reads: the same references, field values and spans, and the same problems, whatever the
spaces, comments, braces and delimiters around a field."""

from __future__ import annotations

import itertools
import re

from citelsp.documents import bibtex_blocks
from citelsp.documents.bibtex import parse_bibtex

VALUES = [
    "{plain}", '"quoted"', "{one {level} deep}", "{two {levels {deep}}}",
    "{three {levels {deep {down}}}}", '"quote {with {nested} braces}"', '"a {"} b"', "2020",
    "jan", "undefinedmacro", 'jan # " 1st"', "{a} # {b}", "{}", '""', "{multi\n  line}",
    '"G\\"odel"', "{unclosed", '"unclosed', "{a}}", "٣",
]  # fmt: skip
SPACES = [" ", "", "\n  ", "\t", " % comment, with } and {\n ", "\u00a0", "\u2003 "]
DELIMITERS = [("{", "}"), ("(", ")")]


def snapshot(text: str) -> tuple:
    bib = parse_bibtex("file:///fast.bib", text)
    refs = [(r.key, r.entry_type, r.span, r.key_span, list(r.fields.values()))
            for r in bib.references]  # fmt: skip
    return refs, bib.problems, bib.macros, bib.undefined


def texts():
    for value, space, (opener, closer) in itertools.product(VALUES, SPACES, DELIMITERS):
        yield (f"@misc{opener}k,\n  note{space}={space}{value}{space},\n  year = 1{space},"
               f"{space}{closer}\n@book{{b, title = {value}}}\n")  # fmt: skip
        yield f'@string{opener}s{space}={space}{value}{closer}\n@misc{{c, note = s # "!"}}\n'


def test_fast_path_reads_what_the_general_path_reads(monkeypatch):
    cases = list(texts())
    fast = [snapshot(text) for text in cases]
    monkeypatch.setattr(bibtex_blocks, "_SIMPLE_FIELD", re.compile(r"(?!)"))
    differ = [text for text, read in zip(cases, fast, strict=True) if read != snapshot(text)]
    assert not differ, differ[:3]
