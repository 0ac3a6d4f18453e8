"""The two sides of every comparison: an MCP client of a server, and Cooked called directly.

``McpClient`` wraps the SDK ``Client`` with the one thing the benchmark needs, a tool call
that raises on a tool error. ``DirectCooked`` is the floor a tool call is compared with:
a logged-in httpx client making the same Cooked requests from the benchmark process.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

import httpx
import httpx2
import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from cooked_fake import SEED_LOGIN, SEED_PASSWORD

from .procs import COOKED_MCP, PYTHON

#: Seconds any single MCP request may take before the benchmark gives up on it.
CALL_TIMEOUT = 30.0
BASELINE_SERVER = str(Path(__file__).with_name("baseline_server.py"))


class ToolCallFailed(RuntimeError):
    """The server answered a tool call with isError: the benchmark's own setup is wrong."""


def result_text(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


class McpClient:
    """A connected SDK client; ``call`` raises ``ToolCallFailed`` on a tool error."""

    def __init__(self, client: Client) -> None:
        self.client = client

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> types.CallToolResult:
        result = await self.client.call_tool(tool, dict(arguments))
        if result.is_error:
            raise ToolCallFailed(f"{tool} {dict(arguments)}: {result_text(result)[:300]}")
        return result

    async def list_tools(self) -> list[types.Tool]:
        return (await self.client.list_tools()).tools


def baseline_argv(replay: Path | None = None) -> list[str]:
    """The bare SDK server's command line; ``replay``: the recorded results it also serves."""
    return [PYTHON, BASELINE_SERVER, *(["--replay", str(replay)] if replay else [])]


def stdio_params(
    env: Mapping[str, str], *, baseline: bool = False, replay: Path | None = None
) -> StdioServerParameters:
    """cooked-mcp, or the bare SDK server, spawned the same way with the same environment."""
    if baseline:
        command, *args = baseline_argv(replay)
        return StdioServerParameters(command=command, args=args, env=dict(env))
    return StdioServerParameters(command=COOKED_MCP, args=[], env=dict(env))


def stdio_client_for(params: StdioServerParameters, errlog: TextIO, mode: str) -> Client:
    """An SDK client that spawns ``params`` on entry; the server's stderr goes to ``errlog``."""
    return Client(stdio_client(params, errlog=errlog), mode=mode, read_timeout_seconds=CALL_TIMEOUT)


@contextlib.asynccontextmanager
async def connect_stdio(params: StdioServerParameters, errlog: TextIO, mode: str) -> AsyncIterator[McpClient]:
    async with stdio_client_for(params, errlog, mode) as client:
        wrapped = McpClient(client)
        await wrapped.list_tools()
        yield wrapped


@contextlib.asynccontextmanager
async def connect_http(url: str, token: str, mode: str) -> AsyncIterator[McpClient]:
    """An SDK client over Streamable HTTP that sends ``Authorization: Bearer <token>``.

    In mcp 2.3.0 headers go on the httpx2 client handed to ``streamable_http_client``;
    a client passed in is not closed by the transport, so it is closed here.
    """
    timeout = httpx2.Timeout(CALL_TIMEOUT)
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=timeout) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode=mode, read_timeout_seconds=CALL_TIMEOUT) as client:
            wrapped = McpClient(client)
            await wrapped.list_tools()
            yield wrapped


class DirectCooked:
    """Cooked called straight from the benchmark: the floor every tool call is compared with."""

    def __init__(self, base_url: str) -> None:
        self._http = httpx.AsyncClient(
            base_url=base_url, timeout=httpx.Timeout(CALL_TIMEOUT), headers={"Accept": "application/json"}
        )
        self.username = ""
        #: When a list, every request made is appended to it (method, path, JSON body).
        self.recorded: list[tuple[str, str, Any]] | None = None

    async def __aenter__(self) -> DirectCooked:
        await self.login()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._http.aclose()

    async def login(self) -> None:
        response = await self._http.post(
            "/api/public/login", json={"username": SEED_LOGIN, "password": SEED_PASSWORD}
        )
        response.raise_for_status()
        self.username = str(response.json()["username"])

    async def _json(self, method: str, path: str, body: Any = None) -> Any:
        if self.recorded is not None:
            self.recorded.append((method, path, body))
        response = await self._http.request(method, path, json=body)
        if response.status_code == 401:  # the benchmark expired every session: log in again, once
            await self.login()
            response = await self._http.request(method, path, json=body)
        response.raise_for_status()
        return response.json()

    async def get_recipe(self, recipe_id: str) -> Any:
        return await self._json("GET", f"/api/saved/{recipe_id}")

    async def get_shopping_list(self) -> Any:
        return await self._json("GET", f"/api/user/{self.username}/shopping-list")

    async def add_selection(self, ids: Sequence[str]) -> Any:
        """What add_selection needs at least: read the selected set, then write it back with ``ids``."""
        shopping_list = await self.get_shopping_list()
        selected = [
            group["id"]
            for aisle in shopping_list["aisles"]
            for group in aisle.get("product-groups", [])
            if group.get("selected")
        ]
        wanted = selected + [i for i in ids if i not in selected]
        body = {"product-group-ids": wanted}
        return await self._json("PUT", f"/api/user/{self.username}/shopping-list/selected", body)
