"""Verdict and evidence → one checklist item per reference, and one finding per reason.

Every reference that is not a clean "true" gets exactly one item, carrying the
highest-priority reason; the others go in ``other_reasons`` and each reason also becomes a
finding shown on its field. Wording is part of the contract: only P0 may say an identifier
"does not exist" or "names another work", only a "false" verdict may say "fabricated", and
P1–P3 say "pending human check" and what was tried.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from citelsp import links
from citelsp.documents.model import Work
from citelsp.documents.text import is_generic_title
from citelsp.documents.works import graded_as_paper
from citelsp.resolution.identifiers import ReferenceIds
from citelsp.resolution.outcome import (
    FieldConflict,
    NotChecked,
    Outcome,
    Record,
    Retraction,
    not_checked,
)
from citelsp.resolution.resolve import LABELS
from citelsp.verdict.accuracy import accuracy_conflicts
from citelsp.verdict.reasons import REASONS, priority_rank
from citelsp.verdict.reduce import Verdict, reduce_lookup_verified

_VERSION = re.compile(r"v\d+$")
_RECORD_PREFERENCE = ("crossref", "datacite", "openalex", "semantic_scholar", "arxiv")
_PENDING = "pending human check"


@dataclass
class ChecklistItem:
    citation_key: str
    priority: str
    reason_code: str
    verdict_contribution: Verdict
    cited_as: str
    attempts: list[dict]
    verification_urls: list[str]
    human_action: str
    human_result: None = None
    """Never filled by the tool: the judgement is the human's."""
    other_reasons: list[str] = field(default_factory=list)
    message: str = ""

    def to_dict(self) -> dict:
        """The item as JSON data (``dataclasses.asdict`` deep-copies: ten times slower)."""
        return {
            "citation_key": self.citation_key,
            "priority": self.priority,
            "reason_code": self.reason_code,
            "verdict_contribution": self.verdict_contribution,
            "cited_as": self.cited_as,
            "attempts": [dict(a) for a in self.attempts],
            "verification_urls": list(self.verification_urls),
            "human_action": self.human_action,
            "human_result": self.human_result,
            "other_reasons": list(self.other_reasons),
            "message": self.message,
        }


@dataclass(frozen=True)
class Finding:
    """One reason, to be shown as a diagnostic on ``field``.

    ``field`` is the reference field as written for identifier reasons (``doi``, ``DOI``,
    ``eprint``, ``url``…), else a logical name (title, year, author, venue, volume, issue,
    pages) the caller maps to the entry's field; ``None`` means the entry key.
    """

    reason_code: str
    priority: str | None
    field: str | None
    message: str


@dataclass
class Judgement:
    citation_key: str
    verdict: Verdict
    outcomes: dict[str, Outcome]
    item: ChecklistItem | None
    findings: list[Finding]
    retraction: Retraction | None = None
    conflicts: tuple[FieldConflict, ...] = ()
    """Accuracy conflicts against the matched records, or why exact titles were rejected."""
    near_matches: tuple[Record, ...] = ()
    matched: Record | None = None


def _refute_impossible_arxiv(outcomes: dict[str, Outcome], ids: ReferenceIds, work: Work) -> None:
    """An arXiv id with an impossible date is refuted without a lookup."""
    arxiv = ids.arxiv
    if arxiv is None or not arxiv.impossible or work.manual:
        return
    current = outcomes.get("arxiv")
    if current is not None and current.refutes_identifier:
        return
    outcomes["arxiv"] = Outcome(
        "arxiv",
        "unmatched",
        "id",
        f"arXiv id {arxiv.value} carries an impossible date; not looked up",
        reason="ARXIV_ID_REFUTED",
        refutes_identifier=True,
    )


def _tried(outcomes: Mapping[str, Outcome]) -> str:
    asked = [
        f"{name} ({o.status}{' by ' + o.queried_by if o.queried_by else ''})"
        for name, o in outcomes.items()
        if o.status != "skipped"
    ]
    return "Tried: " + ", ".join(asked) if asked else "No source was asked"


