"""The mcp SDK and uvicorn behaviour cooked-mcp is built on, checked by driving the real objects.

``transports/private_reaches.py`` reaches into private parts of both and
``transports/protocol_guard.py`` adds the rules the SDK lacks. Each test here runs the real
classes in-process and asserts an outcome, so an upgrade that changes what a reach relies on
fails here, and one that makes a guard rule unnecessary says so (the ``still_`` tests), while a
cosmetic change to the SDK's source fails nothing.
"""

from __future__ import annotations

import io
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.metadata import version
from typing import Any

import anyio
import httpx
import mcp_types as types
import pytest
import uvicorn
from mcp.server import Server
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.message import SessionMessage
from servers import INITIALIZE, MCP_HEADERS

from cooked_mcp.config.limits import Limits
from cooked_mcp.transports.private_reaches import (
    GracefulServer,
    JsonWhenSilentSessionManager,
    JsonWhenSilentTransport,
    bounded_protocol,
)
from cooked_mcp.transports.protocol_guard import INTERRUPTED, OpeningRequests
from cooked_mcp.transports.stop_signals import StopSignals

pytestmark = [pytest.mark.tooling, pytest.mark.anyio]

_OPEN = TransportSecuritySettings(enable_dns_rebinding_protection=False)


def test_the_pinned_sdk_release_is_installed() -> None:
    assert version("mcp") == "2.3.0", "cooked-mcp is built against mcp 2.3.0; run this file before upgrading"


class Tools:
    """A low-level SDK server with one tool, ``wait``, that runs until ``release`` is set."""

    def __init__(self) -> None:
        self.release = anyio.Event()
        self.started = anyio.Event()
        self.server: Server[Any] = Server("contract", version="1", on_call_tool=self._call)

    async def _call(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        self.started.set()
        await self.release.wait()
        return types.CallToolResult(content=[types.TextContent(type="text", text="done")])


@asynccontextmanager
async def serving(
    tools: Tools,
    manager_class: type[StreamableHTTPSessionManager] = JsonWhenSilentSessionManager,
    **options: Any,
) -> AsyncIterator[tuple[StreamableHTTPSessionManager, httpx.AsyncClient]]:
    manager = manager_class(tools.server, security_settings=_OPEN, **options)
    app = OpeningRequests(StreamableHTTPASGIApp(manager))
    async with (
        manager.run(),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app),
            base_url="http://127.0.0.1",
            headers=MCP_HEADERS,
            timeout=10,
        ) as http,
    ):
        yield manager, http


async def open_session(http: httpx.AsyncClient) -> dict[str, str]:
    opened = await http.post("/mcp", json=INITIALIZE)
    assert opened.status_code == 200, opened.text
    headers = {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
    await http.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    return headers


def call(request_id: int, progress: bool = False) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "wait", "arguments": {}}
    if progress:
        params["_meta"] = {"progressToken": "p"}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


async def test_a_plain_call_is_answered_in_json_and_one_with_a_progress_token_streams() -> None:
    """The JSON answer per request (the SDK's private ``_handle_post_request``, ``_request_streams``,
    ``_read_stream_writer``); ``initialize`` and the refusal of an opening request with them."""
    tools = Tools()
    tools.release.set()
    async with serving(tools) as (_, http):
        refused = await http.post("/mcp", json={"jsonrpc": "2.0", "id": 9, "method": "ping"})
        headers = await open_session(http)
        plain = await http.post("/mcp", json=call(2), headers=headers)
        streamed = await http.post("/mcp", json=call(3, progress=True), headers=headers)
    assert refused.status_code == 400 and "mcp-session-id" not in refused.headers
    assert plain.headers["content-type"] == "application/json"
    assert plain.json()["id"] == 2 and plain.json()["result"]["content"][0]["text"] == "done"
    assert streamed.headers["content-type"].startswith("text/event-stream")
    assert '"id":3' in streamed.text


async def test_a_reused_id_is_refused_while_the_first_call_runs_and_a_cancelled_call_gets_202() -> None:
    """Duplicate ids (the guard, via ``_request_streams``) and a cancelled call left unanswered (the
    SDK's private ``_terminate_unanswered_request`` would send -32800 ``Request cancelled``)."""
    tools = Tools()
    answers: dict[str, httpx.Response] = {}
    async with serving(tools) as (_, http), anyio.create_task_group() as group:
        headers = await open_session(http)

        async def post(name: str, body: dict[str, Any]) -> None:
            answers[name] = await http.post("/mcp", json=body, headers=headers)

        group.start_soon(post, "first", call(5))
        with anyio.fail_after(10):
            await tools.started.wait()
        await post("again", call(5))
        cancel = {"requestId": 5, "reason": "test"}
        await post("cancel", {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel})
    assert answers["again"].status_code == 400 and answers["again"].json()["id"] == 5
    assert "still running" in answers["again"].json()["error"]["message"]
    assert answers["first"].status_code == 202 and answers["first"].content == b""


async def test_a_call_running_at_shutdown_gets_its_one_answer() -> None:
    """``interrupt_in_flight`` writes into the SDK's private per-request streams."""
    tools = Tools()
    answers: list[httpx.Response] = []
    async with serving(tools) as (manager, http), anyio.create_task_group() as group:
        headers = await open_session(http)

        async def post() -> None:
            answers.append(await http.post("/mcp", json=call(7), headers=headers))

        group.start_soon(post)
        with anyio.fail_after(10):
            await tools.started.wait()
        assert isinstance(manager, JsonWhenSilentSessionManager)
        assert await manager.interrupt_in_flight() == 1
    [answer] = answers
    assert answer.json()["id"] == 7 and answer.json()["error"]["message"] == INTERRUPTED


