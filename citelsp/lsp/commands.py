"""What the workspace commands need besides the workspace: where reports are written
(``files.write_inside`` writes them; which links a human may be sent to is
``links.allowed``)."""

from __future__ import annotations

REPORT_SUFFIX = {"json": "json", "sarif": "sarif", "markdown": "md", "text": "txt",
                 "ars": "json", "ledger": "json"}
