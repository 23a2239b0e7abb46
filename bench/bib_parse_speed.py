"""Print how long parsing a generated 10,000-entry ``.bib`` takes, cold and while editing.

Run: ``python bench/bib_parse_speed.py [ENTRIES]``. Targets: a cold parse well under 1 s and
a re-parse after a one-character edit anywhere well under 100 ms (aim: 40 ms). The edits are
applied one after the other, as a user types, so each re-parse sees the previous one's caches;
the previous Bibliography stays alive during the next parse, as it does in the language server.
The last column counts the references that are the same objects as in the previous parse.
"""

from __future__ import annotations

import gc
import sys
import time

from citelsp.documents.bibtex import parse_bibtex
from citelsp.documents.model import Bibliography


def generated_library(entries: int) -> str:
    parts = ['@string{jmlr = "Journal of Machine Learning Research"}\n\n']
    for i in range(entries):
        parts.append(
            f"@article{{key{i},\n"
            f'  author = {{M{{\\"u}}ller, Hans and Smith, John and others}},\n'
            f"  title = {{A Study of {{BERT}} Number {i}: Effects \\& Results}},\n"
            f"  journal = jmlr,\n"
            f"  year = {{20{i % 30:02d}}},\n"
            f"  volume = {{{i % 50}}},\n"
            f"  pages = {{{i}--{i + 10}}},\n"
            f"  doi = {{10.1234/abc.{i}}},\n"
            f"}}\n\n"
        )
    return "".join(parts)


_alive: list[Bibliography] = []


def timed(label: str, text: str) -> str:
    gc.collect()  # measure the parse, not a collection the previous step left pending
    start = time.perf_counter()
    bib = parse_bibtex("file:///bench.bib", text, previous=_alive[0] if _alive else None)
    elapsed = time.perf_counter() - start
    before = {id(r) for r in _alive[0].references} if _alive else set()
    kept = sum(id(r) in before for r in bib.references)
    print(
        f"{label:<48} {elapsed * 1000:8.1f} ms  "
        f"({len(bib.references)} references, {kept} kept)"
    )
    _alive[:] = [bib]
    return text


def insert(text: str, at: int, s: str) -> str:
    return text[:at] + s + text[at:]


def main() -> None:
    entries = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    text = generated_library(entries)
    print(f"{entries} entries, {len(text):,} characters")
    text = timed("cold parse (first call)", text)
    text = timed("re-parse, unchanged", text)
    text = timed("insert a character in the last entry", insert(text, text.rindex("Number"), "Z"))
    middle = text.index("Number", len(text) // 2)
    text = timed("insert a character in the middle entry", insert(text, middle, "X"))
    text = timed("insert another character there", insert(text, middle, "X"))
    text = timed("replace a character there", text[:middle] + "Y" + text[middle + 1 :])
    first = text.index("Number")
    text = timed("insert a character in the first entry", insert(text, first, "W"))
    text = timed("delete it again", text[:first] + text[first + 1 :])
    entry = text[text.index("@article") : text.index("@article", text.index("@article") + 1)]
    pasted = insert(text, text.rindex("@article", 0, middle), entry)
    text = timed("paste a copy of the first entry in the middle", pasted)
    text = timed("define a new @string at the top", '@string{x = "y"}\n' + text)
    text = timed(
        "change the @string every entry uses", text.replace("Journal of Machine", "Journal of M", 1)
    )


if __name__ == "__main__":
    main()
