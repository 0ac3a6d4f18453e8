"""MCP over Streamable HTTP at ``/mcp``, served by uvicorn on the configured address."""

from __future__ import annotations

import contextlib
import ipaddress
import os
import sys
from collections.abc import AsyncIterator
from urllib.parse import urlsplit

import anyio
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Route

from ..app import Application
from ..config import Settings
from ..config.limits import Limits
from ..exceptions import ListenError
from ..remote import remote_mode
from .connection_guard import listen, uvicorn_server
from .http_guard import HttpGuard
from .http_middleware import MCP_PATH, AnswersInFlight, Refusals
from .protocol_guard import StopSignals

EXIT_STARTUP = 2

_LOCAL_NAMES = ("127.0.0.1", "localhost", "[::1]")


# implements: server.TRANSPORT.2-2, server.TRANSPORT.3
def serve_http(application: Application) -> int:
    """Serve until SIGINT or SIGTERM; 0 on a clean stop, 2 if the address cannot be used."""
    return anyio.run(_serve, application)


async def _serve(application: Application) -> int:
    """Signals are caught before the port is bound: one sent as soon as it answers ends it cleanly."""
    settings = application.settings
    stop = StopSignals()
    async with anyio.create_task_group() as tasks:
        await tasks.start(stop.watch)
        try:
            sockets = listen(*settings.http_addr)
        except ListenError as exc:
            print(f"cooked-mcp: cannot listen on {settings.http_addr.shown()}: {exc}", file=sys.stderr)
            tasks.cancel_scope.cancel()
            return EXIT_STARTUP

        async def stop_when_asked() -> None:
            await stop.requested.wait()
            server.should_exit = True  # uvicorn's public way to stop: no new connections, idle ones closed
            await guard.drain(stop, settings.limits.stop_grace_seconds, application.tools.changes_finished)

        try:
            app, guard = build_app(application)
            server = uvicorn_server(app, settings.limits)
            # Printed: the default log level shows warnings only, and the user needs the address.
            print(_banner(settings), file=sys.stderr, flush=True)
            async with application:
                tasks.start_soon(stop_when_asked)
                await server.serve(sockets=sockets)
        finally:
            for sock in sockets:
                sock.close()
        tasks.cancel_scope.cancel()
    return 0


# implements: extensions.REMOTE.17
def _banner(settings: Settings) -> str:
    """The login name only on a terminal (a log gets where it comes from)."""
    account = settings.username if os.isatty(2) else f"from {settings.describe_origin('username')}"
    if settings.public_url:
        who = (
            f"remote mode: paste {settings.public_url}{MCP_PATH} into claude.ai or ChatGPT as a custom "
            "connector, and allow it with the owner password"
        )
    elif settings.http_token is None:
        who = "no bearer token is required, so any program on this machine can connect"
    else:
        who = f"every request must carry the bearer token from {settings.describe_origin('http_token')}"
    return (
        f"cooked-mcp: serving MCP over HTTP at http://{settings.http_addr.shown()}{MCP_PATH} (Cooked "
        f"account {account} at {settings.base_url}); {who}. Press Ctrl-C to stop."
    )


# implements: server.TRANSPORT.5, server.SECURITY.3, server.SECURITY.7
def build_app(application: Application) -> tuple[Starlette, HttpGuard]:
    """The ASGI app serving ``application``, and its guard (which the stop drains)."""
    settings = application.settings
    sessions = StreamableHTTPSessionManager(
        application.server,
        security_settings=transport_security(settings),
        max_request_body_size=Limits.MAX_MESSAGE_BYTES,
        max_sessions=Limits.MAX_SESSIONS,
        session_idle_timeout=Limits.SESSION_IDLE_SECONDS,
    )
    guard = HttpGuard(StreamableHTTPASGIApp(sessions))
    remote = remote_mode(settings) if settings.public_url else None
    # Remote mode's OAuth access token replaces the bearer token.
    token = settings.http_token if remote is None else None
    middleware = [
        Middleware(AnswersInFlight),
        Middleware(Refusals, token=token),
        *(remote.middleware if remote else []),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with sessions.run():
            yield
            await guard.drained.wait()  # uvicorn shuts the app down once no connection is left

    routes = [
        Route(MCP_PATH, endpoint=remote.guard(guard) if remote else guard),
        *(remote.routes if remote else []),
    ]
    app = Starlette(routes=routes, middleware=middleware, lifespan=lifespan)
    # /mcp is the one endpoint: /mcp/ is a 404 like any other path, not a redirect to /mcp.
    app.router.redirect_slashes = False
    return app, guard


def transport_security(settings: Settings) -> TransportSecuritySettings:
    """Which ``Host`` and ``Origin`` values a request may carry: the loopback names on any port (or
    none: port 80), the bound address unless a wildcard (a browser page must not reach the server
    via ``http://0.0.0.0:PORT``), and what the user configured."""
    hosts = [*_LOCAL_NAMES, *(f"{name}:*" for name in _LOCAL_NAMES)]
    if not _is_wildcard(settings.http_addr.host):
        hosts.append(settings.http_addr.shown())
    origins = [f"http://{host}" for host in hosts]
    public = [settings.public_url] if settings.public_url else []  # an origin: scheme://host[:port]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=list(
            dict.fromkeys([*hosts, *(urlsplit(url).netloc for url in public), *settings.allowed_hosts])
        ),
        allowed_origins=list(dict.fromkeys([*origins, *public, *settings.allowed_origins])),
    )


def _is_wildcard(host: str) -> bool:
    with contextlib.suppress(ValueError):
        return ipaddress.ip_address(host).is_unspecified
    return False
