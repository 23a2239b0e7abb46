"""The one table of client settings (citelsp.config.OPTIONS): the server reads every row, and
the VS Code extension's package.json is generated from it."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

from citelsp.config import DEFAULTS, OPTIONS, Settings

EDITORS = Path(__file__).resolve().parents[1] / "editors"
SCRIPT = EDITORS / "vscode" / "scripts" / "settings.py"


def _generator():
    spec = importlib.util.spec_from_file_location("vscode_settings", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_package_json_is_generated_from_the_table() -> None:
    package = json.loads((EDITORS / "vscode" / "package.json").read_text(encoding="utf-8"))
    properties = package["contributes"]["configuration"]["properties"]
    assert properties == _generator().vscode_properties(), (
        "editors/vscode/package.json has drifted from citelsp.config.OPTIONS: run "
        "python editors/vscode/scripts/settings.py")


def test_base_urls_secrets_and_the_server_command_are_user_settings_only() -> None:
    generator = _generator()
    sensitive = re.compile(r"(ApiKey|Secret|Token|Password|baseUrl|cacheDir|cacheUrl|indexUrl|"
                           r"server\.path|server\.args)$")
    names = [o.name for o in (*generator.EXTENSION_OPTIONS, *OPTIONS)]
    assert len(names) == len(set(names))
    for option in (*generator.EXTENSION_OPTIONS, *OPTIONS):
        if sensitive.search(option.name):
            assert option.scope == "machine", option.name
        assert option.description.endswith("."), option.name
    assert sum("baseUrl" in name for name in names) == len(Settings().endpoints)


def test_settings_defaults_come_from_the_table() -> None:
    settings = Settings.from_options({}, environ={})
    assert settings.min_priority == DEFAULTS["minPriority"]
    assert settings.debounce_ms == DEFAULTS["debounceMs"]
    assert settings.stale_days == DEFAULTS["staleDays"]
    assert settings.offline is DEFAULTS["offline"]
    assert settings.verify is DEFAULTS["verify"]
    assert list(settings.bibliography) == DEFAULTS["bibliography"]
    for name, endpoint in settings.endpoints.items():
        camel = re.sub(r"_(\w)", lambda m: m.group(1).upper(), name)
        assert endpoint.base_url == DEFAULTS[f"resolvers.{camel}.baseUrl"]
        assert endpoint.min_interval_ms == DEFAULTS[f"resolvers.{camel}.minIntervalMs"]


EXAMPLES = {"rules": {"ORPHAN_REFERENCE": False}}
"""A non-default value for settings whose type alone does not suggest one."""


def _other_value(option):
    if option.key in EXAMPLES:
        return EXAMPLES[option.key]
    kinds = option.type if isinstance(option.type, tuple) else (option.type,)
    if "enum" in option.schema:
        return next(v for v in option.schema["enum"] if v != option.default)
    if "boolean" in kinds:
        return not option.default
    if "integer" in kinds:
        return option.default + 7
    if "number" in kinds:
        return (option.default or 0) + 2.5
    if "array" in kinds:
        return ["other.bib"]
    if option.key.endswith("baseUrl"):
        return "https://mirror.example.org/api"
    return "other-value"


def _nested(key: str, value) -> dict:
    head, _, rest = key.partition(".")
    return {head: _nested(rest, value) if rest else value}


@pytest.mark.parametrize("option", OPTIONS, ids=lambda o: o.key)
def test_the_server_reads_every_row(option) -> None:
    """A row that Settings.from_options ignores would be a setting that does nothing."""
    default = Settings.from_options({}, environ={})
    changed = Settings.from_options(_nested(option.key, _other_value(option)), environ={})
    assert changed != default
