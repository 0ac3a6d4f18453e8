"""Pins the mcp SDK surface cooked-mcp is built on.

The server registers tools on the low-level ``mcp.server.Server`` with explicit
schemas (MCPServer would derive them from function signatures). If an SDK
upgrade changes that API, these fail before anything subtler does.
"""

from __future__ import annotations

import dataclasses
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
    """transports/sdk_workarounds/http_transport.py reuses these private parts of the SDK's
    Streamable HTTP transport; an upgrade that renames or reshapes one must fail here, not in
    production."""
    from mcp.server.streamable_http import StreamableHTTPServerTransport

    for name in (
        "_handle_post_request",
        "_validate_request_headers",
        "_check_content_type",
        "_get_session_id",
        "_create_json_response",
        "_create_error_response",
        "_terminate_unanswered_request",
        "_clean_up_memory_streams",
        "close_standalone_sse_stream",
    ):
        assert callable(getattr(StreamableHTTPServerTransport, name)), name
    post = inspect.signature(StreamableHTTPServerTransport._handle_post_request).parameters
    assert list(post) == ["self", "scope", "request", "receive", "send"]
    terminate = inspect.signature(StreamableHTTPServerTransport._terminate_unanswered_request).parameters
    assert list(terminate) == ["self", "request_id"]
    assert "_read_stream_writer" in StreamableHTTPServerTransport.__annotations__
    init = inspect.getsource(StreamableHTTPServerTransport.__init__)
    assert "self._request_streams: dict[" in init
    assert "self.idle_scope" in init


def test_the_session_manager_internals_the_session_bounds_rely_on() -> None:
    """transports/sdk_workarounds/http_sessions.py overrides these private parts of the SDK's
    session manager and re-classes the transports it builds."""
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    admit = inspect.signature(StreamableHTTPSessionManager._admit_session).parameters
    assert list(admit) == ["self", "requestor"]
    opening = inspect.signature(StreamableHTTPSessionManager._serve_opening_request).parameters
    assert list(opening) == ["self", "http_transport", "scope", "receive", "send"]
    assert {"max_sessions", "session_idle_timeout"} <= set(
        inspect.signature(StreamableHTTPSessionManager.__init__).parameters
    )
    init = inspect.getsource(StreamableHTTPSessionManager.__init__)
    assert "self._server_instances" in init
    assert "self._session_owners" in init


def test_the_sdk_stdio_transport_the_replacement_stands_in_for() -> None:
    """transports/sdk_workarounds/stdio.py keeps ``stdio_server``'s contract (a context manager
    yielding the read and write streams of ``SessionMessage``) and wraps it for regular files.
    The replacement exists because the SDK's reads and writes go through a worker thread: when
    this fails on that last line, measure whether the replacement can go."""
    from mcp.server import stdio
    from mcp.shared.message import SessionMessage

    assert list(inspect.signature(stdio.stdio_server).parameters) == ["stdin", "stdout"]
    assert [field.name for field in dataclasses.fields(SessionMessage)] == ["message", "metadata"]
    assert "wrap_file" in inspect.getsource(stdio)
