"""The HTTP server's sockets, bound before uvicorn starts (an address in use is one clear line and
exit 2), and its connections. uvicorn keeps a silent or trickling connection open for ever, and its
only cap (``limit_concurrency``) answers 503 to everyone once silent sockets fill it, so until it has
request timeouts (encode/uvicorn #157) its h11 protocol is subclassed (``connections``, ``cycle``,
``conn``, ``handle_events``, ``on_response_complete``, ``shutdown``: pyproject.toml pins the minors)."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import math
import resource
import socket
import time
from collections.abc import Iterator
from typing import Any

import h11
import uvicorn
from starlette.types import ASGIApp
from uvicorn.protocols.http.h11_impl import H11Protocol

from ..config.limits import Limits
from ..exceptions import ListenError

logger = logging.getLogger("cooked_mcp.transports.http")

_BUSY_BODY = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Too many connections"}}'
_BUSY_503 = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nconnection: close\r\n"
    b"retry-after: 1\r\ncontent-length: %d\r\n\r\n%s" % (len(_BUSY_BODY), _BUSY_BODY)
)


def raise_open_files_limit() -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else max(soft, Limits.OPEN_FILES)
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError) as exc:
            logger.debug("could not raise the open-files limit: %s", exc)
    return int(soft)


def rate_limited_accept_errors(loop: asyncio.AbstractEventLoop) -> None:
    previous = loop.get_exception_handler() or (lambda loop, context: loop.default_exception_handler(context))
    last, suppressed = -Limits.ACCEPT_ERROR_LOG_SECONDS, 0

    def handle(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        nonlocal last, suppressed
        if "out of system resource" not in str(context.get("message", "")):
            previous(loop, context)
        elif time.monotonic() - last < Limits.ACCEPT_ERROR_LOG_SECONDS:
            suppressed += 1
        else:
            last = time.monotonic()
            logger.error(
                "cannot accept connections: %s (%d more not logged)", context.get("exception"), suppressed
            )
            suppressed = 0

    loop.set_exception_handler(handle)


def listen(host: str, port: int) -> list[socket.socket]:
    """A socket for every address of ``host``: one address this machine lacks (``localhost``'s ``::1`` without IPv6) is skipped if another works;
    any other failure is fatal, as a half-bound name (``localhost``) would send some clients elsewhere."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ListenError(f"cannot resolve the host ({exc.strerror})") from None
    sockets: list[socket.socket] = []
    unavailable: OSError | None = None
    try:
        for family, kind, proto, address in dict.fromkeys((f, k, p, a) for f, k, p, _, a in infos):
            try:
                sockets.append(_bind(family, kind, proto, address))
            except OSError as exc:
                if exc.errno not in (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT) or unavailable is not None:
                    raise ListenError(_reason(exc)) from None
                unavailable = exc
        if unavailable is not None and not sockets:
            raise ListenError(_reason(unavailable))
    except BaseException:
        for sock in sockets:
            sock.close()
        raise
    return sockets


def _bind(family: int, kind: int, proto: int, address: Any) -> socket.socket:
    """``proto`` as getaddrinfo names it (IPPROTO_TCP): asyncio sets TCP_NODELAY only on connections
    of a socket that names it, and without it each answer waits for the client's delayed ACK."""
    sock = socket.socket(family, kind, proto)
    try:
        # A restart reuses the port while old connections linger in TIME_WAIT (not a listening one).
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            # "::1" must not also claim IPv4, or binding localhost's two addresses collides.
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind(address)
        sock.listen(Limits.ACCEPT_BURST)
    except BaseException:
        sock.close()
        raise
    return sock


def _reason(exc: OSError) -> str:
    reasons = {
        errno.EADDRINUSE: "address already in use (another program is listening there: stop it or "
        "choose another port with --http-addr)",
        errno.EADDRNOTAVAIL: "this machine has no such address (use 127.0.0.1 or one of its own addresses)",
        errno.EACCES: "permission denied (ports below 1024 need privileges: choose a higher port)",
    }
    return reasons.get(exc.errno or 0, exc.strerror or type(exc).__name__)


def connection_cap(open_files: int) -> int:
    room = open_files - Limits.RESERVED_FDS - Limits.ACCEPT_BURST
    return max(4, min(Limits.MAX_CONNECTIONS, room))


class BoundedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with head and body deadlines and a connection cap (``uvicorn_server`` fits both)."""

    cap = Limits.MAX_CONNECTIONS
    limits = Limits()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._waiting_since = time.monotonic()  # for a request head, while ``_idle``
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
        self._arm(None)
        super().connection_lost(exc)

    def shutdown(self) -> None:
        """At shutdown a request not whole yet is closed, as an idle connection is (uvicorn would
        wait for its body); one being answered keeps its grace."""
        cycle = self.cycle
        if cycle is not None and cycle.more_body and not cycle.response_started:
            self._close("closed a connection whose request body was not complete at shutdown")
        else:
            super().shutdown()

    def handle_events(self) -> None:
        before = self.cycle
        super().handle_events()
        if self.cycle is not before and not self._idle():
            self._arm(self.limits.http_body_seconds)

    def on_response_complete(self) -> None:
        if not self.transport.is_closing():
            self._wait_for_head()
        super().on_response_complete()  # may start a pipelined request (handle_events above)

    def _idle(self) -> bool:
        return self.cycle is None or self.cycle.response_complete

    def _wait_for_head(self) -> None:
        self._waiting_since = time.monotonic()
        self._arm(self.limits.http_head_seconds)

    def _overdue(self) -> None:
        if self.transport.is_closing():
            return
        if self._idle():
            self._close("no complete request head within %.1f s", self.limits.http_head_seconds)
        elif self.cycle.more_body and not self.cycle.response_started:
            self._close("request body not complete within %.1f s", self.limits.http_body_seconds)

    def _make_room(self) -> bool:
        """Close the connection that has waited longest for a request; False if all are busy."""
        idle = [
            c for c in self.connections if isinstance(c, BoundedH11Protocol) and c is not self and c._idle()
        ]
        if not idle:
            return False
        longest = min(idle, key=lambda conn: conn._waiting_since)
        longest._close("closed the longest-idle connection to make room for a new one (%d open)", self.cap)
        return True

    def _close(self, why: str, *figures: float) -> None:
        logger.info(why, *figures)
        self._arm(None)
        if not self.transport.is_closing():
            if self.conn.our_state is not h11.ERROR:
                with contextlib.suppress(h11.LocalProtocolError):
                    self.conn.send(h11.ConnectionClosed())
            self.transport.close()
        # Gone from the count now, so the newcomer that asked for room is not refused.
        self.connections.discard(self)

    def _arm(self, seconds: float | None) -> None:
        """The one deadline (``_overdue``) in ``seconds``, or none."""
        if self._timer is not None:
            self._timer.cancel()
        self._timer = None if seconds is None else self.loop.call_later(seconds, self._overdue)


def uvicorn_server(app: ASGIApp, limits: Limits) -> uvicorn.Server:
    """The open-files limit is raised first: the connection cap depends on it."""
    rate_limited_accept_errors(asyncio.get_running_loop())
    fitted = {"cap": connection_cap(raise_open_files_limit()), "limits": limits}
    config = uvicorn.Config(
        app,
        log_config=None,
        access_log=False,
        http=type("BoundedH11Protocol", (BoundedH11Protocol,), fitted),
        h11_max_incomplete_event_size=Limits.MAX_HEAD_BYTES,
        backlog=Limits.ACCEPT_BURST,
        ws="none",
        lifespan="on",
        proxy_headers=False,
        server_header=False,
        # the drain's grace, then a second for the interrupted requests' answers
        timeout_graceful_shutdown=math.ceil(limits.stop_grace_seconds) + 2,
    )
    return _ServerWithoutSignals(config)


class _ServerWithoutSignals(uvicorn.Server):
    """uvicorn's server, leaving SIGINT and SIGTERM to ``StopSignals``: its handlers would turn a
    second signal into a forced exit that skips the application's shutdown (no option turns them off)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield
