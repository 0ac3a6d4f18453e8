"""stdio served by the event loop, in place of the SDK's ``stdio_server`` (for speed; public
asyncio and SDK parts only), and the SDK's transport within the guard (``protocol_guard``).

Raw lines are read so that the guard sees what the SDK would turn into an exception. While
serving, fd 0 reads the null device and fd 1 writes to stderr, so a library or child process
that prints cannot corrupt the protocol stream (``claimed_stdio``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import stat
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage

from ..config.limits import Limits
from .protocol_guard import (
    PEEK_BYTES,
    PassOn,
    ReadStream,
    WriteStream,
    find_id,
    guarded_streams,
    is_answer,
    make_answer,
    read_message,
)
from .stop_signals import StopSignals

__all__ = ["answering_before_the_end", "event_loop_stdio", "pollable"]

logger = logging.getLogger("cooked_mcp.transports.stdio")


# Performance (mcp 2.3.0): ``stdio_server`` moves every line read, and every write and flush,
# through a worker thread (``anyio.wrap_file``); those hand-offs cost more server CPU per tool
# call than cooked-mcp itself (``read target=recipe``: 4.3 ms of CPU with it, 2.8 ms with this;
# 2026-11-25, a minimal stdio client, 4 interleaved rounds of 300 calls on a loaded 2-core
# machine: p50 1.45-1.88 ms with this, 1.93-6.38 ms with the SDK's transport and the guard's
# relay, far over the 0.1 ms that would let it go). The event loop watches the pipes instead.
# No upstream issue found; re-check on upgrade by forcing ``pollable`` False and measuring.
# Its raw lines also let the guard answer invalid lines (python-sdk issue #2751; fix PRs #2755
# and #2766 closed) and over-long ones (the SDK reads a line of any length; no upstream issue).
@contextlib.asynccontextmanager
async def event_loop_stdio(
    limits: Limits,
    stop: StopSignals,
    changes: Callable[[], Awaitable[None]],
    max_message_bytes: int = Limits.MAX_MESSAGE_BYTES,
) -> AsyncIterator[tuple[ReadStream, WriteStream]]:
    """The SDK's ``stdio_server`` contract (newline-delimited JSON-RPC, streams of
    ``SessionMessage``), served by the running asyncio loop, within ``guarded_streams``. stdin
    and stdout must be pipes, sockets or terminals."""
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

        async def answer(error: types.JSONRPCError) -> None:
            with contextlib.suppress(ConnectionError):
                await send(error)

        async def read(pass_on: PassOn) -> None:
            async for line in lines(reader):
                if isinstance(line, Overlong):
                    if not await _refuse_overlong(line, max_message_bytes, answer):
                        return
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
                await writer.wait_closed()


# Guard (mcp 2.3.0): the SDK takes the end of its input as the client being gone and
# cancels every request still running, so a request followed at once by the end of stdin
# (``cooked-mcp < requests.jsonl``) may go unanswered. Here the end of input is passed on only
# once every request read has been answered. Can go when python-sdk issue #2678 (open; fix
# proposed in PR #2680) lands in a release and its drain is as long as ours (``protocol_guard``).
@contextlib.asynccontextmanager
async def answering_before_the_end(
    streams: contextlib.AbstractAsyncContextManager[tuple[ReadStream, WriteStream]],
    limits: Limits,
    stop: StopSignals,
    changes: Callable[[], Awaitable[None]],
) -> AsyncIterator[tuple[ReadStream, WriteStream]]:
    """The SDK transport's streams within ``guarded_streams``. Only for what the event loop
    cannot watch (a regular file), so the extra hop costs the pipes nothing."""
    async with streams as (sdk_read, sdk_write), sdk_write:

        async def send(message: types.JSONRPCMessage) -> None:
            try:
                await sdk_write.send(SessionMessage(message))
            except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
                raise ConnectionError from exc

        async def read(pass_on: PassOn) -> None:
            async for item in sdk_read:
                await pass_on(item)

        async with guarded_streams(read, send, limits, stop, changes) as guarded:
            yield guarded


async def _refuse_overlong(
    line: Overlong, limit: int, answer: Callable[[types.JSONRPCError], Awaitable[None]]
) -> bool:
    """Answer a message too long to read; False when its id cannot be found and the session must end."""
    request_id = find_id(line.head, line.tail)
    await answer(
        make_answer(
            request_id, f"Message longer than {limit} bytes; it was ignored and nothing was sent to Cooked"
        )
    )
    if request_id is not None:
        logger.warning("ignored a message longer than %d bytes", limit)
        return True
    print(
        f"cooked-mcp: a message longer than {limit} bytes arrived and its id could not be read, so no "
        "answer could reach the client's request; ending the session",
        file=sys.stderr,
        flush=True,
    )
    return False


def pollable(fd: int) -> bool:
    """A pipe, a socket or a terminal: what the event loop can watch."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)


@dataclass(frozen=True)
class Overlong:
    """A line over the limit: its first and last bytes, where its ``id`` may be found."""

    head: bytes
    tail: bytes


async def lines(reader: asyncio.StreamReader) -> AsyncIterator[bytes | Overlong]:
    """Each non-blank line as read, or ``Overlong`` for a line over the reader's limit, whose
    bytes are discarded as they arrive. Lines stay bytes: one that is not UTF-8 is not JSON
    (``protocol_guard.read_message`` answers it as HTTP does), where the SDK would read it
    with replacement characters and run it."""
    head: bytes | None = None
    tail = b""
    while True:
        try:
            raw = await reader.readuntil(b"\n")
        except asyncio.LimitOverrunError as exc:
            chunk = await reader.readexactly(exc.consumed)
            head = chunk[:PEEK_BYTES] if head is None else head
            tail = (tail + chunk[-PEEK_BYTES:])[-PEEK_BYTES:]
            continue
        except asyncio.IncompleteReadError as exc:  # end of input; a last line may lack its newline
            raw = exc.partial
            if not raw and head is None:
                return
        if head is not None:
            yield Overlong(head, (tail + raw)[-PEEK_BYTES:])
            head, tail = None, b""
        elif raw.strip():
            yield raw
        if not raw.endswith(b"\n"):
            return


@contextlib.contextmanager
def claimed_stdio() -> Iterator[tuple[int, int]]:
    """Private fds for the protocol, while fd 0 reads the null device and fd 1 writes to stderr;
    all restored on exit. The SDK's own claim is private, and shares a terminal's file description
    with the shell: here a terminal is opened afresh by name, so the non-blocking flag the event
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
