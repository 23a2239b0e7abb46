"""Resolved, typed settings: defaults, client options (camelCase), and the environment.

One conversion point: ``Settings.from_options`` takes the ``citelsp`` section a client sends
(``initializationOptions`` or ``workspace/configuration``) plus the environment.

``OPTIONS`` is the one table of client settings. To add a setting: add a row there, read it
in ``Settings.from_options``, then run ``python editors/vscode/scripts/settings.py`` to
regenerate the VS Code extension's settings (tests/test_editor_settings.py fails until then).

User level and workspace level: the environment and ``initializationOptions`` are the user's
own; ``workspace/configuration`` and ``didChangeConfiguration`` answer with the client's merged
section, which a cloned repository's settings file may have written. A base URL that only the
merged section names is used, but its origin never receives an API key (``Endpoint.user_level``).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import platformdirs


@dataclass(frozen=True)
class Endpoint:
    """One host a resolver talks to: its base URL and the pacing it asks for."""

    base_url: str
    min_interval_ms: int
    user_level: bool = True
    """``base_url`` is the default or the user's own (environment, ``initializationOptions``):
    its origin may receive the API key. A workspace-level base URL receives none; the default
    origin always may."""


DEFAULT_ENDPOINTS: dict[str, Endpoint] = {
    "crossref": Endpoint("https://api.crossref.org", 100),
    "openalex": Endpoint("https://api.openalex.org", 100),
    "semantic_scholar": Endpoint("https://api.semanticscholar.org/graph/v1", 1000),
    "arxiv": Endpoint("https://export.arxiv.org/api/query", 3000),
    "doi_registry": Endpoint("https://doi.org", 200),
    "handle": Endpoint("https://hdl.handle.net", 200),
    "datacite": Endpoint("https://api.datacite.org", 300),
    "eutils": Endpoint("https://eutils.ncbi.nlm.nih.gov/entrez/eutils", 340),
    "dblp": Endpoint("https://dblp.org", 2000),
}
"""Endpoints by name; ``CITELSP_<NAME>_BASE_URL`` / ``_MIN_INTERVAL_MS`` override them."""

PRIORITIES = ("P0", "P1", "P2", "P3")

SOURCE_NAMES = {
    "crossref": "Crossref",
    "openalex": "OpenAlex",
    "semantic_scholar": "Semantic Scholar",
    "arxiv": "arXiv",
    "doi_registry": "doi.org (DOI registration agencies and content negotiation)",
    "handle": "the Handle System (DOI existence)",
    "datacite": "DataCite",
    "eutils": "NCBI E-utilities (PubMed)",
    "dblp": "DBLP (computer science)",
}
"""How each endpoint is named to a person."""

@dataclass(frozen=True)
class Option:
    """One client setting of the ``citelsp`` section, as editors show and send it."""

    name: str
    """Client name, e.g. ``citelsp.minPriority``."""
    type: str | tuple[str, ...]
    """JSON type(s) of the value."""
    default: Any
    description: str
    """Markdown, one or two sentences."""
    scope: str = "resource"
    """VS Code scope: ``resource``, ``window``, ``machine-overridable`` or ``machine``.

    ``machine`` (user settings only) for base URLs, paths the server writes to and secrets,
    so that a cloned repository's workspace settings cannot redirect requests or keys."""
    env: str | None = None
    """The environment variable the server reads when the client leaves the setting out."""
    schema: Mapping[str, Any] = field(default_factory=dict)
    """Further JSON-schema keywords: ``enum``, ``enumDescriptions``, ``minimum``, ``items``."""

    @property
    def key(self) -> str:
        """The name inside the ``citelsp`` section: ``minPriority``, ``resolvers.arxiv.baseUrl``."""
        return self.name.removeprefix("citelsp.")


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _resolver_options() -> tuple[Option, ...]:
    rows: list[Option] = []
    for name, endpoint in DEFAULT_ENDPOINTS.items():
        prefix, env = f"citelsp.resolvers.{_camel(name)}", f"CITELSP_{name.upper()}"
        rows.append(Option(
            f"{prefix}.baseUrl", "string", endpoint.base_url,
            f"Base URL of {SOURCE_NAMES[name]}. Plain `http://` only for loopback hosts.",
            scope="machine", env=f"{env}_BASE_URL"))
        rows.append(Option(
            f"{prefix}.minIntervalMs", "integer", endpoint.min_interval_ms,
            f"Least time between two requests to {SOURCE_NAMES[name]}, in milliseconds (for "
            "single records; lists and searches keep the proportion the service documents).",
            scope="machine-overridable", env=f"{env}_MIN_INTERVAL_MS", schema={"minimum": 0}))
    return tuple(rows)


