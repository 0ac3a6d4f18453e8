"""Starting the real cooked-mcp process for tests, with a clean environment.

Tests never inherit the developer's configuration: HOME and XDG_CONFIG_HOME
point into a temporary folder, and Cooked is always a fake on 127.0.0.1.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

from mcp import Client, StdioServerParameters

BIN = Path(sys.executable).parent
COOKED_MCP = str(BIN / "cooked-mcp")


def server_env(home: Path, base_url: str, *, login: str, password: str, **extra: str) -> dict[str, str]:
    """The whole environment of a cooked-mcp process: nothing leaks in from the test runner."""
    (home / "config").mkdir(parents=True, exist_ok=True)
    return {
        "PATH": f"{BIN}:/usr/bin:/bin",
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / "config"),
        "COOKED_BASE_URL": base_url,
        "COOKED_LOGIN_USERNAME": login,
        "COOKED_LOGIN_PASSWORD": password,
        **extra,
    }


def stdio_client(env: Mapping[str, str], *args: str) -> Client:
    """An mcp SDK client that spawns cooked-mcp and speaks MCP over its stdin/stdout."""
    return Client(
        StdioServerParameters(command=COOKED_MCP, args=list(args), env=dict(env)), read_timeout_seconds=30
    )
