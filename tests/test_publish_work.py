"""Publishing a document again costs what changed: the references whose result, identity,
human decision or citations changed, and the entries an edit replaced or moved, are placed
again; the rest is kept. Every publication here is also compared with a workspace that
builds everything afresh, so keeping never shows what building would not."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import operator
import random
from dataclasses import replace
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.protocol import default_converter

from citelsp.config import Settings
from citelsp.documents.bibtex import paused_gc
from citelsp.documents.model import Reference
from citelsp.lsp.convert import Diagnostics, lsp_position
from citelsp.lsp.session import YOUNG_BACKLOG, CitelspServer, collect_young_objects
from citelsp.resolution.asking import Resolution
from citelsp.resolution.identity import reference_ids
from citelsp.resolution.outcome import Outcome, Record
from citelsp.spans import LineIndex
from citelsp.verdict.decisions import Decision, DecisionStore, PermanentRejection
from citelsp.workspace import Workspace
from citelsp.workspace.findings import Findings
from citelsp.workspace.verification import Results

ENTRIES = 40


def entry(i: int, title: str | None = None, journal: str = "Journal of Work") -> str:
    return (f"@article{{k{i},\n  title = {{{title or f'Work number {i}'}}},\n"
            f"  author = {{Doe, Jane}},\n  journal = {{{journal}}},\n  year = {{2020}},\n"
            f"  doi = {{10.1000/w{i}}},\n}}\n\n")


BIB = "".join(entry(i) for i in range(ENTRIES))
PAPER = "---\nbibliography: refs.bib\n---\nSee [@k3; @k20] and @k30, then @k3 again.\n"


def resolution(ref: Reference, kind: str) -> Resolution:
    """What verification found: ``clean`` (two sources matched it), ``refuted`` (its DOI
    does not exist) or ``missing`` (no source has it)."""
    record = Record("crossref", title=ref.fields["title"].value)
    outcomes = {
        "clean": {s: Outcome(s, "matched", "id", "found", record=record)
                  for s in ("crossref", "openalex")},
        "refuted": {"crossref": Outcome("crossref", "unmatched", "id", "DOI does not exist",
                                        reason="DOI_REFUTED", refutes_identifier=True)},
        "missing": {s: Outcome(s, "unmatched", "title", "no match")
                    for s in ("crossref", "openalex")},
    }[kind]
    return Resolution(ref.key, reference_ids(ref), outcomes)


REFUTED = ["DOI_REFUTED", "PARTIAL_COVERAGE"]
"""The findings of a refuted DOI that one source alone was asked about."""


def first_kind(i: int) -> str:
    return ("clean", "refuted", "missing")[i % 3]


class Published:
    """A workspace with the library (and the paper) open and every entry verified, which
    records what each publication visits (``_place``) and builds anew (``result``)."""

    def __init__(self, root: Path, monkeypatch, settings: Settings | None = None,
                 paper: bool = False) -> None:
        self.root = root
        self.uris = {}
        for name, text in (("refs.bib", BIB), ("paper.md", PAPER)):
            (root / name).write_text(text, encoding="utf-8")
            self.uris[name] = (root / name).resolve().as_uri()
        self.ws = ws = Workspace(settings or Settings(verify=False), [root])
        ws.open(self.bib, BIB)
        if paper:
            ws.open(self.uris["paper.md"], PAPER)
        for i, ref in enumerate(self.refs()):
            self.resolve(ref, first_kind(i))
        self.visited: list[str] = []
        self.built: list[str] = []
        place, result = ws._place, ws.result

        def counted_place(slot, uri, minimum):
            self.visited.append(slot.ref.key)
            place(slot, uri, minimum)

        def counted_result(ref, citations=()):
            self.built.append(ref.key)
            return result(ref, citations)

        monkeypatch.setattr(ws, "_place", counted_place)
        monkeypatch.setattr(ws, "result", counted_result)

    @property
    def bib(self) -> str:
        return self.uris["refs.bib"]

    def refs(self) -> list[Reference]:
        return list(self.ws.document(self.bib).references)

    def ref(self, key: str) -> Reference:
        return next(r for r in self.refs() if r.key == key)

    def resolve(self, ref: Reference, kind: str) -> None:
        """A result arrives (the verifier gives the reference its identity first)."""
        verifier = self.ws.verifier
        verifier.results[verifier.identity(ref)] = resolution(ref, kind)

    def publish(self, uri: str | None = None) -> list:
        """The problems of ``uri`` (the library), checked against a fresh build; what this
        publication visited and built is in ``visited`` and ``built``."""
        uri = uri or self.bib
        self.visited.clear()
        self.built.clear()
        found = self.ws.problems(uri)
        assert _shown(found) == _shown(afresh(self.ws, self.root).problems(uri))
        return found


def afresh(ws: Workspace, root: Path) -> Workspace:
    """A new workspace with the same open texts and settings, and the results of the
    references ``ws`` has identified (an edited entry not looked at yet has none there)."""
    other = Workspace(ws.settings, [root])
    for uri, doc in ws.corpus.open.items():
        if doc is not None:
            other.open(uri, doc.text)
    known = {(r.uri, r.key, r.start): ws.verifier.identity_if_known(r)
             for r in ws.references()}
    for ref in other.references():
        identity = known.get((ref.uri, ref.key, ref.start))
        if identity is not None and identity in ws.verifier.results:
            other.verifier.results[other.verifier.identity(ref)] = ws.verifier.results[identity]
    return other


def _shown(problems) -> list[tuple]:
    return [(p.code, p.span, p.message, p.severity, p.related) for p in problems]


def codes_of(problems, key: str) -> list[str]:
    return sorted(p.code for p in problems if p.key == key)


def test_a_publication_with_nothing_changed_visits_nothing(tmp_path, monkeypatch):
    pub = Published(tmp_path, monkeypatch)
    first = pub.publish()
    assert len(pub.visited) == ENTRIES
    again = pub.publish()
    assert pub.visited == [] and pub.built == []
    assert again is first  # the same list: the server skips sending it again


def test_one_result_arriving_places_that_reference_alone(tmp_path, monkeypatch):
    pub = Published(tmp_path, monkeypatch)
    pub.publish()
    assert codes_of(pub.publish(), "k6") == []  # k6 is clean
    pub.resolve(pub.ref("k6"), "refuted")
    assert codes_of(pub.publish(), "k6") == REFUTED
    assert pub.visited == ["k6"] and pub.built == ["k6"]
    pub.resolve(pub.ref("k7"), "clean")  # a finding goes away
    assert codes_of(pub.publish(), "k7") == []
    assert pub.visited == ["k7"] and pub.built == ["k7"]


def test_a_result_for_a_reference_another_document_shows_visits_nothing_here(
        tmp_path, monkeypatch):
    pub = Published(tmp_path, monkeypatch)
    pub.publish()
    pub.ws.verifier.results["some other work"] = pub.ws.verifier.results[
        pub.ws.verifier.identity(pub.ref("k1"))]
    pub.publish()
    assert pub.visited == []


def test_an_edit_of_one_entry_places_it_and_moves_the_findings_below(tmp_path, monkeypatch):
    pub = Published(tmp_path, monkeypatch)
    pub.publish()
    text = BIB.replace("Work number 20}", "Work number 20, revised}")
    pub.ws.open(pub.bib, text)
    found = pub.publish()
    assert pub.built == [], "nothing is judged again: the edited entry has no result yet"
    below = {f"k{i}" for i in range(21, ENTRIES) if first_kind(i) != "clean"}
    assert set(pub.visited) == {"k20"} | below  # the edited entry, and findings that moved
    assert codes_of(found, "k20") == []  # its old verdict is gone at once
    edited = pub.ref("k20")
    pub.ws.verifier.identity(edited)  # the verifier looks at it: a new work, not known
    pub.publish()
    assert pub.visited == ["k20"] and pub.built == []
    pub.resolve(edited, "refuted")
    assert codes_of(pub.publish(), "k20") == REFUTED
    assert pub.visited == ["k20"] and pub.built == ["k20"]


def test_an_edit_that_keeps_the_identity_shows_the_known_verdict_once_looked_at(
        tmp_path, monkeypatch):
    pub = Published(tmp_path, monkeypatch)
    pub.publish()
    pub.ws.open(pub.bib, BIB.replace(entry(4), entry(4, journal="J. Work")))  # k4: refuted
    assert codes_of(pub.publish(), "k4") == []
    pub.ws.verifier.identity(pub.ref("k4"))  # the same work: its resolution is known
    assert codes_of(pub.publish(), "k4") == REFUTED
    assert pub.visited == ["k4"] and pub.built == ["k4"]


def test_edits_parsed_between_publications_are_taken_in_one_by_one(tmp_path, monkeypatch):
    pub = Published(tmp_path, monkeypatch)
    pub.publish()
    for n in range(1, 4):  # a burst: each parse starts from the one before
        pub.ws.open(pub.bib, BIB.replace("Work number 10}", f"Work number 10{'x' * n}}}"))
    pub.publish()
    below = {f"k{i}" for i in range(11, ENTRIES) if first_kind(i) != "clean"}
    assert set(pub.visited) == {"k10"} | below


def test_a_parse_without_entry_deltas_keeps_every_unchanged_entrys_findings(
        tmp_path, monkeypatch):
    pub = Published(tmp_path, monkeypatch)
    pub.publish()
    doc = pub.ws.corpus.update(pub.bib, BIB.replace("Work number 20}", "Work number 20, ed.}"))
    pub.ws.graph.update(doc)
    doc.delta = None  # as after a change of @string macros, or in a CSL file
    pub.publish()
    below = {f"k{i}" for i in range(21, ENTRIES) if first_kind(i) != "clean"}
    assert set(pub.visited) == {"k20"} | below and pub.built == []


def test_a_manuscript_places_again_only_the_reference_whose_result_changed(
        tmp_path, monkeypatch):
    pub = Published(tmp_path, monkeypatch, paper=True)
    paper = pub.uris["paper.md"]
    pub.publish(paper)
    pub.resolve(pub.ref("k3"), "refuted")
    found = pub.publish(paper)
    assert pub.visited == ["k3"] and pub.built == ["k3"]
    assert sum(p.code == "DOI_REFUTED" for p in found) == 2  # on both its citations
    pub.publish(paper)
    assert pub.visited == []
    pub.ws.open(pub.bib, BIB.replace("Work number 25}", "Work number 25, ed.}"))
    pub.publish(paper)  # k30 moved in the library, but shows nothing in the paper
    assert pub.visited == []


@pytest.mark.parametrize("change", ["min_priority", "ignore"])
async def test_findings_follow_a_settings_change(tmp_path, monkeypatch, change):
    pub = Published(tmp_path, monkeypatch)
    before = pub.publish()
    assert {"DOI_REFUTED", "NOT_FOUND_IN_INDEXES"} <= {p.code for p in before}
    value = {"min_priority": "P0", "ignore": ("DOI_REFUTED",)}[change]
    await pub.ws.configure(replace(pub.ws.settings, **{change: value}))
    after = {p.code for p in pub.publish()}
    assert ("DOI_REFUTED" in after) == (change == "min_priority")
    assert ("NOT_FOUND_IN_INDEXES" in after) == (change == "ignore")


def test_findings_follow_a_recorded_decision(tmp_path, monkeypatch):
    pub = Published(tmp_path, monkeypatch)
    pub.publish()
    k1, k2 = pub.ref("k1"), pub.ref("k2")
    pub.ws.record(Decision("k1", pub.ws.decision_identity(k1), "verified"))
    assert codes_of(pub.publish(), "k1") == []
    pub.ws.record(Decision("k2", pub.ws.decision_identity(k2), "rejected", "invented"))
    assert codes_of(pub.publish(), "k2") == ["HUMAN_REJECTED"]


def test_a_decision_another_process_filed_shows_once_the_file_is_read_again(
        tmp_path, monkeypatch):
    pub = Published(tmp_path, monkeypatch)
    pub.publish()
    elsewhere = DecisionStore(tmp_path)
    elsewhere.record(Decision("k4", pub.ws.decision_identity(pub.ref("k4")), "verified"))
    pub.ws.record(Decision("k2", pub.ws.decision_identity(pub.ref("k2")), "rejected"))
    found = pub.publish()  # recording read the file: both decisions apply
    assert codes_of(found, "k4") == [] and codes_of(found, "k2") == ["HUMAN_REJECTED"]


def test_clearing_the_cache_clears_the_findings_until_results_come_again(
        tmp_path, monkeypatch):
    pub = Published(tmp_path, monkeypatch)
    pub.publish()
    pub.ws.clear_cache()
    assert not [p for p in pub.publish() if p.priority]
    pub.resolve(pub.ref("k5"), "missing")
    assert [p.key for p in pub.publish() if p.priority] == ["k5"]


class Refuting:
    """An engine that finds every DOI refuted on a re-verify."""

    settings = Settings(verify=False)

    async def resolve(self, ref: Reference, refresh: bool = False) -> Resolution:
        return resolution(ref, "refuted")

    async def aclose(self) -> None:
        pass


async def test_a_reverify_shows_the_new_verdicts(tmp_path, monkeypatch):
    pub = Published(tmp_path, monkeypatch)
    pub.publish()
    pub.ws.verifier.engine = Refuting()
    assert pub.ws.reverify() == ENTRIES
    await asyncio.gather(*pub.ws.verifier._workers)
    found = pub.publish()
    assert all(codes_of(found, f"k{i}") == REFUTED for i in range(ENTRIES))


def test_the_result_log_says_what_changed_since_a_position_or_that_it_cannot():
    results = Results()
    start = results.position
    results["a"] = results["b"] = None  # type: ignore[assignment]
    del results["a"]
    results.update({"c": None})
    assert results.changed_since(start) == ["a", "b", "a", "c"]
    later = results.position
    assert results.changed_since(later) == []
    results.clear()
    assert results.changed_since(later) is None and results.changed_since(None) is None


def test_a_failure_keeping_the_findings_never_stops_the_parse(tmp_path, monkeypatch):
    pub = Published(tmp_path, monkeypatch)
    pub.publish()

    def broken(self, doc, identity_of):
        raise RuntimeError("a bug")

    monkeypatch.setattr(Findings, "absorb", broken)
    doc = pub.ws.open(pub.bib, BIB.replace("Work number 20}", "Work number 20, ed.}"))
    assert doc is pub.ws.document(pub.bib)
    monkeypatch.undo()  # the next publication builds them afresh
    assert "INTERNAL_ERROR" not in {p.code for p in pub.ws.problems(pub.bib)}
    assert _shown(pub.ws.problems(pub.bib)) == _shown(afresh(pub.ws, tmp_path).problems(pub.bib))


def test_diagnostics_of_an_unchanged_text_convert_only_the_new_findings(tmp_path, monkeypatch):
    pub = Published(tmp_path, monkeypatch)
    text = pub.ws.document(pub.bib).text
    placed: list[int] = []

    class Counted(LineIndex):
        def position(self, offset: int) -> tuple[int, int]:
            placed.append(offset)
            return super().position(offset)

    index = Counted(text)

    def converted(converter: Diagnostics, index: LineIndex) -> list:
        placed.clear()
        return converter.convert(pub.bib, pub.ws.problems(pub.bib), index, "utf-16",
                                 lambda uri, span: None)

    converter = Diagnostics()
    first = converted(converter, index)
    assert len(placed) >= 2 * len(first)
    pub.resolve(pub.ref("k6"), "refuted")  # two findings more, on k6's key and DOI
    second = converted(converter, index)
    assert len(second) == len(first) + 2 and len(placed) <= 2 * 4
    assert second == converted(Diagnostics(), index)  # what converting afresh gives
    converted(converter, Counted(text))  # another text (the same here): placed again
    assert len(placed) >= 2 * len(second)


class Orphaned:
    """A workspace with the library and the paper open (no verification), which counts the
    orphan hints it builds."""

    def __init__(self, root: Path, monkeypatch) -> None:
        self.root = root
        (root / "refs.bib").write_text(BIB, encoding="utf-8")
        (root / "paper.md").write_text(PAPER, encoding="utf-8")
        self.bib = (root / "refs.bib").resolve().as_uri()
        self.paper = (root / "paper.md").resolve().as_uri()
        self.ws = Workspace(Settings(verify=False), [root])
        self.ws.open(self.bib, BIB)
        self.ws.open(self.paper, PAPER)
        self.built: list[str] = []
        checks = self.ws.checks.citations
        build = checks._orphan

        def counted(ref, span, message=None):
            self.built.append(ref.key)
            return build(ref, span, message)

        monkeypatch.setattr(checks, "_orphan", counted)

    def hints(self) -> list:
        """The library's local problems, checked against a fresh build; what they built
        is in ``built`` until the next call."""
        found = self.ws.local_problems(self.bib)
        assert _shown(found) == _shown(afresh(self.ws, self.root).local_problems(self.bib))
        return found

    def edit(self, uri: str, text: str) -> None:
        self.built.clear()
        self.ws.open(uri, text)


CITED = {"k3", "k20", "k30"}


def test_a_manuscript_keystroke_that_keeps_its_citations_keeps_the_librarys_hints(
        tmp_path, monkeypatch):
    lib = Orphaned(tmp_path, monkeypatch)
    before = lib.hints()
    assert {p.key for p in before} == {f"k{i}" for i in range(ENTRIES)} - CITED
    published = lib.ws.problems(lib.bib)
    lib.edit(lib.paper, PAPER.replace("then", "and then"))
    assert lib.hints() is before and lib.built == []  # the same list: nothing to re-send
    assert lib.ws.problems(lib.bib) is published


def test_citing_a_key_no_entry_has_keeps_the_librarys_hints(tmp_path, monkeypatch):
    lib = Orphaned(tmp_path, monkeypatch)
    before = lib.hints()
    for typed in ("@nosuch", "@nosuchkey"):  # typed letter by letter: dangling each time
        lib.edit(lib.paper, PAPER + f"Also {typed}.\n")
        assert lib.hints() is before and lib.built == []


def test_citing_another_entry_updates_the_librarys_hints(tmp_path, monkeypatch):
    lib = Orphaned(tmp_path, monkeypatch)
    lib.hints()
    lib.edit(lib.paper, PAPER.replace("@k30", "@k31"))
    keys = {p.key for p in lib.hints()}
    assert "k30" in keys and "k31" not in keys
    assert lib.built == ["k30"]  # the other hints are kept


def test_an_edit_of_the_library_moves_the_hints_below_it_and_builds_the_edited_one(
        tmp_path, monkeypatch):
    lib = Orphaned(tmp_path, monkeypatch)
    before = lib.hints()
    edited = BIB.replace("Work number 10}", "Work number 10, revised}")
    lib.edit(lib.bib, edited)
    after = lib.hints()
    below = [f"k{i}" for i in range(11, ENTRIES) if f"k{i}" not in CITED]
    assert sorted(lib.built) == sorted(["k10", *below])
    above = [p for p in before if p.key in {f"k{i}" for i in range(10)}]
    assert after[:len(above)] == above and all(map(operator.is_, after, above))
    lib.edit(lib.bib, edited.replace(entry(5), ""))  # an entry deleted: its hint goes
    assert "k5" not in {p.key for p in lib.hints()}
    assert lib.built == [f"k{i}" for i in range(6, ENTRIES) if f"k{i}" not in CITED]


@pytest.mark.parametrize("seed", range(4))
async def test_any_sequence_of_changes_shows_what_building_afresh_shows(
        tmp_path, monkeypatch, seed):
    """Edits (in place, inserted and deleted entries, a ``crossref`` parent named), the paper
    citing other keys (some no entry has), arriving results, the verifier looking at edited
    entries, decisions, settings, a cleared cache, in a random order: the library and the
    paper show after each what a fresh build shows."""
    rng = random.Random(seed)
    pub = Published(tmp_path, monkeypatch, paper=True)
    ws = pub.ws
    texts = {i: entry(i) for i in range(ENTRIES)}

    def write() -> None:
        ws.open(pub.bib, "".join(texts[i] for i in sorted(texts)))

    for _step in range(60):
        action = rng.choice(["edit", "edit", "insert", "delete", "crossref", "cite", "cite",
                             "result", "result", "look", "decide", "minimum", "clear"])
        if action == "edit" and texts:
            i = rng.choice(sorted(texts))
            texts[i] = entry(i, title=f"Work number {i}{'!' * rng.randint(0, 3)}",
                             journal=rng.choice(["Journal of Work", "J. Work"]))
            write()
        elif action == "insert":
            i = rng.randint(ENTRIES, 3 * ENTRIES)
            texts[i] = entry(i)
            write()
        elif action == "delete" and texts:
            del texts[rng.choice(sorted(texts))]
            write()
        elif action == "crossref" and texts:
            i = rng.choice(sorted(texts))
            texts[i] = entry(i).replace("  year", f"  crossref = {{k{rng.randrange(ENTRIES)}}},"
                                                  "\n  year")
            write()
        elif action == "cite":  # the paper cites other keys, or one typed letter by letter
            keys = rng.sample([f"k{i}" for i in range(ENTRIES)] + ["k", "nosuch"],
                              rng.randint(0, 4))
            ws.open(pub.uris["paper.md"], PAPER.replace("@k30", " ".join(
                f"@{k}" for k in keys) or "nothing"))
        elif action == "result" and (refs := pub.refs()):
            for ref in rng.sample(refs, min(len(refs), rng.randint(1, 5))):
                pub.resolve(ref, rng.choice(["clean", "refuted", "missing"]))
        elif action == "look":  # the verifier's pass gives edited entries their identity
            for ref in pub.refs():
                ws.verifier.identity(ref)
        elif action == "decide" and (refs := pub.refs()):
            ref = rng.choice(refs)
            with contextlib.suppress(PermanentRejection):
                ws.record(Decision(ref.key, ws.decision_identity(ref),
                                   rng.choice(["verified", "rejected"])))
        elif action == "minimum":
            await ws.configure(replace(ws.settings, min_priority=rng.choice(["P0", "P2", "P3"])))
        elif action == "clear":
            ws.clear_cache()
        fresh = afresh(ws, tmp_path)
        for uri in (pub.bib, pub.uris["paper.md"]):
            pub.publish(uri)
            assert _shown(ws.local_problems(uri)) == _shown(fresh.local_problems(uri))


async def test_a_reverify_of_everything_asks_for_what_the_editor_shows(tmp_path):
    """Not every entry of a library a manuscript names: its uncited entries would be asked
    for at the services' rate limits. Keys named are looked up wherever they are."""
    (tmp_path / "refs.bib").write_text("".join(entry(i) for i in range(6)), encoding="utf-8")
    paper = tmp_path / "paper.md"
    paper.write_text("---\nbibliography: refs.bib\n---\nSee [@k1] and [@k4; @k1].\n",
                     encoding="utf-8")
    ws = Workspace(Settings(verify=False), [tmp_path])
    ws.open(paper.as_uri(), paper.read_text(encoding="utf-8"))
    ws.verifier.engine = Refuting()
    assert ws.reverify() == 2
    assert sorted(ref.key for ref in ws.verifier._queued.values()) == ["k1", "k4"]
    assert ws.reverify({"k5"}) == 1
    await asyncio.gather(*ws.verifier._workers)


