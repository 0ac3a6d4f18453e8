"""The requests read from stdin and not yet answered, so the end of input can wait for them.

The end of stdin (or SIGINT/SIGTERM) does not cut off requests read before it: it is passed
on only once every request read has been answered (or cancelled by the client), for at most
``ANSWER_GRACE_SECONDS`` (``SIGNAL_GRACE_SECONDS`` after a signal, when the calls still
running are then answered with an error saying their change may have been made).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import anyio
import mcp_types as types

__all__ = ["ANSWER_GRACE_SECONDS", "SIGNAL_GRACE_SECONDS", "Unanswered", "until"]

logger = logging.getLogger("cooked_mcp.transports.stdio")

#: How long requests read before the end of stdin may still run: the slowest tool call (a URL
#: import, up to 90 s at Cooked, after a login) fits. A client that closed stdin to stop the
#: server usually has nothing in flight, and ends the process itself if it will not wait.
ANSWER_GRACE_SECONDS = 120.0
#: How long calls still running may take to finish after SIGINT or SIGTERM.
SIGNAL_GRACE_SECONDS = 3.0


class Unanswered:
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