OPTIONS: tuple[Option, ...] = (
    Option("citelsp.bibliography", "array", [],
           "Bibliography files (`.bib`, CSL-JSON or CSL-YAML) used when a manuscript names "
           "none in its front matter, `\\bibliography{}`, LaTeX main file or project "
           "(`_quarto.yml`, `_metadata.yml`, a bookdown book's `index.Rmd`). Relative paths "
           "are relative to the first workspace folder. Empty: every `.bib` and CSL-JSON "
           "file in the workspace.",
           schema={"items": {"type": "string"}}),
    Option("citelsp.slugMap", ("object", "string", "null"), None,
           "Maps `<!--ref:slug-->` slugs to citation keys: an object `{\"slug\": \"key\"}` "
           "or the path of a JSON/YAML file holding one.",
           schema={"additionalProperties": {"type": "string"}}),
    Option("citelsp.minPriority", "string", "P3",
           "Lowest checklist priority shown as a diagnostic.",
           schema={"enum": list(PRIORITIES), "enumDescriptions": [
               "Only identifiers that do not exist or name another work",
               "Also references that need a human check soon (not found, conflicts, retractions)",
               "Also references that could not be fully checked",
               "Everything, including references no automated source covers"]}),
    Option("citelsp.debounceMs", "integer", 200,
           "Milliseconds after the last edit before the local checks run again.",
           schema={"minimum": 0}),
    Option("citelsp.staleDays", "integer", 30,
           "Cached answers older than this many days are flagged as stale.",
           env="CITELSP_CACHE_STALE_DAYS", schema={"minimum": 1}),
    Option("citelsp.offline", "boolean", False,
           "No network: local checks and cached answers only.", env="CITELSP_OFFLINE"),
    Option("citelsp.verify", "boolean", True,
           "Look references up in the bibliographic indexes in the background. Off: local "
           "checks only."),
    Option("citelsp.triangulate", "boolean", False,
           "Ask every source about every reference. Off: a reference matched by the source "
           "that registers its identifier skips the others (far fewer requests).",
           env="CITELSP_TRIANGULATE"),
    Option("citelsp.rules", "object", {},
           "Diagnostic codes to switch off, e.g. `{\"ORPHAN_REFERENCE\": false}` (`\"off\"` "
           "works too).",
           schema={"additionalProperties": {"type": ["boolean", "string"]}}),
    Option("citelsp.mailto", ("string", "null"), None,
           "E-mail address sent in the User-Agent to Crossref and OpenAlex (their polite pool).",
           scope="machine-overridable", env="CITELSP_MAILTO"),
    Option("citelsp.semanticScholarApiKey", ("string", "null"), None,
           "Semantic Scholar API key (raises its rate limit). Better kept in the environment.",
           scope="machine", env="CITELSP_SEMANTIC_SCHOLAR_API_KEY"),
    Option("citelsp.openalexApiKey", ("string", "null"), None,
           "OpenAlex API key; without one OpenAlex usually refuses. Better kept in the "
           "environment.", scope="machine", env="CITELSP_OPENALEX_API_KEY"),
    Option("citelsp.openalexDailyBudgetUsd", ("number", "null"), None,
           "Dollars of OpenAlex usage citelsp may spend a day (searches cost $0.001, lists "
           "$0.0001, lookups by DOI nothing). Empty: OpenAlex's free allowance, $1 with an API "
           "key, $0.01 without.", scope="machine-overridable",
           env="CITELSP_OPENALEX_DAILY_BUDGET_USD", schema={"minimum": 0}),
    Option("citelsp.ncbiApiKey", ("string", "null"), None,
           "NCBI E-utilities API key (PubMed). Better kept in the environment.",
           scope="machine", env="CITELSP_NCBI_API_KEY"),
    Option("citelsp.ncbiEmail", ("string", "null"), None,
           "E-mail address NCBI asks E-utilities users to send; without it the PubMed check "
           "is skipped.", scope="machine-overridable", env="CITELSP_NCBI_EMAIL"),
    Option("citelsp.index", ("array", "string", "null"), None,
           "Local index files built with `citelsp index build`, asked before any service. "
           "Several paths (a list, or `CITELSP_INDEX` joined by the path separator) are "
           "asked in turn.", scope="machine", env="CITELSP_INDEX",
           schema={"items": {"type": "string"}}),
    Option("citelsp.indexUrl", ("string", "null"), None,
           "A PostgreSQL database (`postgresql://user@host/db`) holding a local index built "
           "with `citelsp index build URL`, shared by a team; asked after the index files.",
           scope="machine", env="CITELSP_INDEX_URL"),
    Option("citelsp.indexStaleDays", "integer", 120,
           "A local index snapshot older than this many days is mentioned once.",
           schema={"minimum": 1}),
    Option("citelsp.cacheDir", ("string", "null"), None,
           "Folder of the lookup cache. Empty: the user cache folder.",
           scope="machine", env="CITELSP_CACHE_DIR"),
    Option("citelsp.cacheUrl", ("string", "null"), None,
           "A PostgreSQL database (`postgresql://user@host/db`) holding the lookup cache "
           "instead of the cache folder, shared by every process and machine of a team.",
           scope="machine", env="CITELSP_CACHE_URL"),
    Option("citelsp.pacingUrl", ("string", "null"), None,
           "A Redis URL (`redis://host:6379/0`) where every citelsp process keeps one pace per "
           "service and one daily budget, so that many processes together stay within each "
           "service's limits. Empty: each process paces itself.",
           scope="machine", env="CITELSP_PACING_URL"),
    *_resolver_options(),
)
"""Every client setting the server reads, with the default it falls back to."""

