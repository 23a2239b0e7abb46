"""The single table of reason codes: priority, severity, plain-words summary, field, action.

Priority is a human's workload order, not a suspicion score. Only P0
summaries may say an identifier "does not exist" or "names another work"; the word
"fabricated" is never in this table — only a "false" verdict's message may add it.
"""

from __future__ import annotations

from dataclasses import dataclass

from citelsp.documents.model import Severity

README_URL = "https://github.com/citelsp/citelsp/blob/main/README.md"

PRIORITY_ORDER: tuple[str, ...] = ("P0", "P1", "P2", "P3")
"""Most urgent first."""

_PRIORITY_SEVERITY = {
    "P0": Severity.ERROR,
    "P1": Severity.WARNING,
    "P2": Severity.INFORMATION,
    "P3": Severity.HINT,
}


_SEVERITY_PRIORITY = {severity: priority for priority, severity in _PRIORITY_SEVERITY.items()}


@dataclass(frozen=True)
class ReasonInfo:
    code: str
    priority: str | None
    """P0..P3 for verification reasons; ``None`` for local checks (never a checklist item)."""
    severity: Severity
    summary: str
    field: str | None
    """Logical field a diagnostic about this reason goes on (``None``: the entry key, or
    the field named by each conflict or problem)."""
    action: str = ""
    """What the human should do (checklist ``human_action``)."""
    local: bool = False
    """Also found by the local checks, which show it on its field at once: the verification
    adds it to the checklist item (and so to the citations), not to the field again."""


def priority_severity(priority: str) -> Severity:
    return _PRIORITY_SEVERITY[priority]


def severity_priority(severity: Severity) -> str:
    """The priority a local finding counts as (``--fail-on``, ``minPriority``): Error as P0,
    Warning as P1, Information as P2, Hint as P3."""
    return _SEVERITY_PRIORITY[severity]


def priority_rank(priority: str | None) -> int:
    """Sort key: P0 first, local-only reasons last."""
    return PRIORITY_ORDER.index(priority) if priority in PRIORITY_ORDER else len(PRIORITY_ORDER)


def doc_url(code: str) -> str:
    """The README section explaining a code (the diagnostic's ``codeDescription``)."""
    return f"{README_URL}#{code.lower()}"


_CHECK_DOI = "Open the DOI link and compare the landing page with the cited work."
_CHECK_ARXIV = "Open the arXiv link and compare the listing with the cited work."
_SEARCH = "Search for the title and confirm the work exists as cited."
_COMPARE = "Compare the cited fields with the matched record and correct the entry."

