"""Wires the hand-written handlers into the generated tool registrations."""

from __future__ import annotations

from typing import Any

from mcp.server import Server

from cooked_mcp_generated.tools import TOOLS, create_server

from . import __version__
from .cooked.client import CookedClient
from .handlers import CookedTools


def read_only_tool_names() -> list[str]:
    """The tools that change nothing, for read-only mode."""
    return [spec.name for spec in TOOLS if spec.read_only]


# implements: server.COMPATIBILITY.2, server.SINGLE_USER.2
def build_server(client: CookedClient, *, read_only: bool = False) -> Server[Any]:
    return create_server(
        CookedTools(client),
        version=__version__,
        tool_names=read_only_tool_names() if read_only else None,
    )
