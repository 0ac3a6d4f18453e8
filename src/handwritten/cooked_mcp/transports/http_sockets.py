"""The listening sockets, bound before uvicorn starts so that an address in use is one clear line
and exit 2, not a traceback; the open-files limit raised; accept failures logged at most once a
second without a traceback (asyncio logs each failed ``accept``, thousands a second).
"""

from __future__ import annotations

import asyncio
import errno
import logging
import resource
import socket
import time
from typing import Any

from ..config.limits import Limits
from ..exceptions import ListenError

logger = logging.getLogger(__name__)


def raise_open_files_limit() -> int:
    """Raise the soft open-files limit to the hard one (capped if unlimited); return the new one."""
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
    """Log asyncio's "out of system resource" accept failures at most once per
    ``Limits.ACCEPT_ERROR_LOG_SECONDS``; every other loop error goes to the previous handler."""
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
    """Listening sockets for every address ``host`` resolves to (``localhost``: IPv4 and IPv6).
    An address family this machine lacks is skipped if one address works; anything else (above
    all "address in use") is fatal: a half-bound name would send some clients elsewhere."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ListenError(f"cannot resolve the host ({exc.strerror})") from None
    sockets: list[socket.socket] = []
    unavailable: OSError | None = None
    try:
        for family, kind, proto, address in dict.fromkeys(
            (fam, kind, proto, addr) for fam, kind, proto, _, addr in infos
        ):
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
        # A restart reuses the port while old connections linger in TIME_WAIT (not a listening one).
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            # "::1" must not also claim IPv4, or binding localhost's two addresses collides.
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind(address)
        sock.listen(Limits.ACCEPT_BURST)
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
