"""SIGINT and SIGTERM while serving, for both transports, taken by the event loop: its handler
runs no Python code (one that logs could deadlock on a lock its thread holds), and ``watch``
acts on the signal in the loop. The first asks to stop (``requested``: calls get their grace);
a second ends the grace at once (``now``: they are answered as cut off).
"""

from __future__ import annotations

import logging
import signal

import anyio
from anyio.abc import TaskStatus

logger = logging.getLogger("cooked_mcp.transports")


class StopSignals:
    """What the signals asked for so far; made and watched inside the running event loop."""

    def __init__(self) -> None:
        self.requested = anyio.Event()
        self.now = anyio.Event()
        self.signal = 0  # the first signal received, for the exit status

    async def watch(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Receive signals until cancelled; started with ``TaskGroup.start``, it returns once
        they are caught, so a signal from then on always finds the loop's handler."""
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as received:
            task_status.started()
            async for signum in received:
                name = signal.Signals(signum).name
                if not self.signal:
                    logger.info("received %s, stopping", name)
                    self.signal = int(signum)
                    self.requested.set()
                elif not self.now.is_set():
                    logger.info("received %s again, stopping now", name)
                    self.now.set()

    async def after_grace(self, grace: float, scope: anyio.CancelScope | None) -> None:
        """Once a stop's grace is over (``grace`` seconds after the first signal, or a second),
        cancelling ``scope``."""
        await self.requested.wait()
        with anyio.move_on_after(grace):
            await self.now.wait()
        if scope is not None:
            scope.cancel()


async def cancel_when_set(event: anyio.Event, scope: anyio.CancelScope) -> None:
    await event.wait()
    scope.cancel()
