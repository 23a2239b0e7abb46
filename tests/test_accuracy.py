import pytest

from citelsp.documents.model import Person, Work
from citelsp.resolution.outcome import Record
from citelsp.verdict.accuracy import accuracy_conflicts, is_preprint_venue, venues_agree

AUTHORS = (Person("Vaswani", "Ashish"), Person("Shazeer", "Noam"), Person("Parmar", "Niki"))

RECORD = Record(
    source="crossref",
    title="Attention Is All You Need",
    titles=("Attention Is All You Need",),
    authors=AUTHORS,
    years=(2017,),
    venue="Advances in Neural Information Processing Systems",
    volume="30",
    issue="1",
    first_page="5998",
)

WORK = Work(
    title="Attention is all you need",
    authors=AUTHORS,
    year=2017,
    venue="NeurIPS",
    volume="30",
    issue="1",
    pages="5998--6008",
)


def fields(work: Work, records=(RECORD,), entry_type="inproceedings") -> dict[str, tuple]:
    return {
        c.field: (c.reason, c.cited, c.found) for c in accuracy_conflicts(work, entry_type, records)
    }


def change(**kw) -> Work:
    return Work(**{**WORK.__dict__, **kw})


def test_agreeing_citation_has_no_conflicts():
    assert fields(WORK) == {}


def test_no_records_no_conflicts():
    assert accuracy_conflicts(change(year=1990), "article", ()) == ()


def test_title_conflict():
    assert fields(change(title="Attention is what you need"))["title"][0] == "METADATA_CONFLICT"


def test_title_short_variant_agrees():
    record = Record(
        "s", title="BERT: Pre-training", titles=("BERT: Pre-training",), short_titles=("BERT",)
    )
    assert "title" not in fields(change(title="BERT"), (record,))


def test_cross_script_title_is_not_compared():
    assert "title" not in fields(change(title="注意力就是你所需要的一切"))


@pytest.mark.parametrize(
    ("year", "conflict"), [(2016, False), (2018, False), (2019, True), (2014, True)]
)
def test_year(year, conflict):
    assert ("year" in fields(change(year=year))) is conflict


def test_year_agrees_with_any_record_year():
    record = Record("s", years=(2017, 2019))
    assert "year" not in fields(change(year=2020), (record,))


def test_preprint_record_only_conflicts_when_cited_much_earlier():
    preprint = Record("arxiv", arxiv_id="1706.03762", years=(2017,))
    assert "year" not in fields(change(year=2021), (preprint,))
    assert "year" in fields(change(year=2015), (preprint,))
    flagged = Record("openalex", is_preprint=True, years=(2017,))
    assert "year" not in fields(change(year=2022), (flagged,))


def test_cited_preprint_may_be_older_than_the_published_record():
    preprint = change(venue="arXiv preprint arXiv:1706.03762", year=2015)
    assert "year" not in fields(preprint, (Record("s", years=(2017,)),))
    assert "year" in fields(change(venue="arXiv", year=2020), (Record("s", years=(2017,)),))


def test_field_conflicts_only_if_every_record_disagrees():
    other = Record("openalex", years=(2019,), venue="NIPS")
    assert "year" not in fields(change(year=2019), (RECORD, other))
    assert "year" in fields(change(year=2022), (RECORD, other))


def test_record_without_a_field_is_ignored_for_it():
    bare = Record("s", title="Attention Is All You Need")
    assert fields(change(year=1900, volume="99"), (bare,)) == {}


@pytest.mark.parametrize(
    "authors",
    [
        (Person("Vaswani", "A."),),  # omitted co-authors
        (Person("Vaswani", "A."), Person("Parmar", "N.")),  # gap is fine
        (Person("VASWANI", "A."), Person("Shazeer", "N.")),
        (Person("OpenAI Team", literal=True), Person("Shazeer", "N.")),  # organizations
    ],
)
def test_authors_agree(authors):
    assert "author" not in fields(change(authors=authors))


@pytest.mark.parametrize(
    "authors",
    [
        (Person("Shazeer", "N."), Person("Vaswani", "A.")),  # different first author / order
        (Person("Vaswani", "A."), Person("Parmar", "N."), Person("Shazeer", "N.")),  # order
        (Person("Vaswani", "A."), Person("Hinton", "G.")),  # absent author
    ],
)
def test_authors_conflict(authors):
    assert fields(change(authors=authors))["author"][0] == "METADATA_CONFLICT"