def _cited_as(work: Work, ids: ReferenceIds) -> str:
    names = [p.family for p in work.authors if p.family]
    if not names:
        who = ""
    elif len(names) == 1 and not work.has_et_al:
        who = names[0]
    elif len(names) == 2 and not work.has_et_al:
        who = f"{names[0]} and {names[1]}"
    else:
        who = f"{names[0]} et al."
    parts = [f"{who} ({work.year})" if work.year else who]
    if work.title:
        title = work.title if len(work.title) <= 120 else work.title[:119] + "…"
        parts.append(f"\u201c{title}\u201d")
    if work.venue:
        parts.append(work.venue)
    if ids.doi is not None:
        parts.append(f"doi:{ids.doi.cited}")
    if ids.arxiv is not None:
        parts.append(f"arXiv:{ids.arxiv.value}")
    return ", ".join(p for p in parts if p) or "(no title, author or identifier)"


def _urls(
    work: Work, ids: ReferenceIds, outcomes: Mapping[str, Outcome], extra: Sequence[Record]
) -> list[str]:
    urls = []
    if ids.doi is not None:
        urls.append(links.doi_url(ids.doi.shown))
    if ids.arxiv is not None:
        urls.append(links.arxiv_url(ids.arxiv.value))
    urls += [links.doi_url(r.doi) for r in extra if r.doi]
    urls += [u for o in outcomes.values() if o.url and (u := links.allowed(o.url))]
    if work.title:
        urls.append(links.title_search_url("crossref", work.title))
        urls.append(links.title_search_url("google_scholar", work.title))
    return list(dict.fromkeys(urls))  # the builders' links are checked as they are built


class _Findings:
    """Collects findings once per (code, field), worded by priority and verdict."""

    def __init__(self, ids: ReferenceIds, verdict: Verdict, outcomes: Mapping[str, Outcome]):
        self.ids = ids
        self.verdict = verdict
        self.tried = _tried(outcomes)
        self.matched_via = next((n for n, o in outcomes.items() if o.status == "matched"), None)
        self.items: dict[tuple[str, str | None], Finding] = {}

    def _field(self, code: str) -> str | None:
        logical = REASONS[code].field if code in REASONS else None
        if logical == "doi" and self.ids.doi is not None:
            return self.ids.doi.field
        if logical == "arxiv" and self.ids.arxiv is not None:
            return self.ids.arxiv.field
        return logical

    def add(self, code: str, field: str | None = None, detail: str = "") -> None:
        info = REASONS.get(code)
        if info is None:
            return
        where = field if field is not None else self._field(code)
        if (code, where) in self.items:
            return
        text = info.summary + (f": {detail}" if detail else "")
        if info.priority == "P0":
            if self.verdict == "false":
                text += ". No index has the work either; the reference may be fabricated"
            elif self.verdict == "true":
                text += (
                    f". The work itself was found ({self.matched_via});"
                    " correct the identifier from the matched record"
                )
            text += "."
        elif code == "UNREACHABLE":  # the detail says what could not be asked, and why
            text += f" \u2014 {_PENDING}."
        elif info.priority is not None:
            text += f" \u2014 {_PENDING}. {self.tried}."
        self.items[(code, where)] = Finding(code, info.priority, where, text)

    def conflict(self, c: FieldConflict) -> None:
        self.add(c.reason, c.field, conflict_text(c))

    def ranked(self) -> list[Finding]:
        return sorted(self.items.values(), key=lambda f: priority_rank(f.priority))


def conflict_text(c: FieldConflict) -> str:
    """The field, both values and who gives the other one, so a human can settle it at a
    glance: 'venue cited as “ICML”; Crossref has “Advances in Neural …”'."""
    said: dict[str, list[str]] = {}
    for source, value in c.by_source:
        said.setdefault(value, []).append(LABELS.get(source, source))
    if said:
        found = "; ".join(
            f"{' and '.join(dict.fromkeys(labels))} "
            f"{'have' if len(set(labels)) > 1 else 'has'} \u201c{value}\u201d"
            for value, labels in said.items()
        )
    else:
        found = f"found \u201c{c.found}\u201d"
    note = f" ({c.note})" if c.note else ""
    return f"{c.field} cited as \u201c{c.cited}\u201d; {found}{note}"


