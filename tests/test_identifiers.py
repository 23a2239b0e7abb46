from datetime import date

import pytest

from citelsp.documents.model import Field, Reference
from citelsp.resolution.identifiers import (
    agency_resolver,
    arxiv_date_impossible,
    arxiv_doi,
    arxiv_from_doi,
    doi_prefix,
    identifiers_of,
    normalize_arxiv,
    normalize_doi,
)
from citelsp.spans import Span

TODAY = date(2025, 6, 15)


def ref(fields: dict[str, str], *, fmt="bibtex", entry_type="article") -> Reference:
    return Reference(
        key="k",
        uri="file:///refs.bib",
        source_format=fmt,
        entry_type=entry_type,
        key_span=Span(0, 1),
        span=Span(0, 100),
        fields={n: Field(n, v, Span(0, 1), Span(0, 1)) for n, v in fields.items()},
    )


@pytest.mark.parametrize(
    ("raw", "doi"),
    [
        ("10.1000/ABC", "10.1000/abc"),
        ("doi:10.1000/abc", "10.1000/abc"),
        ("DOI: 10.1000/abc", "10.1000/abc"),
        ("https://doi.org/10.1000/abc", "10.1000/abc"),
        ("http://dx.doi.org/10.1000/abc", "10.1000/abc"),
        ("https://DOI.org/10.1000/abc", "10.1000/abc"),
        ("10.1000/a\\_b", "10.1000/a_b"),
        ("10.1000/a%2Fb", "10.1000/a/b"),
        ("10.1000/a%252Fb", "10.1000/a%2fb"),
        ("10.1000/abc.", "10.1000/abc"),
        ("10.1000/abc);", "10.1000/abc"),
        ("  10.1000/abc ,\n", "10.1000/abc"),
        ("10.1016/S0140-6736(20)30183-5", "10.1016/s0140-6736(20)30183-5"),
        (
            "10.1002/(SICI)1097(199912)47:4<1::AID>3.0.CO;2-4",
            "10.1002/(sici)1097(199912)47:4<1::aid>3.0.co;2-4",
        ),
        ("{10.1000/abc}", "10.1000/abc"),
    ],
)
def test_normalize_doi(raw, doi):
    assert normalize_doi(raw) == doi


@pytest.mark.parametrize(
    "raw", ["", "10.1/abc", "11.1000/abc", "10.1000/", "not a doi", "10.1000/a b"]
)
def test_normalize_doi_rejects_malformed(raw):
    assert normalize_doi(raw) is None


def test_doi_prefix():
    assert doi_prefix("10.1234/abc/def") == "10.1234"


@pytest.mark.parametrize(
    ("raw", "arxiv"),
    [
        ("2401.12345", "2401.12345"),
        ("arXiv:2401.12345v2", "2401.12345v2"),
        ("https://arxiv.org/abs/1706.03762", "1706.03762"),
        ("https://arxiv.org/pdf/1706.03762v5.pdf", "1706.03762v5"),
        ("0704.0001", "0704.0001"),
        ("hep-th/9901001", "hep-th/9901001"),
        ("math.ag/0601001v1", "math.AG/0601001v1"),
        ("cs/0112017.", "cs/0112017"),
    ],
)
def test_normalize_arxiv(raw, arxiv):
    assert normalize_arxiv(raw) == arxiv


@pytest.mark.parametrize("raw", ["2401.1234", "1412.12345", "12345", "hep-th/99010", "abc"])
def test_normalize_arxiv_rejects_malformed(raw):
    assert normalize_arxiv(raw) is None


@pytest.mark.parametrize(
    ("arxiv", "impossible"),
    [
        ("2401.12345", False),
        ("2506.12345", False),
        ("2507.12345", True),  # the month after today
        ("2613.12345", True),  # month 13
        ("2400.12345", True),  # month 00
        ("0612.1234", True),  # before the new scheme (April 2007)
        ("hep-th/9901001", False),
        ("hep-th/9913001", True),
        ("hep-th/0801001", True),  # old scheme ended March 2007
        ("hep-th/9101001", True),  # before August 1991
    ],
)
def test_arxiv_date_impossible(arxiv, impossible):
    assert arxiv_date_impossible(arxiv, TODAY) is impossible


def test_arxiv_doi_round_trip():
    assert arxiv_doi("2401.12345") == "10.48550/arxiv.2401.12345"
    assert arxiv_from_doi("10.48550/arXiv.2401.12345") == "2401.12345"
    assert arxiv_from_doi("10.48550/ARXIV.2401.12345v3") == "2401.12345v3"
    assert arxiv_from_doi("10.1000/abc") is None


