"""Client settings (``initializationOptions`` / ``workspace/configuration``) → ``Settings``."""

from __future__ import annotations

from typing import Any

from citelsp.config import Settings


def settings_from_client(options: Any) -> Settings:
    """Accepts the ``citelsp`` section or an object holding it; anything else means defaults."""
    return Settings.from_options(options if isinstance(options, dict) else {})
