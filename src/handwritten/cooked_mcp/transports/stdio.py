"""MCP over stdin and stdout, one JSON-RPC message per line, with the rules of ``protocol_guard``.
The event loop watches the pipes rather than the SDK's ``stdio_server`` (a worker-thread hop per
line, docs/performance.md), and raw lines let an over-long one be answered by its id, unread."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import stat
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage

from cooked_mcp_runtime.confirmation import end_questions

from ..app import Application
from ..config.limits import Limits
from .protocol_guard import INTERRUPTED, Refusal, StopSignals, find_id, make_answer, read_message, refusal

NOT_INITIALIZED = "The session is not initialized: send initialize first, then notifications/initialized"

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
            await _serve_pipes(application, stop)
        signals.cancel_scope.cancel()
    return 128 + stop.signal if stop.signal else 0


async def _serve_pipes(application: Application, stop: StopSignals) -> None:
    loop, most, limits = asyncio.get_running_loop(), Limits.MAX_MESSAGE_BYTES, application.settings.limits
    read_send, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_receive = anyio.create_memory_object_stream[SessionMessage](0)
    running: set[types.RequestId] = set()  # read and not yet answered
    early: set[types.RequestId] | None = set()  # handshake-era requests read before initialize was answered
    none_left, stopping = anyio.Event(), False  # set once input has ended and no request runs

    def drop(request_id: Any) -> None:
        running.discard(request_id)
        if not running and stopping:
            none_left.set()

    async def send(message: types.JSONRPCMessage) -> None:
        writer.write(message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n")
        await writer.drain()

    async def answer(error: types.JSONRPCError) -> None:
        with contextlib.suppress(ConnectionError):
            await send(error)

    async def pass_on(message: types.JSONRPCMessage | Refusal) -> None:
        refused = refusal(message, 0, running.__contains__)  # one session: its initialize needs no bound
        if refused is not None:
            logger.info("refused a message: %s", refused.error.message)
            await answer(refused)
            return
        if isinstance(message, types.JSONRPCRequest):
            running.add(message.id)
            meta = (message.params or {}).get("_meta")
            if early is not None and not (isinstance(meta, dict) and types.PROTOCOL_VERSION_META_KEY in meta):
                early.add(message.id)
        elif isinstance(message, types.JSONRPCNotification) and message.method == "notifications/cancelled":
            drop((message.params or {}).get("requestId"))  # the MCP spec: it gets no answer
        await read_send.send(SessionMessage(message))

    async def read() -> None:
        async for line in lines(reader):
            if not isinstance(line, tuple):
                await pass_on(read_message(line))
                continue
            request_id = find_id(*line)  # too long to read: answered by the id at either end
            why = f"Message longer than {most} bytes; it was ignored and nothing was sent to Cooked"
            await pass_on(make_answer(request_id, why))
            logger.warning("ignored a message longer than %d bytes", most)
            if request_id is None:  # no answer can reach its request: the client would wait for ever
                print(
                    f"cooked-mcp: a message longer than {most} bytes arrived and its id could not be "
                    "read, so no answer could reach the client's request; ending the session",
                    file=sys.stderr,
                    flush=True,
                )
                return

    def explained(message: types.JSONRPCResponse | types.JSONRPCError) -> types.JSONRPCMessage:
        """The SDK's bare "Invalid request parameters" to a request sent before ``initialize`` says
        what to do instead (a 2026-07-28 request, which needs no initialize, is left alone)."""
        nonlocal early
        if early is None:
            return message
        asked_early = message.id in early
        early.discard(message.id)
        if isinstance(message, types.JSONRPCResponse) and "protocolVersion" in message.result:
            early = None  # the initialize answer
        elif (
            asked_early
            and isinstance(message, types.JSONRPCError)
            and message.error.code == types.INVALID_PARAMS
        ):
            return make_answer(message.id, NOT_INITIALIZED, types.INVALID_PARAMS)
        return message

    def cut_off() -> list[types.RequestId]:
        left = sorted(running, key=str)
        running.clear()
        drop(None)
        return left

    async def serve_input() -> None:
        nonlocal stopping
        async with read_send:  # its end is the end of input, which the SDK's server acts on
            await stop.within_grace(0, read)  # a stop ends reading at once
            end_questions()  # no answer to a confirmation question can be read any more
            stopping = True
            drop(None)
            # A stop's grace, or the end of input's (which a signal shortens to the stop's).
            with anyio.move_on_after(math.inf if stop.requested.is_set() else limits.input_end_grace_seconds):
                await stop.within_grace(
                    limits.stop_grace_seconds, none_left.wait, application.tools.changes_finished
                )
            if running:
                logger.warning(
                    "%d request(s) still running after the grace; answered as cut off", len(running)
                )
            for request_id in cut_off():
                await answer(make_answer(request_id, INTERRUPTED, types.INTERNAL_ERROR))

    async def serve_output() -> None:
        async with write_receive:
            async for session_message in write_receive:
                message = session_message.message
                if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
                    if message.id not in running:
                        logger.debug(
                            "dropped an answer to request %r, which had its answer already", message.id
                        )
                        continue
                    drop(message.id)
                    message = explained(message)
                try:
                    await send(message)
                except ConnectionError:
                    logger.info("the client stopped reading; no more answers can be sent")
                    cut_off()  # none can be delivered: stop waiting for them
                    return

    async def end_after_stop() -> None:
        """A stop ends serving at the latest ``Limits.FLUSH_SECONDS`` after its grace: the answers
        still unwritten then are for a client that stopped reading, and would hold the process."""
        await stop.after_grace(limits.stop_grace_seconds)
        await anyio.sleep(Limits.FLUSH_SECONDS)
        logger.warning("a stop ended serving: the client did not read the answers left")
        ending.cancel_scope.cancel()

    with claimed_stdio() as (wire_in, wire_out):
        reader = asyncio.StreamReader(limit=most, loop=loop)
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
        try:
            async with anyio.create_task_group() as ending:
                ending.start_soon(end_after_stop)
                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(serve_input)
                    tasks.start_soon(serve_output)
                    server = application.server
                    await server.run(read_stream, write_stream, server.create_initialization_options())
                ending.cancel_scope.cancel()
        finally:
            read_transport.close()
            writer.close()
            with anyio.move_on_after(Limits.FLUSH_SECONDS), contextlib.suppress(ConnectionError):
                await writer.wait_closed()  # buffered answers to a client that stopped reading


async def lines(reader: asyncio.StreamReader) -> AsyncIterator[bytes | tuple[bytes, bytes]]:
    """Each non-blank line, or, for a line over the reader's limit, only its first and last
    ``Limits.PEEK_BYTES`` (where its ``id`` may be): the rest is discarded as it arrives."""
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
    """Private fds for the protocol, fd 0 and 1 pointed at the null device and stderr: a library or
    child process that prints cannot corrupt the protocol stream."""
    saved = os.dup(0), os.dup(1)
    copies: list[threading.Thread] = []
    wires = _private(0, os.O_RDONLY, copies), _private(1, os.O_WRONLY, copies)
    _to_null(0, os.O_RDONLY)
    try:
        os.dup2(2, 1)
    except OSError:  # no stderr at all
        _to_null(1, os.O_WRONLY)
    try:
        yield wires
    finally:
        for fd in (0, 1):
            with contextlib.suppress(OSError):
                os.set_blocking(wires[fd], True)  # the event loop made it non-blocking
                os.close(wires[fd])
            with contextlib.suppress(OSError):
                os.dup2(saved[fd], fd)
                os.close(saved[fd])
        for copy in copies:
            copy.join(Limits.FLUSH_SECONDS)  # what is left of the answers, to a file


def _to_null(fd: int, flags: int) -> None:
    null = os.open(os.devnull, flags)
    os.dup2(null, fd)
    os.close(null)


def _private(fd: int, flags: int, copies: list[threading.Thread]) -> int:
    """A descriptor for ``fd`` the loop can watch and children do not inherit. A terminal is opened
    afresh, so the non-blocking flag the loop sets is not the shell's; a regular file, which the
    loop cannot watch, is copied to or from a pipe by a thread."""
    mode = os.fstat(fd).st_mode
    if os.isatty(fd):
        with contextlib.suppress(OSError):
            return os.open(os.ttyname(fd), flags | os.O_NOCTTY | os.O_CLOEXEC)
    if os.isatty(fd) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        return os.dup(fd)
    pipe = os.pipe()
    ends = (os.dup(fd), pipe[1]) if flags == os.O_RDONLY else (pipe[0], os.dup(fd))
    copies.append(threading.Thread(target=_copy, args=(*ends, fd), daemon=True))
    copies[-1].start()
    return pipe[0] if flags == os.O_RDONLY else pipe[1]


def _copy(source: int, target: int, fd: int) -> None:
    """A broken pipe is the loop's end closed (serving is over); any other error cuts the requests
    or answers short, so the user is told which stream failed and why."""
    try:
        while chunk := os.read(source, 1 << 16):
            while chunk:
                chunk = chunk[os.write(target, chunk) :]
    except BrokenPipeError:
        pass
    except OSError as exc:
        doing, what = ("read from stdin", "requests") if fd == 0 else ("write to stdout", "answers")
        logger.error(
            "could not %s (%s), so the %s from then on were lost: check the file or device it was redirected to",
            doing,
            exc.strerror,
            what,
        )
    os.close(source)
    os.close(target)
