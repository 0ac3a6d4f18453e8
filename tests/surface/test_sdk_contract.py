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


def test_the_session_transport_internals_json_answers_rely_on() -> None:
    """transports/http_sessions.py reuses these private parts of the SDK's Streamable HTTP
    transport; an upgrade that renames or reshapes one must fail here, not in production."""
    from mcp.server.streamable_http import StreamableHTTPServerTransport
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    for name in (
        "_handle_post_request",
        "_validate_request_headers",
        "_check_content_type",
        "_create_json_response",
        "_create_error_response",
        "_terminate_unanswered_request",
        "_clean_up_memory_streams",
    ):
        assert callable(getattr(StreamableHTTPServerTransport, name)), name
    post = inspect.signature(StreamableHTTPServerTransport._handle_post_request).parameters
    assert list(post) == ["self", "scope", "request", "receive", "send"]
    admit = inspect.signature(StreamableHTTPSessionManager._admit_session).parameters
    assert list(admit) == ["self", "requestor"]
    assert "_read_stream_writer" in StreamableHTTPServerTransport.__annotations__
    assert "self._request_streams: dict[" in inspect.getsource(StreamableHTTPServerTransport.__init__)
