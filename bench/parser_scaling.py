"""Print how each parser, duplicate detection and publishing scale when the input doubles.

Run: ``python bench/parser_scaling.py [N]`` (default N = 2,000 units; each row times sizes
N, 2N, 4N, 8N). A linear parser shows the last ratio near 8; a quadratic one near 64. CPU
time (``time.process_time``) is measured, best of three, so that other work on a shared
machine disturbs the figures less. Hostile inputs from issue 13 are included: 400 kB of
``@`` on one line, unclosed groups, thousands of copies of one work, and publishing their
diagnostics (findings, LSP conversion, serialization).
"""

from __future__ import annotations

import gc
import json
import sys
import time
from collections.abc import Callable

import yaml
from lsprotocol import types

from citelsp.config import Settings
from citelsp.documents.biber_bbl import parse_biber_bbl
from citelsp.documents.bibitems import parse_bibitems
from citelsp.documents.bibtex import parse_bibtex
from citelsp.documents.csl import parse_csl_json, parse_csl_yaml
from citelsp.documents.latex import parse_latex
from citelsp.documents.manuscript import front_matter
from citelsp.documents.markers import parse_markers
from citelsp.documents.pandoc import code_regions, mask, parse_pandoc
from citelsp.lsp.convert import (
    Diagnostics,
    LineIndexes,
    lsp_diagnostic,
    lsp_range,
)
from citelsp.spans import Span
from citelsp.workspace import Workspace
from citelsp.workspace.checks import EntryIndex


def bibitems(n: int) -> str:
    item = ("\\bibitem{{k{i}}} A.~Author and B.~Other.\n\\newblock A title {i}.\n"
            "\\newblock In \\emph{{Proc.}}, pages 1--9, 2020. doi:10.1000/x{i}.\n")
    return ("\\begin{thebibliography}{9}\n" + "".join(item.format(i=i) for i in range(n))
            + "\\end{thebibliography}\n")


def bib_entries(n: int) -> str:
    return "".join(
        f"@article{{key{i},\n  author = {{Author{i % 97}, A. and Other, B.}},\n"
        f"  title = {{Title {{{i}}} of \\emph{{things}}}},\n  journal = jn,\n"
        f"  year = {{{1990 + i % 30}}},\n  doi = {{10.1000/x{i}}},\n}}\n\n"
        for i in range(n)
    )


def csl_items(n: int) -> list[dict]:
    return [
        {"id": f"k{i}", "type": "article-journal", "title": f"Title {i}",
         "author": [{"family": f"F{i % 97}", "given": "A."}], "issued": {"date-parts": [[2000]]}}
        for i in range(n)
    ]  # fmt: skip


def yaml_front_matter(n: int) -> str:
    return "---\n" + yaml.safe_dump({"references": csl_items(n)}) + "---\n\nText.\n"


def parse_yaml(text: str) -> None:
    front = front_matter(text)
    parse_csl_yaml("file:///p.md", text, front.body.start, front.body.end)


def markers(n: int) -> str:
    return "".join(f"Claim {i}. <!--ref:key{i}--><!--anchor:quote:some%20words-->\n"
                   for i in range(n))  # fmt: skip


def pandoc(n: int) -> str:
    return "".join(f"Claim {i} [see @key{i}, p. 4; @other{i}] and `code {i}`.\n"
                   for i in range(n))  # fmt: skip


def latex(n: int) -> str:
    return "".join(f"Claim {i} \\citep[p.~4]{{key{i},other{i}}} % note {i}\n"
                   for i in range(n))  # fmt: skip


def duplicates(n: int) -> str:
    """n entries: a third share one title (an "Editorial" column), a third share one DOI,
    the rest distinct works with recurring titles in other years."""
    parts = []
    for i in range(n):
        if i % 3 == 0:
            parts.append(f"@article{{ed{i}, title = {{Editorial}}, author = {{Board, E.}}, "
                         f"year = 2000, journal = {{J}}}}\n")
        elif i % 3 == 1:
            parts.append(f"@article{{same{i}, title = {{Same}}, doi = {{10.1000/same}}}}\n")
        else:
            parts.append(f"@article{{w{i}, title = {{Calendar}}, author = {{A, B}}, "
                         f"year = {{{i}}}}}\n")
    return "".join(parts)


def detect_duplicates(text: str) -> None:
    bib = parse_bibtex("file:///dup.bib", text)
    index = EntryIndex()
    index.update([bib])
    index.problems(bib)


def publish(text: str) -> None:
    """What the server does to publish a library: its findings (duplicates with their
    related locations), converted to LSP diagnostics and serialized as pygls sends them."""
    ws = Workspace(Settings(verify=False), [])
    uri = "file:///dup.bib"
    ws.open(uri, text)
    lines = LineIndexes()
    index = lines.of(uri, text)

    def range_for(_uri: str, span: Span) -> types.Range:
        return lsp_range(index, span, "utf-16")

    diagnostics = [lsp_diagnostic(p, range_for(uri, p.span), range_for)
                   for p in ws.problems(uri)]
    Diagnostics().params_json(uri, None, diagnostics)