DEFAULTS: Mapping[str, Any] = {option.key: option.default for option in OPTIONS}


@dataclass(frozen=True)
class Settings:
    bibliography: tuple[str, ...] = ()
    """Bibliography files used when a manuscript names none."""
    slug_map: Mapping[str, str] | str | None = None
    """``ref_slug`` → citation key, or the path of a JSON/YAML file holding that mapping."""
    min_priority: str = DEFAULTS["minPriority"]
    """Lowest checklist priority shown as a diagnostic."""
    debounce_ms: int = DEFAULTS["debounceMs"]
    stale_days: int = DEFAULTS["staleDays"]
    offline: bool = DEFAULTS["offline"]
    verify: bool = DEFAULTS["verify"]
    """Run the network verification at all (the language server's background checks)."""
    ignore: tuple[str, ...] = ()
    """Diagnostic codes never shown (``citelsp.rules`` set to false, ``--ignore``)."""
    triangulate: bool = False
    """Ask every source, not only those the request plan needs."""
    mailto: str | None = None
    semantic_scholar_api_key: str | None = None
    openalex_api_key: str | None = None
    openalex_daily_budget_usd: float | None = None
    """None: OpenAlex's free daily allowance ($1 with a key, $0.01 without)."""
    ncbi_api_key: str | None = None
    ncbi_email: str | None = None
    cache_dir: Path = field(default_factory=lambda: default_cache_dir())
    cache_url: str | None = None
    """A PostgreSQL URL: the answer cache lives there instead of under ``cache_dir``."""
    use_cache: bool = True
    index: tuple[Path, ...] = ()
    """Local index files (``citelsp index build``), asked before any service."""
    index_url: str | None = None
    """A PostgreSQL URL holding a local index, asked after the files."""
    index_stale_days: int = DEFAULTS["indexStaleDays"]
    pacing_url: str | None = None
    """Redis shared by every process for pacing and daily budgets (``redis_pacing``)."""
    endpoints: Mapping[str, Endpoint] = field(default_factory=lambda: dict(DEFAULT_ENDPOINTS))
    timeout_s: float = 30.0
    max_body_bytes: int = 2 * 1024 * 1024
    refused: tuple[str, ...] = ()
    """One message per numeric setting whose value was refused (not a number, infinite,
    out of range) and replaced by its default, for the writer to be told."""

    @classmethod
    def from_options(
        cls,
        options: Mapping | None = None,
        environ: Mapping[str, str] | None = None,
        *,
        user_options: Mapping | None = None,
    ) -> Settings:
        """Settings from a client's ``citelsp`` section, then the environment, then defaults.

        Client values win over environment values, except that secrets may come from either.
        ``user_options`` is the user-level section (``initializationOptions``) when ``options``
        is the client's merged one; ``None`` means ``options`` is itself user-level.
        """
        env = os.environ if environ is None else environ
        opts = _unwrap(options or {})
        user = opts if user_options is None else _unwrap(user_options)
        endpoints = dict(DEFAULT_ENDPOINTS)
        numbers = _Numbers()
        for name, default in DEFAULT_ENDPOINTS.items():
            env_name = name.upper()
            from_env = env.get(f"CITELSP_{env_name}_BASE_URL") or default.base_url
            own = _resolver_section(opts, name)
            user_base = str(_resolver_section(user, name).get("baseUrl") or from_env).rstrip("/")
            base = str(own.get("baseUrl") or user_base).rstrip("/")
            interval = numbers.whole(f"CITELSP_{env_name}_MIN_INTERVAL_MS",
                                     env.get(f"CITELSP_{env_name}_MIN_INTERVAL_MS"),
                                     default.min_interval_ms, MAX_INTERVAL_MS)
            interval = numbers.whole(f"citelsp.resolvers.{_camel(name)}.minIntervalMs",
                                     own.get("minIntervalMs"), interval, MAX_INTERVAL_MS)
            endpoints[name] = Endpoint(base, interval, user_level=base == user_base)

        bib = opts.get("bibliography")
        if isinstance(bib, str):
            bib = (bib,)
        cache_dir = opts.get("cacheDir") or env.get("CITELSP_CACHE_DIR")
        index = opts.get("index") or env.get("CITELSP_INDEX")
        return cls(
            bibliography=tuple(str(b) for b in bib or ()),
            slug_map=_slug_map(opts.get("slugMap")),
            min_priority=_priority(opts.get("minPriority"), DEFAULTS["minPriority"]),
            debounce_ms=numbers.whole("citelsp.debounceMs", opts.get("debounceMs"),
                                      DEFAULTS["debounceMs"], MAX_DEBOUNCE_MS),
            stale_days=numbers.whole("citelsp.staleDays", opts.get("staleDays"), numbers.whole(
                "CITELSP_CACHE_STALE_DAYS", env.get("CITELSP_CACHE_STALE_DAYS"),
                DEFAULTS["staleDays"], MAX_DAYS, low=1), MAX_DAYS, low=1),
            offline=bool(opts.get("offline", _truthy(env.get("CITELSP_OFFLINE")))),
            verify=bool(opts.get("verify", DEFAULTS["verify"])),
            ignore=_ignored(opts.get("rules")),
            triangulate=bool(opts.get("triangulate", _truthy(env.get("CITELSP_TRIANGULATE")))),
            mailto=opts.get("mailto") or env.get("CITELSP_MAILTO") or None,
            semantic_scholar_api_key=_secret(opts, env, "semanticScholarApiKey",
                                             "CITELSP_SEMANTIC_SCHOLAR_API_KEY"),
            openalex_api_key=_secret(opts, env, "openalexApiKey", "CITELSP_OPENALEX_API_KEY"),
            openalex_daily_budget_usd=numbers.amount(
                "citelsp.openalexDailyBudgetUsd", opts.get("openalexDailyBudgetUsd"),
                numbers.amount("CITELSP_OPENALEX_DAILY_BUDGET_USD",
                               env.get("CITELSP_OPENALEX_DAILY_BUDGET_USD"), None)),
            ncbi_api_key=_secret(opts, env, "ncbiApiKey", "CITELSP_NCBI_API_KEY"),
            ncbi_email=opts.get("ncbiEmail") or env.get("CITELSP_NCBI_EMAIL") or None,
            cache_dir=Path(cache_dir).expanduser() if cache_dir else default_cache_dir(),
            cache_url=_secret(opts, env, "cacheUrl", "CITELSP_CACHE_URL"),
            index=_paths(index) if not _database_url(index) else (),
            index_url=_secret(opts, env, "indexUrl", "CITELSP_INDEX_URL") or (
                index.strip() if _database_url(index) else None),
            index_stale_days=numbers.whole("citelsp.indexStaleDays", opts.get("indexStaleDays"),
                                           DEFAULTS["indexStaleDays"], MAX_DAYS, low=1),
            pacing_url=_secret(opts, env, "pacingUrl", "CITELSP_PACING_URL"),
            endpoints=endpoints,
            refused=tuple(numbers.refused),
        )

    def with_changes(self, **changes) -> Settings:
        return replace(self, **changes)

    def endpoint(self, name: str) -> Endpoint:
        return self.endpoints[name]

    def secrets(self) -> tuple[str, ...]:
        """Values that must never appear in logs, hovers or reports."""
        return tuple(
            s
            for s in (self.semantic_scholar_api_key, self.openalex_api_key, self.ncbi_api_key)
            if s
        )


