"""Startup settings: flags over environment variables over a TOML file over defaults, checked before serving.

Every mistake a user can make in their configuration is found here, before the server
answers anything, and reported as one line that says what is wrong and how to fix it
(the CLI prints it and exits 2). Messages name the variable, or the file, line and key,
but never a credential value. An environment variable set to the empty string counts as
unset, except ``COOKED_MCP_HTTP_TOKEN``: an empty bearer token is always a mistake.

Each setting is declared once, as a field of ``Settings`` (docs/configuration.md, "Adding a
setting"). The modules, one job each:

- ``table``: how a setting is declared (``setting(...)``) and read back (``Declared``);
- ``settings``: the ``Settings`` model, whose fields are the table, and the rules between them;
- ``toml_file``: the file, its schema (from the table) and the ``path:line`` locator;
- ``origins``: where a value came from, the one way messages name a source;
- ``layers``: flags, environment and file, each value with where it came from;
- ``limits``: the transports' time bounds (``[mcp.limits]``);
- ``values``: the shape of our own values (base URL, address, hosts, token);
- ``warnings``: set-ups that work but are unsafe or probably mistaken;
- ``loading``: ``load_settings``, and every refusal worded as one line.
"""

from __future__ import annotations

from typing import Any

from .loading import load_settings
from .settings import DECLARED, Settings, environment_variables, how_to_set, schema_keys
from .warnings import format_warnings

__all__ = [
    "DECLARED",
    "Settings",
    "default",
    "environment_variables",
    "format_warnings",
    "how_to_set",
    "load_settings",
    "schema_keys",
    "variable",
]


def variable(setting: str) -> str:
    """The environment variable of ``setting`` (a ``Settings`` field name)."""
    name = DECLARED[setting].env
    if name is None:
        raise KeyError(f"{setting} is not set by an environment variable")
    return name


def default(setting: str) -> Any:
    """The value ``setting`` has when nothing sets it."""
    return DECLARED[setting].default
