"""Pins the mcp SDK surface cooked-mcp is built on.

The server registers tools on the low-level ``mcp.server.Server`` with explicit
schemas (MCPServer would derive them from function signatures). If an SDK
upgrade changes that API, these fail before anything subtler does.
"""

from __future__ import annotations

import inspect
from importlib.metadata import version

import mcp_types as types
import pytest
from mcp.server import Server
from mcp.server.session import ServerSession

pytestmark = pytest.mark.tooling


def test_the_pinned_sdk_release_is_installed() -> None:
    assert version("mcp") == "2.3.0", (
        "cooked-mcp is built against mcp 2.3.0; re-check tools.py.j2 before upgrading"
    )


def test_low_level_server_takes_list_and_call_handlers() -> None:
    parameters = inspect.signature(Server.__init__).parameters
    for name in ("version", "title", "instructions", "on_list_tools", "on_call_tool"):
        assert name in parameters
    assert hasattr(ServerSession, "report_progress")


def test_tool_definitions_carry_explicit_schemas_and_annotations() -> None:
    fields = types.Tool.model_fields
    assert {"input_schema", "output_schema", "annotations", "title"} <= set(fields)
    assert {"read_only_hint", "destructive_hint", "idempotent_hint", "open_world_hint"} <= set(
        types.ToolAnnotations.model_fields
    )
    assert "structured_content" in types.CallToolResult.model_fields