def default_cache_dir() -> Path:
    env = os.environ.get("CITELSP_CACHE_DIR")
    return Path(env).expanduser() if env else Path(platformdirs.user_cache_dir("citelsp"))


def _unwrap(options: Mapping) -> Mapping:
    """Accept both ``{"citelsp": {...}}`` and the bare section."""
    inner = options.get("citelsp")
    return inner if isinstance(inner, Mapping) else options


def _resolver_section(opts: Mapping, name: str) -> Mapping:
    """``resolvers.<name>`` (camelCase or snake_case) of a section, or ``{}``."""
    resolvers = opts.get("resolvers")
    if not isinstance(resolvers, Mapping):
        return {}
    own = resolvers.get(_camel(name)) or resolvers.get(name)
    return own if isinstance(own, Mapping) else {}


MAX_DEBOUNCE_MS = 60_000
MAX_DAYS = 36_500
MAX_INTERVAL_MS = 3_600_000
MAX_BUDGET_USD = 1_000_000.0


class _Numbers:
    """Reads numeric settings: a value that is not a finite number in range (``1e400`` is
    infinite in JSON, and made ``initialize`` fail) gives the default, and a message."""

    def __init__(self) -> None:
        self.refused: list[str] = []

    def whole(self, label: str, value: Any, default: int, high: int, low: int = 0) -> int:
        number = self._number(value)
        if number is None:
            return default
        if number.is_integer() and low <= number <= high:
            return int(number)
        return self._refuse(label, value, f"a whole number from {low:,} to {high:,}", default)

    def amount(self, label: str, value: Any, default: float | None) -> float | None:
        number = self._number(value)
        if number is None:
            return default
        if 0 <= number <= MAX_BUDGET_USD:
            return number
        return self._refuse(label, value, f"a number from 0 to {MAX_BUDGET_USD:,.0f}", default)

    def _number(self, value: Any) -> float | None:
        """``value`` as a float (nan for what is not a number); None when it is not set."""
        if value is None or value == "":
            return None
        if isinstance(value, bool):
            return math.nan
        try:
            return float(value)
        except (TypeError, ValueError, OverflowError):  # a JSON integer past a float's range
            return math.inf if isinstance(value, int) else math.nan

    def _refuse(self, label: str, value: Any, wanted: str, default: Any) -> Any:
        shown = "the default" if default is None else f"{default:,}"
        self.refused.append(f"citelsp: {label} = {str(value)[:40]!r} is not {wanted}: "
                            f"{shown} is used instead")
        return default


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def _priority(value, default: str) -> str:
    return value if value in PRIORITIES else default


