"""Connection bounds for the HTTP server: how many, and how long each may take to ask.

uvicorn keeps a connection that never sends a byte open forever, and lets a request head
or body trickle in without a deadline. Each holds a file descriptor, so about a thousand
silent sockets (the usual open-files limit) stop the server accepting anyone, and asyncio
then logs a traceback for every failed ``accept`` many thousand times a second. Here:

* a connection must deliver its request head within ``http_head_seconds`` (``config.Limits``)
  of connecting (or of its previous answer), and its body within ``http_body_seconds`` of the
  head; else it is closed;
  at shutdown, one that has not delivered its whole request is closed at once;
* at most ``connection_cap()`` connections are open. A new one beyond the cap first
  closes the connection that has waited longest without a request in progress (an idle
  or trickling one), so silent sockets cannot lock an authorised client out; only when
  every connection is busy with a request is the newcomer answered 503 and closed;
* the soft open-files limit is raised to the hard one at start-up (``raise_open_files_limit``);
* asyncio's "out of system resource" accept error is logged at most once a second.

Time spent by the application answering (a slow tool call, an open event stream) is not
bounded here: that is the client's own request.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import resource
import time
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from ..config.limits import Limits

__all__ = [
    "ACCEPT_BURST",
    "MAX_CONNECTIONS",
    "BoundedH11Protocol",
    "connection_cap",
    "raise_open_files_limit",
    "rate_limited_accept_errors",
]

logger = logging.getLogger(__name__)

#: Connections open at once, whatever the open-files limit allows: one user's clients need a few.
MAX_CONNECTIONS = 200
#: File descriptors kept free of client connections (Cooked connections, logs, the event loop).
_RESERVED_FDS = 64
#: The listen backlog, which is also how many connections asyncio accepts in one go, before
#: any of them can make room by closing an idle one: the cap leaves room for one such burst.
ACCEPT_BURST = 32
_BUSY_BODY = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Too many connections"}}'
_BUSY_503 = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nconnection: close\r\n"
    b"retry-after: 1\r\ncontent-length: %d\r\n\r\n%s" % (len(_BUSY_BODY), _BUSY_BODY)
)


def raise_open_files_limit() -> int:
    """Raise the soft RLIMIT_NOFILE to the hard limit (a capped figure if that is unlimited);
    return the soft limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 16)
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError) as exc:
            logger.debug("could not raise the open-files limit: %s", exc)
    return int(soft)


def connection_cap(open_files: int) -> int:
    """How many client connections fit beside what the server itself needs."""
    return max(4, min(MAX_CONNECTIONS, open_files - _RESERVED_FDS - ACCEPT_BURST))


class BoundedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with the deadlines and the connection cap of the module docstring.

    ``cap`` and ``limits`` are set on the class by ``bounded_protocol`` before serving.
    """

    cap = MAX_CONNECTIONS
    limits = Limits()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._waiting_since = time.monotonic()  # waiting for a request head, or None while one runs
        self._busy = False
        self._timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.cap and not self._make_room():
            logger.warning("refused a connection: all %d connections are busy", self.cap)
            transport.write(_BUSY_503)
            transport.close()
            return
        self._wait_for_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def shutdown(self) -> None:
        """At shutdown, close a connection whose request is not whole yet, as uvicorn already
        closes an idle one: nothing has been asked, and uvicorn would otherwise wait for the
        rest of its body until its graceful-shutdown timeout. A request being answered keeps
        its grace."""
        cycle = self.cycle
        if cycle is not None and cycle.more_body and not cycle.response_started:
            self._close("closed a connection whose request body was not complete at shutdown")
        else:
            super().shutdown()

    def handle_events(self) -> None:
        before = self.cycle
        super().handle_events()
        if self.cycle is not before and self.cycle is not None and not self.cycle.response_complete:
            self._busy = True
            self._arm(self.limits.http_body_seconds, self._body_overdue)

    def on_response_complete(self) -> None:
        self._busy = False
        if not self.transport.is_closing():
            self._wait_for_head()
        super().on_response_complete()  # may start a pipelined request (handle_events above)

    def _wait_for_head(self) -> None:
        self._waiting_since = time.monotonic()
        self._arm(self.limits.http_head_seconds, self._head_overdue)

    def _head_overdue(self) -> None:
        if not self._busy:
            self._close("no complete request head within %.1f s", self.limits.http_head_seconds)

    def _body_overdue(self) -> None:
        cycle = self.cycle
        if self._busy and cycle is not None and cycle.more_body and not cycle.response_started:
            self._close("request body not complete within %.1f s", self.limits.http_body_seconds)

    def _make_room(self) -> bool:
        """Close the connection that has waited longest for a request; False if all are busy."""
        idle = [
            conn
            for conn in self.connections
            if isinstance(conn, BoundedH11Protocol) and conn is not self and not conn._busy
        ]
        if not idle:
            return False
        oldest = min(idle, key=lambda conn: conn._waiting_since)
        oldest._close("closed the longest-idle connection to make room for a new one (%d open)", self.cap)
        return True

    def _close(self, why: str, *figures: float) -> None:
        logger.info(why, *figures)
        self._disarm()
        if not self.transport.is_closing():
            if self.conn.our_state is not h11.ERROR:
                with contextlib.suppress(h11.LocalProtocolError):
                    self.conn.send(h11.ConnectionClosed())
            self.transport.close()
        # connection_lost follows from the event loop; drop it from the count now so the
        # newcomer that asked for room is not refused while the close is pending.
        self.connections.discard(self)

    def _arm(self, seconds: float, then: Any) -> None:
        self._disarm()
        self._timer = self.loop.call_later(seconds, then)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


def bounded_protocol(open_files: int, limits: Limits) -> type[BoundedH11Protocol]:
    """The protocol class to serve with, its cap fitted to ``open_files``."""
    return type(
        "BoundedH11Protocol", (BoundedH11Protocol,), {"cap": connection_cap(open_files), "limits": limits}
    )


def rate_limited_accept_errors(loop: asyncio.AbstractEventLoop, every: float = 1.0) -> None:
    """Log asyncio's "out of system resource" accept failures at most once per ``every`` seconds,
    as one line without a traceback; every other loop error goes to the previous handler."""
    previous = loop.get_exception_handler()
    last = -every
    suppressed = 0

    def handle(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        nonlocal last, suppressed
        if "out of system resource" not in str(context.get("message", "")):
            if previous is not None:
                previous(loop, context)
            else:
                loop.default_exception_handler(context)
            return
        now = time.monotonic()
        if now - last < every:
            suppressed += 1
            return
        last = now
        logger.error(
            "cannot accept connections: %s (%d more such errors not logged)",
            context.get("exception"),
            suppressed,
        )
        suppressed = 0

    loop.set_exception_handler(handle)