async def test_the_longest_idle_session_makes_room_for_a_new_one() -> None:
    """The SDK refuses a session beyond ``max_sessions``; the reach (``_admit_session``,
    ``_server_instances``) closes the longest-idle one instead."""
    tools = Tools()
    async with serving(tools, max_sessions=2) as (_, http):
        sessions = [await open_session(http) for _ in range(3)]
        pings = [
            (
                await http.post("/mcp", json={"jsonrpc": "2.0", "id": 4, "method": "ping"}, headers=h)
            ).status_code
            for h in sessions
        ]
    assert pings == [404, 200, 200]


@pytest.mark.parametrize(
    "body",
    [
        b'{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}',
        b'{"foo": 1}',
        b"[]",
        b'{"jsonrpc": "2.0", "id": 3}',
    ],
    ids=["id-1.5", "not-json-rpc", "batch", "no-method"],
)
async def test_still_the_sdk_alone_does_not_answer_an_invalid_request_with_its_json_rpc_error(
    body: bytes,
) -> None:
    """Why the guard's framing rule exists (python-sdk issue #2848): mcp 2.3.0's own transport
    takes an id that is no id for a notification (202, never answered) and answers an invalid
    request with -32602 and a pydantic dump, where JSON-RPC 2.0 says -32600. (What is not JSON it
    now answers right, -32700.) When this fails, the SDK answers as the guard does: drop the rule
    from ``protocol_guard`` and its branch in ``private_reaches``."""
    tools = Tools()
    async with serving(tools, StreamableHTTPSessionManager) as (_, http):
        sdk = await http.post("/mcp", content=body, headers=await open_session(http))
    async with serving(tools) as (_, http):
        guarded = await http.post("/mcp", content=body, headers=await open_session(http))
    assert guarded.status_code == 400 and guarded.json()["error"]["code"] == types.INVALID_REQUEST
    sdk_code = sdk.json()["error"]["code"] if sdk.content else None
    assert (sdk.status_code, sdk_code) != (400, types.INVALID_REQUEST), sdk.text


async def test_still_the_sdk_stdio_transport_hands_over_a_bad_line_unanswered() -> None:
    """Why ``stdio_event_loop`` reads raw lines for the guard: the SDK's ``stdio_server`` turns a
    line that is not JSON into an exception on its read stream (answered by nobody) and an id that
    is no id into a notification (never answered). When this fails, re-check the guard's rule."""
    out = io.StringIO()
    lines = '{not json\n{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}\n'
    with anyio.fail_after(10):
        async with stdio_server(anyio.wrap_file(io.StringIO(lines)), anyio.wrap_file(out)) as (read, write):
            not_json, no_id = await read.receive(), await read.receive()
            await write.aclose()
    assert isinstance(not_json, Exception)
    assert isinstance(no_id, SessionMessage) and isinstance(no_id.message, types.JSONRPCNotification)
    assert out.getvalue() == ""


async def test_uvicorn_calls_the_shutdown_step_and_the_h11_hooks_the_bounds_use() -> None:
    """``GracefulServer`` overrides uvicorn's private ``_wait_tasks_to_complete``;
    ``BoundedH11Protocol`` its h11 protocol's internals: a silent connection is closed at the
    head deadline, and the shutdown step (which waits for the changes) runs."""
    finished: list[bool] = []

    async def changes() -> None:
        finished.append(True)

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})

    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    stop = StopSignals()
    config = uvicorn.Config(
        app, log_config=None, http=bounded_protocol(1024, Limits(http_head_seconds=0.3)), lifespan="on"
    )
    manager = JsonWhenSilentSessionManager(Tools().server)
    server = GracefulServer(config, manager, stop, changes, grace=1.0)
    async with anyio.create_task_group() as group:
        group.start_soon(server.serve, [listener])
        with anyio.fail_after(10):  # accepted once uvicorn serves the listening socket
            silent = await anyio.connect_tcp("127.0.0.1", port)
            with pytest.raises((anyio.EndOfStream, anyio.BrokenResourceError, ConnectionError)):
                await silent.receive()
            stop.requested.set()
    assert finished == [True]


@pytest.mark.parametrize("ends", ["answered", "scope cancelled"])
async def test_a_cancellation_on_its_way_when_the_request_ends_is_sent_whole(ends: str) -> None:
    """``_in_flight``'s watcher is a plain asyncio task: its ``cancel()`` is not held off by an
    anyio shield as the task group's was, so it must not be cancelled once it sends the
    notifications/cancelled of a client gone away, and the request's end (answered meanwhile,
    or its scope cancelled) waits for that send, as the group did."""
    transport = JsonWhenSilentTransport(mcp_session_id="s")
    writer, reader = anyio.create_memory_object_stream[Any](0)  # a send waits for the session to read
    transport._read_stream_writer = writer
    transport._request_streams["9"] = anyio.create_memory_object_stream[Any](1)  # not answered yet

    async def receive() -> dict[str, Any]:
        return {"type": "http.disconnect"}

    received: list[Any] = []

    async def session() -> None:
        while "9" in transport.__dict__["_request_ids"]:  # the session reads once the request has ended
            await anyio.lowlevel.checkpoint()
        received.append(await reader.receive())

    async with anyio.create_task_group() as group:
        with anyio.fail_after(10), anyio.CancelScope() as scope:
            async with transport._in_flight(9, receive):
                group.start_soon(session)
                for _ in range(5):  # the watcher sees the disconnect and starts sending
                    await anyio.lowlevel.checkpoint()
                if ends == "scope cancelled":
                    scope.cancel()
                    await anyio.sleep_forever()
        assert received, "the request's end waits for the send"
    [message] = received
    assert message.message.method == "notifications/cancelled" and message.message.params["requestId"] == 9
