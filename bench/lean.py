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
import select
import urllib.parse
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, TextIO

import anyio
import h11
from anyio.abc import Process, SocketAttribute, SocketStream
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
    """One POST per call on one kept-alive connection, framed by h11 and nothing else.

    Not httpx: its per-request work (URL and header models, cookie jar, connection pool,
    timeouts, transport layers) costs about 0.9 ms of CPU on the benchmark machine, and was
    counted as the server's share while this client used it. h11 is the HTTP/1.1 framing
    alone (the parser uvicorn and httpcore use themselves), so a JSON body, an SSE stream
    and chunked encoding are read correctly for a few tens of microseconds.
    """

    def __init__(self, url: str, headers: Mapping[str, str]) -> None:
        parts = urllib.parse.urlsplit(url)
        self._address = (parts.hostname or "127.0.0.1", parts.port or 80)
        self._path = parts.path or "/"
        self._headers = {"host": parts.netloc, **{name.lower(): value for name, value in headers.items()}}
        self._headers["content-type"] = "application/json"
        self._stream: SocketStream | None = None
        self._connection = h11.Connection(h11.CLIENT)
        self._ids = itertools.count(1)

    async def _connected(self) -> SocketStream:
        """The open connection, or a new one when the server has closed it (a keep-alive timeout
        while the benchmark visited other rows): checked as httpcore does, by polling whether the
        idle socket has anything to read, which for a connection between answers is only its end.
        A row idles that long only between rounds, so reconnecting falls on untimed calls."""
        stream = self._stream
        if stream is not None:
            poller = select.poll()
            poller.register(stream.extra(SocketAttribute.raw_socket), select.POLLIN)  # noqa: S610 (anyio)
            if not poller.poll(0) and self._connection.our_state is h11.IDLE:
                return stream
            await stream.aclose()
        self._stream = stream = await anyio.connect_tcp(*self._address)
        self._connection = h11.Connection(h11.CLIENT)
        return stream

    async def _post(self, message: Mapping[str, Any]) -> tuple[h11.Response, bytes]:
        """The answer's status line and headers, and its whole body."""
        body = json.dumps(message).encode()
        headers = [*self._headers.items(), ("content-length", str(len(body)))]
        with anyio.fail_after(CALL_TIMEOUT):
            stream = await self._connected()
            connection = self._connection
            await stream.send(
                connection.send(h11.Request(method="POST", target=self._path, headers=headers))
                + connection.send(h11.Data(data=body))
                + connection.send(h11.EndOfMessage())
            )
            response: h11.Response | None = None
            chunks: list[bytes] = []
            while True:
                try:
                    event = connection.next_event()
                except h11.RemoteProtocolError as exc:  # h11's word for a connection closed mid-answer
                    raise ToolCallFailed(f"no whole answer from the server: {exc}") from exc
                if event is h11.NEED_DATA:
                    try:
                        connection.receive_data(await stream.receive())
                    except anyio.EndOfStream:
                        connection.receive_data(b"")
                elif isinstance(event, h11.Response):
                    response = event
                elif isinstance(event, h11.Data):
                    chunks.append(event.data)
                elif isinstance(event, h11.EndOfMessage):
                    break
        assert response is not None, "h11 ends a message only after its response line"
        if response.status_code >= 400:
            raise ToolCallFailed(f"HTTP {response.status_code}: {b''.join(chunks)[:300]!r}")
        if connection.our_state is h11.DONE and connection.their_state is h11.DONE:
            connection.start_next_cycle()
        return response, b"".join(chunks)

    async def _request(self, message: Mapping[str, Any]) -> dict[str, Any]:
        response, body = await self._post(message)
        if _header(response, b"content-type").startswith(b"text/event-stream"):
            for line in body.splitlines():
                if line.startswith(b"data:") and line[5:].strip():
                    answer: dict[str, Any] = json.loads(line[5:])
                    return answer
            raise ToolCallFailed(f"an event stream without a message: {body[:300]!r}")
        answer = json.loads(body)
        return answer

    async def initialize(self) -> None:
        response, _ = await self._post(_initialize(next(self._ids)))
        session = _header(response, b"mcp-session-id")
        if not session:
            raise ToolCallFailed("the server answered initialize without an Mcp-Session-Id")
        self._headers["mcp-session-id"] = session.decode()
        self._headers["mcp-protocol-version"] = PROTOCOL_VERSION
        await self._post(_INITIALIZED)

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        return _result(tool, await self._request(_tool_call(next(self._ids), tool, arguments)))

    async def aclose(self) -> None:
        if self._stream is not None:
            await self._stream.aclose()
            self._stream = None


def _header(response: h11.Response, name: bytes) -> bytes:
    """A header's value (h11 gives names in lower case), or empty."""
    return next((value for key, value in response.headers if key == name), b"")


@contextlib.asynccontextmanager
async def lean_http(url: str, token: str) -> AsyncIterator[LeanHttpClient]:
    """A session on the Streamable HTTP server at ``url``, spoken to by ``LeanHttpClient``."""
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/json, text/event-stream",
    }
    client = LeanHttpClient(url, headers)
    try:
        await client.initialize()
        yield client
    finally:
        await client.aclose()