@pytest.mark.parametrize(
    ("agency", "resolver"),
    [
        ("Crossref", "crossref"),
        ("DataCite", "datacite"),
        ("ISTIC", "chinese_literature"),
        ("CNKI", "chinese_literature"),
        ("mEDRA", "doi_registry"),
        ("JaLC", "doi_registry"),
        ("KISTI", "doi_registry"),
        ("Airiti", "doi_registry"),
        ("OP", "doi_registry"),
        (None, "doi_registry"),
    ],
)
def test_agency_resolver(agency, resolver):
    assert agency_resolver(agency) == resolver


def test_doi_from_doi_field():
    ids = identifiers_of(ref({"doi": "https://doi.org/10.1000/XYZ."}), TODAY)
    assert ids.doi is not None
    assert (ids.doi.value, ids.doi.field, ids.doi.kind) == ("10.1000/xyz", "doi", "doi")
    assert ids.arxiv is None and ids.problems == ()


def test_doi_from_url_when_no_doi_field():
    ids = identifiers_of(ref({"url": "https://doi.org/10.1000/abc"}), TODAY)
    assert ids.doi is not None and (ids.doi.value, ids.doi.field) == ("10.1000/abc", "url")


def test_csl_field_names_are_case_insensitive():
    r = ref({"DOI": "10.1000/ABC", "URL": "https://arxiv.org/abs/2401.12345"}, fmt="csl-json")
    ids = identifiers_of(r, TODAY)
    assert ids.doi is not None and (ids.doi.value, ids.doi.field) == ("10.1000/abc", "DOI")
    assert ids.arxiv is not None and (ids.arxiv.value, ids.arxiv.field) == ("2401.12345", "URL")


def test_malformed_doi_is_a_problem_and_not_returned():
    ids = identifiers_of(ref({"doi": "10.12/abc"}), TODAY)
    assert ids.doi is None
    assert [(p.field, p.code) for p in ids.problems] == [("doi", "INVALID_IDENTIFIER")]


def test_malformed_doi_field_falls_back_to_url():
    ids = identifiers_of(ref({"doi": "n/a", "url": "https://doi.org/10.1000/abc"}), TODAY)
    assert ids.doi is not None and ids.doi.field == "url"
    assert [p.field for p in ids.problems] == ["doi"]


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"eprint": "2401.12345", "archiveprefix": "arXiv"}, "eprint"),
        ({"eprint": "2401.12345", "eprinttype": "arxiv"}, "eprint"),
        ({"eprint": "2401.12345"}, "eprint"),
        ({"arxiv": "2401.12345"}, "arxiv"),
        ({"arxivid": "arXiv:2401.12345"}, "arxivid"),
        ({"journal": "arXiv preprint arXiv:2401.12345"}, "journal"),
        ({"howpublished": "arXiv: 2401.12345"}, "howpublished"),
        ({"note": "Preprint, arXiv:2401.12345."}, "note"),
        ({"container-title": "arXiv:2401.12345"}, "container-title"),
        ({"url": "https://arxiv.org/abs/2401.12345"}, "url"),
        ({"url": "http://arxiv.org/pdf/2401.12345.pdf"}, "url"),
    ],
)
def test_arxiv_sources(fields, field):
    ids = identifiers_of(ref(fields), TODAY)
    assert ids.arxiv is not None
    assert (ids.arxiv.value, ids.arxiv.field, ids.arxiv.kind) == ("2401.12345", field, "arxiv")
    assert not ids.arxiv.impossible
    assert ids.problems == ()


def test_eprint_of_another_archive_is_ignored():
    ids = identifiers_of(ref({"eprint": "PMC12345", "archiveprefix": "PMC"}), TODAY)
    assert ids.arxiv is None and ids.problems == ()


def test_arxiv_version_is_kept_apart():
    ids = identifiers_of(ref({"eprint": "2401.12345v3", "archiveprefix": "arXiv"}), TODAY)
    assert ids.arxiv is not None and (ids.arxiv.value, ids.arxiv.version) == ("2401.12345", "v3")


def test_arxiv_doi_sets_both_identifiers():
    ids = identifiers_of(ref({"doi": "10.48550/arXiv.2401.12345"}), TODAY)
    assert ids.doi is not None and ids.doi.value == "10.48550/arxiv.2401.12345"
    assert ids.arxiv is not None and (ids.arxiv.value, ids.arxiv.field) == ("2401.12345", "doi")
    assert ids.problems == ()


def test_versioned_arxiv_doi_is_a_warning_not_a_refutation():
    ids = identifiers_of(ref({"doi": "10.48550/arXiv.2401.12345v2"}), TODAY)
    assert ids.doi is not None and ids.doi.value == "10.48550/arxiv.2401.12345"
    assert ids.arxiv is not None and (ids.arxiv.value, ids.arxiv.version) == ("2401.12345", "v2")
    assert [(p.field, p.code) for p in ids.problems] == [("doi", "INVALID_IDENTIFIER")]