def test_et_al_is_not_a_conflict():
    assert "author" not in fields(change(authors=(Person("Vaswani", "A."),), has_et_al=True))


def test_accent_folded_and_display_name_authors():
    record = Record("openalex", authors=(Person("José García"), Person("Ana Pérez")))
    work = change(authors=(Person("Garcia", "J."), Person("Perez", "A.")))
    assert "author" not in fields(work, (record,))


@pytest.mark.parametrize(
    ("cited", "found"),
    [
        ("J. Mach. Learn. Res.", "Journal of Machine Learning Research"),
        ("JMLR", "Journal of Machine Learning Research"),
        (
            "Proc. Natl. Acad. Sci. U.S.A.",
            "Proceedings of the National Academy of Sciences of the United States of America",
        ),
        ("NeurIPS", "Advances in Neural Information Processing Systems 33"),
        ("NIPS", "NeurIPS"),
        ("ICML 2019", "Proceedings of the 36th International Conference on Machine Learning"),
        (
            "Proceedings of CVPR",
            "2016 IEEE Conference on Computer Vision and Pattern Recognition (CVPR)",
        ),
        (
            "ACL",
            "Proceedings of the 58th Annual Meeting of the Association for "
            "Computational Linguistics",
        ),
        ("Nature", "Nature"),
        ("Phys. Rev. Lett.", "Physical Review Letters"),
        (
            "IEEE Trans. Pattern Anal. Mach. Intell.",
            "IEEE Transactions on Pattern Analysis and Machine Intelligence",
        ),
    ],
)
def test_venues_agree(cited, found):
    assert venues_agree(cited, found)


@pytest.mark.parametrize(
    ("cited", "found"),
    [
        ("ICML", "Advances in Neural Information Processing Systems"),
        ("Nature", "Physical Review Letters"),
        ("J. Mach. Learn. Res.", "Machine Learning"),
    ],
)
def test_venues_disagree(cited, found):
    assert not venues_agree(cited, found)


def test_venue_conflict_is_metadata_conflict():
    assert fields(change(venue="ICML"))["venue"][0] == "METADATA_CONFLICT"


def test_venue_agrees_by_alias_field_and_issn():
    record = Record(
        "crossref",
        venue="Journal of Obscure Studies",
        venue_aliases=("J Obsc Stud",),
        issns=("1234-5678",),
    )
    assert "venue" not in fields(change(venue="J Obsc Stud"), (record,))
    assert "venue" not in fields(change(venue="Other Name", issn=("12345678",)), (record,))
    assert "venue" in fields(change(venue="Other Name"), (record,))


@pytest.mark.parametrize(
    "venue", ["arXiv", "CoRR", "bioRxiv", "medRxiv", "SSRN Electronic Journal"]
)
def test_preprint_venues_never_conflict(venue):
    assert is_preprint_venue(venue)
    assert "venue" not in fields(change(venue=venue))
    assert "venue" not in fields(change(venue="Nature"), (Record("s", venue=venue),))


@pytest.mark.parametrize(
    ("kw", "field"),
    [
        ({"volume": "31"}, "volume"),
        ({"issue": "2"}, "issue"),
        ({"pages": "6000--6010"}, "pages"),
    ],
)
def test_details_are_metadata_detail(kw, field):
    assert fields(change(**kw)) == {field: ("METADATA_DETAIL", *fields(change(**kw))[field][1:])}
    assert fields(change(**kw))[field][0] == "METADATA_DETAIL"


def test_detail_forms_agree():
    assert fields(change(volume="Vol. 30", issue="01", pages="5998")) == {}


def test_a_future_year_conflicts_even_with_a_preprint():
    from datetime import date

    from citelsp.documents.model import Work
    from citelsp.resolution.outcome import Record
    from citelsp.verdict.accuracy import accuracy_conflicts

    preprint = Record(source="arxiv", title="A Study", years=(2026,), arxiv_id="2602.12123",
                      is_preprint=True)
    future = Work(title="A Study", year=date.today().year + 5)
    assert [c.field for c in accuracy_conflicts(future, "article", [preprint])] == ["year"]
    published_later = Work(title="A Study", year=date.today().year + 1)
    assert accuracy_conflicts(published_later, "article", [preprint]) == ()
