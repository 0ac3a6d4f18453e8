"""Wires the hand-written handlers into the generated tool registrations."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from mcp.server import Server

from cooked_mcp_generated.tools import TOOLS, create_server

from . import __version__
from .config import DEFAULT_IMPORT_ANSWER_SECONDS, ENV_READ_ONLY
from .cooked.client import CookedClient
from .handlers import CookedTools


def read_only_tool_names() -> list[str]:
    """The tools that change nothing, for read-only mode."""
    return [spec.name for spec in TOOLS if spec.read_only]


def read_only_reason(environ: Mapping[str, str] | None = None) -> str:
    """What a call to a write tool is told in read-only mode: the mode, and where it was switched on.

    The environment variable wins over the config file whenever it is set (see config.py), so a
    non-empty one is the source; otherwise it was the file.
    """
    value = (os.environ if environ is None else environ).get(ENV_READ_ONLY, "").strip()
    source = (
        f"{ENV_READ_ONLY}={value} in its environment" if value else "mcp.read_only = true in its config file"
    )
    return (
        f"this server runs read-only ({source}), so it serves only the tools that change nothing; "
        "ask the user to change that setting if Cooked should be changed"
    )


# implements: server.COMPATIBILITY.2, server.SINGLE_USER.2
def build_server(
    client: CookedClient,
    *,
    read_only: bool = False,
    import_answer_seconds: float = DEFAULT_IMPORT_ANSWER_SECONDS,
) -> Server[Any]:
    return create_server(
        CookedTools(client, writable=not read_only, import_answer_seconds=import_answer_seconds),
        version=__version__,
        tool_names=read_only_tool_names() if read_only else None,
        withheld_because=read_only_reason() if read_only else None,
    )
