"""Listening for HTTP: the sockets, and uvicorn serving on them until a signal stops it.

The listening sockets are bound before uvicorn starts so that an address in use (or one
this machine does not have) is one clear line and exit 2 rather than a uvicorn traceback.
SIGINT/SIGTERM are caught by the event loop (``stop_signals``), not by uvicorn, so a signal
at any moment ends the process cleanly with status 0 (uvicorn on its own re-raises the
signal after shutting down, which would turn SIGTERM into death by signal).
"""

from __future__ import annotations

import contextlib
import errno
import logging
import socket
from collections.abc import Awaitable, Callable, Generator
from typing import Any

import anyio
import uvicorn
from sse_starlette.sse import AppStatus

from ..errors import ListenError
from .http_connections import ACCEPT_BURST
from .sdk_workarounds.http_sessions import JsonWhenSilentSessionManager
from .stop_signals import StopSignals

__all__ = ["GracefulServer", "listen"]

logger = logging.getLogger("cooked_mcp.transports.http")


class GracefulServer(uvicorn.Server):
    """uvicorn, stopped by ``StopSignals`` rather than its own signal handling, and with
    requests still running after the shutdown grace (or at a second signal) answered rather
    than cut off.

    uvicorn cancels them, which answers a plain-text 500 to a call whose change Cooked may
    already have applied; here each gets its one JSON-RPC error saying so (``one_answer``),
    then uvicorn goes on. A second signal is not passed to uvicorn as its "force exit",
    which skips the application's shutdown and leaves the calls to be cancelled with
    tracebacks: it only ends the grace.
    """

    def __init__(
        self,
        config: uvicorn.Config,
        sessions: JsonWhenSilentSessionManager,
        stop: StopSignals,
        changes: Callable[[], Awaitable[None]],
        grace: float,
    ) -> None:
        super().__init__(config)
        self._grace = grace  # in-flight requests' (and open event streams') after a signal
        self._sessions = sessions
        self._stop = stop
        self._changes = changes
        # sse_starlette (the SDK's event streams) otherwise ends every stream the moment a
        # signal arrives, a progress stream's answer included; here they end as below.
        AppStatus.enable_automatic_graceful_drain = False  # what its untyped disable_…() does

    async def serve(self, sockets: list[socket.socket] | None = None) -> None:
        async with anyio.create_task_group() as watching:
            watching.start_soon(self._exit_when_asked)
            await super().serve(sockets=sockets)
            watching.cancel_scope.cancel()

    async def _exit_when_asked(self) -> None:
        await self._stop.requested.wait()
        self.should_exit = True  # uvicorn's public way to stop serving

    # uvicorn's private shutdown step (not the SDK's): tests/http/test_http_shutdown.py fails
    # if an uvicorn upgrade stops calling it.
    async def _wait_tasks_to_complete(self) -> None:
        self._sessions.close_listening_streams()  # they carry nothing cooked-mcp needs to finish
        with anyio.move_on_after(self._grace):
            async with anyio.create_task_group() as grace:
                grace.start_soon(_cancel_when_set, self._stop.now, grace.cancel_scope)
                await super()._wait_tasks_to_complete()
                await self._changes()  # those still running in the background: the same grace
                grace.cancel_scope.cancel()
                return
        interrupted = await self._sessions.interrupt_in_flight()
        if interrupted:
            logger.warning(
                "shutting down: %d call(s) still running were answered as interrupted", interrupted
            )
        AppStatus.should_exit = True  # whatever stream is still open ends now
        await super()._wait_tasks_to_complete()

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield


async def _cancel_when_set(event: anyio.Event, scope: anyio.CancelScope) -> None:
    await event.wait()
    scope.cancel()


def listen(host: str, port: int) -> list[socket.socket]:
    """Listening sockets for every address ``host`` resolves to (``localhost``: IPv4 and IPv6).

    An address family this machine lacks (no IPv6 for ``::1``) is skipped as long as one
    address works; anything else, above all "address already in use", is fatal, since a
    half-bound name would send some clients to whatever else holds the port.
    """
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ListenError(f"cannot resolve the host ({exc.strerror})") from None
    sockets: list[socket.socket] = []
    unavailable: OSError | None = None
    seen: set[tuple[int, Any]] = set()
    try:
        for family, kind, proto, _, address in infos:
            if (family, address) in seen:
                continue
            seen.add((family, address))
            try:
                sockets.append(_bind(family, kind, proto, address))
            except OSError as exc:
                if exc.errno in (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT) and unavailable is None:
                    unavailable = exc
                    continue
                raise ListenError(_reason(exc)) from None
        if not sockets:
            raise ListenError(_reason(unavailable) if unavailable else "the host has no usable address")
    except BaseException:
        for sock in sockets:
            sock.close()
        raise
    return sockets


def _bind(family: int, kind: int, proto: int, address: Any) -> socket.socket:
    sock = socket.socket(family, kind, proto)
    try:
        # Lets a restart reuse the port while old connections linger in TIME_WAIT; on Linux
        # it still refuses a port another socket is listening on.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            # "::1" must not also claim IPv4, or binding localhost's two addresses collides.
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind(address)
        sock.listen(ACCEPT_BURST)
        sock.setblocking(False)
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
