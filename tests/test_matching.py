import pytest

from citelsp.documents.model import Person, Work
from citelsp.resolution.matching import (
    first_author_conflict,
    judge_identifier_record,
    judge_title_search,
    year_conflict,
)
from citelsp.resolution.outcome import Record


def rec(title, *, year=None, author=None, source="crossref", short=(), doi=None) -> Record:
    return Record(
        source=source,
        title=title,
        titles=(title,) if title else (),
        short_titles=tuple(short),
        authors=(Person(author),) if author else (),
        years=(year,) if year else (),
        doi=doi,
    )


def work(title, *, year=None, author=None) -> Work:
    return Work(title=title, year=year, authors=(Person(author, "A."),) if author else ())


# --- title search: seed 004 v5 "exact-title-or-bust" ----------------------------------------

SEED_004_DISTINCT = [
    (  # superstring
        "Deep Residual Learning for Image Recognition",
        "Deep Residual Learning for Image Recognition on Embedded Devices",
    ),
    ("Attention Is All You Need", "Attention Is Not All You Need"),  # negation
    (  # shared prefix
        "Reinforcement Learning for Healthcare",
        "Deep Reinforcement Learning for Robotics",
    ),
    (
        "Federated Learning for Mobile Keyboard Prediction",
        "Federated Learning for Mobile Health Prediction",
    ),
    ("Related Work: Theory", "Related Work: Experiments"),
]


@pytest.mark.parametrize(("cited", "found"), SEED_004_DISTINCT)
def test_non_exact_titles_never_match_even_with_agreeing_metadata(cited, found):
    judged = judge_title_search(
        work(cited, year=2019, author="Hard"), [rec(found, year=2019, author="Hard")]
    )
    assert judged.match is None
    assert judged.conflicts == ()


def test_non_exact_high_ratio_candidates_are_near_matches_best_first():
    cited = work("Attention Is All You Need", year=2017)
    far = rec("Attention Is Not All You Need At All Today")
    close = rec("Attention Is Not All You Need")
    unrelated = rec("A Survey of Protein Folding")
    judged = judge_title_search(cited, [far, unrelated, close])
    assert judged.match is None
    assert judged.near_matches == (close, far)


@pytest.mark.parametrize(
    ("cited", "found"),
    [
        ("R.A.G. for Open-Domain Question Answering", "RAG for open-domain question answering"),
        ("D.H. Lawrence and the Novel", "D. H. Lawrence and the novel"),
        (
            "BERT: Pre-training of Deep Bidirectional Transformers",
            "BERT - Pre-Training of Deep Bidirectional Transformers",
        ),
        ("Attention is all you need.", "ATTENTION IS ALL YOU NEED"),
    ],
)
def test_exact_normalized_variants_match(cited, found):
    candidate = rec(found, year=2020)
    judged = judge_title_search(work(cited, year=2020), [candidate])
    assert judged.match is candidate


def test_exact_second_candidate_is_reached_past_a_conflicting_first():
    cited = work("Graph Attention Networks", year=2018, author="Veličković")
    wrong = rec("Graph Attention Networks", year=2009, author="Other")
    right = rec("Graph attention networks", year=2018, author="Velickovic")
    judged = judge_title_search(cited, [wrong, right])
    assert judged.match is right
    assert judged.conflicts == ()


def test_exact_title_with_year_conflict_is_a_recorded_conflict_not_a_match():
    cited = work("Graph Attention Networks", year=2018, author="Velickovic")
    judged = judge_title_search(cited, [rec("Graph Attention Networks", year=2009)])
    assert judged.match is None
    assert [(c.field, c.cited, c.found) for c in judged.conflicts] == [("year", "2018", "2009")]
    assert judged.conflicts[0].by_source == (("crossref", "2009"),)


def test_exact_title_with_first_author_conflict_is_a_recorded_conflict():
    cited = work("Graph Attention Networks", year=2018, author="Velickovic")
    judged = judge_title_search(cited, [rec("Graph Attention Networks", author="Smith")])
    assert judged.match is None
    assert [(c.field, c.cited, c.found) for c in judged.conflicts] == [
        ("author", "Velickovic", "Smith")]


def test_year_within_one_is_not_a_conflict():
    cited = work("Graph Attention Networks", year=2018)
    candidate = rec("Graph Attention Networks", year=2017)
    assert judge_title_search(cited, [candidate]).match is candidate


def test_agreeing_metadata_is_preferred_over_missing_metadata():
    cited = work("Graph Attention Networks", year=2018, author="Velickovic")
    bare = rec("Graph Attention Networks")
    agreeing = rec("Graph Attention Networks", year=2018, author="Veličković")
    assert judge_title_search(cited, [bare, agreeing]).match is agreeing


