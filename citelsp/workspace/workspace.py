"""The one model both front ends ask: documents, the citation graph, local checks,
verification state and human decisions (in the spirit of texlab's ``base-db``).

The language server feeds it the editor's documents and asks it for each document's problems,
the references under the cursor and a reference's result; ``citelsp check`` builds one from
paths, verifies, and renders its ``snapshot``. Neither front end walks documents or judges
anything itself, so the editor and the command line cannot disagree.
"""

from __future__ import annotations

import logging
import operator
import os
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from citelsp.config import Settings
from citelsp.documents.bibtex import paused_gc
from citelsp.documents.model import (
    PRINTED,
    Bibliography,
    Citation,
    Manuscript,
    Problem,
    Reference,
    Severity,
)
from citelsp.documents.pandoc import is_cross_reference
from citelsp.documents.parse import Document
from citelsp.files import read_bytes
from citelsp.resolution.resolve import unchecked_resolution
from citelsp.spans import Span
from citelsp.uris import path_to_uri, uri_to_path
from citelsp.verdict.decisions import Decision, DecisionStore
from citelsp.verdict.judge import Judgements, judge
from citelsp.verdict.placement import shown
from citelsp.verdict.reasons import PRIORITY_ORDER, severity_priority
from citelsp.workspace.checks import LocalChecks, how_to_name_a_bibliography
from citelsp.workspace.corpus import Corpus, decode_document, note_encoding
from citelsp.workspace.entries import NewEntry, new_entry
from citelsp.workspace.findings import NOTHING, Findings, Slot
from citelsp.workspace.graph import CitationGraph
from citelsp.workspace.problems import decided_problems
from citelsp.workspace.snapshot import ReferenceResult, Snapshot
from citelsp.workspace.suppressions import NONE as NO_SUPPRESSIONS
from citelsp.workspace.suppressions import Suppressions, suppressions
from citelsp.workspace.verification import Listener, Verifier

log = logging.getLogger(__name__)
NO_CITATIONS: tuple[Citation, ...] = ()
NO_PROBLEMS: list[Problem] = []
"""What a document shows of verification while nothing is verified (one object: compared by
identity; never changed)."""


