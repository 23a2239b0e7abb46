"""Quarto (.qmd) and R Markdown (.Rmd) manuscripts on the command line: found by a folder
search, their citations read (figure cross-references and ``@`` in code chunks and inline R
code are none). The server and both editors are tested with them in test_lsp_presentation,
test_neovim and the VS Code extension's unit tests."""

from __future__ import annotations

import json

from tests.test_cli import citelsp, offline_env, write

REFS = """\
@book{knuth84, title = {The TeXbook}, author = {Knuth, Donald E.}, year = 1984}
@book{lamport94, title = {LaTeX: A Document Preparation System}, author = {Lamport, Leslie},
      year = 1994}
"""

QUARTO = """\
---
title: "A Quarto paper"
author: "me@example.org"
bibliography: refs.bib
---

See @fig-plot and [@knuth84, p. 3]. Missing: [@nosuch2020].

```{python}
#| label: fig-plot
email = "someone@example.org"  # @inpython
```

::: {.callout-note}
Also @lamport94.
:::
"""

R_MARKDOWN = """\
---
title: "An R Markdown paper"
output: html_document
bibliography: refs.bib
---

```{r setup, include=FALSE}
fit <- lm(y ~ x); fit@call  # @inr
```

As @knuth84 shows, `r fit@rank` predictors. Missing: [@absent2021].
"""


def test_quarto_and_r_markdown_are_checked_from_a_folder(tmp_path):
    write(tmp_path, **{"refs.bib": REFS, "paper.qmd": QUARTO, "notes.Rmd": R_MARKDOWN})
    done = citelsp("check", ".", "--format", "json", "--fail-on", "never", cwd=tmp_path,
                   env=offline_env())
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    dangling = sorted((d["path"], d["range"]["start"]["line"], d["message"].split("'")[1])
                      for d in report["diagnostics"] if d["code"] == "DANGLING_CITATION")
    assert dangling == [("notes.Rmd", 10, "absent2021"), ("paper.qmd", 6, "nosuch2020")]
    assert {s["citation_key"] for s in report["summaries"]} == {"knuth84", "lamport94"}
    assert not [d for d in report["diagnostics"] if d["code"] == "ORPHAN_REFERENCE"]
    assert not [d for d in report["diagnostics"]
                if any(word in d["message"] for word in ("inpython", "inr", "fig-plot"))]
