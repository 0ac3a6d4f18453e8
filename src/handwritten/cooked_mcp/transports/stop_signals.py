"""SIGINT and SIGTERM while serving, caught by the event loop, for both transports.

A Python signal handler runs in the main thread between any two bytecodes, so one that logs
can run while that thread is inside the logging machinery: it waited for ever on a lock the
thread already held (the redaction filter's), or broke into a write to stderr ("reentrant
call"). The event loop's own handling runs no Python code in the handler: the signal only
wakes the loop, and ``watch`` gets it there, where setting events and logging are safe.

The first signal asks the transport to stop (``requested``): calls still running get their
grace. A second one (a second Ctrl-C, or SIGTERM after SIGINT) ends the grace at once
(``now``); those calls are then answered as cut off (``protocol_guard``).
"""

from __future__ import annotations

import logging
import signal

import anyio
from anyio.abc import TaskStatus

__all__ = ["StopSignals", "cancel_when_set"]

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


async def cancel_when_set(event: anyio.Event, scope: anyio.CancelScope) -> None:
    await event.wait()
    scope.cancel()