class Workspace:
    def __init__(self, settings: Settings | None = None, roots: Sequence[Path] = (),
                 listener: Listener | None = None, *, scan: bool = True) -> None:
        """``scan``: a manuscript that names no bibliography uses every one in the workspace
        folders (the editor); without it, only the bibliographies given (the command line)."""
        self.listener = listener or Listener()
        self.corpus = Corpus(settings, list(roots), scan=scan)
        self.graph = CitationGraph(self.corpus)
        self.checks = LocalChecks(self.graph)
        self.judgements = Judgements()
        self.verifier = Verifier(self.listener, resolved=self.judgements.of)
        self.decisions = self._decisions_of(self.root)
        self.focus: tuple[str, int] | None = None
        """Where the writer last worked (uri, offset): references cited nearby go first."""
        self._local: dict[str, tuple[int, list[Problem]]] = {}
        self._suppressions: dict[str, tuple[str, Suppressions]] = {}
        self.findings: dict[str, Findings] = {}
        """Each published document's verification findings, kept between publications."""
        self._problems: dict[str, tuple[tuple, list[Problem]]] = {}
        """Each document's problems as last given, with what they were made from."""

    @classmethod
    def for_paths(cls, paths: Sequence[Path], settings: Settings,
                  listener: Listener | None = None, *,
                  folders: Mapping[str, Sequence[Path]] | None = None
                  ) -> tuple[Workspace, list[str]]:
        """A workspace of the given files (as if open in an editor), rooted at their common
        folder, that uses only the bibliographies the manuscripts name or the settings give;
        also a message for every file that could not be used. Files a folder search found
        (``folders``: each folder as written, with those files) that are not manuscripts or
        bibliographies at all (a ``package.json``, an empty or binary file) are passed over in
        silence, unless that leaves the folder with nothing to check."""
        folders = folders or {}
        searched = {path for inside in folders.values() for path in inside}
        workspace = cls(settings, [_common_root(paths)], listener, scan=False)
        errors: list[str] = []
        passed_over: set[Path] = set()
        for path in paths:
            problem = workspace._open_path(path)
            if problem is None:
                continue
            why, not_ours = problem
            if not_ours and path in searched:
                passed_over.add(path)
            else:
                errors.append(f"{path}: {why}")
        errors += folders_without_work(folders, passed_over)
        for doc in workspace.corpus.open_documents():  # a main file's \input chapters
            if isinstance(doc, Manuscript):
                for part in workspace.graph.document_parts(doc):
                    if not workspace.corpus.is_open(path_to_uri(part)):
                        workspace._open_path(part)  # unreadable or empty: nothing to check
        for doc in workspace.corpus.open_documents():
            if isinstance(doc, Manuscript):
                errors += workspace._bibliography_errors(doc)
        return workspace, errors

    def _bibliography_errors(self, manuscript: Manuscript) -> list[str]:
        """Why a manuscript given on the command line has no bibliography to check against."""
        where = uri_to_path(manuscript.uri)
        unreadable = self.graph.unreadable_bibliographies(manuscript)
        if unreadable:
            return [f"{where}: its bibliography {written} cannot be read ({why})"
                    for written, why in unreadable]
        cites = not all(map(is_cross_reference, manuscript.citations))  # a work, not a figure
        if cites and manuscript.inline is None and not [
                b for b in self.graph.bibliographies(manuscript) if b.uri != manuscript.uri]:
            return [f"{where}: no bibliography found: "
                    f"{how_to_name_a_bibliography(manuscript)}, or pass --bib FILE"]
        return []

    def _open_path(self, path: Path) -> tuple[str, bool] | None:
        """Open one file given by path; why it cannot be used, if it cannot, and whether
        that is only because it is not ours (not because it cannot be read)."""
        try:
            data = read_bytes(path)
        except OSError as exc:
            return f"cannot read ({exc.strerror or exc})", False
        not_ours: str | None = None
        if not data.strip():
            not_ours = "empty file"
        elif b"\0" in data[:8192]:
            not_ours = "a binary file, not a manuscript or bibliography"
        else:
            decoded = decode_document(data)
            doc = self.open(path_to_uri(path), decoded.text)
            note_encoding(doc, decoded)
            if doc is None and path.suffix.lower() == ".bbl":
                not_ours = "a .bbl without \\bibitem or biber entries (a failed BibTeX run?)"
            elif doc is None:
                not_ours = ("not a manuscript (Markdown, LaTeX) or a bibliography (BibTeX, "
                            "CSL-JSON, CSL-YAML)")
            elif isinstance(doc, Bibliography) and not doc.references and not doc.problems:
                if doc.other_types:  # macros or glossary entries: left alone, as in an editor
                    self.listener.notice(
                        f"citelsp: {path}: {_holding(doc.other_types)}, no works: left alone")
                    return None
                kind = {"bibtex": "BibTeX entries", "bibitem": "\\bibitem entries",
                        "bbl": "biber entries"}.get(doc.source_format, "CSL items")
                not_ours = f"no {kind} found: not a bibliography"
        return None if not_ours is None else (not_ours, True)

    # -- settings and roots ----------------------------------------------------------------

    @property
    def settings(self) -> Settings:
        return self.corpus.settings

    @property
    def root(self) -> Path:
        return self.corpus.roots[0] if self.corpus.roots else Path.cwd()

    async def configure(self, settings: Settings) -> None:
        """New settings: bibliographies are worked out again and the engine is rebuilt when
        what it uses changed (answers already known stay). A refused setting is told once."""
        for message in settings.refused:
            if message not in self.corpus.settings.refused:
                self.listener.notice(message)
        self.corpus.settings = settings
        self.corpus.invalidate()
        self.graph.reset()
        await self.verifier.configure(settings)

    def set_roots(self, roots: Sequence[Path]) -> None:
        self.corpus.roots = list(roots)
        self.corpus.invalidate()
        self.graph.reset()
        self.decisions = self._decisions_of(self.root)

    def _decisions_of(self, root: Path) -> DecisionStore:
        """The human decisions at ``root``; the writer is told when those on file cannot be
        applied (never a silent empty list: it would drop rejections)."""
        store = DecisionStore(root)
        store.load()
        if store.problem:
            self.listener.notice(store.problem)
        return store

    # -- documents -------------------------------------------------------------------------

    def open(self, uri: str, text: str, *, language: str | None = None) -> Document | None:
        """A document opened or edited: parsed, and its place in the graph updated."""
        doc = self.corpus.update(uri, text, language=language)
        if doc is not None:
            self.graph.update(doc)
            self.checks.parsed(doc)
            self._absorb(doc)
        return doc

    def _absorb(self, doc: Document) -> None:
        """The document's findings take in the entries its new parse replaced, now, while
        they hold the parse it was made from (else its next publication compares them all)."""
        findings = self.findings.get(doc.uri)
        try:
            if findings is not None:
                findings.absorb(doc, self.verifier.identity_if_known)
        except Exception:  # never in the way of the parse: built afresh when next published
            log.exception("keeping the findings of %s", doc.uri)
            self.findings.pop(doc.uri, None)

    def close(self, uri: str) -> None:
        """A document closed: forget it, unless an open manuscript still uses it as a
        bibliography (then its copy on disk takes over)."""
        self.corpus.close(uri)
        if self.graph.users(uri):
            self.corpus.load(uri)
        else:
            self.graph.remove(uri)
        self.checks.forget(uri)
        self._local.pop(uri, None)
        self._suppressions.pop(uri, None)
        self.findings.pop(uri, None)
        self._problems.pop(uri, None)

    def files_changed(self, uris: Iterable[str] | None = None) -> None:
        """Files changed on disk (None: any may have)."""
        if uris is None:
            self.corpus.invalidate()
        else:
            for uri in uris:
                self.corpus.invalidate(uri)
        self.graph.reset()

    def document(self, uri: str) -> Document | None:
        return self.corpus.get(uri)

    def open_uris(self) -> list[str]:
        return [u for u, d in self.corpus.open.items() if d is not None]

    # -- results ---------------------------------------------------------------------------

    def decision_identity(self, ref: Reference) -> str:
        """What a human decision is keyed by, with the key: the identity a
        resolution is stored under, less the journal coordinates it adds for Chinese
        literature (``reference_identity``)."""
        return self.verifier.identity(ref).partition(":")[0]

    def result(self, ref: Reference, citations: Iterable[Citation] = ()) -> ReferenceResult | None:
        """The verdict for ``ref`` from its stored resolution with the human decision; None
        while it has not been checked."""
        resolution = self.verifier.result_for(ref)
        if resolution is None:
            return None
        judgement = self.judgements.of(ref, resolution)
        decision, stale = self.decisions.get(ref.key, self.decision_identity(ref))
        return ReferenceResult(ref, resolution, judgement, decision, stale, tuple(citations))

    def pending(self, ref: Reference) -> bool:
        return self.verifier.pending(ref)

    def _not_yet(self, ref: Reference) -> ReferenceResult | None:
        """A reference verification has not answered for yet, as reports list it: "not
        checked" (offline, or not looked up yet), so a checklist written while verification
        runs lists every reference the status counts. None when nothing is verified."""
        if self.verifier.engine is None:
            return None
        resolution = unchecked_resolution(ref, "offline" if self.verifier.offline else "pending",
                                          "not looked up yet")
        decision, stale = self.decisions.get(ref.key, self.decision_identity(ref))
        return ReferenceResult(ref, resolution, judge(ref, resolution), decision, stale,
                               tuple(self.graph.citations_of(ref)))

    # -- problems --------------------------------------------------------------------------

    def local_problems(self, uri: str) -> list[Problem]:
        """Local findings of one document, recomputed only when the corpus changed (the
        same list object until then, and after it for a bibliography whose entries, co-used
        bibliographies and cited keys stayed: ``LocalChecks``)."""
        memo = self._local.get(uri)
        if memo is not None and memo[0] == self.corpus.generation:
            return memo[1]
        doc = self.corpus.get(uri)
        try:
            problems = self.checks.problems(doc) if doc is not None else []
        except Exception as exc:  # one document's bug must not stop the others
            log.exception("local checks failed on %s", uri)
            problems = [internal_error(exc)]
        self._local[uri] = (self.corpus.generation, problems)
        return problems

    def problems(self, uri: str, minimum: str | None = None) -> list[Problem]:
        """Every problem of one document, local and verification, with human decisions
        applied and filtered by the lowest priority shown (``minimum``, else the setting):
        what the editor shows and the command line prints. The same list object while
        nothing it depends on changed (a publication of an unchanged document costs
        nothing); never change it."""
        doc = self.corpus.get(uri)
        if doc is None:
            return []
        minimum = minimum or self.settings.min_priority
        local = self.local_problems(uri)
        try:
            verification = self._verification_problems(doc, minimum)
        except Exception as exc:  # the local findings still show
            log.exception("verification findings failed on %s", uri)
            self.findings.pop(uri, None)  # half updated: built afresh next time
            verification = [internal_error(exc)]
        ignored = self.settings.ignore
        hidden = self._suppressed(doc)
        made_from = (local, verification, minimum, ignored, hidden)
        memo = self._problems.get(uri)
        if memo is not None and all(map(operator.is_, memo[0], made_from)):
            return memo[1]
        found = [p for p in local if shown(severity_priority(p.severity), minimum)]
        found += verification
        if isinstance(doc, Manuscript) and len(found) > 1:
            # a citation of a key two entries define: one finding per place, not two
            found = list({(p.code, p.span, p.message): p for p in found}.values())
        if ignored or hidden is not NO_SUPPRESSIONS:
            found = [p for p in found if p.code not in ignored and not hidden.hides(p)]
        self._problems[uri] = (made_from, found)
        return found

    def _verification_problems(self, doc: Document, minimum: str) -> list[Problem]:
        """The verification findings of ``doc``, in the order its references are shown;
        built again only for the references whose resolution, identity, human decision or
        citations changed, or that an edit replaced or moved (``Findings``)."""
        verifier = self.verifier
        if not verifier.results:
            self.findings.pop(doc.uri, None)
            return NO_PROBLEMS
        findings = self.findings.get(doc.uri)
        if findings is None:
            findings = self.findings[doc.uri] = Findings()
        generation = self.corpus.generation
        with paused_gc():  # tens of thousands of small, acyclic objects
            reshaped = findings.doc is not doc or (isinstance(doc, Manuscript)
                                                   and findings.generation != generation)
            if reshaped and not findings.absorb(doc, verifier.identity_if_known):
                findings.reshape(doc, self._shown_on(doc), verifier.identity_if_known)
            findings.generation = generation
            basis = (minimum, self.decisions, self.decisions.version)
            return findings.update(basis, verifier.results, verifier.named,
                                   verifier.identity_if_known,
                                   lambda slot: self._place(slot, doc.uri, minimum))

    def _place(self, slot: Slot, uri: str, minimum: str) -> None:
        """One reference's findings in ``uri``, kept while nothing they depend on changed.
        An entry that an edit above it moved has its findings in its own file moved with it
        (a keystroke in a 20,000-entry library does not place the half below it again)."""
        ref = slot.ref
        resolution = self.verifier.result_for(ref)
        if resolution is None:
            slot.resolution, slot.placed = None, NOTHING
            return
        decision, stale = self.decisions.get(ref.key, self.decision_identity(ref))
        decided = (decision, stale, minimum)
        span = ref.span
        if slot.resolution is resolution and slot.decided == decided and slot.span is not None:
            if slot.span == span:
                return
            if uri == ref.uri and (moved := _moved(slot.placed, uri, slot.span, span)) is not None:
                slot.placed, slot.span = moved or NOTHING, span
                return
        result = self.result(ref, slot.citations)
        placed = [] if result is None else [
            p for u, p in decided_problems(result, minimum) if u == uri]
        slot.resolution, slot.decided, slot.span = resolution, decided, span
        slot.placed = placed or NOTHING

    def _suppressed(self, doc: Document) -> Suppressions:
        memo = self._suppressions.get(doc.uri)
        if memo is not None and memo[0] is doc.text:
            return memo[1]
        found = suppressions(doc)
        self._suppressions[doc.uri] = (doc.text, found)
        return found

    def _shown_on(self, doc: Document) -> Iterable[tuple[Reference, Sequence[Citation]]]:
        """The references whose verification shows on ``doc``, each with its citations in
        ``doc``: the entries of a bibliography, the cited and front-matter references of a
        manuscript."""
        if isinstance(doc, Bibliography):
            return ((ref, NO_CITATIONS) for ref in doc.references)
        shown_refs: dict[int, tuple[Reference, list[Citation]]] = {}
        for ref in doc.inline.references if doc.inline is not None else ():
            shown_refs.setdefault(id(ref), (ref, []))
        for citation, refs in self.graph.cited(doc):
            if citation.wildcard:
                continue
            for ref in refs:
                shown_refs.setdefault(id(ref), (ref, []))[1].append(citation)
        return list(shown_refs.values())

    # -- verification ----------------------------------------------------------------------

    def wanted(self) -> list[Reference]:
        """References of the open documents, most urgent first: those cited nearest the
        cursor in the focused manuscript, then the other open manuscripts', then open
        bibliographies'."""
        focus_uri, focus_offset = self.focus or (None, None)
        docs = sorted(self.corpus.open_documents(), key=lambda d: d.uri != focus_uri)
        ordered: list[Reference] = []
        for doc in docs:
            if not isinstance(doc, Manuscript):
                continue
            cited = self.graph.cited(doc)
            if doc.uri == focus_uri and focus_offset is not None:
                cited.sort(key=lambda pair: abs(pair[0].span.start - focus_offset))
            for _citation, refs in cited:
                ordered += refs
            if doc.inline is not None:
                ordered += doc.inline.references
            for bib in self.graph.bibliographies(doc):  # a .bbl is printed whole
                if bib.source_format in PRINTED and bib.uri != doc.uri:
                    ordered += bib.references
        for doc in docs:
            if isinstance(doc, Bibliography):
                refs = list(doc.references)
                if doc.uri == focus_uri and focus_offset is not None:
                    refs.sort(key=lambda r: abs(r.start - focus_offset))
                ordered += refs
        return ordered

    async def want(self) -> None:
        """Make sure every wanted reference has or gets a resolution (in the background);
        nothing to order while verification is off."""
        if self.verifier.engine is not None:
            await self.verifier.want(self.wanted())

    async def verify_now(self, *, refresh: bool = False) -> None:
        """Resolve every wanted reference and wait (the command line)."""
        await self.verifier.configure(self.settings)
        await self.verifier.verify_now(self.wanted(), refresh=refresh)

    def references(self, keys: set[str] | None = None) -> list[Reference]:
        """The open documents' references, those of their bibliographies included (all, or
        those with the given keys)."""
        found: dict[int, Reference] = {}
        for doc in self.corpus.open_documents():
            bibs = self.graph.bibliographies(doc) if isinstance(doc, Manuscript) else [doc]
            for bib in bibs:
                for ref in bib.references:
                    if keys is None or ref.key in keys:
                        found.setdefault(id(ref), ref)
        return list(found.values())

    def entries(self, key: str) -> list[Reference]:
        """Every entry with ``key``: in the ``citelsp.bibliography`` files when set, else
        anywhere in the workspace."""
        named = [self.corpus.load(path_to_uri(self.corpus.setting_path(p)))
                 for p in self.settings.bibliography]
        if named:
            return [r for b in named if isinstance(b, Bibliography)
                    for r in self.graph.key_index(b).get(key, ())]
        for _ in self.graph.read_workspace():
            pass
        return self.graph.entries(key)

    def reverify(self, keys: set[str] | None = None) -> int:
        """Look references up again now, bypassing the cache: those the editor shows (the
        open documents' cited ones and open bibliographies' entries, most urgent first), or
        the entries with ``keys``; how many were queued (none offline). Not every entry of
        a library the manuscript names: its 20,000 uncited entries would be asked for at
        the services' rate limits, for hours."""
        refs = list({id(ref): ref for ref in self.wanted()}.values()) if keys is None \
            else self.references(keys)
        self.verifier.back_online()
        return len(refs) if self.verifier.reverify(refs) else 0

    def clear_cache(self) -> int | None:
        """Forget every stored answer, on disk and in memory; None. A cache the team shares
        is not emptied from one writer's editor (the team's answers and the requests they
        cost would go with it): the open documents' references are looked up again instead,
        and their fresh answers replace the shared ones; how many were queued."""
        engine = self.verifier.engine
        if engine is not None and engine.cache is not None and engine.cache.shared:
            return self.reverify()
        if engine is not None:
            engine.clear_cache()
        self.verifier.forget()
        return None

    async def new_entry(self, manuscript_uri: str, key: str, identifier: str) -> NewEntry:
        """An entry for ``key`` built from what a DOI or arXiv id names, for the manuscript's
        first bibliography file that holds works (not TeX's ``IEEEabrv.bib``, not a file of
        ``@string`` macros); ``ValueError`` says why there is none."""
        doc = self.corpus.get(manuscript_uri)
        if not isinstance(doc, Manuscript):
            raise ValueError("entries are created from a citation in a manuscript")
        bibs = [b for b in self.graph.bibliographies(doc)
                if b.uri != doc.uri and b.uri not in self.graph.in_tex_trees]
        if not bibs:
            raise ValueError("this manuscript has no bibliography file to add the entry to")
        bibs.sort(key=lambda b: not b.references)  # a file of works, not one of @string macros
        engine = self.verifier.engine
        if engine is None:
            raise ValueError("looking works up is switched off (citelsp.verify)")
        record = await engine.record_for(identifier.strip())
        if isinstance(record, str):
            raise ValueError(record)
        return new_entry(bibs[0], key, record)

    def record(self, decision: Decision) -> None:
        """Store a human decision (raises ``PermanentRejection`` over a rejection)."""
        self.decisions.record(decision)

    # -- reports ---------------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        """Every open document and the bibliographies its manuscripts use, their problems,
        and every checked reference, as the reports render them."""
        documents: dict[str, Document] = {}
        for doc in self.corpus.open_documents():
            documents[doc.uri] = doc
            if isinstance(doc, Manuscript):
                for bib in self.graph.bibliographies(doc):
                    if bib.uri != doc.uri:
                        documents.setdefault(bib.uri, bib)
        problems = [(uri, p) for uri in sorted(documents) for p in self.problems(uri)]
        results: dict[int, ReferenceResult] = {}
        for ref in self.wanted():
            if id(ref) not in results and (found := self.result(
                    ref, self.graph.citations_of(ref)) or self._not_yet(ref)) is not None:
                results[id(ref)] = found
                if (home := self.corpus.get(ref.uri)) is not None:
                    documents.setdefault(ref.uri, home)
        ordered = sorted(results.values(), key=lambda r: (r.reference.uri,
                                                          r.reference.span.start))
        return Snapshot(documents, problems, ordered, minimum=self.settings.min_priority,
                        hidden=self._hidden(documents))

    def _hidden(self, documents: Iterable[str]) -> dict[str, int]:
        """Priority → findings the minimum priority hides (none when it hides nothing)."""
        minimum = self.settings.min_priority
        if minimum == PRIORITY_ORDER[-1]:
            return {}
        hidden: dict[str, int] = {}
        for uri in documents:
            for p in self.problems(uri, minimum=PRIORITY_ORDER[-1]):
                priority = p.priority or severity_priority(p.severity)
                if not p.on_citation and not shown(priority, minimum):
                    hidden[priority] = hidden.get(priority, 0) + 1
        return hidden


def internal_error(exc: Exception) -> Problem:
    """What a document shows when citelsp itself failed on it (a bug, never the data's
    fault): said on that document, while the others are checked as usual."""
    return Problem(code="INTERNAL_ERROR", span=Span(0, 0), severity=Severity.ERROR,
                   message=f"citelsp could not check this document ({type(exc).__name__}: "
                           f"{str(exc)[:200]}); please report it")


def _moved(problems: Sequence[Problem], uri: str, was: Span, now: Span
           ) -> list[Problem] | None:
    """``problems`` of an entry that moved from ``was`` to ``now`` unchanged, moved with it;
    None when one of them (or a place it names in ``uri``) lies outside the entry, where
    the edit may have been."""
    delta = now.start - was.start
    if now.end - was.end != delta:
        return None
    moved = []
    for p in problems:
        spans = [p.span, *(r.span for r in p.related if r.uri == uri)]
        if not all(was.start <= s.start and s.end <= was.end for s in spans):
            return None
        related = tuple(replace(r, span=r.span.shifted(delta)) if r.uri == uri else r
                        for r in p.related)
        moved.append(replace(p, span=p.span.shifted(delta), related=related))
    return moved


def _holding(types: Sequence[str]) -> str:
    """"only @string macros", "only @entry, @symbol entries (glossary or tool data)"."""
    if list(types) == ["string"]:
        return "only @string macros"
    named = [f"@{t}" for t in types if t != "string"]
    listed = ", ".join(named[:3]) + (", …" if len(named) > 3 else "")
    return f"only {listed} entries (glossary or tool data)"


def folders_without_work(folders: Mapping[str, Sequence[Path]],
                         passed_over: Collection[Path] = ()) -> list[str]:
    """A message for each searched folder that leaves nothing to check: none of its files
    is a manuscript or bibliography, or every one was passed over as not ours."""
    return [f"{folder}: no manuscript or bibliography in this directory"
            for folder, inside in folders.items() if all(p in passed_over for p in inside)]


def _common_root(paths: Sequence[Path]) -> Path:
    try:
        return Path(os.path.commonpath([p.resolve().parent for p in paths]))
    except ValueError:
        return Path.cwd()