class Server(CitelspServer):
    """The server without a client: what it would send is recorded, as the client reads it,
    and publications run when the test says (no timers)."""

    encoding = types.PositionEncodingKind.Utf16

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[dict] = []

    def schedule_publish(self) -> None:
        pass

    def send_diagnostics(self, uri, version, diagnostics) -> None:
        params = json.loads(self._diagnostics.params_json(uri, version, diagnostics))
        expected = default_converter().unstructure(types.PublishDiagnosticsParams(
            uri=uri, diagnostics=diagnostics, version=version))
        assert params == expected  # what pygls itself would have sent
        self.sent.append(params)

    def open_text(self, uri: str, language: str, text: str) -> None:
        self.document_opened(types.TextDocumentItem(uri, language, 1, text))

    def type_at(self, uri: str, offset: int, typed: str, version: int) -> None:
        where = lsp_position(self.lines.of(uri, self.texts.get(uri)), offset, self.encoding)
        self.text_changed(types.VersionedTextDocumentIdentifier(version=version, uri=uri), [
            types.TextDocumentContentChangePartial(types.Range(where, where), typed)])

    async def published(self) -> dict[str, dict]:
        """What one publication of the open documents sent, by document, in order."""
        self.sent.clear()
        self.publish_open()
        await self._publishing
        return {p["uri"]: p for p in self.sent}


