"""The mcp SDK and uvicorn behaviour cooked-mcp is built on, checked by driving the real objects.

``transports/http_guard.py`` adds, on the SDK's public ASGI app, the rules the SDK lacks, and
``transports/connection_guard.py`` reaches into uvicorn's h11 protocol. Each test here runs the
real classes in-process and asserts an outcome, so an upgrade (``make newest``) that changes
what they rely on fails here, and one that makes a guard rule unnecessary says so (the
``still_`` tests), while a cosmetic change to the SDK's source fails nothing.
"""

from __future__ import annotations

import ast
import importlib
import io
import json
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.metadata import version
from pathlib import Path
from typing import Any

import anyio
import httpx
import mcp_types as types
import pytest
from mcp.server import Server
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.message import SessionMessage
from pydantic import BaseModel
from servers import INITIALIZE, MCP_HEADERS, open_session_async
from starlette.datastructures import Headers
from starlette.types import Receive, Scope, Send

from cooked_mcp.config.limits import Limits
from cooked_mcp.transports.connection_guard import uvicorn_server
from cooked_mcp.transports.http_guard import _ANSWER, HttpGuard, _carries_answer
from cooked_mcp.transports.protocol_guard import INTERRUPTED, StopSignals

pytestmark = [pytest.mark.tooling, pytest.mark.anyio]

_OPEN = TransportSecuritySettings(enable_dns_rebinding_protection=False)


def test_the_installed_sdk_is_in_the_range_pyproject_allows() -> None:
    """mcp is a range (``>=2.3,<3``): ``make lower-bounds`` and ``make newest`` run this file on both ends."""
    pinned = [line for line in Path("pyproject.toml").read_text().splitlines() if line.startswith('    "mcp')]
    assert pinned == ['    "mcp>=2.3,<3",'], pinned
    major, minor = (int(part) for part in version("mcp").split(".")[:2])
    assert major == 2 and minor >= 3, version("mcp")


def test_no_source_file_reaches_into_the_sdk() -> None:
    """Issue 40: only the SDK's public API, so any release in the range serves: no ``_module`` or
    ``_name`` imported from mcp or mcp_types, and no subclass of an SDK class (what the HTTP
    transport was before: a subclass using nine private members). A pydantic data model the SDK
    hands to its providers may be extended through its public methods (remote mode's loopback
    redirect rule overrides ``OAuthClientInformationFull.validate_redirect_uri``)."""
    reaches = []
    for path in Path("src").rglob("*.py"):
        tree = ast.parse(path.read_text())
        imported: dict[str, object] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in ("mcp", "mcp_types"):
                module = importlib.import_module(node.module or "")
                imported |= {
                    alias.asname or alias.name: getattr(module, alias.name, None) for alias in node.names
                }
                names = [*(node.module or "").split("."), *(alias.name for alias in node.names)]
                reaches += [f"{path}:{node.lineno} imports {name}" for name in names if name.startswith("_")]
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                bases = [base.id for base in node.bases if isinstance(base, ast.Name) and base.id in imported]
                reaches += [
                    f"{path}:{node.lineno} subclasses {base}"
                    for base in bases
                    if not (isinstance(imported[base], type) and issubclass(imported[base], BaseModel))
                ]
    assert reaches == []


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
    tools: Tools, guarded: bool = True, **options: Any
) -> AsyncIterator[tuple[HttpGuard, httpx.AsyncClient]]:
    manager = StreamableHTTPSessionManager(tools.server, security_settings=_OPEN, **options)
    guard = HttpGuard(StreamableHTTPASGIApp(manager), manager.max_sessions or Limits.MAX_SESSIONS)
    async with (
        manager.run(),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=guard if guarded else StreamableHTTPASGIApp(manager)),
            base_url="http://127.0.0.1",
            headers=MCP_HEADERS,
            timeout=10,
        ) as http,
    ):
        yield guard, http


