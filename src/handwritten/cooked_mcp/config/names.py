"""Every name a user sets cooked-mcp by, and every default: the tables ``--help`` is printed from."""

from __future__ import annotations

from typing import Final, Literal

Transport = Literal["stdio", "http"]
LogLevel = Literal["debug", "info", "warning", "error"]

DEFAULT_BASE_URL = "https://cooked.wiki"
DEFAULT_HTTP_ADDR = "127.0.0.1:8123"
DEFAULT_LOG_LEVEL: LogLevel = "warning"
LOG_LEVELS: tuple[LogLevel, ...] = ("debug", "info", "warning", "error")
#: save_recipe source=url answers by this many seconds (the TypeScript SDK gives up at 60; the OpenAI
#: Agents SDK at 5, so a user of it sets this lower or raises that: README, client timeouts).
DEFAULT_IMPORT_ANSWER_SECONDS = 50.0
MAX_IMPORT_ANSWER_SECONDS = 600.0

ENV_BASE_URL = "COOKED_BASE_URL"
ENV_USERNAME = "COOKED_LOGIN_USERNAME"
ENV_PASSWORD = "COOKED_LOGIN_PASSWORD"
ENV_HTTP_ADDR = "COOKED_MCP_HTTP_ADDR"
ENV_HTTP_TOKEN = "COOKED_MCP_HTTP_TOKEN"
ENV_READ_ONLY = "COOKED_MCP_READ_ONLY"
ENV_LOG_LEVEL = "COOKED_MCP_LOG_LEVEL"
ENV_IMPORT_ANSWER = "COOKED_MCP_IMPORT_ANSWER_SECONDS"
ENV_ALLOW_INSECURE_HTTP = "COOKED_ALLOW_INSECURE_HTTP"
#: Off: changes that lose data are not confirmed with the person first (some clients answer no unasked).
ENV_CONFIRM_CHANGES = "COOKED_MCP_CONFIRM_CHANGES"

#: The variable behind each setting. A new setting read from the environment is added here,
#: so ``--help`` and the misspelling warning know it at once.
ENVIRONMENT: Final[dict[str, str]] = {
    "base_url": ENV_BASE_URL,
    "username": ENV_USERNAME,
    "password": ENV_PASSWORD,
    "http_addr": ENV_HTTP_ADDR,
    "http_token": ENV_HTTP_TOKEN,
    "read_only": ENV_READ_ONLY,
    "log_level": ENV_LOG_LEVEL,
    "import_answer_seconds": ENV_IMPORT_ANSWER,
    "allow_insecure_http": ENV_ALLOW_INSECURE_HTTP,
    "confirm_changes": ENV_CONFIRM_CHANGES,
}

#: The ``table.key`` behind each setting in the config file.
FILE_KEYS: Final[dict[str, tuple[str, str]]] = {
    "base_url": ("cooked", "base_url"),
    "allow_insecure_http": ("cooked", "allow_insecure_http"),
    "username": ("user", "name"),
    "password": ("user", "password"),
    "http_addr": ("mcp", "http_addr"),
    "http_token": ("mcp", "http_token"),
    "read_only": ("mcp", "read_only"),
    "allowed_hosts": ("mcp", "allowed_hosts"),
    "allowed_origins": ("mcp", "allowed_origins"),
    "import_answer_seconds": ("mcp", "import_answer_seconds"),
    "confirm_changes": ("mcp", "confirm_changes"),
    "limits": ("mcp", "limits"),
    "log_level": ("log", "level"),
}

#: The secrets that a ``*_cmd`` key (``user.name_cmd``...) may produce instead of holding them.
COMMAND_SETTINGS: Final = ("username", "password", "http_token")


def environment_variables() -> list[str]:
    """Every variable cooked-mcp reads, for ``--help`` and the misspelling warning."""
    return list(ENVIRONMENT.values())
