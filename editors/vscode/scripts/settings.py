"""Writes the extension's settings (``contributes.configuration`` in package.json) from the
server's table of settings, ``citelsp.config.OPTIONS``, plus the few the extension reads itself.

    python editors/vscode/scripts/settings.py          # rewrite package.json
    python editors/vscode/scripts/settings.py --check  # exit 1 if package.json has drifted
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

PACKAGE_JSON = Path(__file__).resolve().parents[1] / "package.json"
sys.path.insert(0, str(PACKAGE_JSON.parents[2]))

from citelsp.config import OPTIONS, Option  # noqa: E402

EXTENSION_OPTIONS: tuple[Option, ...] = (
    Option("citelsp.server.path", "string", "",
           "Program that starts the language server, e.g. `/path/to/venv/bin/citelsp`. Empty: "
           "the first that answers of `citelsp` on `PATH`, the Python interpreter chosen in "
           "the Python extension with `-m citelsp`, the workspace's `.venv`, `venv` or `env`, "
           "pipx's and pip's user bin folders (the `citelsp` output channel lists each place "
           "tried).", scope="machine"),
    Option("citelsp.server.args", "array", [],
           "Arguments for `#citelsp.server.path#`, e.g. `[\"-m\", \"citelsp\"]` when it is a "
           "Python interpreter.", scope="machine", schema={"items": {"type": "string"}}),
    Option("citelsp.trace.server", "string", "off",
           "Log the messages between VS Code and the server in the citelsp output channel.",
           scope="window", schema={"enum": ["off", "messages", "verbose"]}),
)
"""Settings only the extension reads; it never sends them to the server."""


def vscode_property(option: Option) -> dict[str, Any]:
    """One ``contributes.configuration.properties`` entry."""
    description = option.description
    if option.env:
        description += f" Also `{option.env}` in the environment."
    kind = list(option.type) if isinstance(option.type, tuple) else option.type
    return {"type": kind, "default": option.default, "scope": option.scope,
            "markdownDescription": description, **option.schema}


def vscode_properties() -> dict[str, dict[str, Any]]:
    return {option.name: vscode_property(option) for option in (*EXTENSION_OPTIONS, *OPTIONS)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report drift")
    args = parser.parse_args()
    package = json.loads(PACKAGE_JSON.read_text(encoding="utf-8"))
    configuration = package["contributes"]["configuration"]
    if args.check:
        if configuration["properties"] != vscode_properties():
            print(f"{PACKAGE_JSON} has drifted from citelsp.config.OPTIONS: run "
                  "python editors/vscode/scripts/settings.py", file=sys.stderr)
            return 1
        return 0
    configuration["properties"] = vscode_properties()
    PACKAGE_JSON.write_text(json.dumps(package, indent=2, ensure_ascii=False) + "\n",
                            encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
