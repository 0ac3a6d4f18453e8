"""What a handler gives back: a result for the agent, or an error the agent can act on.

Handlers (in cooked_mcp.handlers) return ToolResult or raise ToolError; the dispatcher
in dispatch.py turns both into MCP tool results.
"""

from __future__ import annotations

import ctypes
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Generic, TypeVar

import anyio
from pydantic import BaseModel

from .confirmation import NO_ASKER, Asker

OutputT = TypeVar("OutputT", bound=BaseModel)

ProgressReporter = Callable[[float, float | None, str | None], Awaitable[None]]


class ToolError(Exception):
    """A failure the agent can act on; its message is shown to the agent as is."""


@dataclass(frozen=True)
class ToolResult(Generic[OutputT]):
    """Concise text for the agent plus the same facts as structured output."""

    text: str
    output: OutputT


@dataclass
class _Held:
    bytes: int = 0
    #: False once the call's answer is handed over: a task it started (a write going on in the
    #: background) reads without holding anything for it.
    open: bool = True


@dataclass(frozen=True)
class ToolCall:
    """The parts of the MCP request a handler may use."""

    tool: str
    report_progress: ProgressReporter
    #: How to ask the person before a change that loses data (confirmation.py).
    asker: Asker = NO_ASKER
    _on_answer: list[Callable[[], None]] = field(default_factory=list, repr=False)
    #: What this call holds in ``ANSWERS``, until the dispatcher lets it go.
    _held: _Held = field(default_factory=_Held, repr=False)

    def when_answered(self, hook: Callable[[], None]) -> None:
        """Run ``hook`` when this call's answer reaches the client, as far as the server can know.

        That is when the dispatcher hands the answer (a result or a ToolError) to the SDK and
        the request has not been cancelled (notifications/cancelled, or its session ending):
        the hooks run right after the last cancellation check, with no await between them and
        the return, so the SDK then writes the answer. An HTTP client whose connection drops
        before its answer cancels the request that way too (the HTTP transport sends the
        cancellation for it), so an answer it never got does not count as received; only a
        drop in the instant between this hook and the write goes unseen.
        """
        self._on_answer.append(hook)

    def answered(self) -> None:
        """Called by the dispatcher only (see ``when_answered``)."""
        for hook in self._on_answer:
            hook()


#: The tool call the running task serves, set by the dispatcher: what ``AnswerBudget.hold`` charges.
CURRENT_CALL: ContextVar[ToolCall | None] = ContextVar("CURRENT_CALL", default=None)

#: A key of the ASGI scope of an HTTP request: the ``HandedOver`` the HTTP layer
#: (transports.http_middleware.AnswersInFlight) puts there.
HANDED_OVER = "cooked_mcp.handed_over"


@dataclass
class HandedOver:
    """The tool calls an HTTP response carries, whose holds are freed once it is written. A call
    handed over after that (its client went away and the call was cancelled later) is freed at
    once: nobody would free it any more."""

    calls: list[ToolCall] = field(default_factory=list)
    written: bool = False


_MIB = 1024 * 1024

_M_MMAP_THRESHOLD = -3  # glibc's malloc.h


# implements: extensions.MEMORY.1, extensions.MEMORY.2, extensions.MEMORY.3
class AnswerBudget:
    """How many bytes of Cooked's answers the tool calls in flight may hold at once, process-wide.

    A call's result is made of what it read from Cooked (its text and its structured content
    each repeat it), so holding those bytes from before they are read until the call's answer is
    written (over HTTP; handed to the SDK over stdio, whose one client reads its answers in turn)
    bounds the memory of results in flight to a small multiple of the limit. A read that finds
    no room waits, before reading, up to ``wait_seconds`` for other calls to end, then is
    refused: nothing was read or changed, so trying again is safe. Outside a tool call
    (``--check``, completion), or until ``configure`` sets the limit, nothing is held.
    """

    def __init__(self) -> None:
        self.limit, self.wait_seconds, self.small_answer = 0, 0.0, 0  # holds nothing until configured
        self.held = 0
        self._room: anyio.Event | None = None

    def configure(self, limit_mib: int, wait_seconds: float, small_answer: int) -> None:
        self.limit, self.wait_seconds, self.small_answer = limit_mib * _MIB, wait_seconds, small_answer
        _give_big_blocks_back()

    async def hold(self, size: int, *, wait: bool = True) -> int:
        """Charge ``size`` bytes to the running call once they fit (at once without ``wait``): what
        was charged, 0 outside a call."""
        call = CURRENT_CALL.get()
        if call is None or not call._held.open or not self.limit:
            return 0
        if not wait or self.held + size <= self.limit:  # fits: no deadline to set (~15 us a call)
            self._charge(call, size)
            return size
        with anyio.move_on_after(self.wait_seconds):
            while self.held + size > self.limit:
                self._room = self._room or anyio.Event()
                await self._room.wait()
            self._charge(call, size)
            return size
        raise ToolError(
            f"Nothing was changed: Cooked's answer ({size / _MIB:.1f} MiB) did not fit within "
            f"{self.wait_seconds:g} s in the {self.limit // _MIB} MiB that cooked-mcp lets answers in "
            f"flight hold ({self.held / _MIB:.1f} MiB were held by other calls), so it was not read. "
            "Try again in a moment with fewer calls at once; the user can raise "
            "mcp.limits.answers_in_flight_mib in the config file."
        )

    def keep(self, charged: int, size: int) -> None:
        """The running call was charged ``charged`` bytes for an answer that had ``size``: adjust."""
        call = CURRENT_CALL.get()
        if call is not None and charged and call._held.open:
            self._charge(call, size - charged)

    def hand_over(self, call: ToolCall | None, scope: object) -> None:
        """The dispatcher handed ``call``'s answer to the SDK, or gave up on it. Over HTTP, what it
        holds stays held until its response is written (``HANDED_OVER``) if it holds
        ``small_answer`` bytes or more; otherwise it is freed."""
        handed = scope.get(HANDED_OVER) if isinstance(scope, dict) else None
        if (
            call is not None
            and call._held.bytes >= self.small_answer
            and isinstance(handed, HandedOver)
            and not handed.written
        ):
            handed.calls.append(call)
        else:
            self.release(call)

    def release(self, call: ToolCall | None) -> None:
        """The dispatcher handed ``call``'s answer over, or gave up on it: free all it held."""
        if call is not None:
            self._charge(call, -call._held.bytes)
            call._held.open = False

    def _charge(self, call: ToolCall, size: int) -> None:
        call._held.bytes += size
        self.held += size
        if size < 0 and self._room is not None:
            self._room.set()
            self._room = None


def _give_big_blocks_back() -> None:
    """Have glibc's malloc give every freed block of 1 MiB or more straight back to the system.

    By default it raises that threshold to the size of each large block freed (up to 32 MiB),
    so after one big answer the next ones come from its heap, and a burst of them leaves it
    hundreds of MiB that it keeps. Fixing the threshold (``mallopt``, what the documented
    ``MALLOC_MMAP_THRESHOLD_`` variable sets) keeps the resident size near where it started.
    Elsewhere than glibc there is no ``mallopt``, and nothing to do.
    """
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (AttributeError, OSError):
        return
    mallopt(_M_MMAP_THRESHOLD, _MIB)


#: The one budget of this process; ``mcp.limits`` in the settings configures it at start-up.
ANSWERS = AnswerBudget()
