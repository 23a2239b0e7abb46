"""Work extraction: decoded titles, names, years, venues and the manual flag."""

import json

import pytest

from citelsp.documents.bibtex import parse_bibtex
from citelsp.documents.csl import parse_csl_json, parse_csl_yaml
from citelsp.documents.model import Person
from citelsp.documents.works import (
    graded_as_paper,
    parse_bibtex_name,
    parse_bibtex_names,
    work_of,
)


def bib_work(body):
    (ref,) = parse_bibtex("file:///w.bib", f"@article{{k,\n{body}\n}}\n").references
    return work_of(ref)


def csl_work(item):
    item = {"id": "k", "type": "article-journal", **item}
    (ref,) = parse_csl_json("file:///w.json", json.dumps([item])).references
    return work_of(ref)


def test_bibtex_work_fields_decoded():
    work = bib_work(
        '  title = {{BERT}: Pre-training of {\\"U}ber \\& Deep Transformers},\n'
        "  author = {Devlin, Jacob and Chang, Ming-Wei and others},\n"
        "  journal = {J. Mach. Learn. Res.},\n"
        "  year = {2019},\n"
        "  volume = {12}, number = {3}, pages = {1--10},\n"
        "  publisher = {ACL},\n"
        "  url = {https://example.org/a\\_b},\n"
        "  issn = {1234-5678, 8765-4321},\n"
        "  langid = {english}"
    )
    assert work.title == "BERT: Pre-training of Über & Deep Transformers"
    assert work.authors == (Person("Devlin", "Jacob"), Person("Chang", "Ming-Wei"))
    assert work.has_et_al
    assert work.year == 2019
    assert work.venue == "J. Mach. Learn. Res."
    assert (work.volume, work.issue, work.pages) == ("12", "3", "1\u201310")
    assert work.publisher == "ACL"
    assert work.url == "https://example.org/a_b"
    assert work.issn == ("1234-5678", "8765-4321")
    assert work.language == "english"
    assert not work.manual


def test_reference_work_is_lazy_and_cached():
    (ref,) = parse_bibtex("file:///w.bib", "@misc{k, title = {{T}itle}}").references
    assert "work" not in ref.__dict__
    assert ref.work.title == "Title"
    assert ref.work is ref.work


@pytest.mark.parametrize(
    ("fields", "venue"),
    [
        ("journaltitle = {Nature}", "Nature"),
        ("booktitle = {Proc. of {ACL}}", "Proc. of ACL"),
        ("journal = {}, booktitle = {Fallback}", "Fallback"),
    ],
)
def test_bibtex_venue_sources(fields, venue):
    assert bib_work(fields).venue == venue


@pytest.mark.parametrize(
    ("fields", "year"),
    [("year = {2020}", 2020), ("date = {2018-04-01}", 2018), ("year = {circa 1999a}", 1999)],
)
def test_bibtex_year_sources(fields, year):
    assert bib_work(fields).year == year


def test_bibtex_year_missing_or_unreadable():
    assert bib_work("year = {n.d.}").year is None
    assert bib_work("title = {x}").year is None


@pytest.mark.parametrize("value", ["manual", "Manual", " MANUAL "])
def test_bibtex_manual_flag(value):
    assert bib_work(f"citelsp = {{{value}}}").manual


def test_bibtex_url_command_and_no_typography():
    assert bib_work("url = {\\url{https://x.org/a--b~c}}").url == "https://x.org/a--b~c"


@pytest.mark.parametrize(
    ("name", "person"),
    [
        ("Smith, John", Person("Smith", "John")),
        ("John Smith", Person("Smith", "John")),
        ("Ludwig van Beethoven", Person("van Beethoven", "Ludwig")),
        ("van Beethoven, Ludwig", Person("van Beethoven", "Ludwig")),
        ("Martin Luther King", Person("King", "Martin Luther")),
        ("King, Jr, Martin Luther", Person("King", "Martin Luther")),
        ('M{\\"u}ller, Hans', Person("Müller", "Hans")),
        ("Aristotle", Person("Aristotle")),
        ("{World Health Organization}", Person("World Health Organization", literal=True)),
        ("{Barnes and Noble}", Person("Barnes and Noble", literal=True)),
        ("{\\'E}mile Zola", Person("Zola", "Émile")),
    ],
)
def test_parse_bibtex_name(name, person):
    assert parse_bibtex_name(name) == person


def test_name_list_splits_only_at_depth_zero():
    people, et_al = parse_bibtex_names(
        "{Barnes and Noble} and Doe, Jane AND\n  Roe, Richard and others"
    )
    assert [p.family for p in people] == ["Barnes and Noble", "Doe", "Roe"]
    assert people[0].literal and et_al
    assert parse_bibtex_names("") == ((), False)
    assert parse_bibtex_names("Sanderson, Brandon") == ((Person("Sanderson", "Brandon"),), False)


