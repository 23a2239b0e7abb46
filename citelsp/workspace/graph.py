"""The citation graph: the one place that answers which references a citation names, which
citations a reference has, and which manuscripts use a bibliography.

A manuscript's bibliographies come from its front matter or ``\\bibliography{}``, else the
``citelsp.bibliography`` setting, else every bibliography in the workspace; they
are worked out when the manuscript changes (``update``), which is also when unopened
bibliography files are read; the files a workspace-wide query reaches are read by
``read_workspace`` after a change, before any such query. Queries never touch the disk.
Citations resolve by key, else (ref markers) through the slug map. The reverse maps
(bibliography → manuscripts, key → citations of a manuscript) are kept per document and
replaced when that document changes.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import yaml

from citelsp.documents.bibtex import BibtexBibliography
from citelsp.documents.manuscript import language_for_path
from citelsp.documents.model import Bibliography, Citation, Manuscript, Reference, key_list
from citelsp.documents.parse import BIBLIOGRAPHY_SUFFIXES, MANUSCRIPT_SUFFIXES, Document
from citelsp.uris import path_to_uri, uri_to_path
from citelsp.workspace.corpus import Corpus, read_document
from citelsp.workspace.projects import Inherited, Projects, quarto_merged
from citelsp.workspace.texmf import texmf_bibliography

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Resolved:
    """A citation's key resolved to the references it names (empty when dangling)."""

    key: str
    references: tuple[Reference, ...]