def hint_keys(params: dict) -> set[str]:
    return {d["message"].split("'")[1] for d in params["diagnostics"]
            if d["code"] == "ORPHAN_REFERENCE"}


@pytest.fixture
async def server(tmp_path):
    (tmp_path / "refs.bib").write_text(BIB, encoding="utf-8")
    (tmp_path / "paper.md").write_text(PAPER, encoding="utf-8")
    server = Server()
    server.ws.set_roots([tmp_path])
    server.uris = {name: (tmp_path / name).resolve().as_uri() for name in ("refs.bib", "paper.md")}
    server.open_text(server.uris["refs.bib"], "bibtex", BIB)
    server.open_text(server.uris["paper.md"], "markdown", PAPER)
    yield server
    await server.ws.verifier.close()


async def test_a_manuscript_keystroke_that_keeps_its_citations_re_sends_only_the_manuscript(
        server):
    bib, paper = server.uris["refs.bib"], server.uris["paper.md"]
    first = await server.published()
    assert hint_keys(first[bib]) == {f"k{i}" for i in range(ENTRIES)} - CITED
    server.type_at(paper, PAPER.index("then"), "and ", 2)
    assert list(await server.published()) == [paper]
    server.type_at(paper, PAPER.index("then"), "@nosuch ", 3)  # a key no entry has
    assert list(await server.published()) == [paper]