def test_name_list_with_stray_braces_splits_where_the_depth_is_zero():
    """An unmatched ``}`` does not take the depth below 0; an unclosed ``{`` keeps the rest."""
    people, _ = parse_bibtex_names("Doe} and Roe, R. and {Open and Shut} and Ng")
    assert [p.family for p in people] == ["Doe", "Roe", "Open and Shut", "Ng"]
    people, _ = parse_bibtex_names("Doe and {Unclosed and Roe")
    assert [p.family for p in people] == ["Doe", "Unclosed and Roe"]


def test_csl_work_fields():
    work = csl_work(
        {
            "title": "Deep <i>learning</i> &amp; friends",
            "author": [
                {"family": "Doe", "given": "Jane"},
                {"literal": "World Health Organization"},
                {"family": "Beethoven", "non-dropping-particle": "van", "given": "Ludwig"},
            ],
            "issued": {"date-parts": [[2021, 3]]},
            "container-title": ["Nature", "Nat."],
            "volume": 7,
            "issue": "2",
            "page": "10-20",
            "publisher": "NPG",
            "URL": "https://example.org",
            "ISSN": ["1234-5678"],
            "language": "en",
        }
    )
    assert work.title == "Deep learning & friends"
    assert work.authors == (
        Person("Doe", "Jane"),
        Person("World Health Organization", literal=True),
        Person("van Beethoven", "Ludwig"),
    )
    assert work.year == 2021
    assert work.venue == "Nature"
    assert (work.volume, work.issue, work.pages) == ("7", "2", "10-20")
    assert work.publisher == "NPG" and work.url == "https://example.org"
    assert work.issn == ("1234-5678",)
    assert work.language == "en"
    assert not work.manual and not work.has_et_al


@pytest.mark.parametrize(
    ("issued", "year"),
    [
        ({"date-parts": [[2020, 1, 2]]}, 2020),
        ({"date-parts": [["2019"]]}, 2019),
        ({"raw": "Spring 2018"}, 2018),
        ({"literal": "circa 1850"}, 1850),
        ({"date-parts": [[]]}, None),
        (None, None),
    ],
)
def test_csl_years(issued, year):
    assert csl_work({"issued": issued}).year == year


def test_csl_manual_note_and_single_element_title_list():
    work = csl_work({"title": ["标题"], "note": "checked by hand; citelsp:manual"})
    assert work.manual and work.title == "标题"


def test_csl_yaml_work_with_string_date():
    text = "---\nreferences:\n- id: a\n  type: book\n  title: T\n  issued: 2020-05-01\n---\n"
    (ref,) = parse_csl_yaml("file:///p.md", text, 4, text.rindex("---")).references
    assert work_of(ref).year == 2020 and work_of(ref).title == "T"


def misc_work(body, kind="misc"):
    (ref,) = parse_bibtex("file:///w.bib", f"@{kind}{{k,\n{body}\n}}\n").references
    return ref.entry_type, work_of(ref)


@pytest.mark.parametrize(
    "body",
    [
        "  howpublished = {arXiv preprint arXiv:2101.00001}",
        "  note = {bioRxiv preprint}",
        "  journal = {CoRR}",
        "  eprint = {2101.00001}",
        "  eprint = {hep-th/9901001}",
        "  url = {https://arxiv.org/abs/2101.00001}",
        "  url = {\\url{https://www.biorxiv.org/content/10.1101/2020.01.01.900001v1}}",
        "  doi = {10.48550/arXiv.2101.00001}",
        "  doi = {10.2139/ssrn.3312874}",
        "  publisher = {arXiv}",
    ],
)
def test_a_misc_entry_that_names_a_preprint_server_is_a_paper(body):
    kind, work = misc_work(f"  title = {{A Preprint}},\n{body}")
    assert work.names_preprint
    assert graded_as_paper(kind, work)


@pytest.mark.parametrize(
    "body",
    [
        "  howpublished = {Proceedings of the 2024 Workshop on Things}",
        "  note = {In Proc. of ICML}",
    ],
)
def test_a_misc_entry_that_names_proceedings_is_a_paper(body):
    kind, work = misc_work(f"  title = {{A Paper}},\n{body}")
    assert work.names_proceedings and not work.names_preprint
    assert graded_as_paper(kind, work)


