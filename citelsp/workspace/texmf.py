"""Bibliographies TeX's own trees hold: ``\\bibliography{IEEEabrv,refs}`` names a file that
ships with IEEEtran, not one beside the paper. BibTeX and biber look a name up with kpathsea
when it is not in the document's folder; so does citelsp, through ``kpsewhich``, so a correct
paper does not get an error for a file only TeX knows where to find.
"""

from __future__ import annotations

import functools
import logging
import shutil
import subprocess
from pathlib import Path

log = logging.getLogger(__name__)

TIMEOUT_S = 5.0


@functools.cache
def texmf_bibliography(name: str) -> Path | None:
    """Where ``kpsewhich`` finds the ``.bib`` file ``name`` (a bare file name, as written in
    ``\\bibliography{}``); None without a TeX installation or when TeX has no such file."""
    if not name or name.startswith("-") or "/" in name or "\\" in name or "\0" in name:
        return None  # a path is looked for where it points; "-…" would be an option
    program = shutil.which("kpsewhich")
    if program is None:
        return None
    try:
        done = subprocess.run([program, "-format=bib", name], capture_output=True, text=True,
                              timeout=TIMEOUT_S, check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as exc:
        log.info("kpsewhich %s failed: %s", name, exc)
        return None
    found = done.stdout.strip().splitlines()
    return Path(found[0]) if done.returncode == 0 and found else None
