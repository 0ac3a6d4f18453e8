"""Startup settings: flags over environment variables over a TOML file over defaults, checked before serving.

Every mistake a user can make in their configuration is found here, before the server
answers anything, and reported as one line that says what is wrong and how to fix it
(the CLI prints it and exits 2). Messages name the variable, or the file, line and key,
but never a credential value. An environment variable set to the empty string counts as
unset, except ``COOKED_MCP_HTTP_TOKEN``: an empty bearer token is always a mistake.

The modules, one job each:

- ``names``: every variable, file key and default (what ``--help`` lists);
- ``toml_file``: the file, its schema and the ``path:line`` locator;
- ``origins``: where a value came from, the one way messages name a source;
- ``layers``: flags, environment and file as pydantic-settings sources;
- ``limits``: the transports' time bounds (``[mcp.limits]``);
- ``values``: the shape of our own values (base URL, address, hosts, token);
- ``settings``: the ``Settings`` model, the rules between settings, the ``*_cmd`` commands last;
- ``warnings``: set-ups that work but are unsafe or probably mistaken;
- ``loading``: ``load_settings``, and every refusal worded as one line.
"""

from __future__ import annotations

from .loading import load_settings
from .names import (
    DEFAULT_BASE_URL,
    DEFAULT_HTTP_ADDR,
    DEFAULT_IMPORT_ANSWER_SECONDS,
    DEFAULT_LOG_LEVEL,
    ENV_ALLOW_INSECURE_HTTP,
    ENV_BASE_URL,
    ENV_CONFIRM_CHANGES,
    ENV_HTTP_ADDR,
    ENV_HTTP_TOKEN,
    ENV_IMPORT_ANSWER,
    ENV_LOG_LEVEL,
    ENV_PASSWORD,
    ENV_READ_ONLY,
    ENV_USERNAME,
    LOG_LEVELS,
    MAX_IMPORT_ANSWER_SECONDS,
    Transport,
    environment_variables,
)
from .settings import Settings
from .toml_file import schema_keys
from .warnings import format_warnings

__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_HTTP_ADDR",
    "DEFAULT_IMPORT_ANSWER_SECONDS",
    "DEFAULT_LOG_LEVEL",
    "ENV_ALLOW_INSECURE_HTTP",
    "ENV_BASE_URL",
    "ENV_CONFIRM_CHANGES",
    "ENV_HTTP_ADDR",
    "ENV_HTTP_TOKEN",
    "ENV_IMPORT_ANSWER",
    "ENV_LOG_LEVEL",
    "ENV_PASSWORD",
    "ENV_READ_ONLY",
    "ENV_USERNAME",
    "LOG_LEVELS",
    "MAX_IMPORT_ANSWER_SECONDS",
    "Settings",
    "Transport",
    "environment_variables",
    "format_warnings",
    "load_settings",
    "schema_keys",
]