def answers(response: httpx.Response) -> list[dict[str, Any]]:
    """The JSON-RPC answers (no notifications) of an event-stream response."""
    messages = [json.loads(line[5:]) for line in response.text.splitlines() if line.startswith("data:")]
    return [message for message in messages if "id" in message]


def call(request_id: int, progress: bool = False) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "wait", "arguments": {}}
    if progress:
        params["_meta"] = {"progressToken": "p"}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


async def test_an_opening_request_refused_names_no_session_and_a_call_streams_its_answer() -> None:
    tools = Tools()
    tools.release.set()
    async with serving(tools) as (_, http):
        refused = await http.post("/mcp", json={"jsonrpc": "2.0", "id": 9, "method": "ping"})
        headers = await open_session_async(http, "/mcp")
        answered = await http.post("/mcp", json=call(2), headers=headers)
    assert refused.status_code == 400 and "mcp-session-id" not in refused.headers
    assert answered.headers["content-type"].startswith("text/event-stream")
    [answer] = answers(answered)
    assert answer["id"] == 2 and answer["result"]["content"][0]["text"] == "done"


async def test_still_the_sdk_answers_a_cancelled_request_which_the_guard_leaves_unanswered() -> None:
    """The SDK's 2025-era transport answers a cancelled request with -32800 "Request cancelled"
    (its dispatcher stays silent, python-sdk PR #3188; the 2026 transports must not answer).
    When the first half fails, drop the guard's rule; a reused id is refused meanwhile."""
    seen: dict[bool, list[dict[str, Any]]] = {}
    refused: list[httpx.Response] = []
    for guarded in (False, True):
        tools = Tools()
        async with serving(tools, guarded) as (_, http), anyio.create_task_group() as group:
            headers = await open_session_async(http, "/mcp")

            async def post() -> None:
                seen[guarded] = answers(await http.post("/mcp", json=call(5), headers=headers))  # noqa: B023

            group.start_soon(post)
            with anyio.fail_after(10):
                await tools.started.wait()
            if guarded:
                refused.append(await http.post("/mcp", json=call(5), headers=headers))
            cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}}
            await http.post("/mcp", json=cancel, headers=headers)
    assert [answer["error"]["code"] for answer in seen[False]] == [-32800]
    assert seen[True] == []
    [again] = refused
    assert again.status_code == 400 and "still running" in again.json()["error"]["message"]


async def test_a_call_running_at_a_stop_gets_its_one_answer_after_the_grace() -> None:
    tools = Tools()
    responses: list[httpx.Response] = []
    async with serving(tools) as (guard, http), anyio.create_task_group() as group:
        headers = await open_session_async(http, "/mcp")

        async def post() -> None:
            responses.append(await http.post("/mcp", json=call(7), headers=headers))

        group.start_soon(post)
        with anyio.fail_after(10):
            await tools.started.wait()
            stop = StopSignals()
            stop.requested.set()
            await guard.drain(stop, 0.1, anyio.lowlevel.checkpoint)
    [answer] = answers(responses[0])
    assert answer["id"] == 7 and answer["error"]["message"] == INTERRUPTED


async def test_the_longest_idle_session_makes_room_for_a_new_one() -> None:
    """The SDK refuses a session beyond ``max_sessions`` (503); the guard ends the longest-idle one."""
    tools = Tools()
    for guarded, expected in ((False, [200, 200, 503]), (True, [200, 200, 200])):
        async with serving(tools, guarded, max_sessions=2) as (_, http):
            opened = [(await http.post("/mcp", json=INITIALIZE)).status_code for _ in range(3)]
        assert opened == expected, guarded


