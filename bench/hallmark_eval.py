"""How citelsp's verification engine grades the HALLMARK dev split against a simulated index.

Run: ``python bench/hallmark_eval.py [--limit N] [--json out.json] [--concurrency C] [--pools]
[--bibitems STYLE]``.

The "real world" is every VALID row of ``fixtures/hallmark/dev_public.jsonl`` plus the two real
reference pools (``raw_valid_entries_dblp.jsonl``, ``journal_articles.jsonl``), one record per
work, served by ``bench/simindex.py`` in the real API shapes. The index never sees a label: it
is built from works only. Every dev row (canaries dropped) is rendered as one BibTeX entry, the
file is parsed once with citelsp's parser, and the engine verifies every reference.

``--pools`` also grades every entry of the two real pools as a citation (all VALID): over a
thousand more correct references, drawn apart from the dev split, that must stay free of P0
and P1 — the check that the rules were not fitted to the dev rows.

``--local-index`` grades the rows again with a local index built from snapshot files of the
simulated world (OpenAlex, Crossref, DataCite, arXiv): every parsed real row must be answered
from it alone, and no grade may change.

``--bibitems STYLE`` grades the same rows as a paper's own ``thebibliography`` would carry
them: BibTeX (``bibtex``, from TeX Live) prints them in ``STYLE`` and citelsp reads the
``\\bibitem`` text back, with no fields; ``--bibitems biblatex`` reads biber's ``.bbl``
instead. Real rows must stay free of P0 and P1 here too.

The simulated world is closed: a DOI or arXiv id of a real work that is not in these files does
not exist here (Handle 100), so an identifier a hallucinated row borrowed from an unrelated real
work reads as DOI_REFUTED rather than DOI_TITLE_MISMATCH. Both are P0; the per-type table shows
how many cited DOIs the index holds so the reader can tell the cases apart.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):  # run as a script: make ``citelsp`` and ``bench`` importable
    sys.path.insert(0, str(ROOT))

import bibtexparser  # noqa: E402

from bench.simindex import (  # noqa: E402
    SimIndex,
    SimIndexServer,
    crossref_work,
    datacite_doi,
    openalex_work,
    real_works,
)
from citelsp.config import Settings  # noqa: E402
from citelsp.documents.biber_bbl import is_biber_bbl, parse_biber_bbl  # noqa: E402
from citelsp.documents.bibitems import parse_bibitems  # noqa: E402
from citelsp.documents.bibtex import parse_bibtex  # noqa: E402
from citelsp.documents.model import Reference  # noqa: E402
from citelsp.index.build import IndexWriter  # noqa: E402
from citelsp.resolution.engine import Engine  # noqa: E402
from citelsp.resolution.identifiers import identifiers_of  # noqa: E402
from citelsp.verdict.checklist import Judgement  # noqa: E402
from citelsp.verdict.judge import judge  # noqa: E402

FIXTURES = ROOT / "fixtures" / "hallmark"
DEV = FIXTURES / "dev_public.jsonl"
DBLP_POOL = FIXTURES / "raw_valid_entries_dblp.jsonl"
JOURNAL_POOL = FIXTURES / "journal_articles.jsonl"
PRIORITIES = ("P0", "P1", "P2", "P3")
CLEAN = "clean"
"""A clean "true": matched, no checklist item."""
UNPARSED = "unparsed"
"""The parser rejected the rendered entry (MALFORMED_ENTRY): never verified."""
GRADES = (*PRIORITIES, CLEAN, UNPARSED)
POOL_PREFIX = "pool:"
"""Keys of pool entries graded with ``--pools``."""


@dataclass(frozen=True)
class Row:
    key: str
    entry_type: str
    fields: dict[str, str]
    label: str
    hallucination_type: str | None
    doi_resolves: bool | None = None
    """HALLMARK's own ``subtests.doi_resolves`` (does the cited DOI exist in reality); used
    only to tell closed-world artifacts apart in the report, never by the index."""


@dataclass
class RowResult:
    """One dev row's grade, with what a reader needs to diagnose it."""

    key: str
    label: str
    hallucination_type: str | None
    grade: str
    """P0–P3, ``clean`` or ``unparsed``."""
    verdict: str | None = None
    reason_code: str | None = None
    other_reasons: list[str] = field(default_factory=list)
    message: str = ""
    doi: str | None = None
    doi_in_index: bool | None = None
    """Whether the simulated index holds the cited DOI (None when no DOI is cited)."""
    doi_resolves: bool | None = None
    attempts: list[str] = field(default_factory=list)


