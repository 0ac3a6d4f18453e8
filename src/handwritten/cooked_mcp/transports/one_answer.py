"""One answer per request id, also for a call cut off by a stop: the protocol rule for stopping.

JSON-RPC allows one response per request id. When serving stops (SIGINT, SIGTERM, or the end
of stdin), the requests already read may still run for a grace period; any still running after
it is answered with ``interrupted`` (its change may or may not have been made), and whatever
is written for it afterwards is dropped: the SDK's own -32000 "Connection closed" as it
cancels the call, or the call's late result. The first answer for an id is the only one.

Over stdio, ``Unanswered`` keeps the rule on the message streams (``sdk_workarounds.stdio``);
over HTTP each request has its own answer stream, ended by its first answer
(``sdk_workarounds.http_transport``), and ``interrupted`` is the one answer both send.

The grace (``config.Limits``): after the end of stdin, ``input_end_grace_seconds`` (the input
may simply have been sent all at once); after a signal, ``stop_grace_seconds``; after a second
signal, none. The
same grace also waits for the changes sent to Cooked that still run in the background (a
cancelled call's, a URL import answered "still running"): stopping would break them off.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import anyio
import mcp_types as types

from ..config.limits import Limits
from .jsonrpc_checks import answer_from_here
from .stop_signals import StopSignals

__all__ = [
    "INTERRUPTED",
    "Unanswered",
    "interrupted",
    "until",
]

logger = logging.getLogger("cooked_mcp.transports.stdio")

#: What a request cut off by a stop is told: a write may have reached Cooked.
INTERRUPTED = (
    "The server shut down before this call finished; if it was a change (save, delete, shopping "
    "list), it may or may not have been made. Read the current state before trying again."
)


def interrupted(request_id: types.RequestId) -> types.JSONRPCError:
    """The one answer to a request still running when serving stops (see ``INTERRUPTED``)."""
    return answer_from_here(request_id, types.INTERNAL_ERROR, INTERRUPTED)


class Unanswered:
    """The requests read and not yet answered: each may be answered once, and the end of
    input waits for them."""

    def __init__(self, limits: Limits) -> None:
        self._limits = limits
        self._ids: set[types.RequestId] = set()
        self._none_left: anyio.Event | None = None  # made by settled(), once input has ended

    def read(self, message: types.JSONRPCMessage) -> None:
        if isinstance(message, types.JSONRPCRequest):
            self._ids.add(message.id)
        elif isinstance(message, types.JSONRPCNotification) and message.method == "notifications/cancelled":
            # A cancelled request is not answered (the MCP spec says so), so nothing is awaited for it.
            self._drop((message.params or {}).get("requestId"))

    def may_send(self, message: types.JSONRPCMessage) -> bool:
        """Whether ``message`` may go to the client: anything but an answer, or the first answer
        to a request awaiting one, which is then no longer awaited. Decide just before sending."""
        if not isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            return True
        if message.id not in self._ids:
            logger.debug("dropped an answer to request %r, which had its answer already", message.id)
            return False
        self._drop(message.id)
        return True

    def cut_off(self) -> list[types.JSONRPCError]:
        """The answers to every request still running, each now answered (see ``INTERRUPTED``)."""
        answers = [interrupted(request_id) for request_id in sorted(self._ids, key=str)]
        self._ids.clear()
        self._drop(None)
        return answers

    def give_up(self) -> None:
        """No answer can be delivered any more: stop waiting for them."""
        self._ids.clear()
        self._drop(None)

    def running(self, request_id: types.RequestId) -> bool:
        return request_id in self._ids

    async def settled(
        self, stop: StopSignals | None = None, changes: Callable[[], Awaitable[None]] | None = None
    ) -> None:
        """Return once every request read has been answered and ``changes()`` has returned (every
        change sent to Cooked has ended, also those of calls already answered or cancelled), or
        the grace is over (see the module docstring); a signal during the end of input's grace
        shortens it."""
        if not self._ids and changes is None:
            return
        logger.debug("input ended with %d request(s) still running; answering them first", len(self._ids))
        self._none_left = anyio.Event()
        if not self._ids:
            self._none_left.set()
        with anyio.move_on_after(self._limits.input_end_grace_seconds):
            async with anyio.create_task_group() as group:
                if stop is not None:
                    group.start_soon(
                        _cancel_after_grace, stop, self._limits.stop_grace_seconds, group.cancel_scope
                    )
                await self._none_left.wait()
                if changes is not None:
                    await changes()
                group.cancel_scope.cancel()
        if self._ids:
            logger.warning(
                "%d request(s) still running after the grace period; answering them as cut off",
                len(self._ids),
            )

    def _drop(self, request_id: object) -> None:
        self._ids.discard(request_id)
        if not self._ids and self._none_left is not None:
            self._none_left.set()


async def _cancel_after_grace(stop: StopSignals, grace: float, scope: anyio.CancelScope) -> None:
    await stop.requested.wait()
    with anyio.move_on_after(grace):
        await stop.now.wait()
    scope.cancel()


async def until(stop: anyio.Event | None, run: Callable[[], Awaitable[None]]) -> None:
    """Run ``run`` until it returns or ``stop`` is set."""
    async with anyio.create_task_group() as group:
        if stop is not None:

            async def stop_on_request() -> None:
                await stop.wait()
                group.cancel_scope.cancel()

            group.start_soon(stop_on_request)
        await run()
        group.cancel_scope.cancel()
