"""Startup settings, checked before serving (docs/architecture.md, "Adding a setting")."""

from __future__ import annotations

from typing import Any

from .loading import load_settings
from .settings import DECLARED, Settings, environment_variables, how_to_set, schema_keys

__all__ = [
    "DECLARED",
    "Settings",
    "default",
    "environment_variables",
    "how_to_set",
    "load_settings",
    "schema_keys",
]


def default(setting: str) -> Any:
    return DECLARED[setting].default
