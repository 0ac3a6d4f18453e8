"""MCP over the process's stdin and stdout, one JSON-RPC message per line, within the guard.

Pipes, sockets and terminals (how an MCP client or a person starts the server) are watched by
the event loop, which costs less CPU per call than the SDK's ``stdio_server`` (a worker-thread
hop per line; docs/performance.md); a regular file is read by the SDK's transport. Raw lines let
the guard (``protocol_guard``) answer what the SDK would turn into an exception or read whole.
While serving, fd 0 reads the null device and fd 1 writes to stderr, so a library or child
process that prints cannot corrupt the protocol stream (``claimed_stdio``). After a signal the
exit status is 128 + that signal.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import stat
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator

import anyio
import mcp_types as types
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from ..app import Application
from ..config.limits import Limits
from .protocol_guard import (
    PassOn,
    Streams,
    find_id,
    guarded_streams,
    is_answer,
    make_answer,
    read_message,
)
from .stop_signals import StopSignals

logger = logging.getLogger("cooked_mcp.transports.stdio")


# implements: server.TRANSPORT.1, server.TRANSPORT.2-1
def serve_stdio(application: Application) -> int:
    """Serve until stdin ends (0) or SIGINT/SIGTERM arrives (128 + the signal)."""
    settings = application.settings
    if os.isatty(0):
        print(
            f"cooked-mcp: waiting for an MCP client on stdin (Cooked account {settings.username} at "
            f"{settings.base_url}); an MCP client starts this itself. Press Ctrl-C to stop.",
            file=sys.stderr,
            flush=True,
        )
    return anyio.run(_serve, application)


async def _serve(application: Application) -> int:
    stop = StopSignals()
    async with anyio.create_task_group() as signals:
        await signals.start(stop.watch)
        async with application:
            guard = (application.settings.limits, stop, application.tools.changes_finished)
            streams = event_loop_stdio(*guard) if pollable(0) and pollable(1) else sdk_stdio(*guard)
            async with streams as (read_stream, write_stream):
                server = application.server
                await server.run(read_stream, write_stream, server.create_initialization_options())
        signals.cancel_scope.cancel()
    return 128 + stop.signal if stop.signal else 0


@contextlib.asynccontextmanager
async def event_loop_stdio(
    limits: Limits,
    stop: StopSignals,
    changes: Callable[[], Awaitable[None]],
    max_message_bytes: int = Limits.MAX_MESSAGE_BYTES,
) -> AsyncIterator[Streams]:
    """The SDK's ``stdio_server`` contract (streams of ``SessionMessage``), served by the running
    asyncio loop, within ``guarded_streams``; stdin and stdout must be ``pollable``."""
    loop = asyncio.get_running_loop()
    with claimed_stdio() as (wire_in, wire_out):
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

        async def send(message: types.JSONRPCMessage) -> None:
            writer.write(message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n")
            await writer.drain()

        async def read(pass_on: PassOn, answer: Callable[[types.JSONRPCError], Awaitable[None]]) -> None:
            async for line in lines(reader):
                if isinstance(line, tuple):  # too long to read: answered by the id at either end
                    request_id = find_id(*line)
                    why = f"Message longer than {max_message_bytes} bytes; it was ignored and nothing was sent to Cooked"
                    await answer(make_answer(request_id, why))
                    if request_id is None:  # no answer can reach its request: the client would wait for ever
                        print(
                            f"cooked-mcp: a message longer than {max_message_bytes} bytes arrived and its id could "
                            "not be read, so no answer could reach the client's request; ending the session",
                            file=sys.stderr,
                            flush=True,
                        )
                        return
                    logger.warning("ignored a message longer than %d bytes", max_message_bytes)
                    continue
                message = read_message(line)
                if is_answer(message):
                    assert isinstance(message, types.JSONRPCError)
                    await answer(message)
                else:
                    await pass_on(SessionMessage(message))

        try:
            async with guarded_streams(read, send, limits, stop, changes) as streams:
                yield streams
        finally:
            read_transport.close()
            writer.close()
            with anyio.move_on_after(Limits.FLUSH_SECONDS), contextlib.suppress(ConnectionError):
                await writer.wait_closed()  # buffered answers to a client that stopped reading


@contextlib.asynccontextmanager
async def sdk_stdio(
    limits: Limits, stop: StopSignals, changes: Callable[[], Awaitable[None]]
) -> AsyncIterator[Streams]:
    """The SDK's transport within ``guarded_streams``, for what the event loop cannot watch (a
    regular file): the guard also keeps the end of input from cutting off the requests read
    before it (python-sdk issue #2678, fix proposed in PR #2680)."""
    async with stdio_server() as (sdk_read, sdk_write), sdk_write:

        async def send(message: types.JSONRPCMessage) -> None:
            try:
                await sdk_write.send(SessionMessage(message))
            except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
                raise ConnectionError from exc

        async def read(pass_on: PassOn, _: Callable[[types.JSONRPCError], Awaitable[None]]) -> None:
            async for item in sdk_read:
                await pass_on(item)

        async with guarded_streams(read, send, limits, stop, changes) as guarded:
            yield guarded


def pollable(fd: int) -> bool:
    """A pipe, a socket or a terminal: what the event loop can watch."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)


async def lines(reader: asyncio.StreamReader) -> AsyncIterator[bytes | tuple[bytes, bytes]]:
    """Each non-blank line as read (bytes: one that is not UTF-8 is not JSON), or, for a line over
    the reader's limit, only its first and last ``Limits.PEEK_BYTES``, where its ``id`` may be: the rest
    is discarded as it arrives."""
    head: bytes | None = None
    tail = b""
    while True:
        try:
            raw = await reader.readuntil(b"\n")
        except asyncio.LimitOverrunError as exc:
            chunk = await reader.readexactly(exc.consumed)
            head = chunk[: Limits.PEEK_BYTES] if head is None else head
            tail = (tail + chunk[-Limits.PEEK_BYTES :])[-Limits.PEEK_BYTES :]
            continue
        except asyncio.IncompleteReadError as exc:  # end of input; a last line may lack its newline
            raw = exc.partial
            if not raw and head is None:
                return
        if head is not None:
            yield head, (tail + raw)[-Limits.PEEK_BYTES :]
            head, tail = None, b""
        elif raw.strip():
            yield raw
        if not raw.endswith(b"\n"):
            return


@contextlib.contextmanager
def claimed_stdio() -> Iterator[tuple[int, int]]:
    """Private fds for the protocol, while fd 0 reads the null device and fd 1 writes to stderr;
    all restored on exit. A terminal is opened afresh by name, so the non-blocking flag the event
    loop sets is not the shell's; a pipe or socket is duplicated."""
    saved_in, saved_out = os.dup(0), os.dup(1)
    wire_in, wire_out = _private(0, os.O_RDONLY), _private(1, os.O_WRONLY)
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
        for wire, saved, fd in ((wire_in, saved_in, 0), (wire_out, saved_out, 1)):
            with contextlib.suppress(OSError):
                os.set_blocking(wire, True)  # the event loop made it non-blocking
                os.close(wire)
            with contextlib.suppress(OSError):
                os.dup2(saved, fd)
                os.close(saved)


def _private(fd: int, flags: int) -> int:
    """A descriptor for what ``fd`` refers to, not inherited by child processes."""
    if os.isatty(fd):
        with contextlib.suppress(OSError):
            return os.open(os.ttyname(fd), flags | os.O_NOCTTY | os.O_CLOEXEC)
    return os.dup(fd)