def merged_conflicts(conflicts: Sequence[FieldConflict]) -> tuple[FieldConflict, ...]:
    """One conflict per (reason, field, cited and found values): several sources rejecting
    an exact title for the same year are one conflict that names them all."""
    merged: dict[tuple[str, str, str, str], FieldConflict] = {}
    for c in conflicts:
        key = (c.reason, c.field, c.cited, c.found)
        if key in merged:
            first = merged[key]
            merged[key] = replace(first, by_source=first.by_source + tuple(
                s for s in c.by_source if s not in first.by_source))
        else:
            merged[key] = c
    return tuple(merged.values())


def _identifier_detail(code: str, ids: ReferenceIds) -> str:
    if code.startswith("DOI") and ids.doi is not None:
        return ids.doi.cited
    if code.startswith("DOI") and ids.short_doi is not None:
        return ids.short_doi.value
    if code.startswith("ARXIV") and ids.arxiv is not None:
        return ids.arxiv.value
    return ""


_DOUBT_ABOUT = {
    "doi": ("DOI_TITLE_UNCONFIRMED", "DOI_EXISTS_TITLE_UNVERIFIABLE", "DOI_RA_UNRESOLVED"),
    "arxiv": ("ARXIV_TITLE_UNCONFIRMED",),
}


def _confirmed_identifiers(ids: ReferenceIds, records: Sequence[Record]) -> set[str]:
    """Doubts about an identifier that another source's match of that identifier settles."""
    settled: set[str] = set()
    if ids.doi is not None and any((r.doi or "").lower() == ids.doi.value for r in records):
        settled.update(_DOUBT_ABOUT["doi"])
    if ids.arxiv is not None and any(
        _VERSION.sub("", r.arxiv_id or "") == ids.arxiv.value for r in records
    ):
        settled.update(_DOUBT_ABOUT["arxiv"])
    return settled


def _refuted_identifiers(outcomes: Mapping[str, Outcome]) -> set[str]:
    """Doubts about an identifier that identifier evidence against it supersedes: a DOI that
    does not exist or names another work is not also "unconfirmed" (one finding per field)."""
    settled: set[str] = set()
    for o in outcomes.values():
        if o.refutes_identifier and o.status == "unmatched":
            settled.update(_DOUBT_ABOUT["arxiv" if o.resolver == "arxiv" else "doi"])
    return settled


def _preferred_records(outcomes: Mapping[str, Outcome]) -> list[Record]:
    matched = [(n, o.record) for n, o in outcomes.items() if o.status == "matched" and o.record]
    rank = {n: i for i, n in enumerate(_RECORD_PREFERENCE)}
    return [r for _, r in sorted(matched, key=lambda t: rank.get(t[0], len(rank)))]


def build_judgement(
    ref_key: str,
    entry_type: str,
    work: Work,
    ids: ReferenceIds,
    outcomes: Mapping[str, Outcome],
    *,
    retraction: Retraction | None = None,
    extra_reasons: Sequence[str] = (),
    venue_links: Mapping[str, frozenset[str]] | None = None,
) -> Judgement:
    """Reduce one reference's outcomes to its verdict, findings and checklist item."""
    outcomes = dict(outcomes)
    _refute_impossible_arxiv(outcomes, ids, work)
    verdict = reduce_lookup_verified(outcomes)
    records = _preferred_records(outcomes)
    found = _Findings(ids, verdict, outcomes)

    confirmed = _confirmed_identifiers(ids, records) | _refuted_identifiers(outcomes)
    for o in outcomes.values():
        code = o.reason
        if code is None and o.refutes_identifier:
            code = "ARXIV_ID_REFUTED" if o.resolver == "arxiv" else "DOI_REFUTED"
        # Field conflicts come from the accuracy check over every matched record (or, without
        # a match, from the exact-title rejections), never from one outcome's view.
        if code is not None and code not in confirmed and code != "METADATA_CONFLICT":
            found.add(code, None, _identifier_detail(code, ids))

    conflicts: tuple[FieldConflict, ...]
    near: tuple[Record, ...] = ()
    if records:
        conflicts = accuracy_conflicts(work, entry_type, records, venue_links)
        for c in conflicts:
            found.conflict(c)
    else:
        conflicts = merged_conflicts([c for o in outcomes.values() for c in o.conflicts])
        near = tuple(dict.fromkeys(r for o in outcomes.values() for r in o.near_matches))
        _no_match_reasons(found, entry_type, work, ids, outcomes, near, conflicts)

    for problem in ids.problems:
        if problem.code == "PLACEHOLDER_IDENTIFIER":
            found.add(problem.code, problem.field, problem.message)
    if retraction is not None:
        found.add("RETRACTED", None, retraction.notice_doi or retraction.source)
    for code in extra_reasons:
        found.add(code)

    findings = found.ranked()
    return Judgement(
        ref_key,
        verdict,
        outcomes,
        _item(ref_key, verdict, work, ids, outcomes, findings, near),
        findings,
        retraction,
        conflicts,
        near,
        records[0] if records else None,
    )


