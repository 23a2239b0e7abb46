"""SARIF messages say only what they say: a record's ``[text](url)`` is no link, a ``{0}`` no
placeholder (SARIF 2.1.0 §3.11.5, §3.11.6; issue 29, item 9)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
from hypothesis import given
from hypothesis import strategies as st

from citelsp.config import Settings
from citelsp.documents.model import Severity
from citelsp.reports import sarif
from citelsp.reports.rows import Row
from citelsp.workspace import Workspace

SCHEMA = Path(__file__).parents[1] / "schemas" / "sarif-2.1.0-rtm.5.json"
LINK = re.compile(r"\[[^\]]*\]\([^)]*\)")
"""An embedded link as §3.11.6 and most viewers read it."""
PLACEHOLDER = re.compile(r"(?<!\{)\{\d+\}")


def test_a_records_link_and_braces_are_plain_text_in_the_report(tmp_path, monkeypatch):
    (tmp_path / "refs.bib").write_text("@misc{a, title = {T}}\n")
    workspace, _ = Workspace.for_paths([tmp_path / "refs.bib"], Settings(verify=False))
    hostile = ("a: title differs: the record says 'Click [here](https://evil.example/x) "
               "for {0} [a\\](b) ]]((c)'")
    row = Row(str(tmp_path / "refs.bib"), (tmp_path / "refs.bib").as_uri(), (0, 6), (0, 7),
              Severity.WARNING, "METADATA_CONFLICT", hostile, "P1", "a")
    monkeypatch.setattr(sarif, "rows", lambda snapshot: [row])
    log = json.loads(sarif.render(workspace.snapshot()))
    jsonschema.Draft4Validator(json.loads(SCHEMA.read_text())).validate(log)
    (result,) = log["runs"][0]["results"]
    text = result["message"]["text"]
    assert not LINK.search(text) and not PLACEHOLDER.search(text)
    assert text == ("a: title differs: the record says 'Click [here] (https://evil.example/x) "
                    "for {{0}} [a\\] (b) ]] ((c)'")


@given(st.text(alphabet="[]()}{0\\ax"))
def test_no_link_or_placeholder_survives(text):
    out = sarif.plain_text(text)
    assert not LINK.search(out) and not PLACEHOLDER.search(out)
    assert out.replace("] (", "](").replace("{{", "{").replace("}}", "}") == text