@pytest.mark.parametrize(
    "body",
    [
        "  howpublished = {\\url{https://pytorch.org/docs/stable/index.html}}",
        "  url = {https://neurips.cc/Conferences/2023/CallForPapers}",
        "  url = {https://huggingface.co/datasets/red1xe/code_instructions}",
        "  note = {Accessed 2024-05-01}",
        "  doi = {10.1101/gr.279093.124}",  # Genome Research, a journal sharing bioRxiv's prefix
    ],
)
def test_a_web_page_stays_a_web_page(body):
    kind, work = misc_work(f"  title = {{A Page}},\n{body}")
    assert not (work.names_preprint or work.names_proceedings)
    assert not graded_as_paper(kind, work)


def test_paper_types_are_papers_and_books_stay_books():
    assert graded_as_paper(*misc_work("  title = {T}", kind="article"))
    assert graded_as_paper(*misc_work("  title = {T}", kind="inproceedings"))
    assert not graded_as_paper(*misc_work("  title = {T}, eprint = {2101.00001}", kind="book"))


@pytest.mark.parametrize(
    "authors",
    ["Ann Smith and others", "Smith, Ann and et al.", "Ann Smith et al.", "Smith, Ann and Others"],
)
def test_et_al_in_any_spelling(authors):
    work = bib_work(f"  title = {{T}},\n  author = {{{authors}}}")
    assert work.has_et_al
    assert work.authors == (Person("Smith", "Ann"),)


def test_csl_others_is_et_al():
    work = csl_work({"title": "T", "author": [{"family": "Smith", "given": "Ann"},
                                              {"literal": "others"}]})
    assert work.has_et_al and work.authors == (Person("Smith", "Ann"),)
    assert not csl_work({"title": "T", "author": [{"family": "Smith"}]}).has_et_al


def test_titles_are_cleaned_of_entities_and_markup_in_both_formats():
    assert bib_work("  title = {Don\\&apos;t Stop: Q&amp;A <i>in vivo</i>}").title == (
        "Don't Stop: Q&A in vivo")
    assert csl_work({"title": "Don&amp;apos;t Stop: <i>in vivo</i>"}).title == (
        "Don't Stop: in vivo")


# --- BibLaTeX as biber and pandoc read it (issue 24) ------------------------------------------


def test_the_extended_name_format_is_read():
    """Better BibTeX writes ``family=…, given=…, prefix=…, useprefix=true``; the prefix joins
    the family name, as "van Dijk" does in "Marten van Dijk"."""
    work = bib_work("author = {family=Dijk, given=Marten, prefix=van, useprefix=true and "
                    "family={Fernández Ruiz}, given=Ana and Smith, John}, title = {T}")
    assert work.authors == (Person("van Dijk", "Marten"), Person("Fernández Ruiz", "Ana"),
                            Person("Smith", "John"))


@pytest.mark.parametrize(("fields", "year"), [
    ("date = {2019-03}, year = {2020}", 2019), ("date = {-0876}", -877),
    ("date = {1829/1830}", 1829), ("date = {199u}", None), ("date = {19XX}, year = {1950}", 1950),
    ("year = {2020}", 2020)])
def test_date_wins_over_year_and_bc_dates_read_as_pandoc_reads_them(fields, year):
    assert bib_work(f"title = {{T}}, {fields}").year == year


def test_biblatex_sorting_and_string_macros_print_as_biblatex_prints_them():
    work = bib_work(r"title = {{\noopsort{b}}Bottom \hyphen up \bibstring{and} down}")
    assert work.title == "Bottom -up and down"


def test_a_key_may_hold_parentheses_in_a_braced_entry():
    bib = parse_bibtex("file:///r.bib", "@article{smith(2020),\n  title = {T},\n}\n"
                                        "@article(jones,\n  title = {U},\n)\n")
    assert [r.key for r in bib.references] == ["smith(2020)", "jones"] and bib.problems == []


@pytest.mark.parametrize(("author", "families"), [
    ("John Doe", ["John Doe"]), ({"family": "Pelikan"}, ["Pelikan"]),
    (["宮水 三葉", {"family": "Crick", "given": "F."}], ["宮水 三葉", "Crick"])])
def test_csl_names_written_by_hand_read_as_pandoc_reads_them(author, families):
    """pandoc reads one name without a list, and a name written as a string as a literal."""
    work = csl_work({"id": "a", "type": "book", "title": "T", "author": author})
    assert [p.family for p in work.authors] == families


def test_inline_html_in_a_csl_json_title_reads_as_a_services_title():
    """CSL-JSON titles carry the services' markup (``<sub>``, ``<i>``, small-caps spans):
    read as the services' titles are, so the two compare equal."""
    from citelsp.documents.text import plain_title

    raw = 'H<sub>2</sub>O on <i>TiO<sub>2</sub></i> <span style="font-variant:small-caps;">x</span>'
    assert csl_work({"title": raw}).title == plain_title(raw) == "H2O on TiO2 x"