def unchecked_words(unchecked: NotChecked) -> str:
    """"offline, no cached answer", "Crossref and OpenAlex unreachable": why a reference is
    not checked, in the words of every front end."""
    if unchecked.kind == "offline":
        return "offline, no cached answer"
    if unchecked.kind == "pending":
        return "not looked up yet"
    names = [LABELS.get(r, r) for r in unchecked.resolvers]
    listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    if unchecked.kind == "budget":
        return f"today's budget spent ({listed})"
    return f"{listed} unreachable"


def _no_match_reasons(
    found: _Findings,
    entry_type: str,
    work: Work,
    ids: ReferenceIds,
    outcomes: Mapping[str, Outcome],
    near: Sequence[Record],
    conflicts: Sequence[FieldConflict],
) -> None:
    """Why nothing matched, in the terms of the reason table (``reasons.py``)."""
    if work.manual:
        found.add("NO_AUTOMATED_SOURCE", None, "a manual entry is not looked up")
        return
    if not work.title and not ids.any:
        found.add("INSUFFICIENT_METADATA", None, "citelsp could not tell the title apart in "
                  "this \\bibitem's text; add its DOI, or check it by hand"
                  if work.formatted else "")
        return
    for c in conflicts:
        found.conflict(c)
    answered = sum(o.status in ("matched", "unmatched") for o in outcomes.values())
    generic = bool(work.title) and is_generic_title(work.title or "")
    if answered == 0:
        unchecked = not_checked(outcomes)
        found.add("UNREACHABLE", None, "no source could be asked" if unchecked is None
                  else unchecked_words(unchecked))
    if generic:
        found.add("GENERIC_TITLE", None, f"\u201c{work.title}\u201d")
    if near:
        found.add("NEAR_MATCH_ONLY", None, "; ".join(f"\u201c{r.title}\u201d" for r in near[:3]))
    chinese = outcomes.get("chinese_literature")
    if chinese is not None and chinese.reason and chinese.status != "matched":
        return  # seed 001: its own row says what applies; general indexes rarely cover it
    if not graded_as_paper(entry_type, work):
        found.add("NO_AUTOMATED_SOURCE", None, f"entry type {entry_type}")
    elif answered >= 2 and not (near or conflicts or generic):
        found.add("NOT_FOUND_IN_INDEXES")
    elif 0 < answered < 2:
        found.add("PARTIAL_COVERAGE")


def _item(
    key: str,
    verdict: Verdict,
    work: Work,
    ids: ReferenceIds,
    outcomes: Mapping[str, Outcome],
    findings: Sequence[Finding],
    near: Sequence[Record],
) -> ChecklistItem | None:
    ranked = [f for f in findings if f.priority is not None]
    if not ranked:
        return None
    top = ranked[0]
    others = list(
        dict.fromkeys(f.reason_code for f in ranked[1:] if f.reason_code != top.reason_code)
    )
    attempts = [
        {"resolver": name, "status": o.status, "queried_by": o.queried_by, "summary": o.summary}
        for name, o in outcomes.items()
    ]
    return ChecklistItem(
        citation_key=key,
        priority=top.priority or "P3",
        reason_code=top.reason_code,
        verdict_contribution=verdict,
        cited_as=_cited_as(work, ids),
        attempts=attempts,
        verification_urls=_urls(work, ids, outcomes, near[:2]),
        human_action=REASONS[top.reason_code].action,
        human_result=None,
        other_reasons=others,
        message=top.message,
    )
