"""Bibliographic accuracy end to end (DESIGN.md §4, issue 8): BibTeX entries resolved by the
engine against recorded bodies on the loopback server, then judged.

Each rule has a counter-case that must stay clean: a correct reference with entities and
markup, "and others", article numbers, a web page.
"""

from __future__ import annotations

from citelsp.verdict.placement import verification_problems
from tests.apiserver import fixture
from tests.judged import Judged
from tests.test_engine import verify

WOLF_AUTHORS = (
    "Lobo, Diana and Morales, Hern{\\'a}n E. and Van Oosterhout, Cock and "
    "L{\\'o}pez-Bao, Jos{\\'e} Vicente and Silva, Pedro and Llaneza, Luis and Pacheco, Carolina "
    "and Castro, Diana and Hern{\\'a}ndez-Alonso, Germ{\\'a}n and Pacheco, George and Archer, "
    "John and Gilbert, M. Thomas P. and Ferrand, Nuno and Godinho, Raquel"
)


def wolf(key: str, *, author: str = WOLF_AUTHORS, volume: str = "35", number: str = "3",
         pages: str = "432--445") -> str:
    """Genome Research 35(3):432–445 (Crossref, recorded), 14 authors."""
    return (f"@article{{{key},\n  title = {{Ancient dog introgression into the Iberian wolf "
            "genome may have facilitated adaptation to human-dominated landscapes},\n"
            f"  author = {{{author}}},\n  journal = {{Genome Res.}},\n  year = {{2025}},\n"
            f"  volume = {{{volume}}}, number = {{{number}}}, pages = {{{pages}}},\n"
            "  doi = {10.1101/gr.279093.124},\n}\n")


def item(v: Judged) -> tuple[str, str] | None:
    i = v.judgement.item
    return None if i is None else (i.priority, i.reason_code)


def findings(v: Judged) -> dict[str, tuple[str, str]]:
    return {f.field or "": (f.reason_code, f.message) for f in v.judgement.findings}


async def test_a_correct_reference_stays_clean(api_server, api_settings):
    v = (await verify(api_settings, wolf("ok")))["ok"]
    assert v.judgement.verdict == "true" and item(v) is None


async def test_an_incomplete_author_list_is_p1_unless_it_says_and_others(api_server, api_settings):
    three = "Lobo, Diana and Morales, Hern{\\'a}n E. and Van Oosterhout, Cock"
    done = await verify(api_settings, wolf("short", author=three)
                        + wolf("etal", author=three + " and others"))
    assert item(done["short"]) == ("P1", "METADATA_CONFLICT")
    code, message = findings(done["short"])["author"]
    assert "cites 3 of the record's 14 authors" in message
    assert "missing L\u00f3pez-Bao, Silva" in message and "Crossref has" in message
    assert item(done["etal"]) is None


async def test_volume_and_first_page_numbers_conflict_the_issue_is_a_detail(
    api_server, api_settings
):
    done = await verify(api_settings, wolf("vol", volume="36") + wolf("page", pages="433--445")
                        + wolf("issue", number="4"))
    assert findings(done["vol"])["volume"][0] == "METADATA_CONFLICT"
    assert "volume cited as \u201c36\u201d; Crossref has \u201c35\u201d" in (
        findings(done["vol"])["volume"][1])
    assert findings(done["page"])["pages"][0] == "METADATA_CONFLICT"
    assert item(done["issue"]) == ("P2", "METADATA_DETAIL")


async def test_an_article_number_cited_with_its_own_pages_stays_clean(api_server, api_settings):
    """Scientific Reports 8:15544 is article number 15544, no page range (Crossref)."""
    text = ("@article{sr,\n  title = {Insights into the mechanism of the {PIK3CA} {E545K} "
            "activating mutation using {MD} simulations},\n  author = {Leontiadou, Hari and "
            "Galdadas, Ioannis and Athanasiou, Christina and Cournia, Zoe},\n"
            "  journal = {Scientific Reports}, year = {2018}, volume = {8},\n"
            "  pages = {1--12},\n  doi = {10.1038/s41598-018-27044-6},\n}\n")
    v = (await verify(api_settings, text))["sr"]
    assert v.judgement.verdict == "true" and item(v) is None


