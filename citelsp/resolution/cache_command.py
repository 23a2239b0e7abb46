"""``citelsp cache stats|prune|clear``: look after the answer cache, local or shared.

The cache is the one the settings name: ``CITELSP_CACHE_URL`` (a PostgreSQL database shared
by a team) or else ``CITELSP_CACHE_DIR`` (or the user cache folder).
"""

from __future__ import annotations

import argparse
import logging
import sys

from citelsp.config import Settings
from citelsp.resolution.cache import CACHE_VERSION, AnswerCache, Row, Unavailable

EPILOG = """\
The cache holds what the sources answered (never a verdict): records for 90 days, not-found
answers for 7, retraction status for 30. An answer stored by another cache version is never
read; prune removes those and the expired ones. The cache is the one CITELSP_CACHE_URL names
(a PostgreSQL database a team shares), else the folder CITELSP_CACHE_DIR names (default: the
user cache folder).

examples:
  citelsp cache stats
  CITELSP_CACHE_URL=postgresql://citelsp@db.lab/citelsp citelsp cache prune"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    cache = sub.add_parser(
        "cache", help="show, prune or clear the answer cache",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG,
        description="Show, prune or clear the answer cache (local, or shared in PostgreSQL).")
    actions = cache.add_subparsers(dest="action", metavar="ACTION", required=True)
    actions.add_parser("stats", help="where the cache is and how many answers it holds")
    actions.add_parser("prune", help="remove expired answers and those of other versions")
    actions.add_parser("clear", help="remove every answer")


def run(ns: argparse.Namespace) -> int:
    """Exit 0, or 2 when the cache cannot be opened or changed."""
    settings = Settings.from_options({})
    logging.getLogger("citelsp.cache").setLevel(logging.ERROR)  # the error below says it
    cache = AnswerCache(settings.cache_dir, url=settings.cache_url,
                        stale_days=settings.stale_days)
    try:
        if ns.action == "stats":
            print(_stats(cache.where, cache.stats()))
        elif ns.action == "prune":
            removed = cache.prune()
            print(f"pruned {_answers(removed)} (expired or of another cache version) from "
                  f"{cache.where}")
        else:
            print(f"cleared {_answers(cache.purge())} from {cache.where}")
    except Unavailable as exc:
        print(f"citelsp: {exc}", file=sys.stderr)
        return 2
    finally:
        cache.close()
    return 0


def _stats(where: str, rows: list[Row]) -> str:
    lines = [f"answer cache: {where}"]
    if not rows:
        return lines[0] + "\nempty"
    for version in sorted({row.version for row in rows}, key=lambda v: v != CACHE_VERSION):
        mine = [row for row in rows if row.version == version]
        live = sum(row.live for row in mine)
        expired = sum(row.expired for row in mine)
        by = ", ".join(f"{row.resolver} {row.live:,}" for row in mine if row.live)
        if version == CACHE_VERSION:
            lines.append(f"version {version} (current): {_answers(live)}"
                         + (f" ({by})" if by else "")
                         + (f"; {expired:,} expired (prune removes them)" if expired else ""))
        else:
            lines.append(f"version {version}: {_answers(live + expired)}, never read "
                         "(prune removes them)")
    return "\n".join(lines)


def _answers(n: int) -> str:
    return f"{n:,} answer{'s' if n != 1 else ''}"