async def test_a_session_of_another_oauth_client_makes_room_too() -> None:
    """Remote mode: the SDK lets only the credential that opened a session end it (any other is
    told 404), so the guard ends the longest-idle one as its own client; it used the newcomer's,
    whose DELETE the SDK ignored, and the newcomer got 503 while idle sessions were open."""
    tools = Tools()
    manager = StreamableHTTPSessionManager(tools.server, security_settings=_OPEN, max_sessions=2)
    guard = HttpGuard(StreamableHTTPASGIApp(manager), 2)

    async def as_client(scope: Scope, receive: Receive, send: Send) -> None:
        client = Headers(scope=scope)["x-client"]
        token = AccessToken(token=f"t-{client}", client_id=client, scopes=[])
        await guard({**scope, "user": AuthenticatedUser(token)}, receive, send)

    transport = httpx.ASGITransport(app=as_client)
    async with (
        manager.run(),
        httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", headers=MCP_HEADERS) as http,
    ):
        opened = [
            (await http.post("/mcp", json=INITIALIZE, headers={"x-client": client})).status_code
            for client in ("claude", "claude", "chatgpt")
        ]
    assert opened == [200, 200, 200]


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
    from ``protocol_guard``."""
    tools = Tools()
    async with serving(tools, guarded=False) as (_, http):
        sdk = await http.post("/mcp", content=body, headers=await open_session_async(http, "/mcp"))
    async with serving(tools) as (_, http):
        guarded = await http.post("/mcp", content=body, headers=await open_session_async(http, "/mcp"))
    assert guarded.status_code == 400 and guarded.json()["error"]["code"] == types.INVALID_REQUEST
    sdk_code = sdk.json()["error"]["code"] if sdk.content else None
    assert (sdk.status_code, sdk_code) != (400, types.INVALID_REQUEST), sdk.text


async def test_still_the_sdk_stdio_transport_hands_over_a_bad_line_unanswered() -> None:
    """Why ``transports/stdio.py`` reads raw lines for the guard: the SDK's ``stdio_server`` turns a
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


async def test_uvicorn_runs_the_h11_hooks_the_connection_bounds_use() -> None:
    """``BoundedH11Protocol`` relies on its h11 protocol's internals: a silent connection is closed
    at the head deadline, and ``should_exit`` stops the server."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})

    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    server = uvicorn_server(app, Limits(http_head_seconds=0.3))
    async with anyio.create_task_group() as group:
        group.start_soon(server.serve, [listener])
        with anyio.fail_after(10):  # accepted once uvicorn serves the listening socket
            silent = await anyio.connect_tcp("127.0.0.1", port)
            with pytest.raises((anyio.EndOfStream, anyio.BrokenResourceError, ConnectionError)):
                await silent.receive()
            server.should_exit = True


def test_an_answer_is_told_from_other_events_in_the_sdks_order_quickly_and_in_any_order_all_the_same() -> (
    None
):
    """The guard's one-answer rule must see every response: the SDK's member order is matched at
    once (a megabyte answer costs no parse), and a response written in another order is still seen,
    so a release that changes the order never makes the guard add a second answer."""
    sdk_order = types.JSONRPCResponse(jsonrpc="2.0", id=7, result={"content": []})
    event = b"event: message\r\ndata: " + sdk_order.model_dump_json(by_alias=True).encode() + b"\r\n\r\n"
    assert _ANSWER.match(event, event.find(b"data:")), "the SDK writes a response's members in a new order"
    reordered = b'event: message\r\ndata: {"result":{"content":[]},"id":"a","jsonrpc":"2.0"}\r\n\r\n'
    error = b'data: {"error":{"code":-32603,"message":"x"},"jsonrpc":"2.0","id":3}\n\n'
    progress = b'data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"result":1}}\n\n'
    question = b'data: {"method":"elicitation/create","jsonrpc":"2.0","id":4,"params":{"error":""}}\n\n'
    assert _carries_answer(event) and _carries_answer(reordered) and _carries_answer(error)
    assert (
        not _carries_answer(progress) and not _carries_answer(question) and not _carries_answer(b": ping\n\n")
    )
