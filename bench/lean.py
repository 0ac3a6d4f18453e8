"""Minimal JSON-RPC clients: what the server adds, without the Python SDK client's own cost.

The SDK client validates every structured result against the tool's output schema with
``jsonschema`` and parses it into pydantic models, about 1 ms per call on this machine
and paid in the benchmark process, not by cooked-mcp. Agents use other clients. These
two send one request and read one answer, and nothing else, so the overhead measured
through them is the server's (and the MCP SDK server's) share alone.
"""

from __future__ import annotations

import contextlib
import itertools
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, TextIO

import anyio
import httpx
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

from .clients import CALL_TIMEOUT, ToolCallFailed
from .procs import COOKED_MCP

PROTOCOL_VERSION = "2025-06-18"
#: Far above any answer the benchmark's calls get.
MAX_LINE = 16 * 1024 * 1024


def _initialize(request_id: int) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "cooked-mcp-bench-lean", "version": "0"},
        },
    }


_INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def _tool_call(request_id: int, tool: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": tool, "arguments": dict(arguments)},
    }


def _result(tool: str, answer: dict[str, Any]) -> dict[str, Any]:
    """The tool result of a JSON-RPC answer; raises on a protocol or tool error."""
    if "error" in answer:
        raise ToolCallFailed(f"{tool}: JSON-RPC error {answer['error']}")
    result: dict[str, Any] = answer["result"]
    if result.get("isError"):
        raise ToolCallFailed(f"{tool}: {json.dumps(result)[:300]}")
    return result


class LeanStdioClient:
    """One JSON-RPC line written to the server's stdin, one read back from its stdout."""

    def __init__(self, process: Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.pid = process.pid
        self._stdin = process.stdin
        self._stdout = BufferedByteReceiveStream(process.stdout)
        self._ids = itertools.count(1)

    async def _send(self, message: Mapping[str, Any]) -> None:
        await self._stdin.send(json.dumps(message).encode() + b"\n")

    async def _request(self, message: Mapping[str, Any]) -> dict[str, Any]:
        await self._send(message)
        with anyio.fail_after(CALL_TIMEOUT):
            answer: dict[str, Any] = json.loads(await self._stdout.receive_until(b"\n", MAX_LINE))
        return answer

    async def initialize(self) -> None:
        await self._request(_initialize(next(self._ids)))
        await self._send(_INITIALIZED)

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        return _result(tool, await self._request(_tool_call(next(self._ids), tool, arguments)))


@contextlib.asynccontextmanager
async def lean_stdio(
    env: dict[str, str], errlog: TextIO, argv: Sequence[str] = (COOKED_MCP,)
) -> AsyncIterator[LeanStdioClient]:
    """A server (cooked-mcp unless ``argv`` says otherwise) spawned as an MCP client would,
    spoken to by ``LeanStdioClient``."""
    async with await anyio.open_process(list(argv), env=env, stderr=errlog) as process:
        client = LeanStdioClient(process)
        try:
            await client.initialize()
            yield client
        finally:
            assert process.stdin is not None
            await process.stdin.aclose()
            with anyio.move_on_after(10):
                await process.wait()


class LeanHttpClient:
    """One POST per call over a legacy Streamable HTTP session; the answer read from the one
    SSE event (or JSON body) it comes in."""

    def __init__(self, http: httpx.AsyncClient, url: str) -> None:
        self._http = http
        self._url = url
        self._ids = itertools.count(1)

    async def _post(self, message: Mapping[str, Any]) -> httpx.Response:
        response = await self._http.post(self._url, json=message)
        response.raise_for_status()
        return response

    async def _request(self, message: Mapping[str, Any]) -> dict[str, Any]:
        response = await self._post(message)
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            for line in response.text.splitlines():
                if line.startswith("data:") and line[5:].strip():
                    answer: dict[str, Any] = json.loads(line[5:])
                    return answer
            raise ToolCallFailed(f"an event stream without a message: {response.text[:300]!r}")
        answer = response.json()
        return answer

    async def initialize(self) -> None:
        response = await self._post(_initialize(next(self._ids)))
        self._http.headers["mcp-session-id"] = response.headers["mcp-session-id"]
        self._http.headers["mcp-protocol-version"] = PROTOCOL_VERSION
        await self._post(_INITIALIZED)

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        return _result(tool, await self._request(_tool_call(next(self._ids), tool, arguments)))


@contextlib.asynccontextmanager
async def lean_http(url: str, token: str) -> AsyncIterator[LeanHttpClient]:
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/json, text/event-stream",
    }
    async with httpx.AsyncClient(headers=headers, timeout=httpx.Timeout(CALL_TIMEOUT)) as http:
        client = LeanHttpClient(http, url)
        await client.initialize()
        yield client
