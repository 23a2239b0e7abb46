import pytest

from citelsp.documents.model import Person, Work
from citelsp.documents.works import is_preprint_venue
from citelsp.resolution.outcome import Record
from citelsp.verdict.accuracy import accuracy_conflicts, venues_agree
from citelsp.verdict.checklist import conflict_text

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
    ("authors", "et_al"),
    [
        ((Person("VASWANI", "A."), Person("Shazeer", "N."), Person("Parmar", "N.")), False),
        ((Person("Vaswani", "A."),), True),  # "and others"
        ((Person("Vaswani", "A."), Person("Parmar", "N.")), True),  # a gap, with "and others"
        ((Person("OpenAI Team", literal=True), Person("Shazeer", "N.")), False),  # organizations
        ((Person("Google Brain", literal=True),), False),
    ],
)
def test_authors_agree(authors, et_al):
    assert "author" not in fields(change(authors=authors, has_et_al=et_al))


FIVE = tuple(Person(f, g) for g, f in [("Y.", "Wang"), ("D.", "Foster"), ("A.", "Krishnamurthy"),
                                       ("A.", "Rakhlin"), ("R.", "Wang")])


def test_an_incomplete_author_list_conflicts_and_says_who_is_missing():
    record = Record("crossref", authors=FIVE)
    cited = change(authors=(FIVE[0], FIVE[2]))
    [conflict] = accuracy_conflicts(cited, "inproceedings", (record,))
    assert (conflict.field, conflict.reason) == ("author", "METADATA_CONFLICT")
    assert conflict.note.startswith("cites 2 of the record's 5 authors")
    assert "missing Foster, Rakhlin, Wang" in conflict.note
    text = conflict_text(conflict)
    assert text.startswith("author cited as \u201cWang, Krishnamurthy\u201d; Crossref has "
                           "\u201cWang, Foster, Krishnamurthy, Rakhlin, Wang\u201d")


def test_an_incomplete_author_list_is_fine_when_some_record_has_no_more_authors():
    short = Record("semantic_scholar", authors=(FIVE[0], FIVE[2]))
    assert "author" not in fields(change(authors=(FIVE[0], FIVE[2])),
                                  (Record("crossref", authors=FIVE), short))


def test_a_truncated_record_is_no_evidence_of_an_omission():
    truncated = Record("openalex", authors=FIVE[:3], authors_truncated=True)
    assert "author" not in fields(change(authors=FIVE[:2]), (truncated,))
    # ... but a cited author absent from it still is
    assert "author" in fields(change(authors=(FIVE[0], Person("Hinton", "G."))), (truncated,))


def test_organizations_on_the_record_side_are_not_missing_authors():
    record = Record("crossref", authors=(*FIVE[:2], Person("ATLAS Collaboration", literal=True)))
    assert "author" not in fields(change(authors=FIVE[:2]), (record,))


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


ARXIV = Record("arxiv", title="Attention Is All You Need", arxiv_id="1706.03762", years=(2017,),
               venue="arXiv", is_preprint=True)


def test_a_preprint_record_does_not_hide_a_wrong_venue_when_the_published_version_matched():
    found = fields(change(venue="ICML"), (ARXIV, RECORD))
    assert found["venue"] == ("METADATA_CONFLICT", "ICML",
                              "Advances in Neural Information Processing Systems")


def test_a_work_known_only_as_a_preprint_leaves_the_cited_venue_unconfirmed_not_wrong():
    """A preprint cited with the venue it appeared at later: the index cannot know yet, so
    the venue gets a P2 note (VENUE_UNCONFIRMED), never a METADATA_CONFLICT."""
    openalex = Record("openalex", title="Attention Is All You Need", years=(2017,),
                      venue="arXiv (Cornell University)", is_preprint=True)
    for venue, records in (("NeurIPS", (ARXIV, openalex)),
                           ("Journal of Made-up Results", (ARXIV,))):
        reason, cited, _ = fields(change(venue=venue), records)["venue"]
        assert (reason, cited) == ("VENUE_UNCONFIRMED", venue)
    conflict = accuracy_conflicts(change(venue="NeurIPS"), "inproceedings", (ARXIV,))[0]
    assert conflict_text(conflict) == (
        "venue cited as \u201cNeurIPS\u201d; arXiv has \u201carXiv\u201d")


def test_a_preprint_whose_journal_reference_names_the_cited_venue_confirms_it():
    arxiv = Record("arxiv", title="Attention Is All You Need", arxiv_id="1706.03762",
                   years=(2017,), venue="arXiv",
                   venue_aliases=("Advances in Neural Information Processing Systems 30",),
                   is_preprint=True)
    assert "venue" not in fields(change(venue="NeurIPS"), (arxiv,))


def test_preprint_names_among_a_published_records_aliases_are_ignored():
    s2 = Record("semantic_scholar", venue="Neural Information Processing Systems",
                venue_aliases=("ArXiv",))
    assert "venue" not in fields(change(venue="NeurIPS"), (s2,))
    assert "venue" in fields(change(venue="ICML"), (s2,))


@pytest.mark.parametrize(
    ("kw", "field", "reason"),
    [
        ({"volume": "31"}, "volume", "METADATA_CONFLICT"),
        ({"pages": "6000--6010"}, "pages", "METADATA_CONFLICT"),
        ({"issue": "2"}, "issue", "METADATA_DETAIL"),
        ({"volume": "XXX"}, "volume", "METADATA_DETAIL"),  # roman numerals
        ({"pages": "e6000"}, "pages", "METADATA_DETAIL"),
    ],
)
def test_plain_number_volume_and_first_page_conflict_other_forms_are_details(kw, field, reason):
    assert fields(change(**kw)) == {field: (reason, *fields(change(**kw))[field][1:])}


@pytest.mark.parametrize(
    ("pages", "record"),
    [
        ("1--12", Record("crossref", article_number="103456")),  # per-article pagination
        ("103456", Record("crossref", article_number="103456")),
        ("e0123456", Record("crossref", first_page="e0123456", article_number="e0123456")),
        ("98:1--98:76", Record("openalex", first_page="1")),  # JMLR paper:page
        ("pp. 5998-6008", Record("openalex", first_page="5998")),
    ],
)
def test_article_numbers_and_page_forms_agree(pages, record):
    assert "pages" not in fields(change(pages=pages), (record,))


def test_an_article_number_that_differs_is_only_a_detail():
    assert fields(change(pages="12--20"), (Record("crossref", article_number="103456"),)) == {
        "pages": ("METADATA_DETAIL", "12", "103456")}


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
