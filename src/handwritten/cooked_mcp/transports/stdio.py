"""MCP over the process's stdin and stdout.

The SDK's ``stdio_server`` moves every line read, and every write and flush, through a
worker thread (``anyio.wrap_file``). Those hand-offs cost more server CPU per tool call
than everything cooked-mcp itself does (per ``read target=recipe``: about 4.3 ms of CPU
with the SDK transport, 2.8 ms with this one). When stdin and stdout are pipes or
sockets, as they are when an MCP client spawns the server, the event loop watches them
itself instead. Anything else (a terminal, a regular file) is served by the SDK's
transport, which handles those.

Either way, while serving, fd 0 reads the null device and fd 1 writes to stderr, so a
library or a child process that prints cannot corrupt the protocol stream.

Either way too, the end of stdin does not cut off requests read before it. The SDK takes
the end of its input as the client being gone and cancels every request still running,
so a request followed at once by the end of input (``cooked-mcp < requests.jsonl``, or a
client that writes its last request and closes the pipe) went unanswered, or not,
depending on which came first. Here the end of input is passed on only once every
request read has been answered (or cancelled by the client), for at most
``ANSWER_GRACE_SECONDS``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import stat
from collections.abc import AsyncIterator, Iterator

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from ..app import build_server
from ..config import Settings
from ..cooked.client import CookedClient
from ..logging_setup import register_secret_source

__all__ = ["ANSWER_GRACE_SECONDS", "MAX_MESSAGE_BYTES", "event_loop_stdio", "serve_stdio"]

logger = logging.getLogger(__name__)

#: The longest message line accepted, the same bound as an HTTP request body.
MAX_MESSAGE_BYTES = DEFAULT_MAX_REQUEST_BODY_SIZE
#: How long buffered answers may take to reach a client that stopped reading, once serving ends.
_FLUSH_SECONDS = 5.0
#: How long requests read before the end of stdin may still run: the slowest tool call (a URL
#: import, up to 90 s at Cooked, after a login) fits. A client that closed stdin to stop the
#: server usually has nothing in flight, and ends the process itself if it will not wait.
ANSWER_GRACE_SECONDS = 120.0

ReadStream = MemoryObjectReceiveStream[SessionMessage | Exception]
WriteStream = MemoryObjectSendStream[SessionMessage]


# implements: server.TRANSPORT.1, server.TRANSPORT.2-1
def serve_stdio(settings: Settings) -> int:
    anyio.run(_serve, settings)
    return 0


async def _serve(settings: Settings) -> None:
    async with CookedClient.from_settings(settings) as client:
        register_secret_source(client.secret_values)
        server = build_server(
            client, read_only=settings.read_only, import_answer_seconds=settings.import_answer_seconds
        )
        streams = (
            event_loop_stdio() if _pollable(0) and _pollable(1) else _answering_before_the_end(stdio_server())
        )
        async with streams as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())


def _pollable(fd: int) -> bool:
    """A pipe or a socket: what the event loop can watch (a terminal is left to the SDK, so its
    non-blocking flag, shared with the shell, is never touched)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


@contextlib.asynccontextmanager
async def event_loop_stdio(
    max_message_bytes: int = MAX_MESSAGE_BYTES,
) -> AsyncIterator[tuple[ReadStream, WriteStream]]:
    """The SDK's ``stdio_server`` contract (newline-delimited JSON-RPC, streams of
    ``SessionMessage``), served by the running asyncio loop. stdin and stdout must be pipes
    or sockets."""
    loop = asyncio.get_running_loop()
    with _claimed_stdio() as (wire_in, wire_out):
        reader = asyncio.StreamReader(limit=max_message_bytes, loop=loop)
        read_transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader, loop=loop),
            os.fdopen(wire_in, "rb", 0, closefd=False),
        )
        # StreamReaderProtocol is the public protocol that gives StreamWriter its flow control.
        write_transport, write_protocol = await loop.connect_write_pipe(
            lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader(loop=loop), loop=loop),
            os.fdopen(wire_out, "wb", 0, closefd=False),
        )
        writer = asyncio.StreamWriter(write_transport, write_protocol, None, loop)
        read_send, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        write_stream, write_receive = anyio.create_memory_object_stream[SessionMessage](0)
        unanswered = _Unanswered()

        async def read_messages() -> None:
            async with read_send:
                async for line in _lines(reader):
                    if line is None:
                        logger.warning("ignored a message longer than %d bytes", max_message_bytes)
                        writer.write(_too_long(max_message_bytes))
                        continue
                    try:
                        message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                    except ValidationError as exc:
                        await read_send.send(exc)  # the SDK logs it, as it does for its own transport
                        continue
                    unanswered.read(message)
                    await read_send.send(SessionMessage(message))
                await unanswered.settled()

        async def write_messages() -> None:
            async with write_receive:
                async for session_message in write_receive:
                    json = session_message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    writer.write(json.encode() + b"\n")
                    try:
                        await writer.drain()
                    except ConnectionError:
                        logger.info("the client stopped reading stdout; no more answers can be sent")
                        unanswered.give_up()
                        return
                    unanswered.written(session_message.message)

        try:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(read_messages)
                tasks.start_soon(write_messages)
                yield read_stream, write_stream
        finally:
            read_transport.close()
            writer.close()
            with anyio.move_on_after(_FLUSH_SECONDS), contextlib.suppress(ConnectionError):
                await writer.wait_closed()