def _database_url(value) -> bool:
    """``citelsp.index`` naming a database (the index commands take either): read as
    ``citelsp.indexUrl`` rather than split at the ``:`` of ``postgresql://``."""
    return isinstance(value, str) and value.strip().startswith(("postgresql://", "postgres://"))


def _paths(value) -> tuple[Path, ...]:
    """A list of paths, or one string of paths joined by ``os.pathsep``."""
    if isinstance(value, str):
        value = value.split(os.pathsep)
    if not isinstance(value, list | tuple):
        return ()
    return tuple(Path(str(v)).expanduser() for v in value if str(v).strip())


def _slug_map(value) -> Mapping[str, str] | str | None:
    if isinstance(value, Mapping):
        return {str(k): str(v) for k, v in value.items()}
    if isinstance(value, str) and value:
        return value
    return None


def _ignored(rules) -> tuple[str, ...]:
    """Codes switched off in ``citelsp.rules`` (``{"ORPHAN_REFERENCE": false}``; "off" too)."""
    if not isinstance(rules, Mapping):
        return ()
    return tuple(sorted(str(code).upper() for code, on in rules.items()
                        if on is False or str(on).lower() in ("off", "false", "ignore")))


def _secret(opts: Mapping, env: Mapping[str, str], option: str, variable: str) -> str | None:
    value = opts.get(option) or env.get(variable)
    return str(value) if value else None