def timed(work: Callable[[str], object], text: str) -> float:
    """Best of three, the cyclic collector paused (as ``citelsp check`` pauses it for a run):
    its passes cost more as the live heap grows, whatever the algorithm, and made the
    publishing row look superlinear (8n/n near 16 with it, 7.8 without)."""
    best = float("inf")
    for _ in range(3):
        gc.collect()
        gc.disable()
        try:
            start = time.process_time()
            work(text)
            best = min(best, time.process_time() - start)
        finally:
            gc.enable()
    return best


CASES: list[tuple[str, Callable[[int], str], Callable[[str], object]]] = [
    ("bibtex entries", bib_entries, lambda t: parse_bibtex("file:///b.bib", t)),
    ("bibtex: '@' x 50n on one line", lambda n: "@" * (50 * n),
     lambda t: parse_bibtex("file:///b.bib", t)),
    ("bibtex: unclosed value, '@' lines", lambda n: "@misc{a, note = {" + "\n@ x" * (10 * n),
     lambda t: parse_bibtex("file:///b.bib", t)),
    ("csl-json items", lambda n: json.dumps(csl_items(n)),
     lambda t: parse_csl_json("file:///c.json", t)),
    ("csl-yaml front matter", lambda n: yaml_front_matter(n // 4), parse_yaml),
    ("markers", markers, lambda t: parse_markers("file:///p.md", t)),
    ("markers: '<!--' x 10n", lambda n: "<!--" * (10 * n),
     lambda t: parse_markers("file:///p.md", t)),
    ("pandoc", pandoc, lambda t: parse_pandoc("file:///p.md", mask(t, code_regions(t)))),
    ("pandoc: '[' x 50n", lambda n: "[" * (50 * n),
     lambda t: parse_pandoc("file:///p.md", mask(t, code_regions(t)))),
    ("pandoc: backtick runs of every length",
     lambda n: "".join("`" * (k % 400 + 1) + " x " for k in range(n // 4)),
     lambda t: parse_pandoc("file:///p.md", mask(t, code_regions(t)))),
    ("latex", latex, lambda t: parse_latex("file:///p.tex", t)),
    ("latex: '\\cite{' x 20n", lambda n: "\\cite{" * (20 * n),
     lambda t: parse_latex("file:///p.tex", t)),
    ("latex: '\\verb|' x 20n", lambda n: "\\verb|" * (20 * n),
     lambda t: parse_latex("file:///p.tex", t)),
    ("latex: unclosed '\\iffalse' x 5n", lambda n: "\\iffalse \\cite{a} " * (5 * n),
     lambda t: parse_latex("file:///p.tex", t)),
    ("bibitems", bibitems, lambda t: parse_bibitems("file:///p.tex", t)),
    ("bibitems: '``' x 20n in one item",
     lambda n: "\\begin{thebibliography}{9}\\bibitem{a} " + "`` x " * (20 * n),
     lambda t: parse_bibitems("file:///p.tex", t)),
    ("bibitems: '\\newblock' x 20n, '(2020). ' x 20n",
     lambda n: "\\begin{thebibliography}{9}\\bibitem{a} A, B. "
               + "\\newblock x, 2020 " * (20 * n) + "(2020). t. " * (20 * n),
     lambda t: parse_bibitems("file:///p.tex", t)),
    ("biber .bbl: unclosed '\\entry' x 5n",
     lambda n: "\\refsection{0}" + "\\entry{k}{article}{} \\field{title}{T} " * (5 * n),
     lambda t: parse_biber_bbl("file:///p.bbl", t)),
    ("biber .bbl: unclosed '\\field{title}{' x 5n",
     lambda n: "\\refsection{0}\\entry{k}{article}{}" + "\\field{title}{T " * (5 * n),
     lambda t: parse_biber_bbl("file:///p.bbl", t)),
    ("duplicate detection", duplicates, detect_duplicates),
    ("publishing a library's diagnostics", duplicates, publish),
]  # fmt: skip


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    sizes = [n, 2 * n, 4 * n, 8 * n]
    print(f"{'case':<38}" + "".join(f"{f'{s:,}':>11}" for s in sizes) + "   8n/n (linear: 8)")
    for label, make, work in CASES:
        times = [timed(work, make(size)) for size in sizes]
        cells = "".join(f"{t * 1000:9.1f}ms" for t in times)
        ratio = times[-1] / times[0] if times[0] > 0 else float("nan")
        print(f"{label:<38}{cells}   {ratio:5.1f}", flush=True)


if __name__ == "__main__":
    main()