class _Unanswered:
    """The requests read and not yet answered, so the end of input can wait for them."""

    def __init__(self) -> None:
        self._ids: set[types.RequestId] = set()
        self._none_left: anyio.Event | None = None  # made by settled(), once input has ended

    def read(self, message: types.JSONRPCMessage) -> None:
        if isinstance(message, types.JSONRPCRequest):
            self._ids.add(message.id)
        elif isinstance(message, types.JSONRPCNotification) and message.method == "notifications/cancelled":
            # A cancelled request is not answered (the MCP spec says so), so nothing is awaited for it.
            self._drop((message.params or {}).get("requestId"))

    def written(self, message: types.JSONRPCMessage) -> None:
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            self._drop(message.id)

    def give_up(self) -> None:
        """No answer can be delivered any more: stop waiting for them."""
        self._ids.clear()
        self._drop(None)

    async def settled(self) -> None:
        """Return once every request read has been answered, or after ANSWER_GRACE_SECONDS."""
        if not self._ids:
            return
        logger.debug("input ended with %d request(s) still running; answering them first", len(self._ids))
        self._none_left = anyio.Event()
        with anyio.move_on_after(ANSWER_GRACE_SECONDS) as waited:
            await self._none_left.wait()
        if waited.cancelled_caught:
            logger.warning(
                "input ended; %d request(s) still unanswered after the grace period", len(self._ids)
            )

    def _drop(self, request_id: object) -> None:
        self._ids.discard(request_id)
        if not self._ids and self._none_left is not None:
            self._none_left.set()


@contextlib.asynccontextmanager
async def _answering_before_the_end(
    streams: contextlib.AbstractAsyncContextManager[tuple[ReadStream, WriteStream]],
) -> AsyncIterator[tuple[ReadStream, WriteStream]]:
    """The SDK transport's streams, relayed so that its end of input waits like ours (see the
    module docstring). Only for what the event loop cannot watch (a terminal, a regular file),
    so the extra hop costs the pipes nothing."""
    async with streams as (sdk_read, sdk_write):
        read_send, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        write_stream, write_receive = anyio.create_memory_object_stream[SessionMessage](0)
        unanswered = _Unanswered()

        async def relay_in() -> None:
            async with read_send:
                async for item in sdk_read:
                    if isinstance(item, SessionMessage):
                        unanswered.read(item.message)
                    await read_send.send(item)
                await unanswered.settled()

        async def relay_out() -> None:
            async with write_receive, sdk_write:
                async for session_message in write_receive:
                    try:
                        await sdk_write.send(session_message)
                    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                        unanswered.give_up()
                        return
                    unanswered.written(session_message.message)

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(relay_in)
            tasks.start_soon(relay_out)
            yield read_stream, write_stream


async def _lines(reader: asyncio.StreamReader) -> AsyncIterator[str | None]:
    """Each non-blank line, decoded as the SDK does (invalid UTF-8 replaced); ``None`` stands
    for a line over the reader's limit, whose bytes are discarded as they arrive."""
    overlong = False
    while True:
        try:
            raw = await reader.readuntil(b"\n")
        except asyncio.LimitOverrunError as exc:
            await reader.readexactly(exc.consumed)
            overlong = True
            continue
        except asyncio.IncompleteReadError as exc:  # end of input; a last line may lack its newline
            raw = exc.partial
            if not raw and not overlong:
                return
        if overlong:
            overlong = False
            yield None
        elif raw.strip():
            yield raw.decode("utf-8", errors="replace")
        if not raw.endswith(b"\n"):
            return


def _too_long(limit: int) -> bytes:
    """A JSON-RPC error for a message too long to read, so the client is not left waiting; its
    ``id`` could not be read, so it is null."""
    error = types.JSONRPCError(
        jsonrpc="2.0",
        id=None,
        error=types.ErrorData(
            code=types.INVALID_REQUEST,
            message=f"Message longer than {limit} bytes; it was ignored and nothing was sent to Cooked",
        ),
    )
    return error.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"


@contextlib.contextmanager
def _claimed_stdio() -> Iterator[tuple[int, int]]:
    """Private copies of fds 0 and 1 for the protocol, while fd 0 reads the null device and fd 1
    writes to stderr; all restored on exit."""
    wire_in, wire_out = os.dup(0), os.dup(1)  # not inherited by child processes
    null_in = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null_in, 0)
        try:
            os.dup2(2, 1)
        except OSError:  # no stderr at all
            null_out = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null_out, 1)
            os.close(null_out)
    finally:
        os.close(null_in)
    try:
        yield wire_in, wire_out
    finally:
        for wire, fd in ((wire_in, 0), (wire_out, 1)):
            with contextlib.suppress(OSError):
                os.set_blocking(wire, True)  # the event loop made it non-blocking
                os.dup2(wire, fd)
                os.close(wire)