def test_malformed_arxiv_is_a_problem_and_not_returned():
    ids = identifiers_of(ref({"eprint": "2401.123", "archiveprefix": "arXiv"}), TODAY)
    assert ids.arxiv is None
    assert [(p.field, p.code) for p in ids.problems] == [("eprint", "INVALID_IDENTIFIER")]


@pytest.mark.parametrize("arxiv", ["2613.12345", "2507.12345"])
def test_impossible_arxiv_is_refuted_and_still_returned(arxiv):
    ids = identifiers_of(ref({"eprint": arxiv, "archiveprefix": "arXiv"}), TODAY)
    assert ids.arxiv is not None and ids.arxiv.impossible
    assert [(p.field, p.code) for p in ids.problems] == [("eprint", "ARXIV_ID_REFUTED")]


def test_today_decides_what_is_in_the_future():
    r = ref({"eprint": "2507.12345", "archiveprefix": "arXiv"})
    later = identifiers_of(r, date(2025, 7, 1))
    assert later.arxiv is not None and not later.arxiv.impossible


def test_no_identifiers():
    ids = identifiers_of(ref({"title": "A title", "url": "https://example.org/paper"}), TODAY)
    assert ids.doi is None and ids.arxiv is None and ids.problems == () and not ids.any


@pytest.mark.parametrize(
    ("fields", "field", "what"),
    [
        ({"journal": "arXiv preprint arXiv:2402.XXXX"}, "journal", "arXiv id '2402.XXXX'"),
        ({"eprint": "24XX.XXXXX", "archiveprefix": "arXiv"}, "eprint", "arXiv id '24XX.XXXXX'"),
        ({"eprint": "24XX.XXXXX"}, "eprint", "arXiv id '24XX.XXXXX'"),
        ({"doi": "10.xxxx/abcd"}, "doi", "DOI '10.xxxx/abcd'"),
        ({"doi": "10.1145/XXXXXXX.XXXXXXX"}, "doi", "DOI '10.1145/XXXXXXX.XXXXXXX'"),
        ({"doi": "TODO"}, "doi", "DOI 'TODO'"),
        ({"doi": "10.1109/…"}, "doi", "DOI '10.1109/…'"),
        ({"doi": "10.48550/arXiv.2310.XXXX"}, "doi", "DOI '10.48550/arXiv.2310.XXXX'"),
        ({"url": "https://doi.org/10.xxxx/yyyy"}, "url", "DOI in URL '10.xxxx/yyyy'"),
    ],
)
def test_placeholder_identifiers_are_never_looked_up(fields, field, what):
    ids = identifiers_of(ref(fields), TODAY)
    assert ids.doi is None and ids.arxiv is None
    [problem] = ids.problems
    assert (problem.field, problem.code) == (field, "PLACEHOLDER_IDENTIFIER")
    assert problem.message.startswith(f"{what} is a placeholder: the real ")
    assert "is missing" in problem.message


@pytest.mark.parametrize(
    "fields",
    [
        {"doi": "10.1002/(SICI)1097-4636(199901)44:1<33::AID-JBM5>3.0.CO;2-X"},
        {"doi": "10.1016/j.xgen.2025.100814"},
        {"eprint": "2402.12345", "archiveprefix": "arXiv"},
        {"journal": "arXiv preprint arXiv:2402.12345"},
    ],
)
def test_real_identifiers_are_not_placeholders(fields):
    ids = identifiers_of(ref(fields), TODAY)
    assert ids.any and ids.problems == ()


def test_a_malformed_identifier_that_is_no_placeholder_stays_invalid():
    ids = identifiers_of(ref({"doi": "n/a"}), TODAY)
    assert [p.code for p in ids.problems] == ["INVALID_IDENTIFIER"]


@pytest.mark.parametrize("written", ["10/ggd754", "doi:10/b6vnmd", "https://doi.org/10/B7JT"])
def test_a_short_doi_is_not_an_invalid_doi(written):
    """Better BibTeX exports shortDOIs; they are valid handles, so no INVALID_IDENTIFIER (a P1
    on a correct reference), and, not being full DOIs, no DOI lookup either."""
    from citelsp.documents.bibtex import parse_bibtex
    from citelsp.resolution.identifiers import is_short_doi, reference_ids

    (ref,) = parse_bibtex("file:///r.bib", f"@article{{a, title = {{T}}, doi = {{{written}}}}}"
                          ).references
    ids = reference_ids(ref)
    assert is_short_doi(written) and ids.doi is None and ids.problems == ()
    assert ids.short_doi is not None
    assert ids.short_doi.value == "10/" + written.rsplit("/", 1)[-1].lower()  # looked up


def test_a_short_doi_in_a_url_is_not_an_invalid_doi():
    from citelsp.documents.bibtex import parse_bibtex
    from citelsp.resolution.identifiers import reference_ids

    (ref,) = parse_bibtex("file:///r.bib", "@misc{a, title = {T}, url = {https://doi.org/10/b7jt}}"
                          ).references
    assert reference_ids(ref).problems == ()