@pytest.mark.parametrize(
    "title", ["Editorial", "Short Communication", "Case Report", "Publisher Correction"]
)
def test_generic_titles_never_match_on_title_alone(title):
    judged = judge_title_search(
        work(title, year=2004, author="Lee"), [rec(title, year=2004, author="Lee")]
    )
    assert judged.generic and judged.match is None


def test_content_title_containing_a_genre_word_is_not_generic():
    candidate = rec("Case Report of a Rare Tumor")
    judged = judge_title_search(work("Case report of a rare tumor"), [candidate])
    assert not judged.generic and judged.match is candidate


def test_title_search_uses_full_titles_not_short_titles():
    candidate = rec("BERT: Pre-training of Deep Bidirectional Transformers", short=("BERT",))
    assert judge_title_search(work("BERT"), [candidate]).match is None


def test_chinese_titles_equal_match():
    cited = work("宫颈腺癌中ProEXC和PRMT5的表达及其临床意义", year=2020)
    candidate = rec("《宫颈腺癌中 ProEXC 和 PRMT5 的表达及其临床意义》。", year=2020)
    assert judge_title_search(cited, [candidate]).match is candidate


def test_chinese_titles_different_do_not_match_and_are_not_near_matches():
    cited = work("宫颈腺癌中ProEXC和PRMT5的表达及其临床意义")
    judged = judge_title_search(cited, [rec("宫颈腺癌中ProEXC的表达及其临床意义")])
    assert judged.match is None and judged.near_matches == ()


def test_cross_script_title_search_never_matches():
    cited = work("宫颈腺癌中ProEXC和PRMT5的表达及其临床意义")
    english = rec("[Expression of ProEXC and PRMT5 in cervical adenocarcinoma].")
    assert judge_title_search(cited, [english]).match is None


def test_untitled_work_has_no_title_match():
    assert judge_title_search(Work(), [rec("Anything")]) == judge_title_search(Work(), [])


# --- identifier lookups ---------------------------------------------------------------------


def test_id_record_with_equal_title_variant_matches():
    record = Record("crossref", "Attention Is All You Need", ("Attention Is All You Need",))
    judged = judge_identifier_record(work("attention is all you need"), record, authoritative=True)
    assert judged.kind == "match" and judged.matched and judged.reason("doi") is None


def test_id_record_short_title_variant_matches():
    record = rec("BERT: Pre-training of Deep Bidirectional Transformers", short=("BERT",))
    judged = judge_identifier_record(work("BERT"), record, authoritative=True)
    assert judged.kind == "match"


def test_id_record_close_title_is_a_match_with_title_conflict():
    record = rec("Deep Residual Learning for Image Recognition on Embedded Devices")
    judged = judge_identifier_record(
        work("Deep Residual Learning for Image Recognition"), record, authoritative=True
    )
    assert judged.kind == "match_with_title_conflict" and judged.matched
    assert judged.similarity >= 0.70
    assert judged.reason("doi") == "METADATA_CONFLICT"


def test_id_record_failed_title_with_conflict_from_authority_names_another_work():
    record = rec("A Survey of Protein Folding", year=2001, author="Baker")
    cited = work("Attention Is All You Need", year=2017, author="Vaswani")
    judged = judge_identifier_record(cited, record, authoritative=True)
    assert judged.kind == "mismatch" and not judged.matched
    assert judged.reason("doi") == "DOI_TITLE_MISMATCH"
    assert judged.reason("arxiv") == "ARXIV_TITLE_MISMATCH"


def test_id_record_failed_title_from_a_non_authority_is_only_unconfirmed():
    record = rec("A Survey of Protein Folding", year=2001, author="Baker")
    cited = work("Attention Is All You Need", year=2017, author="Vaswani")
    judged = judge_identifier_record(cited, record, authoritative=False)
    assert judged.kind == "unconfirmed"
    assert judged.reason("doi") == "DOI_TITLE_UNCONFIRMED"


def test_id_record_failed_title_without_conflict_is_unconfirmed():
    record = rec("Pre-training of Deep Bidirectional Transformers", year=2019, author="Devlin")
    judged = judge_identifier_record(
        work("BERT", year=2019, author="Devlin"), record, authoritative=True
    )
    assert judged.kind == "unconfirmed"


def test_id_record_year_within_one_is_no_conflict():
    record = rec("Something Else Entirely", year=2018, author="Devlin")
    judged = judge_identifier_record(
        work("BERT", year=2019, author="Devlin"), record, authoritative=True
    )
    assert judged.kind == "unconfirmed"


