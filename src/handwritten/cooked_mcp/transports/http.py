"""MCP over Streamable HTTP at ``/mcp``, served by uvicorn on the configured address.

Layers, outermost first, so that the cheapest refusal happens before any work:

1. the bearer token (``auth.BearerTokenMiddleware``), when one is configured: a caller
   without it gets 401 before its body is read;
2. a declared ``Content-Length`` above the SDK's limit gets 413 before the body is read
   (the SDK also stops reading a chunked body as soon as it passes the limit);
3. the SDK's Streamable HTTP session manager, with its DNS-rebinding defence always on:
   a ``Host`` that is not a local name or an allowed one gets 421, a foreign ``Origin``
   403. The SDK enables that defence by itself only for loopback binds, so it is
   configured here explicitly for every address. Its sessions answer a request in plain
   JSON unless the request asked for progress (``http_sessions``): an SSE stream costs
   both sides about 2 ms a call and carries nothing else.

Hosts and origins beyond the local names come from TOML ``mcp.allowed_hosts`` and
``mcp.allowed_origins``; config accepts them only with a token (see ``Settings``).

The listening sockets are bound before uvicorn starts so that an address in use (or one
this machine does not have) is one clear line and exit 2 rather than a uvicorn traceback,
and SIGINT/SIGTERM are owned by this module from before the bind until the end, so a
signal at any moment ends the process cleanly with status 0 (uvicorn on its own re-raises
the signal after shutting down, which would turn SIGTERM into death by signal).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import ipaddress
import logging
import signal
import socket
import sys
from collections.abc import Generator, Iterator
from types import FrameType
from typing import Any

import anyio
import uvicorn
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE, TransportSecuritySettings
from sse_starlette.sse import AppStatus
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..app import server_for
from ..config import Settings
from ..cooked.client import CookedClient
from ..errors import ListenError
from ..logging_setup import register_secret_source
from .auth import BearerTokenMiddleware
from .host_check_messages import NameTheSetting
from .http_connections import (
    ACCEPT_BURST,
    bounded_protocol,
    raise_open_files_limit,
    rate_limited_accept_errors,
)
from .http_sessions import JsonWhenSilentSessionManager

__all__ = ["MCP_PATH", "SHUTDOWN_GRACE_SECONDS", "build_app", "serve_http", "transport_security"]

logger = logging.getLogger(__name__)

# implements: server.TRANSPORT.5
MCP_PATH = "/mcp"
EXIT_STARTUP = 2

#: How long in-flight requests (and open event streams) get after a signal before they are cut.
SHUTDOWN_GRACE_SECONDS = 3

_LOCAL_NAMES = ("127.0.0.1", "localhost", "[::1]")


# implements: server.TRANSPORT.2-2, server.TRANSPORT.3
def serve_http(settings: Settings) -> int:
    """Serve until SIGINT or SIGTERM; 0 on a clean stop, 2 if the address cannot be used.

    Nothing here talks to Cooked: the one ``CookedClient`` (shared by every HTTP client,
    as there is one user) logs in lazily on the first tool call that needs it.
    """
    where = _display_addr(settings.http_host, settings.http_port)
    open_files = raise_open_files_limit()
    stop = _StopOnSignal()
    with stop.installed():
        try:
            sockets = _listen(settings.http_host, settings.http_port)
        except ListenError as exc:
            print(f"cooked-mcp: cannot listen on {where}: {exc}", file=sys.stderr)
            return EXIT_STARTUP
        try:
            client = CookedClient.from_settings(settings)
            register_secret_source(client.secret_values)  # the log filter scrubs session cookies too
            app, sessions = _build(settings, client)
            server = _Server(
                uvicorn.Config(
                    app,
                    log_config=None,
                    log_level=None,
                    access_log=False,
                    http=bounded_protocol(open_files),
                    backlog=ACCEPT_BURST,
                    ws="none",
                    lifespan="on",
                    proxy_headers=False,
                    server_header=False,
                    # the grace, then a second for the interrupted requests' answers
                    timeout_graceful_shutdown=SHUTDOWN_GRACE_SECONDS + 2,
                ),
                sessions,
            )
            stop.attach(server)
            # Printed, not logged: the default log level shows warnings only, and a user who
            # started the server needs its address.
            print(
                f"cooked-mcp: serving MCP over HTTP at http://{where}{MCP_PATH}", file=sys.stderr, flush=True
            )
            anyio.run(_serve, server, sockets, client)
        finally:
            for sock in sockets:
                sock.close()
    return 0


async def _serve(server: uvicorn.Server, sockets: list[socket.socket], client: CookedClient) -> None:
    rate_limited_accept_errors(asyncio.get_running_loop())
    try:
        await server.serve(sockets=sockets)
    finally:
        await client.aclose()


# implements: server.TRANSPORT.5, server.SECURITY.3, server.SECURITY.7
def build_app(settings: Settings, client: CookedClient) -> ASGIApp:
    """The whole ASGI stack for ``settings``; separate from serving so it can be inspected."""
    return _build(settings, client)[0]


def _build(settings: Settings, client: CookedClient) -> tuple[ASGIApp, JsonWhenSilentSessionManager]:
    mcp_server = server_for(settings, client)
    sessions = JsonWhenSilentSessionManager(
        mcp_server,
        security_settings=transport_security(settings),
        max_request_body_size=DEFAULT_MAX_REQUEST_BODY_SIZE,
    )
    starlette = Starlette(
        routes=[Route(MCP_PATH, endpoint=StreamableHTTPASGIApp(sessions))],
        lifespan=lambda _: sessions.run(),
    )
    # /mcp is the one endpoint: /mcp/ is a 404 like any other path, not a redirect to /mcp.
    starlette.router.redirect_slashes = False
    app: ASGIApp = _DeclaredSizeLimit(starlette, DEFAULT_MAX_REQUEST_BODY_SIZE)
    if settings.http_token is not None:
        app = BearerTokenMiddleware(app, settings.http_token, served_path=MCP_PATH)
    return _CloseWhenBodyUnread(NameTheSetting(app)), sessions


def transport_security(settings: Settings) -> TransportSecuritySettings:
    """DNS-rebinding defence: which ``Host`` and ``Origin`` values a request may carry.

    Always the loopback names on any port (with and without a port, as a client sends no
    port for port 80), plus the bound address itself unless it is a wildcard (``0.0.0.0``
    and ``::`` are not names a client should use; allowing them would let a browser page
    reach the server via ``http://0.0.0.0:PORT``), plus whatever the user configured.
    A request without ``Origin`` (any non-browser client) is not affected by the origin list.
    """
    hosts = [*_LOCAL_NAMES, *(f"{name}:*" for name in _LOCAL_NAMES)]
    if not _is_wildcard(settings.http_host):
        bound = _display_addr(settings.http_host, settings.http_port)
        if bound not in hosts:
            hosts.append(bound)
    origins = [f"http://{host}" for host in hosts]
    for host in settings.allowed_hosts:
        if host not in hosts:
            hosts.append(host)
    for origin in settings.allowed_origins:
        if origin not in origins:
            origins.append(origin)
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


class _DeclaredSizeLimit:
    """413 for a body declared too large, before a byte of it is read, on any path.

    The SDK does the same check inside its ``/mcp`` route and also counts bytes of chunked
    bodies as they arrive; this layer only moves the declared-size refusal in front of
    routing so an oversized upload never reaches Starlette at all. The connection is kept:
    uvicorn discards the rest of the upload unbuffered, and a client that is still sending
    (most are) then reads a clean 413 instead of a connection reset.
    """

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self._app = app
        self._limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            declared = Headers(scope=scope).get("content-length")
            if declared is not None and declared.strip().isdigit() and int(declared) > self._limit:
                logger.info("refused a request declaring a body of %s bytes", declared.strip())
                body = b"Request body too large"
                await send(
                    {
                        "type": "http.response.start",
                        "status": 413,
                        "headers": [
                            (b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(body)).encode()),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self._app(scope, receive, send)


class _CloseWhenBodyUnread:
    """``Connection: close`` on any answer sent before the request body was read to its end.

    A refusal (401 without the token, 413 for too large a body) is answered without reading
    the body. uvicorn would then keep the connection alive by reading and discarding the
    rest of the body for up to its keep-alive timeout, so an endless upload would keep the
    server busy; closing the connection stops reading at once.
    """

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        body_done = "transfer-encoding" not in headers and headers.get("content-length", "0").strip() in (
            "",
            "0",
        )

        async def tracking_receive() -> Message:
            nonlocal body_done
            message = await receive()
            if message["type"] == "http.disconnect" or not message.get("more_body", False):
                body_done = True
            return message

        async def closing_send(message: Message) -> None:
            if message["type"] == "http.response.start" and not body_done:
                kept = [
                    (name, value)
                    for name, value in message.get("headers", [])
                    if name.lower() != b"connection"
                ]
                message = {**message, "headers": [*kept, (b"connection", b"close")]}
            await send(message)

        await self._app(scope, tracking_receive, closing_send)


class _Server(uvicorn.Server):
    """uvicorn, minus its signal handling (``_StopOnSignal`` owns the signals for longer), and
    with requests still running after the shutdown grace answered rather than cut off.

    uvicorn cancels them, which answers a plain-text 500 to a call whose change Cooked may
    already have applied; here each gets a JSON-RPC error saying so, then uvicorn goes on.
    """

    def __init__(self, config: uvicorn.Config, sessions: JsonWhenSilentSessionManager) -> None:
        super().__init__(config)
        self._sessions = sessions
        # sse_starlette (the SDK's event streams) otherwise ends every stream the moment a
        # signal arrives, a progress stream's answer included; here they end as below.
        AppStatus.enable_automatic_graceful_drain = False  # what its untyped disable_…() does

    async def _wait_tasks_to_complete(self) -> None:
        self._sessions.close_listening_streams()  # they carry nothing cooked-mcp needs to finish
        try:
            await asyncio.wait_for(super()._wait_tasks_to_complete(), SHUTDOWN_GRACE_SECONDS)
            return
        except TimeoutError:
            pass
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


class _StopOnSignal:
    """SIGINT/SIGTERM ask the server to stop (a second SIGINT: stop now), from before the bind.

    The handlers go in before the socket is bound, so a signal sent as soon as the port
    answers always finds one; a signal that arrives before the server exists is held and
    handed over on ``attach``, and uvicorn checks ``should_exit`` before it starts serving.
    """

    def __init__(self) -> None:
        self._server: uvicorn.Server | None = None
        self._pending: list[int] = []

    def attach(self, server: uvicorn.Server) -> None:
        self._server = server
        for sig in self._pending:
            server.handle_exit(sig, None)

    def _handle(self, sig: int, frame: FrameType | None) -> None:
        logger.info("received %s, shutting down", signal.Signals(sig).name)
        if self._server is None:
            self._pending.append(sig)
        else:
            self._server.handle_exit(sig, frame)

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        previous: dict[signal.Signals, Any] = {}
        try:
            for sig in (signal.SIGINT, signal.SIGTERM):
                previous[sig] = signal.signal(sig, self._handle)
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def _listen(host: str, port: int) -> list[socket.socket]:
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


def _display_addr(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _is_wildcard(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return False