_TABLE: tuple[tuple[str, str, str, str | None, str], ...] = (
    # P0 — identifier evidence.
    (
        "DOI_REFUTED",
        "P0",
        "The cited DOI does not exist in the DOI registry",
        "doi",
        "Find the work's real DOI (or remove the DOI) and check the work exists.",
    ),
    (
        "ARXIV_ID_REFUTED",
        "P0",
        "The cited arXiv id does not exist",
        "arxiv",
        "Find the work's real arXiv id (or remove it) and check the work exists.",
    ),
    (
        "DOI_TITLE_MISMATCH",
        "P0",
        "The cited DOI names another work: its title and its first author or year differ",
        "doi",
        "Open the DOI: if it is another work, find the cited work's own identifier.",
    ),
    (
        "ARXIV_TITLE_MISMATCH",
        "P0",
        "The cited arXiv id names another work: its title and its first author or year differ",
        "arxiv",
        "Open the arXiv page: if it is another work, find the cited work's own id.",
    ),
    # P1
    (
        "NOT_FOUND_IN_INDEXES",
        "P1",
        "No index that answered has this article or paper by identifier or exact title",
        None,
        _SEARCH,
    ),
    (
        "NEAR_MATCH_ONLY",
        "P1",
        "Only similar titles were found, none equal to the cited title",
        "title",
        "Check whether a similar title is the cited work and correct the entry.",
    ),
    (
        "DOI_TITLE_UNCONFIRMED",
        "P1",
        "The DOI's record has a different title, without a conflicting author or year",
        "doi",
        _CHECK_DOI,
    ),
    (
        "ARXIV_TITLE_UNCONFIRMED",
        "P1",
        "The arXiv record has a different title, without a conflicting author or year",
        "arxiv",
        _CHECK_ARXIV,
    ),
    (
        "PLACEHOLDER_IDENTIFIER",
        "P1",
        "A DOI or arXiv id is still to be filled in (a placeholder stands in its place)",
        None,
        "Fill in the work's real identifier (or remove the field) and check the work exists.",
    ),
    ("METADATA_CONFLICT", "P1", "Cited fields disagree with the indexed record", None, _COMPARE),
    (
        "RETRACTED",
        "P1",
        "The cited work has a retraction notice",
        "doi",
        "Read the retraction notice and decide whether the citation should stay.",
    ),
    (
        "PUBMED_INDEXED_BUT_COORDINATE_MISS",
        "P1",
        "PubMed indexes the journal but has no article at the cited volume and page",
        None,
        "Check the journal issue for the cited article.",
    ),
    (
        "PUBMED_COORDINATE_AMBIGUOUS",
        "P1",
        "Several PubMed records share the cited journal, volume and page",
        None,
        "Check which record, if any, is the cited article.",
    ),
    # P2
    (
        "DOI_EXISTS_TITLE_UNVERIFIABLE",
        "P2",
        "The DOI is registered, but its title could not be compared with the cited title",
        "doi",
        _CHECK_DOI,
    ),
    (
        "DOI_RA_UNRESOLVED",
        "P2",
        "The DOI's registration agency could not be determined",
        "doi",
        _CHECK_DOI,
    ),
    (
        "GENERIC_TITLE",
        "P2",
        "The title is generic (e.g. \u201cEditorial\u201d) and cannot be matched on title alone",
        "title",
        "Add the DOI, or check the journal issue for the cited item.",
    ),
    (
        "METADATA_DETAIL",
        "P2",
        "Issue, article number or a non-numeric volume or page differs from the indexed record",
        None,
        _COMPARE,
    ),
    (
        "VENUE_UNCONFIRMED",
        "P2",
        "Venue not confirmed: only a preprint is known",
        "venue",
        "Check that the work appeared in the cited venue (the published version may not be"
        " indexed yet).",
    ),
    (
        "UNREACHABLE",
        "P2",
        "Not checked",
        None,
        "Re-verify when online, or check the work by hand.",
    ),
    ("PARTIAL_COVERAGE", "P2", "Not found, and fewer than two indexes answered", None, _SEARCH),
    (
        "PUBMED_COORDINATE_CANDIDATE_UNVERIFIED",
        "P2",
        "PubMed has a candidate at the cited coordinates, but its title could not be bound",
        None,
        "Compare the PubMed candidate with the cited work.",
    ),
    # P3
    (
        "NO_AUTOMATED_SOURCE",
        "P3",
        "No automated source covers this kind of entry (manual entry, book, thesis, report, "
        "software, web page or dataset)",
        None,
        _SEARCH,
    ),
    (
        "INSUFFICIENT_METADATA",
        "P3",
        "The entry has neither a title nor an identifier",
        None,
        "Add the title and, if it has one, the DOI or arXiv id.",
    ),
    (
        "INSUFFICIENT_PUBMED_COORDINATES",
        "P3",
        "The entry lacks the journal, volume or page needed for a PubMed lookup",
        None,
        _SEARCH,
    ),
    ("NO_ISSN_MAPPING", "P3", "The journal has no ISSN mapping for a PubMed lookup", None, _SEARCH),
    ("JOURNAL_NOT_INDEXED", "P3", "The journal is not indexed by PubMed", None, _SEARCH),
    (
        "DOI_RA_OUT_OF_SCOPE",
        "P3",
        "The DOI's registration agency offers no metadata this tool can read",
        "doi",
        _CHECK_DOI,
    ),
    (
        "NCBI_EMAIL_MISSING",
        "P3",
        "PubMed was not asked: no NCBI email is configured (CITELSP_NCBI_EMAIL)",
        None,
        "Set an NCBI email to enable PubMed checks, or check the work by hand.",
    ),
)

_LOCAL: tuple[tuple[str, Severity, str, str | None], ...] = (
    ("DANGLING_CITATION", Severity.ERROR, "The cited key is in no bibliography", None),
    ("ORPHAN_REFERENCE", Severity.HINT, "The entry is never cited", None),
    ("DUPLICATE_KEY", Severity.ERROR, "The same key is defined more than once", None),
    ("DUPLICATE_WORK", Severity.WARNING, "Another entry cites the same work", None),
    ("MALFORMED_ENTRY", Severity.ERROR, "The entry could not be read", None),
    ("DUPLICATE_FIELD", Severity.WARNING, "A field is given twice in one entry", None),
    ("UNDEFINED_MACRO", Severity.WARNING, "A @string macro is used but never defined", None),
    ("UNDEFINED_CROSSREF", Severity.WARNING, "The entry's crossref names no entry", None),
    ("FILE_ENCODING", Severity.WARNING, "The file is not UTF-8; its encoding was guessed",
     None),
    ("MALFORMED_MARKER", Severity.ERROR, "The marker could not be read", None),
    ("INVALID_IDENTIFIER", Severity.WARNING, "The DOI or arXiv id cannot be valid", None),
    ("NO_LOCATOR", Severity.WARNING, "The ref marker has no anchor", None),
    ("BAD_ANCHOR", Severity.WARNING, "The anchor is malformed", None),
    ("HUMAN_REJECTED", Severity.ERROR, "A human rejected this reference", None),
    ("FIELD_TOO_LONG", Severity.WARNING, "A field is too long to be read", None),
    ("UNREADABLE_BIBLIOGRAPHY", Severity.ERROR, "A named bibliography cannot be read", None),
    ("INTERNAL_ERROR", Severity.ERROR, "citelsp failed on this document", None),
)

_ALSO_LOCAL = frozenset({"PLACEHOLDER_IDENTIFIER"})

REASONS: dict[str, ReasonInfo] = {
    **{
        code: ReasonInfo(code, priority, priority_severity(priority), summary, field, action,
                         code in _ALSO_LOCAL)
        for code, priority, summary, field, action in _TABLE
    },
    **{
        code: ReasonInfo(code, None, severity, summary, field)
        for code, severity, summary, field in _LOCAL
    },
}