class CitationGraph:
    def __init__(self, corpus: Corpus) -> None:
        self.corpus = corpus
        self._uses: dict[str, tuple[str, ...]] = {}
        """Manuscript URI → the URIs of its bibliography files, in the order it names them."""
        self._fallback: set[str] = set()
        """Manuscripts that use every workspace bibliography (they name none)."""
        self._users: dict[str, set[str]] = {}
        """Bibliography URI → manuscripts using it (a manuscript's own front-matter
        ``references:`` count as a bibliography with the manuscript's URI)."""
        self._keys: dict[int, tuple[Bibliography, dict[str, list[Reference]],
                                    dict[str, list[Reference]]]] = {}
        """Per bibliography object: key → references, ids alias → references."""
        self._by_key: dict[str, tuple[Manuscript, dict[str, list[Citation]]]] = {}
        self._bibs: dict[str, tuple[int, list[Bibliography]]] = {}
        self._resolved: dict[str, tuple[Manuscript, int, list[tuple[Citation, Resolved]]]] = {}
        self._slug_map = self._load_slug_map()
        """Read with the settings (``reset``), never from inside a query."""
        self._workspace: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
        """The manuscript and bibliography files under the workspace roots that
        ``read_workspace`` read last."""
        self._changes = 0
        """Counts the changes after which the workspace must be read again."""
        self._read_at = -1
        """The value of ``_changes`` the workspace was last read at."""
        self._named: dict[str, list[tuple[str, str | None]]] = {}
        """Manuscript URI → the bibliography paths it names as written, each with its URI
        (None when the path cannot name a file at all)."""
        self._projects = Projects()
        self.in_tex_trees: set[str] = set()
        """Bibliographies found in TeX's own trees (``IEEEabrv.bib``): used, but not the
        writer's files to warn about."""
        self._inherited: dict[str, Inherited] = {}
        """Manuscript URI → what the project, folder metadata or LaTeX main file it is part
        of gives it (it names no bibliography itself, or Quarto joins them)."""

    # -- maintenance -----------------------------------------------------------------------

    def update(self, doc: Document) -> None:
        """Record what ``doc`` (just parsed) uses; reads the bibliography files it names."""
        if isinstance(doc, Manuscript):
            self._link(doc)
        elif doc.uri not in self._users:
            self._users[doc.uri] = set()
            self._relink_fallback()

    def remove(self, uri: str) -> None:
        """``uri`` is no longer known (closed and not needed, or deleted)."""
        self._changes += 1  # a closed manuscript is read from disk again
        self._unlink(uri)
        self._named.pop(uri, None)
        self._inherited.pop(uri, None)
        self._by_key.pop(uri, None)
        self._bibs.pop(uri, None)
        self._resolved.pop(uri, None)
        for stale in [k for k, (b, _, _) in self._keys.items() if b.uri == uri]:
            del self._keys[stale]
        if uri in self._users and not self._users[uri]:
            del self._users[uri]
            self._relink_fallback()

    def reset(self) -> None:
        """Settings or the files on disk changed: work every manuscript's bibliographies out
        again."""
        self._changes += 1
        self._slug_map = self._load_slug_map()
        self._projects.clear()
        for uri in list(self._uses):
            doc = self.corpus.load(uri)
            if isinstance(doc, Manuscript):
                self._link(doc)
            else:
                self.remove(uri)

    def _link(self, manuscript: Manuscript) -> None:
        self._unlink(manuscript.uri)
        uris, fallback = self._bibliography_uris(manuscript)
        self._uses[manuscript.uri] = uris
        if fallback:
            self._fallback.add(manuscript.uri)
        for uri in uris:
            self._users.setdefault(uri, set()).add(manuscript.uri)

    def _unlink(self, manuscript_uri: str) -> None:
        for uri in self._uses.pop(manuscript_uri, ()):
            users = self._users.get(uri)
            if users is not None:
                users.discard(manuscript_uri)
        self._fallback.discard(manuscript_uri)

    def _relink_fallback(self) -> None:
        for uri in list(self._fallback):
            doc = self.corpus.get(uri)
            if isinstance(doc, Manuscript):
                self._link(doc)

    def _bibliography_uris(self, manuscript: Manuscript) -> tuple[tuple[str, ...], bool]:
        """Front matter / ``\\bibliography`` first, then the setting, else the workspace."""
        own = (manuscript.uri,) if manuscript.inline is not None else ()
        path = uri_to_path(manuscript.uri)
        language = language_for_path(path.name)
        latex = language == "latex"
        if latex:  # \input{bibliography}: a thebibliography
            own += tuple(self._loaded(p) for p in self._projects.bibitems_below(path))
        written, base = list(manuscript.bibliography_paths), path.parent
        self._inherited.pop(manuscript.uri, None)
        if not written or language == "markdown":
            inherited = self._inherited_by(manuscript, path)
            if written and inherited is not None:
                inherited = _with_project(inherited, manuscript, base)
            if inherited is not None:
                self._inherited[manuscript.uri] = inherited
                written, base = list(inherited.written), inherited.folder
                own += tuple(u for u in map(self._loaded, inherited.bibitems) if u not in own)
        elif latex:
            base = self._folder_for_paths(manuscript, path, written)
        paths = []
        for name in filter(_names_a_file, written):
            located = base / name
            if latex and not located.exists() and (found := texmf_bibliography(name)):
                located = found  # where BibTeX and biber find it: TeX's own trees
                self.in_tex_trees.add(path_to_uri(found))
            paths.append(located)
        if latex and not all(p.exists() for p in paths):
            inherited = self._inherited.get(manuscript.uri)
            paths = self._with_bbl(paths, inherited.main if inherited and inherited.main else path)
        settings = self.corpus.settings
        if not written and settings.bibliography:
            written = list(settings.bibliography)
            paths = [self.corpus.setting_path(p) for p in written if _names_a_file(p)]
        if written:
            uris = [_uri(p) for p in paths]
            named = iter(uris)
            self._named[manuscript.uri] = [(w, next(named) if _names_a_file(w) else None)
                                           for w in written]
            macros: dict[str, str] = {}  # @string macros flow through them in order
            for uri in filter(None, uris):
                self.corpus.load(uri)
                doc = self.corpus.given_macros(uri, macros)
                if isinstance(doc, BibtexBibliography):
                    macros.update(doc.macros)
            return own + tuple(dict.fromkeys(filter(None, uris))), False
        self._named.pop(manuscript.uri, None)
        uris = self.corpus.scanned(BIBLIOGRAPHY_SUFFIXES)
        found = [u for u in uris if isinstance(self.corpus.load(u), Bibliography)]
        return own + tuple(found), True

    def _folder_for_paths(self, manuscript: Manuscript, path: Path, written: list[str]
                          ) -> Path:
        """What the bibliography paths a LaTeX file names are relative to: its folder, or,
        for a chapter, its main file's, where TeX runs (tried when one is not beside it)."""
        files = list(filter(_names_a_file, written))
        if all((path.parent / w).exists() for w in files):
            return path.parent
        main = self._projects.main_file(path, manuscript.root)
        if main is not None and all((main.parent / w).exists() for w in files):
            return main.parent
        return path.parent

    def document_parts(self, manuscript: Manuscript) -> list[Path]:
        """The files a LaTeX manuscript ``\\input``s or ``\\include``s (as on disk, and the
        files they input): the rest of the document it is the main file of."""
        path = uri_to_path(manuscript.uri)
        if language_for_path(path.name) != "latex":
            return []
        return self._projects.parts_below(path)

    def _with_bbl(self, paths: list[Path], main: Path) -> list[Path]:
        """``paths`` with the missing ones replaced by BibTeX's output for the main file
        (``main.bbl``), when it holds entries: arXiv sources ship the ``.bbl`` without the
        ``.bib``, and LaTeX reads the ``.bbl`` anyway. A failed BibTeX run leaves an empty
        one, and then the missing ``.bib`` is what to report. Read through the corpus, so
        an unchanged file is not read again at every link."""
        bbl = main.with_suffix(".bbl")
        doc = self.corpus.load(path_to_uri(bbl))
        if not isinstance(doc, Bibliography) or not doc.references:
            return paths
        return [p if p.exists() else bbl for p in paths]

    def _loaded(self, path: Path) -> str:
        uri = path_to_uri(path)
        self.corpus.load(uri)
        return uri

    def _inherited_by(self, manuscript: Manuscript, path: Path) -> Inherited | None:
        """What a manuscript that names no bibliography gets from the document or project
        it is part of: a LaTeX chapter from its main file, a Markdown one from its project."""
        language = language_for_path(path.name)
        if language == "latex" and "\0" not in (manuscript.root or ""):
            return self._projects.latex_document(path, manuscript.root)
        if language == "markdown":
            return self._projects.markdown_project(path)
        return None

    # -- bibliographies --------------------------------------------------------------------

    def bibliographies(self, manuscript: Manuscript) -> list[Bibliography]:
        """The bibliographies ``manuscript`` uses, its own front-matter references first."""
        memo = self._bibs.get(manuscript.uri)
        if memo is not None and memo[0] == self.corpus.generation:
            return memo[1]
        found = [manuscript.inline] if manuscript.inline is not None else []
        for uri in self._uses.get(manuscript.uri, ()):  # linked by ``update``: no disk here
            if uri != manuscript.uri and isinstance(b := self.corpus.get(uri), Bibliography):
                found.append(b)
            elif uri != manuscript.uri and isinstance(b, Manuscript) and b.inline is not None:
                found.append(b.inline)  # an input file's thebibliography
        self._bibs[manuscript.uri] = (self.corpus.generation, found)
        return found

    def unreadable_bibliographies(self, manuscript: Manuscript) -> list[tuple[str, str]]:
        """The bibliographies ``manuscript`` names that cannot be used, as written, each
        with why."""
        found = []
        for written, uri in self._named.get(manuscript.uri, []):
            if uri is None:
                found.append((written, "a URL, and citelsp reads local files only: download "
                                       "it and name the file" if _URL.match(written) else
                                       "the path cannot name a file (a NUL character?)"))
            elif not isinstance(self.corpus.get(uri), Bibliography):
                found.append((written, self.corpus.unreadable.get(uri)
                              or "not a BibTeX, CSL-JSON or CSL-YAML bibliography"))
        if found and (inherited := self._inherited.get(manuscript.uri)) is not None:
            source = inherited.source
            own = set(manuscript.bibliography_paths)
            found = [(written, why if written in own else f"{why}; named in {source}")
                     for written, why in found]
        return found

    def partly_open(self, manuscript: Manuscript) -> bool:
        """Whether ``manuscript`` is part of a document that is not open as a whole (a
        chapter checked on its own), so what the rest of the document cites is not known:
        its LaTeX main file is not open, or its Markdown project is too large to read (the
        other documents of a project are read from disk, ``Projects.cited_in_project``)."""
        inherited = self._inherited.get(manuscript.uri)
        if inherited is None:
            return False
        if inherited.main is not None:
            return _uri(inherited.main) not in self.corpus.open
        return self._projects.markdown_files(inherited.source.parent) is None  # read from disk

    def users(self, bibliography_uri: str) -> list[Manuscript]:
        """The open manuscripts that use this bibliography (the ones a writer works on:
        unopened files that find-references read do not make entries duplicates)."""
        return [m for u in sorted(self._users.get(bibliography_uri, ()))
                if self.corpus.is_open(u) and isinstance(m := self.corpus.get(u), Manuscript)]

    def co_used(self, bibliography: Bibliography) -> list[Bibliography]:
        """``bibliography`` first, then every bibliography used together with it."""
        seen = {bibliography.uri: bibliography}
        for m in self.users(bibliography.uri):
            for other in self.bibliographies(m):
                seen.setdefault(other.uri, other)
        return list(seen.values())

    def key_index(self, bibliography: Bibliography) -> dict[str, list[Reference]]:
        """Key → references of one bibliography, rebuilt only when the bibliography is new."""
        return self._indexes(bibliography)[0]

    def alias_index(self, bibliography: Bibliography) -> dict[str, list[Reference]]:
        """Alias → references whose biblatex ``ids`` field lists it (as ``key_index``)."""
        return self._indexes(bibliography)[1]

    def _indexes(self, bibliography: Bibliography) -> tuple[dict[str, list[Reference]],
                                                            dict[str, list[Reference]]]:
        cached = self._keys.get(id(bibliography))
        if cached is not None and cached[0] is bibliography:
            return cached[1], cached[2]
        for stale in [k for k, (b, _, _) in self._keys.items() if b.uri == bibliography.uri]:
            del self._keys[stale]
        keys: dict[str, list[Reference]] = {}
        aliases: dict[str, list[Reference]] = {}
        for r in bibliography.references:
            keys.setdefault(r.key, []).append(r)
            if (ids := r.fields.get("ids")) is not None:
                for alias in key_list(ids.value):
                    aliases.setdefault(alias, []).append(r)
        self._keys[id(bibliography)] = (bibliography, keys, aliases)
        return keys, aliases

    def keys(self, manuscript: Manuscript) -> dict[str, Reference]:
        """Key → first reference, for completion."""
        keys: dict[str, Reference] = {}
        for b in self.bibliographies(manuscript):
            for r in b.references:
                keys.setdefault(r.key, r)
        return keys

    # -- citations → references ------------------------------------------------------------

    def alias_of(self, manuscript: Manuscript, key: str) -> Reference | None:
        """The entry whose ``ids`` field lists ``key`` among the manuscript's bibliographies."""
        for b in self.bibliographies(manuscript):
            if found := self.alias_index(b).get(key):
                return found[0]
        return None

    def references_of(self, manuscript: Manuscript, citation: Citation) -> Resolved:
        """The references a citation names: by key; else, in LaTeX, by a biblatex ``ids``
        alias (biber resolves them; pandoc's citeproc and BibTeX do not); else (markers)
        through the slug map."""
        bibs = self.bibliographies(manuscript)
        refs = self._lookup(bibs, citation.key)
        if refs or citation.wildcard:
            return Resolved(citation.key, refs)
        if citation.syntax == "latex" and (primary := self.alias_of(manuscript, citation.key)):
            return Resolved(primary.key, self._lookup(bibs, primary.key))
        members = self.sets_of(manuscript).get(citation.key) or next(
            (b.sets[citation.key] for b in bibs if citation.key in b.sets), None)
        if members is not None:  # a biblatex set (@set or \defbibentryset): its members
            return Resolved(citation.key, tuple(r for k in members
                                                for r in self._lookup(bibs, k)))
        mapped = self.slug_map().get(citation.key) if citation.syntax == "marker" else None
        if mapped:
            return Resolved(mapped, self._lookup(bibs, mapped))
        return Resolved(citation.key, ())

    def sets_of(self, manuscript: Manuscript) -> Mapping[str, tuple[str, ...]]:
        """The entry sets a manuscript can cite by name: its own ``\\defbibentryset``s, and
        those of the LaTeX main file it is a chapter of."""
        inherited = self._inherited.get(manuscript.uri)
        if inherited is None or not inherited.sets:
            return manuscript.sets
        return {**inherited.sets, **manuscript.sets}

    def _lookup(self, bibliographies: list[Bibliography], key: str) -> tuple[Reference, ...]:
        return tuple(r for b in bibliographies for r in self.key_index(b).get(key, ()))

    def resolved(self, manuscript: Manuscript) -> list[tuple[Citation, Resolved]]:
        """Every citation of ``manuscript`` resolved (wildcards: every reference of its
        bibliographies); worked out once per change of the corpus, however many checks ask."""
        memo = self._resolved.get(manuscript.uri)
        if memo is not None and memo[0] is manuscript and memo[1] == self.corpus.generation:
            return memo[2]
        bibs = self.bibliographies(manuscript)
        out = []
        for c in manuscript.citations:
            if c.wildcard:
                out.append((c, Resolved(c.key, tuple(r for b in bibs for r in b.references))))
            else:
                out.append((c, self.references_of(manuscript, c)))
        self._resolved[manuscript.uri] = (manuscript, self.corpus.generation, out)
        return out

    def cited(self, manuscript: Manuscript) -> list[tuple[Citation, tuple[Reference, ...]]]:
        """Every citation of ``manuscript`` with the references it names."""
        return [(c, resolved.references) for c, resolved in self.resolved(manuscript)]

    def cited_keys(self, manuscript: Manuscript) -> set[str] | None:
        """The keys ``manuscript`` cites (resolved through the slug map), with those of the
        LaTeX files it inputs; None when it cites everything (``\\nocite{*}``)."""
        keys: set[str] = set()
        for c, resolved in self.resolved(manuscript):
            if c.wildcard:
                return None
            keys.add(resolved.key)
            keys.update(r.key for r in resolved.references)  # a set's members too
        path = uri_to_path(manuscript.uri)
        if language_for_path(path.name) == "latex":  # and what the files it inputs cite
            below = self._projects.cited_below(path)
            return None if below is None else keys | below
        inherited = self._inherited.get(manuscript.uri)
        if inherited is not None:  # and what the project's other documents cite, on disk
            project = self._projects.cited_in_project(inherited.source.parent)
            return None if project is None else keys | project
        return keys

    # -- references → citations ------------------------------------------------------------

    def citations_of(self, ref: Reference) -> list[Citation]:
        """Every citation in a known manuscript that names ``ref`` (wildcards excluded)."""
        found: list[Citation] = []
        slugs = [s for s, k in self.slug_map().items() if k == ref.key]
        for m in self.users(ref.uri):
            by_key = self._citations_by_key(m)
            candidates = by_key.get(ref.key, []) + [c for s in slugs for c in by_key.get(s, [])
                                                    if c.syntax == "marker"]
            if (ids := ref.fields.get("ids")) is not None:  # \cite{alias} (biblatex)
                candidates += [c for a in key_list(ids.value) for c in by_key.get(a, [])
                               if c.syntax == "latex"]
            for sets in [self.sets_of(m)] + [b.sets for b in self.bibliographies(m)]:
                candidates += [c for set_key, members in sets.items() if ref.key in members
                               for c in by_key.get(set_key, [])]  # \cite{set} it is in
            found += [c for c in candidates
                      if any(r is ref for r in self.references_of(m, c).references)]
        found.sort(key=lambda c: (c.uri, c.span.start))
        return found

    def _citations_by_key(self, manuscript: Manuscript) -> dict[str, list[Citation]]:
        memo = self._by_key.get(manuscript.uri)
        if memo is not None and memo[0] is manuscript:
            return memo[1]
        index: dict[str, list[Citation]] = {}
        for c in manuscript.citations:
            if not c.wildcard:
                index.setdefault(c.key, []).append(c)
        self._by_key[manuscript.uri] = (manuscript, index)
        return index

    # -- the whole workspace (navigation, rename, decisions) -------------------------------

    @property
    def workspace_read(self) -> bool:
        """Whether ``read_workspace`` has read the files since they last changed."""
        return self._read_at == self._changes

    def read_workspace(self) -> Iterator[None]:
        """Read (when changed) and link every manuscript and bibliography file under the
        workspace roots, so that find-references and rename reach files the editor has not
        opened; one step per file, so a server reads them between other work. Run after a
        change (``workspace_read``), never from inside a query."""
        changes = self._changes
        manuscripts = []
        for uri in self.corpus.scanned(MANUSCRIPT_SUFFIXES):
            doc = self.corpus.load(uri)
            if isinstance(doc, Manuscript):
                if doc.uri not in self._uses:
                    self._link(doc)
                manuscripts.append(uri)
            yield
        bibliographies = []
        for uri in self.corpus.scanned(BIBLIOGRAPHY_SUFFIXES):
            if isinstance(self.corpus.load(uri), Bibliography):
                bibliographies.append(uri)
            yield
        if changes == self._changes:  # else read again: what was read may be gone
            self._workspace = (tuple(manuscripts), tuple(bibliographies))
            self._read_at = changes

    def all_manuscripts(self) -> list[Manuscript]:
        """The open manuscripts and those ``read_workspace`` found, as the corpus holds them
        now."""
        uris = dict.fromkeys(self.corpus.open)
        uris.update(dict.fromkeys(self._workspace[0]))
        return [m for uri in uris if isinstance(m := self.corpus.get(uri), Manuscript)]

    def all_bibliographies(self) -> list[Bibliography]:
        """Every bibliography of the workspace and of its manuscripts (``read_workspace``)."""
        seen: dict[str, Bibliography] = {}
        for uri in (*self.corpus.open, *self._workspace[1]):
            if isinstance(b := self.corpus.get(uri), Bibliography):
                seen.setdefault(b.uri, b)
        for m in self.all_manuscripts():
            for b in self.bibliographies(m):
                seen.setdefault(b.uri, b)
        return list(seen.values())

    def entries(self, key: str) -> list[Reference]:
        """Every entry with ``key`` anywhere in the workspace."""
        return [r for b in self.all_bibliographies() for r in self.key_index(b).get(key, ())]

    def citations_with_key(self, key: str) -> list[Citation]:
        """Every citation of ``key`` in every manuscript (slug-mapped markers included)."""
        slugs = {s for s, k in self.slug_map().items() if k == key}
        return [c for m in self.all_manuscripts() for c in m.citations
                if not c.wildcard and (c.key == key or c.syntax == "marker" and c.key in slugs)]

    # -- slug map --------------------------------------------------------------------------

    def slug_map(self) -> dict[str, str]:
        return self._slug_map

    def _load_slug_map(self) -> dict[str, str]:
        value = self.corpus.settings.slug_map
        if value is None:
            return {}
        if not isinstance(value, str):
            return dict(value)
        path = self.corpus.setting_path(value)
        try:
            text = read_document(path).text
            data = json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
        except (OSError, ValueError, RecursionError, yaml.YAMLError) as exc:
            log.warning("cannot read slug map %s: %s", path, exc)
            return {}
        if not isinstance(data, dict):
            return {}
        return {str(k): str(v) for k, v in data.items() if isinstance(v, str | int)}