def test_id_lookup_without_cited_title_is_accepted():
    judged = judge_identifier_record(Work(year=2019), rec("Anything"), authoritative=True)
    assert judged.kind == "no_title" and judged.matched


def test_id_lookup_chinese_titles():
    cited = work("宫颈腺癌中ProEXC和PRMT5的表达及其临床意义")
    same = rec("宫颈腺癌中 ProEXC 和 PRMT5 的表达及其临床意义。")
    other = rec("宫颈腺癌中ProEXC的表达")
    english = rec("Expression of ProEXC and PRMT5 in cervical adenocarcinoma")
    assert judge_identifier_record(cited, same, authoritative=True).kind == "match"
    assert judge_identifier_record(cited, other, authoritative=True).kind == "mismatch"
    assert judge_identifier_record(cited, other, authoritative=False).kind == "unconfirmed"
    unverifiable = judge_identifier_record(cited, english, authoritative=True)
    assert unverifiable.kind == "unverifiable"
    assert unverifiable.reason("doi") == "DOI_EXISTS_TITLE_UNVERIFIABLE"
    latin = judge_identifier_record(work("Expression of ProEXC"), same, authoritative=True)
    assert latin.kind == "unverifiable"


def test_id_record_without_a_title_is_unverifiable():
    judged = judge_identifier_record(work("A title"), Record("doi_registry"), authoritative=True)
    assert judged.kind == "unverifiable"


# --- helpers --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cited", "found", "conflict"),
    [
        (Person("Müller", "J."), Person("Muller", "Jan"), False),
        (Person("Sorensen", "S."), Person("Sørensen", "Søren"), False),
        (Person("Lukasiewicz", "J."), Person("Łukasiewicz", "Jan"), False),
        (Person("van der Berg", "J."), Person("Jan van der Berg"), False),
        (Person("He", "Kaiming"), Person("Kaiming He"), False),
        (Person("Smith", "J."), Person("Jones", "J."), True),
        (Person("OpenAI", literal=True), Person("Brown", "T."), False),
        (Person("张", "三"), Person("张三"), False),
    ],
)
def test_first_author_conflict(cited, found, conflict):
    w = Work(title="t", authors=(cited,))
    r = Record("s", authors=(found,))
    assert first_author_conflict(w, r) is conflict


def test_year_conflict_against_every_year():
    w = Work(title="t", year=2020)
    assert year_conflict(w, Record("s", years=(2015, 2016)))
    assert not year_conflict(w, Record("s", years=(2015, 2021)))
    assert not year_conflict(w, Record("s"))
    assert not year_conflict(Work(title="t"), Record("s", years=(1990,)))


def test_a_version_of_record_is_preferred_when_a_venue_is_cited():
    """Accuracy then compares the cited venue with the version it names (DESIGN.md §4)."""
    preprint = Record("openalex", title="Graph Attention Networks",
                      titles=("Graph Attention Networks",), years=(2018,), is_preprint=True)
    published = Record("openalex", title="Graph Attention Networks",
                       titles=("Graph Attention Networks",), years=(2018,), venue="ICLR")
    cited = Work(title="Graph Attention Networks", year=2018, venue="ICLR")
    assert judge_title_search(cited, [preprint, published]).match is published
    as_preprint = Work(title="Graph Attention Networks", year=2018, names_preprint=True)
    assert judge_title_search(as_preprint, [published, preprint]).match is preprint


@pytest.mark.parametrize(
    ("cited", "record"),
    [
        ("Don\\&apos;t Stop Pretraining", "Don&#39;t Stop Pretraining"),
        ("Ros&amp;apos;s Law Revisited", "Ros's Law Revisited"),
        ("Q&amp;A over Tables", "Q&A over Tables"),
        ("The E. coli Genome", "The <i>E. coli</i> Genome"),
        ("Efficient k-means", 'Efficient <mml:math><mml:mi>k</mml:mi></mml:math>-means'),
        ("Schrödinger Bridges", "Schro\u0308dinger Bridges"),
        ("Fine-tuning at Scale", "\ufb01ne-tuning at Scale"),
    ],
)
def test_title_search_cleans_both_sides_alike(cited, record):
    """Normalization parity: entities, tags, LaTeX and compatibility forms on either side."""
    candidate = rec(record)
    assert judge_title_search(work(cited), [candidate]).match is candidate
    swapped = rec(cited)
    assert judge_title_search(work(record), [swapped]).match is swapped