async def test_entities_and_markup_on_either_side_stay_clean(api_server, api_settings):
    """The Crossref title carries ``&lt;em&gt;``; one entry writes LaTeX, one the entities."""
    head = "Capability of {ISSR}, {SCoT} and {CEAP} Markers for Genetic Diversity Assessment of"
    text = "".join(
        f"@misc{{{key},\n  title = {{{head} Lavender ({species}) Genotypes}},\n"
        "  author = {Zhelyazkova, Mariya},\n  year = {2026},\n"
        "  howpublished = {Preprints.org},\n  doi = {10.20944/preprints202601.1248.v1},\n}\n"
        for key, species in (
            ("latex", "\\emph{Lavandula angustifolia} Mill."),
            ("entities", "&lt;em&gt;Lavandula angustifolia Mill.&lt;/em&gt;"),
            ("double", "&amp;lt;em&amp;gt;Lavandula angustifolia Mill.&amp;lt;/em&amp;gt;"),
        )
    )
    done = await verify(api_settings, text)
    for key in ("latex", "entities", "double"):
        assert done[key].judgement.verdict == "true", key
        assert item(done[key]) is None, (key, done[key].judgement.findings)


async def test_a_placeholder_identifier_is_never_looked_up(api_server, api_settings):
    text = ("@article{ph,\n  title = {A Study of Placeholder Identifiers},\n"
            "  author = {Doe, Jane},\n  year = {2024},\n  doi = {10.1145/XXXXXXX.XXXXXXX},\n"
            "  eprint = {24XX.XXXXX},\n  archivePrefix = {arXiv},\n}\n")
    v = (await verify(api_settings, text))["ph"]
    assert api_server.count(path_contains="XXXX") == 0
    assert api_server.count("handle") == 0 and api_server.count("arxiv") == 0
    codes = {f.reason_code for f in v.judgement.findings}
    assert "PLACEHOLDER_IDENTIFIER" in codes
    assert not codes & {"DOI_REFUTED", "ARXIV_ID_REFUTED", "DOI_TITLE_MISMATCH"}
    assert v.judgement.verdict != "false"
    # The local check shows it on the field; the verification does not show it there again.
    placed = verification_problems(v.reference, v.judgement, [])
    assert "PLACEHOLDER_IDENTIFIER" not in {p.code for _, p in placed}


async def test_a_misc_preprint_not_found_is_p1_and_a_web_page_stays_p3(api_server, api_settings):
    empty_crossref = fixture("crossref/search/title_askldjrq3rjaw938h.json")
    empty_s2 = fixture("semantic_scholar/search/n0_r3sult_s3arch_t3rm.json")
    for title in ("askldjrq3rjaw938h", "A Page about Qwertyuiop"):
        api_server.add("crossref", "GET", "/works", query={"query.title": title},
                       body=empty_crossref)
        api_server.add("semantic_scholar", "GET", "/paper/search", query={"query": title},
                       body=empty_s2)
    text = ("@misc{preprint,\n  title = {askldjrq3rjaw938h},\n  author = {Doe, Jane},\n"
            "  year = {2024},\n  howpublished = {bioRxiv preprint},\n}\n"
            "@misc{page,\n  title = {A Page about Qwertyuiop},\n  author = {Doe, Jane},\n"
            "  year = {2024},\n  howpublished = {\\url{https://example.org/qwertyuiop}},\n}\n")
    done = await verify(api_settings, text)
    assert item(done["preprint"]) == ("P1", "NOT_FOUND_IN_INDEXES")
    assert item(done["page"]) == ("P3", "NO_AUTOMATED_SOURCE")