_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+://")
"""pandoc fetches a bibliography named by URL; citelsp does not go to the network for one."""


def _with_project(project: Inherited, manuscript: Manuscript, folder: Path
                  ) -> Inherited | None:
    """A document's own bibliographies with its Quarto project's, when Quarto joins them
    (either is a list); None when its own replace the project's, as they do otherwise."""
    own = Inherited(uri_to_path(manuscript.uri), tuple(manuscript.bibliography_paths), folder,
                    quarto=True, listed=manuscript.bibliography_listed)
    merged = quarto_merged(project, own) if project.quarto else None
    return replace(merged, source=project.source) if merged and merged.listed else None


def _names_a_file(written: str) -> bool:
    return "\0" not in written and _URL.match(written) is None


def _uri(path) -> str | None:
    try:
        return path_to_uri(path)
    except (OSError, ValueError):
        return None


def reference_at(bibliography: Bibliography, offset: int) -> Reference | None:
    for r in bibliography.references:
        if r.span.contains(offset):
            return r
    return None


def citation_at(manuscript: Manuscript, offset: int) -> Citation | None:
    """The citation whose key is under the cursor, else the one whose group is."""
    for c in manuscript.citations:
        if c.span.contains(offset):
            return c
    for c in manuscript.citations:
        if c.full_span.contains(offset):
            return c
    return None