# --- data -----------------------------------------------------------------------------------


def read_jsonl(path: Path) -> list[dict]:
    """The rows of a HALLMARK file, canaries dropped."""
    with path.open(encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return [r for r in rows if r.get("generation_method") != "canary"]


def dev_rows(path: Path = DEV) -> list[Row]:
    return [
        Row(r["bibtex_key"], r.get("bibtex_type") or "misc",
            {k: str(v) for k, v in r["fields"].items() if v is not None},
            r["label"], r.get("hallucination_type"),
            (r.get("subtests") or {}).get("doi_resolves"))
        for r in read_jsonl(path)
    ]


def pool_rows() -> list[Row]:
    """The real pools as VALID rows (keys prefixed ``pool:``), to be cited like dev rows."""
    return [Row(f"{POOL_PREFIX}{i}", entry_type, fields, "VALID", None)
            for i, (entry_type, fields) in enumerate(pool_entries())]


def pool_entries() -> list[tuple[str, dict[str, str]]]:
    """The real reference pools as (entry type, fields); journal articles come as BibTeX."""
    entries = [(r.get("bibtex_type") or "misc", r["fields"]) for r in read_jsonl(DBLP_POOL)]
    for r in read_jsonl(JOURNAL_POOL):
        for entry in bibtexparser.parse_string(r["bibtex"]).entries:
            entries.append((entry.entry_type, {f.key: str(f.value) for f in entry.fields}))
    return entries


def build_index(rows: Sequence[Row], *, full_venues: bool = True) -> SimIndex:
    """The real world: the pools plus every VALID dev row (labels decide only what is real)."""
    real = [(r.entry_type, r.fields) for r in rows if r.label == "VALID"]
    return SimIndex(real_works([*pool_entries(), *real], full_venues=full_venues))


def render_bibtex(rows: Iterable[Row]) -> str:
    """One ``@type{key, name = {value}}`` entry per row, values as the dataset has them."""
    parts = []
    for row in rows:
        body = "".join(f"  {name} = {{{value}}},\n" for name, value in row.fields.items())
        parts.append(f"@{row.entry_type}{{{row.key},\n{body}}}\n\n")
    return "".join(parts)


# --- running ----------------------------------------------------------------------------------


def row_result(row: Row, judged: tuple[Reference, Judgement] | None,
               index: SimIndex) -> RowResult:
    result = RowResult(row.key, row.label, row.hallucination_type, UNPARSED,
                       doi_resolves=row.doi_resolves)
    if judged is None:
        return result
    reference, judgement = judged
    doi = identifiers_of(reference).doi
    if doi is not None:
        result.doi = doi.value
        result.doi_in_index = index.doi(doi.value) is not None
    result.verdict = judgement.verdict
    item = judgement.item
    result.attempts = [f"{o.resolver}: {o.status}/{o.queried_by}: {o.summary}"
                       for o in judgement.outcomes.values() if o.status != "skipped"]
    if item is None:
        result.grade = CLEAN
        return result
    result.grade = item.priority
    result.reason_code = item.reason_code
    result.other_reasons = list(item.other_reasons)
    result.message = item.message
    return result


def bbl_references(rows: Sequence[Row], style: str) -> list[Reference]:
    """The rows as BibTeX's ``style`` prints them in a ``thebibliography``, read back as a
    LaTeX document's own bibliography (``documents/bibitems.py``)."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        # BibTeX loses every entry after one whose braces do not balance: leave those out
        printable = [r for r in rows if _balanced(render_bibtex([r]))]
        (folder / "refs.bib").write_text(render_bibtex(printable), encoding="utf-8")
        if style == "biblatex":  # biber's .bbl: LaTeX writes the control file it reads
            (folder / "p.tex").write_text(
                "\\documentclass{article}\\usepackage[backend=biber]{biblatex}"
                "\\addbibresource{refs.bib}\\begin{document}\\nocite{*}\\end{document}\n",
                encoding="utf-8")
            subprocess.run(["pdflatex", "-interaction=batchmode", "p.tex"], cwd=folder,
                           capture_output=True, check=False)
            subprocess.run(["biber", "p"], cwd=folder, capture_output=True, check=False)
        else:
            (folder / "p.aux").write_text(f"\\citation{{*}}\n\\bibstyle{{{style}}}\n"
                                          "\\bibdata{refs}\n", encoding="utf-8")
            subprocess.run(["bibtex", "p"], cwd=folder, capture_output=True, check=False)
        text = (folder / "p.bbl").read_text(encoding="utf-8", errors="replace")
    uri = "file:///hallmark_dev.bbl"
    bib = parse_biber_bbl(uri, text) if is_biber_bbl(text) else parse_bibitems(uri, text)
    return bib.references if bib is not None else []


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += (ch == "{") - (ch == "}")
        if depth < 0:
            return False
    return depth == 0


async def evaluate(rows: Sequence[Row], index: SimIndex, concurrency: int = 16,
                   style: str | None = None, local_index: Path | None = None
                   ) -> tuple[list[RowResult], float, Counter]:
    """Grade ``rows`` against ``index`` (as BibTeX entries, or as ``style``'s bibitems),
    with ``local_index`` asked first when given; returns the results, seconds spent and
    requests."""
    if style is None:
        found = parse_bibtex("file:///hallmark_dev.bib", render_bibtex(rows)).references
    else:
        found = bbl_references(rows, style)
    refs = {ref.key: ref for ref in found}
    with SimIndexServer(index) as server, tempfile.TemporaryDirectory() as cache:
        settings = Settings.from_options({}, server.environ(cache)).with_changes(
            use_cache=False, index=(local_index,) if local_index else ())
        engine = Engine(settings)
        started = time.perf_counter()
        try:
            wanted = [refs[r.key] for r in rows if r.key in refs]
            resolutions = await engine.resolve_all(wanted, concurrency=concurrency)
        finally:
            await engine.aclose()
        seconds = time.perf_counter() - started
        requests = Counter(server.requests)
    by_key = {ref.key: (ref, judge(ref, res)) for ref, res in zip(wanted, resolutions,
                                                                  strict=True)}
    return [row_result(r, by_key.get(r.key), index) for r in rows], seconds, requests


def local_index_check(chosen: Sequence[Row], index: SimIndex, results: Sequence[RowResult],
                      requests: Counter, concurrency: int) -> str:
    """The held-out check of the local index: snapshot files of the simulated world's works
    (OpenAlex, Crossref, DataCite, arXiv, as each publisher ships them) built into an index;
    every real row must be answered from it with no request, and no grade may change."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        writer = IndexWriter(folder / "works.sqlite", fresh=True)
        for source, path in write_snapshots(index, folder / "snapshots").items():
            writer.add(source, path)
        writer.close()
        again, _, asked = asyncio.run(evaluate(chosen, index, concurrency,
                                               local_index=folder / "works.sqlite"))
    real = [r for r in again if r.label == "VALID"]
    from_index = [r for r in real if r.attempts and all(
        " snapshot" in a.split(": ", 2)[-1][:40] for a in r.attempts)]
    changed = [(a, b) for a, b in zip(results, again, strict=True)
               if (a.grade, a.reason_code) != (b.grade, b.reason_code)]
    lines = [f"Local index of the simulated world's snapshots: {sum(asked.values())} requests "
             f"(without it: {sum(requests.values())}); real rows answered from the index "
             f"alone: {len(from_index)} of {len(real)}; grades changed: {len(changed)}"]
    lines += [f"  {a.key} ({a.label}): {a.grade} {a.reason_code} -> {b.grade} {b.reason_code}"
              for a, b in changed[:15]]
    return "\n".join(lines)


def write_snapshots(index: SimIndex, folder: Path) -> dict[str, Path]:
    """The simulated works as OpenAlex, Crossref and DataCite JSON Lines and arXiv's Kaggle
    metadata snapshot, from the same objects the simulated services answer with."""
    def lines(objects: Iterable[dict]) -> bytes:
        return b"".join(json.dumps(o).encode() + b"\n" for o in objects)

    works = index.works
    files = {
        "openalex": ("works/updated_date=2026-11-01/part_000.gz",
                     [openalex_work(w) for w in works]),
        "crossref": ("crossref/0.jsonl.gz", [crossref_work(w) for w in works if w.crossref_doi]),
        "datacite": ("datacite/0.jsonl.gz", [datacite_doi(w)["data"] for w in works
                                             if w.arxiv_id]),
        "arxiv": ("arxiv-metadata-oai-snapshot.json", [{
            "id": w.arxiv_id, "title": w.title, "doi": w.crossref_doi,
            "authors": ", ".join(f"{g} {f}".strip() for g, f in w.authors),
            "authors_parsed": [[f, g, ""] for g, f in w.authors],
            "versions": [{"version": "v1", "created": f"Mon, 1 Jan {w.arxiv_month()[:4]}"}],
            "update_date": f"{w.arxiv_month()}-01"} for w in works if w.arxiv_id]),
    }
    paths = {}
    for source, (name, objects) in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        data = lines(objects)
        path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
        paths[source] = folder / "works" if source == "openalex" else path
    return paths


# --- counting ---------------------------------------------------------------------------------


def summarize(results: Sequence[RowResult]) -> dict:
    """The figures the report prints, as plain data (``--json`` writes them)."""
    pools = [r for r in results if r.key.startswith(POOL_PREFIX)]
    valid = [r for r in results if r.label == "VALID" and not r.key.startswith(POOL_PREFIX)]
    fake = [r for r in results if r.label == "HALLUCINATED"]
    by_type: dict[str, Counter] = {}
    for r in fake:
        counts = by_type.setdefault(r.hallucination_type or "unknown", Counter())
        counts[r.grade] += 1
        counts["n"] += 1
        counts["doi_cited"] += r.doi is not None
        counts["doi_in_index"] += bool(r.doi_in_index)
        counts["p0_closed_world"] += closed_world_p0(r)
    graded = [r for r in fake if r.grade != UNPARSED]
    p0 = sum(r.grade == "P0" for r in graded)
    artifacts = sum(closed_world_p0(r) for r in graded)
    p01 = sum(r.grade in ("P0", "P1") for r in graded)
    valid_p0 = [r for r in valid if r.grade == "P0"]
    return {
        "rows": len(results),
        "valid": len(valid),
        "hallucinated": len(fake),
        "valid_grades": _ordered(Counter(r.grade for r in valid), GRADES),
        "pool_rows": len(pools),
        "pool_grades": _ordered(Counter(r.grade for r in pools), GRADES),
        "pool_flagged": [r.key for r in pools if r.grade in ("P0", "P1")],
        "valid_verdicts": dict(Counter(r.verdict or UNPARSED for r in valid)),
        "valid_reasons": dict(Counter(r.reason_code for r in valid if r.reason_code).most_common()),
        "valid_p0": {
            "doi_not_in_index": [r.key for r in valid_p0 if r.doi and not r.doi_in_index],
            "engine": [r.key for r in valid_p0 if not (r.doi and not r.doi_in_index)],
        },
        "hallucinated_grades": _ordered(Counter(r.grade for r in fake), GRADES),
        "hallucinated_verdicts": dict(Counter(r.verdict or UNPARSED for r in fake)),
        "hallucinated_reasons": dict(
            Counter(r.reason_code for r in fake if r.reason_code).most_common()),
        "hallucinated_graded": len(graded),
        "hallucinated_p0_share": p0 / len(graded) if graded else 0.0,
        "hallucinated_p0_or_p1_share": p01 / len(graded) if graded else 0.0,
        "hallucinated_p0_closed_world": artifacts,
        "by_type": {t: dict(c) for t, c in sorted(by_type.items())},
    }


def closed_world_p0(r: RowResult) -> bool:
    """P0 only because the closed index lacks an identifier HALLMARK says exists in reality."""
    return r.grade == "P0" and r.doi is not None and not r.doi_in_index and r.doi_resolves is True


def _ordered(counts: Counter, keys: Sequence[str]) -> dict[str, int]:
    return {k: counts.get(k, 0) for k in keys}


# --- the report -------------------------------------------------------------------------------


def report(summary: dict, results: Sequence[RowResult], seconds: float, requests: Counter
           ) -> str:
    lines = [
        f"HALLMARK dev (canaries dropped): {summary['valid'] + summary['hallucinated']} rows = "
        f"{summary['valid']} VALID + {summary['hallucinated']} HALLUCINATED",
        "",
        "VALID rows",
        f"  graded:   {_counts(summary['valid_grades'])}",
        f"  verdicts: {_counts(summary['valid_verdicts'])}",
        f"  reasons:  {_counts(summary['valid_reasons']) or '-'}",
    ]
    p0 = summary["valid_p0"]
    engine, missing = len(p0["engine"]), len(p0["doi_not_in_index"])
    lines.append(f"  P0 (must be 0): {engine + missing}  engine: {engine}, "
                 f"DOI not in the index: {missing}")
    by_key = {r.key: r for r in results}
    for key in [*p0["engine"], *p0["doi_not_in_index"]]:
        lines.extend(_detail(by_key[key]))
    if summary["pool_rows"]:
        lines.append(f"POOL rows (real, apart from the dev split): {summary['pool_rows']}, "
                     f"graded {_counts(summary['pool_grades'])}")
        lines += [d for key in summary["pool_flagged"] for d in _detail(by_key[key])]
    unparsed = [r.key for r in results if r.grade == UNPARSED]
    if unparsed:
        lines.append(f"  not parsed (MALFORMED_ENTRY, all labels): {', '.join(unparsed)}")
    share = summary["hallucinated_p0_share"]
    share01 = summary["hallucinated_p0_or_p1_share"]
    lines += [
        "",
        "HALLUCINATED rows",
        f"  graded:   {_counts(summary['hallucinated_grades'])}",
        f"  verdicts: {_counts(summary['hallucinated_verdicts'])}",
        f"  reasons:  {_counts(summary['hallucinated_reasons'])}",
        f"  P0 share: {share:.1%}   P0-or-P1 share: {share01:.1%}   "
        f"(of {summary['hallucinated_graded']} parsed)",
        f"  of the P0: {summary['hallucinated_p0_closed_world']} cite a DOI that exists in reality "
        "(HALLMARK subtests) but not in the closed index (closed-world P0, column cwP0)",
        "",
        f"  {'type':<24}{'n':>4}{'P0':>5}{'P1':>5}{'P2':>5}{'P3':>5}{'clean':>6}"
        f"{'unp.':>5}{'DOI':>5}{'inIdx':>6}{'cwP0':>5}",
    ]
    for kind, c in summary["by_type"].items():
        lines.append(
            f"  {kind:<24}{c.get('n', 0):>4}"
            + "".join(f"{c.get(g, 0):>5}" for g in PRIORITIES)
            + f"{c.get(CLEAN, 0):>6}{c.get(UNPARSED, 0):>5}"
            + f"{c.get('doi_cited', 0):>5}{c.get('doi_in_index', 0):>6}"
            + f"{c.get('p0_closed_world', 0):>5}"
        )
    served = sum(requests.values())
    clean = [r for r in results if r.label == "HALLUCINATED" and r.grade == CLEAN]
    lines += [
        "  (DOI = rows citing a DOI; inIdx = of those, DOIs the simulated index holds)",
        "",
        f"  still clean ({len(clean)}):",
        *(f"    {r.key} {r.hallucination_type}: {'; '.join(r.attempts)[:160]}" for r in clean),
        "",
        f"Timing: {seconds:.1f} s for {summary['rows'] - len(unparsed)} references "
        f"({served} requests to the simulated index, {served / max(seconds, 1e-9):.0f}/s)",
        "  requests: " + _counts(Counter({f"{e}:{s}": n for (e, s), n in requests.items()})),
    ]
    return "\n".join(lines)


def _counts(counts: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items())


def _detail(r: RowResult) -> list[str]:
    out = [f"    {r.key}: {r.reason_code} (verdict {r.verdict}; DOI {r.doi}, "
           f"in index: {r.doi_in_index}) {r.message}"]
    out += [f"      {a}" for a in r.attempts]
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=None, help="only the first N dev rows")
    parser.add_argument("--json", type=Path, default=None, help="write figures and rows here")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--pools", action="store_true",
                        help="also grade every real pool entry (VALID) as a citation")
    parser.add_argument("--bibitems", metavar="STYLE", default=None,
                        help="grade the rows as read back from a .bbl: BibTeX's "
                             "thebibliography in STYLE (plain, IEEEtran, ...), or biber's "
                             "(STYLE biblatex)")
    parser.add_argument("--cited-venues", action="store_true",
                        help="index venues as the entries cite them (default: as the "
                             "indexes spell them, e.g. 'Advances in Neural Information "
                             "Processing Systems')")
    parser.add_argument("--local-index", action="store_true",
                        help="then grade again with a local index built from snapshot files "
                             "of the simulated world: no request and no grade change expected")
    args = parser.parse_args(argv)
    rows = dev_rows()
    index = build_index(rows, full_venues=not args.cited_venues)
    chosen = rows[: args.limit] if args.limit else rows
    if args.pools:
        chosen = [*chosen, *pool_rows()]
    results, seconds, requests = asyncio.run(evaluate(chosen, index, args.concurrency,
                                                      args.bibitems))
    summary = summarize(results)
    print(f"Simulated index: {len(index.works)} works, {len(index.by_doi)} DOIs, "
          f"{len(index.by_arxiv)} arXiv ids; venues "
          + ("as cited" if args.cited_venues else "as the indexes spell them"))
    print(report(summary, results, seconds, requests))
    if args.local_index:
        print(local_index_check(chosen, index, results, requests, args.concurrency))
    if args.json:
        args.json.write_text(json.dumps(
            {"summary": summary, "seconds": seconds, "rows": [asdict(r) for r in results]},
            indent=1, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
