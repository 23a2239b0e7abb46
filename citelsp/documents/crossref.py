"""What a BibTeX entry takes from the entry its ``crossref`` field names.

DBLP's exports and Beebe's TeX Live bibliographies write a paper's venue and year once, in
the ``@proceedings`` or ``@book`` entry its ``crossref`` names; BibTeX and biber copy the
fields a child lacks from that parent. Read without them, such a paper had no year and no
venue to check, and its parent looked uncited.

What is taken, and why not everything BibTeX takes:

- the fields that describe the container: authors (an ``@inbook`` chapter's are the book's),
  year, date, journal, booktitle, volume, number, publisher, ISSN, language;
- never the parent's identifiers (DOI, URL, eprint, ISBN): they name the volume, not the
  paper, and a reference is judged on its own identifiers; nor its title, subtitle, pages
  (a volume's page count) or note;
- the parent's ``title`` becomes the child's ``booktitle`` (``journaltitle`` for an article
  of a ``@periodical``) when the parent has no ``booktitle``: biber's rule, which BibTeX
  styles meet by repeating the title as ``booktitle`` in the parent, as DBLP and Beebe do.

The parent is found in the same file by key, ignoring case as BibTeX does; a chain of
crossrefs is followed as biber follows it (BibTeX stops at one), a cycle stops it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from citelsp.documents.model import Field, Reference, key_list

INHERITED = frozenset({
    "author", "year", "date", "journal", "journaltitle", "booktitle", "volume", "number",
    "issue", "publisher", "issn", "language", "langid",
})  # fmt: skip
"""The fields a child takes from its parent when it lacks them (all names lowercase, as
the BibTeX parser gives them)."""

PARENT_FIELDS = ("crossref", "xref")
"""Fields that name another entry of the bibliography: ``crossref`` (fields are inherited)
and biblatex's ``xref`` (only the relation). BibTeX prints a parent that children name."""

_VOLUMES = frozenset({"proceedings", "mvproceedings", "book", "mvbook", "collection",
                      "mvcollection", "reference", "mvreference"})
_TITLE_AS: dict[str, tuple[str, frozenset[str], tuple[str, ...]]] = {
    **{child: ("booktitle", _VOLUMES, ("booktitle",)) for child in (
        "inproceedings", "conference", "incollection", "inbook", "inreference", "bookinbook",
        "suppbook", "suppcollection")},
    **{child: ("journaltitle", frozenset({"periodical"}), ("journal", "journaltitle"))
       for child in ("article", "suppperiodical")},
}
"""A child's type → the field a parent's title fills in it, the parent types that do so
(biber's inheritance rules), and the fields that, in either, already name the venue."""

_MAX_CHAIN = 8


def parent_key(ref: Reference) -> str | None:
    """The key the entry's ``crossref`` names, as written (stripped), or None."""
    f = ref.fields.get("crossref")
    key = f.value.strip() if f is not None else ""
    return key or None


def named_keys(ref: Reference) -> list[str]:
    """The keys the entry's ``crossref`` and ``xref`` fields name, and those biblatex's
    ``related`` lists (a translation's original, a reprint's first edition: printed with
    it)."""
    keys = [key for name in PARENT_FIELDS
            if (f := ref.fields.get(name)) is not None and (key := f.value.strip())]
    if (related := ref.fields.get("related")) is not None:
        keys += key_list(related.value)
    return keys


def inherited_fields(child: Reference, parents: Mapping[str, Reference]) -> dict[str, Field]:
    """The fields ``child`` takes from its crossref parent (and the parent's parent), given
    the entries of its file by casefolded key (the first of each key)."""
    taken: dict[str, Field] = {}
    seen = {child.key.casefold()}
    ref = child
    for _ in range(_MAX_CHAIN):
        key = parent_key(ref)
        if key is None or key.casefold() in seen:
            break
        seen.add(key.casefold())
        parent = parents.get(key.casefold())
        if parent is None:
            break
        for name, f in parent.fields.items():
            if name in INHERITED and name not in child.fields:
                taken.setdefault(name, f)
        rule = _TITLE_AS.get(child.entry_type.lower())
        title = parent.fields.get("title")
        if rule is not None and title is not None and parent.entry_type.lower() in rule[1] and (
                not any(n in child.fields or n in taken or n in parent.fields for n in rule[2])):
            taken[rule[0]] = title
        ref = parent
    return taken


def link(references: Iterable[Reference], children: Iterable[Reference]
         ) -> dict[Reference, Reference]:
    """Each of ``children`` (entries with a ``crossref``) whose inherited fields changed →
    the same entry with the new ones (``Reference.with_inherited``). Unchanged entries are
    left out, so an edit elsewhere keeps their objects and what is cached on them."""
    parents: dict[str, Reference] = {}
    for ref in references:
        parents.setdefault(ref.key.casefold(), ref)
    changed: dict[Reference, Reference] = {}
    for child in children:
        taken = inherited_fields(child, parents)
        old = child.inherited
        if len(taken) != len(old) or any(old.get(n) is not f for n, f in taken.items()):
            changed[child] = child.with_inherited(taken)
    return changed
