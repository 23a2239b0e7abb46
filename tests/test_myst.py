"""MyST Markdown (Jupyter Book, mystmd): ``{cite}`` roles are citations."""

from __future__ import annotations

import pytest

from citelsp.documents.manuscript import parse_manuscript

TEXT = """# Intro
As {cite}`knuth84` and {cite:p}`a, b;c` show, and @d, and {cite:t}`e`.

```
{cite}`in_a_fence`
```
<!-- {cite}`in_a_comment` -->
Inline `code` is not a role, nor {ref}`sec-intro` or {cite}`` (empty).
"""


def test_roles_give_one_citation_per_key_at_the_key():
    found = parse_manuscript("file:///intro.md", TEXT, "markdown").citations
    assert [(c.key, c.syntax, TEXT[c.span.start:c.span.end]) for c in found] == [
        ("knuth84", "myst", "knuth84"), ("a", "myst", "a"), ("b", "myst", "b"),
        ("c", "myst", "c"), ("d", "pandoc", "d"), ("e", "myst", "e")]
    role = found[1]
    assert TEXT[role.full_span.start:role.full_span.end] == "{cite:p}`a, b;c`"


@pytest.mark.parametrize("language", ["latex", "plaintext"])
def test_roles_are_markdown_only(language):
    assert not [c for c in parse_manuscript("file:///x", TEXT, language).citations
                if c.syntax == "myst"]
