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

What the SDK leaves unanswered is answered here (``jsonrpc_checks``): a line that is not
JSON (-32700), not a JSON-RPC message or with an ``id`` that is no id (-32600), a request
reusing the id of one still running, and a message over ``MAX_MESSAGE_BYTES``, whose ``id``
is looked for in its first and last bytes; when it has none that can be read, no answer
can reach the request that sent it, so the session ends with a message on stderr rather
than leave the client waiting for ever.

SIGINT and SIGTERM end the session the same way as the end of stdin, with a short grace
(``SIGNAL_GRACE_SECONDS``) after which calls still running are answered with an error
saying their change may have been made; the exit status is then 128 + the signal. A
terminal is served by the event loop too, through its own file description (opened
by name), so Ctrl-C ends the server at once and the shell's terminal stays blocking.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import stat
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from mcp.shared.message import SessionMessage

from ..app import server_for
from ..config import Settings
from ..cooked.client import CookedClient
from ..logging_setup import register_secret_source
from .jsonrpc_checks import error_line, find_id, interrupted, invalid_request, is_answer, read_message

__all__ = [
    "ANSWER_GRACE_SECONDS",
    "MAX_MESSAGE_BYTES",
    "SIGNAL_GRACE_SECONDS",
    "event_loop_stdio",
    "serve_stdio",
]

logger = logging.getLogger(__name__)

#: The longest message line accepted, the same bound as an HTTP request body.
MAX_MESSAGE_BYTES = DEFAULT_MAX_REQUEST_BODY_SIZE
#: How long buffered answers may take to reach a client that stopped reading, once serving ends.
_FLUSH_SECONDS = 5.0
#: How long requests read before the end of stdin may still run: the slowest tool call (a URL
#: import, up to 90 s at Cooked, after a login) fits. A client that closed stdin to stop the
#: server usually has nothing in flight, and ends the process itself if it will not wait.
ANSWER_GRACE_SECONDS = 120.0
#: How long calls still running may take to finish after SIGINT or SIGTERM.
SIGNAL_GRACE_SECONDS = 3.0
#: How much of each end of an over-long message is kept to look for its ``id``.
_PEEK_BYTES = 64 * 1024

ReadStream = MemoryObjectReceiveStream[SessionMessage | Exception]
WriteStream = MemoryObjectSendStream[SessionMessage]


# implements: server.TRANSPORT.1, server.TRANSPORT.2-1
def serve_stdio(settings: Settings) -> int:
    """Serve until stdin ends (0) or SIGINT/SIGTERM arrives (128 + the signal)."""
    if os.isatty(0):
        print(
            f"cooked-mcp: waiting for an MCP client on stdin (Cooked account {settings.username} at "
            f"{settings.base_url}); an MCP client starts this itself. Press Ctrl-C to stop.",
            file=sys.stderr,
            flush=True,
        )
    return anyio.run(_serve, settings)


async def _serve(settings: Settings) -> int:
    stop = _Stop()
    async with anyio.create_task_group() as signals:
        signals.start_soon(stop.watch)
        async with CookedClient.from_settings(settings) as client:
            register_secret_source(client.secret_values)
            server = server_for(settings, client)
            streams = (
                event_loop_stdio(stop=stop.requested)
                if _pollable(0) and _pollable(1)
                else _answering_before_the_end(stdio_server(), stop=stop.requested)
            )
            async with streams as (read_stream, write_stream):
                await server.run(read_stream, write_stream, server.create_initialization_options())
        signals.cancel_scope.cancel()
    return 128 + stop.signal if stop.signal else 0


class _Stop:
    """SIGINT/SIGTERM, caught while serving: ``requested`` is set and the signal kept for the status."""

    def __init__(self) -> None:
        self.requested = anyio.Event()
        self.signal = 0

    async def watch(self) -> None:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as received:
            async for signum in received:
                if not self.signal:
                    logger.info("received %s, stopping", signal.Signals(signum).name)
                    self.signal = int(signum)
                    self.requested.set()


