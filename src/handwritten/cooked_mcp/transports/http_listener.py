"""Listening for HTTP: the sockets uvicorn serves on (``private_reaches.GracefulServer`` stops it).

The listening sockets are bound before uvicorn starts so that an address in use (or one
this machine does not have) is one clear line and exit 2 rather than a uvicorn traceback.
SIGINT/SIGTERM are caught by the event loop (``stop_signals``), not by uvicorn, so a signal
at any moment ends the process cleanly with status 0 (uvicorn on its own re-raises the
signal after shutting down, which would turn SIGTERM into death by signal).
"""

from __future__ import annotations

import errno
import logging
import socket
from typing import Any

from ..errors import ListenError
from .http_connections import ACCEPT_BURST

__all__ = ["listen"]

logger = logging.getLogger("cooked_mcp.transports.http")


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
