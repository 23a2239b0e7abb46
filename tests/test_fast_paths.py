"""Shortcuts taken for speed give exactly what the longer way gives."""

import re
import sys

from citelsp.documents.text import collapse_whitespace


def test_collapse_whitespace_splits_on_what_a_regex_calls_whitespace():
    spaces = [c for c in map(chr, range(sys.maxunicode + 1)) if re.fullmatch(r"\s", c)]
    assert spaces == [c for c in map(chr, range(sys.maxunicode + 1)) if c.isspace()]
    for c in spaces:
        s = f"{c}a{c}{c}b {c}\u200bc{c}"
        assert collapse_whitespace(s) == re.sub(r"\s+", " ", s).strip()
