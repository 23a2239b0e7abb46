"""Client settings (``initializationOptions`` / ``workspace/configuration``) → ``Settings``."""

from __future__ import annotations

from typing import Any

from citelsp.config import Settings


def settings_from_client(options: Any, user_options: Any = None) -> Settings:
    """Accepts the ``citelsp`` section or an object holding it; anything else means defaults.

    ``user_options`` is the user-level section (``initializationOptions``) when ``options`` is
    the client's merged section, which a workspace may have written (config.py)."""
    return Settings.from_options(
        options if isinstance(options, dict) else {},
        user_options=user_options if isinstance(user_options, dict) else None,
    )
