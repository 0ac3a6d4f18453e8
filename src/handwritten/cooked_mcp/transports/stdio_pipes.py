"""The process's stdin and stdout as private pipes, read one message line at a time.

While serving, fd 0 reads the null device and fd 1 writes to stderr, so a library or a
child process that prints cannot corrupt the protocol stream; the protocol itself goes
through private descriptors (``claimed_stdio``). A terminal is opened afresh by name, so
the non-blocking flag the event loop sets is not shared with the shell.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

__all__ = ["Overlong", "claimed_stdio", "lines", "pollable"]

#: How much of each end of an over-long message is kept to look for its ``id``.
_PEEK_BYTES = 64 * 1024


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
            head = chunk[:_PEEK_BYTES] if head is None else head
            tail = (tail + chunk[-_PEEK_BYTES:])[-_PEEK_BYTES:]
            continue
        except asyncio.IncompleteReadError as exc:  # end of input; a last line may lack its newline
            raw = exc.partial
            if not raw and head is None:
                return
        if head is not None:
            yield Overlong(head, (tail + raw)[-_PEEK_BYTES:])
            head, tail = None, b""
        elif raw.strip():
            yield raw
        if not raw.endswith(b"\n"):
            return


@contextlib.contextmanager
def claimed_stdio() -> Iterator[tuple[int, int]]:
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