def _pollable(fd: int) -> bool:
    """A pipe, a socket or a terminal: what the event loop can watch."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)


@contextlib.asynccontextmanager
async def event_loop_stdio(
    max_message_bytes: int = MAX_MESSAGE_BYTES, stop: anyio.Event | None = None
) -> AsyncIterator[tuple[ReadStream, WriteStream]]:
    """The SDK's ``stdio_server`` contract (newline-delimited JSON-RPC, streams of
    ``SessionMessage``), served by the running asyncio loop. stdin and stdout must be pipes,
    sockets or terminals. Setting ``stop`` ends reading as the end of stdin would, with
    ``SIGNAL_GRACE_SECONDS`` for the calls still running."""
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

        async def answer(error: types.JSONRPCError) -> None:
            writer.write(error_line(error))
            with contextlib.suppress(ConnectionError):
                await writer.drain()

        async def read_messages() -> None:
            async for line in _lines(reader):
                if isinstance(line, _Overlong):
                    if not await _refuse_overlong(line, max_message_bytes, answer):
                        return
                    continue
                message = read_message(line)
                if is_answer(message):
                    assert isinstance(message, types.JSONRPCError)
                    await answer(message)
                    continue
                if isinstance(message, types.JSONRPCRequest) and unanswered.running(message.id):
                    await answer(invalid_request(message.id, _duplicate(message.id)))
                    continue
                unanswered.read(message)
                await read_send.send(SessionMessage(message))

        async def serve_input() -> None:
            async with read_send:
                await _until(stop, read_messages)
                for request_id in await unanswered.settled(stop):
                    await answer(interrupted(request_id))

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
                tasks.start_soon(serve_input)
                tasks.start_soon(write_messages)
                yield read_stream, write_stream
        finally:
            read_transport.close()
            writer.close()
            with anyio.move_on_after(_FLUSH_SECONDS), contextlib.suppress(ConnectionError):
                await writer.wait_closed()


async def _refuse_overlong(
    line: _Overlong, limit: int, answer: Callable[[types.JSONRPCError], Awaitable[None]]
) -> bool:
    """Answer a message too long to read; False when its id cannot be found and the session must end."""
    request_id = find_id(line.head, line.tail)
    if request_id is not None:
        logger.warning("ignored a message longer than %d bytes", limit)
        await answer(invalid_request(request_id, _too_long(limit)))
        return True
    await answer(invalid_request(None, _too_long(limit)))
    print(
        f"cooked-mcp: a message longer than {limit} bytes arrived and its id could not be read, so no "
        "answer could reach the client's request; ending the session",
        file=sys.stderr,
        flush=True,
    )
    return False


def _too_long(limit: int) -> str:
    return f"Message longer than {limit} bytes; it was ignored and nothing was sent to Cooked"


def _duplicate(request_id: types.RequestId) -> str:
    return f"A request with id {request_id!r} is still running; use a new id"


async def _until(stop: anyio.Event | None, run: Callable[[], Awaitable[None]]) -> None:
    """Run ``run`` until it returns or ``stop`` is set."""
    async with anyio.create_task_group() as group:
        if stop is not None:

            async def stop_on_request() -> None:
                await stop.wait()
                group.cancel_scope.cancel()

            group.start_soon(stop_on_request)
        await run()
        group.cancel_scope.cancel()


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

    def running(self, request_id: types.RequestId) -> bool:
        return request_id in self._ids

    async def settled(self, stop: anyio.Event | None = None) -> list[types.RequestId]:
        """Return once every request read has been answered, or after the grace period (short
        once ``stop`` is set): the requests still unanswered if it was cut short by ``stop``."""
        if not self._ids:
            return []
        stopped = stop is not None and stop.is_set()
        grace = SIGNAL_GRACE_SECONDS if stopped else ANSWER_GRACE_SECONDS
        logger.debug("input ended with %d request(s) still running; answering them first", len(self._ids))
        self._none_left = anyio.Event()
        with anyio.move_on_after(grace) as waited:
            await self._none_left.wait()
        if waited.cancelled_caught:
            logger.warning(
                "input ended; %d request(s) still unanswered after the grace period", len(self._ids)
            )
        return sorted(self._ids, key=str) if stopped else []

    def _drop(self, request_id: object) -> None:
        self._ids.discard(request_id)
        if not self._ids and self._none_left is not None:
            self._none_left.set()


@contextlib.asynccontextmanager
async def _answering_before_the_end(
    streams: contextlib.AbstractAsyncContextManager[tuple[ReadStream, WriteStream]],
    stop: anyio.Event | None = None,
) -> AsyncIterator[tuple[ReadStream, WriteStream]]:
    """The SDK transport's streams, relayed so that its end of input (and ``stop``) waits like
    ours (see the module docstring). Only for what the event loop cannot watch (a regular
    file), so the extra hop costs the pipes nothing."""
    async with streams as (sdk_read, sdk_write):
        read_send, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        write_stream, write_receive = anyio.create_memory_object_stream[SessionMessage](0)
        unanswered = _Unanswered()

        async def relay_messages() -> None:
            async for item in sdk_read:
                if isinstance(item, SessionMessage):
                    unanswered.read(item.message)
                await read_send.send(item)

        async def relay_in() -> None:
            async with read_send:
                await _until(stop, relay_messages)
                for request_id in await unanswered.settled(stop):
                    with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                        await sdk_write.send(SessionMessage(interrupted(request_id)))

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


@dataclass(frozen=True)
class _Overlong:
    """A line over the limit: its first and last bytes, where its ``id`` may be found."""

    head: bytes
    tail: bytes


async def _lines(reader: asyncio.StreamReader) -> AsyncIterator[str | _Overlong]:
    """Each non-blank line, decoded as the SDK does (invalid UTF-8 replaced), or ``_Overlong``
    for a line over the reader's limit, whose bytes are discarded as they arrive."""
    head: bytes | None = None
    tail = b""
    while True:
        try:
            raw = await reader.readuntil(b"\n")
        except asyncio.LimitOverrunError as exc:
            chunk = await reader.readexactly(exc.consumed)
            head = chunk[:_PEEK_BYTES] if head is None else head
            tail = (tail + chunk[-_PEEK_BYTES:])[-_PEEK_BYTES:]
            continue
        except asyncio.IncompleteReadError as exc:  # end of input; a last line may lack its newline
            raw = exc.partial
            if not raw and head is None:
                return
        if head is not None:
            yield _Overlong(head, (tail + raw)[-_PEEK_BYTES:])
            head, tail = None, b""
        elif raw.strip():
            yield raw.decode("utf-8", errors="replace")
        if not raw.endswith(b"\n"):
            return


@contextlib.contextmanager
def _claimed_stdio() -> Iterator[tuple[int, int]]:
    """Private fds for the protocol, while fd 0 reads the null device and fd 1 writes to stderr;
    all restored on exit. A terminal is opened afresh by name, so the non-blocking flag the
    event loop sets is not shared with the shell; a pipe or socket is duplicated."""
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
