"""Hover text in the markup the client asked for: Markdown, or plain text (``lsp.convert``
reads which from the client's capabilities).

Every string that came from a document or an API goes through ``text`` (Markdown-inert, no
stray escapes, or printable plain text); links are written only for allowlisted https URLs,
so data can never smuggle a link, image, HTML or ``command:`` URI into a hover.
"""

from __future__ import annotations

from dataclasses import dataclass

from citelsp import links
from citelsp.reports.safe import markdown_text, printable


@dataclass(frozen=True)
class Markup:
    markdown: bool = True

    @property
    def line_break(self) -> str:
        return "  \n" if self.markdown else "\n"

    @property
    def rule(self) -> str:
        return "\n\n---\n\n" if self.markdown else "\n\n"

    def text(self, value: object) -> str:
        return markdown_text(str(value)) if self.markdown else " ".join(
            printable(str(value)).split())

    def bold(self, rendered: str) -> str:
        return f"**{rendered}**" if self.markdown else rendered

    def italic(self, rendered: str) -> str:
        return f"*{rendered}*" if self.markdown else rendered

    def code(self, value: str) -> str:
        value = " ".join(printable(value).split())
        return f"`{value.replace('`', chr(39))}`" if self.markdown else value

    def link(self, url: str | None, label: str) -> str:
        """A link only for URLs ``links.allowed`` passes; otherwise the label alone."""
        target = links.allowed(url)
        if target is None:
            return self.text(label)
        if not self.markdown:
            return f"{self.text(label)} <{target}>"
        return f"[{self.text(label)}]({target})"

    def table(self, header: list[str], rows: list[list[str]]) -> list[str]:
        """Rows of already rendered cells: a Markdown table, or one line per row."""
        if self.markdown:
            return [f"| {' | '.join(header)} |", "|" + "---|" * len(header),
                    *[f"| {' | '.join(cells)} |" for cells in rows]]
        return [" · ".join(c for c in cells if c) for cells in rows]