async def test_a_manuscript_keystroke_that_cites_another_entry_re_sends_the_library(server):
    bib, paper = server.uris["refs.bib"], server.uris["paper.md"]
    await server.published()
    server.type_at(paper, PAPER.index("@k30") + 4, "1", 2)  # @k30 → @k301: k30 is unused
    sent = await server.published()
    assert list(sent) == [paper, bib] and sent[paper]["version"] == 2
    assert hint_keys(sent[bib]) == {f"k{i}" for i in range(ENTRIES)} - {"k3", "k20"}
    assert sent[bib]["version"] == 1  # the library's text did not change


async def test_a_library_edit_re_sends_it_with_the_hints_below_moved(server):
    bib = server.uris["refs.bib"]
    await server.published()
    at = BIB.index("Work number 10}")
    server.type_at(bib, at, "x", 2)
    sent = await server.published()
    assert list(sent)[0] == bib and sent[bib]["version"] == 2  # the edited document first
    fresh = Diagnostics().convert(bib, server.ws.problems(bib), LineIndex(
        BIB[:at] + "x" + BIB[at:]), server.encoding, server.range_for)
    assert sent[bib]["diagnostics"] == [default_converter().unstructure(d) for d in fresh]


async def test_a_document_edited_while_others_wait_is_published_for_its_new_text(server):
    bib, paper = server.uris["refs.bib"], server.uris["paper.md"]
    await server.published()
    send = server.send_diagnostics

    def typed_meanwhile(uri, version, diagnostics):
        send(uri, version, diagnostics)
        if uri == paper and server.texts.get(bib) == BIB:  # the library changes meanwhile
            server.type_at(bib, BIB.index("Work number 10}"), "x", 2)
            server.publish_open()

    server.send_diagnostics = typed_meanwhile
    server.type_at(paper, PAPER.index("@k30") + 4, "1", 2)
    await server.published()
    sent = [(p["uri"], p["version"]) for p in server.sent]
    assert sent[:2] == [(paper, 2), (bib, 2)] and (bib, 1) not in sent


def test_young_objects_a_paused_collector_left_are_collected_once_the_server_is_idle():
    """Else the next allocation that crosses a threshold pays: a completion a second after
    a keystroke took 300 ms collecting what the library's parse left. The collector runs,
    as in the server: an in-process ``citelsp check`` earlier in the session disables it."""
    enabled = gc.isenabled()
    gc.enable()
    try:
        young_objects_collected()
    finally:
        if not enabled:
            gc.disable()


def young_objects_collected() -> None:
    gc.collect()
    with paused_gc():
        kept = [[i] for i in range(2 * YOUNG_BACKLOG)]  # a parse's entries, young
    assert gc.get_count()[0] + len(gc.get_objects(1)) > YOUNG_BACKLOG
    collect_young_objects()
    assert gc.get_count()[0] + len(gc.get_objects(1)) < YOUNG_BACKLOG / 10
    assert len(kept) == 2 * YOUNG_BACKLOG
