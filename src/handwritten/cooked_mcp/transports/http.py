"""MCP over Streamable HTTP at ``/mcp``, served by uvicorn on the configured address.

``build_app`` assembles the ASGI app, middleware outermost first so the cheapest refusal comes
first. At SIGINT or SIGTERM (``StopSignals``) event streams end, calls get the grace, then their
one answer (``HttpGuard.drain``), and uvicorn closes the connections.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import math
import os
import sys
from collections.abc import AsyncIterator
from urllib.parse import urlsplit

import anyio
import uvicorn
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import RequestBodyLimitMiddleware, TransportSecuritySettings
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from ..app import Application
from ..config import Settings
from ..config.limits import Limits
from ..exceptions import ListenError
from ..remote import remote_mode
from .answers_in_flight import AnswersInFlight
from .auth import BearerTokenMiddleware
from .connection_guard import ServerWithoutSignals, bounded_protocol
from .http_guard import HttpGuard
from .http_middleware import Refusals
from .http_sockets import listen, raise_open_files_limit, rate_limited_accept_errors
from .stop_signals import StopSignals

# implements: server.TRANSPORT.5
MCP_PATH = "/mcp"
EXIT_STARTUP = 2

_LOCAL_NAMES = ("127.0.0.1", "localhost", "[::1]")


# implements: server.TRANSPORT.2-2, server.TRANSPORT.3
def serve_http(application: Application) -> int:
    """Serve until SIGINT or SIGTERM; 0 on a clean stop, 2 if the address cannot be used."""
    return anyio.run(_serve, application, raise_open_files_limit())


async def _serve(application: Application, open_files: int) -> int:
    """Signals are caught before the port is bound, so one sent as soon as it answers ends the
    process cleanly."""
    settings = application.settings
    where = settings.http_addr.shown()
    stop = StopSignals()
    async with anyio.create_task_group() as signals:
        await signals.start(stop.watch)
        try:
            sockets = listen(settings.http_host, settings.http_port)
        except ListenError as exc:
            print(f"cooked-mcp: cannot listen on {where}: {exc}", file=sys.stderr)
            signals.cancel_scope.cancel()
            return EXIT_STARTUP
        try:
            app, guard = build_app(application)
            server = ServerWithoutSignals(
                uvicorn.Config(
                    app,
                    log_config=None,
                    access_log=False,
                    http=bounded_protocol(open_files, settings.limits),
                    h11_max_incomplete_event_size=Limits.MAX_HEAD_BYTES,
                    backlog=Limits.ACCEPT_BURST,
                    ws="none",
                    lifespan="on",
                    proxy_headers=False,
                    server_header=False,
                    # the drain's grace, then a second for the interrupted requests' answers
                    timeout_graceful_shutdown=math.ceil(settings.limits.stop_grace_seconds) + 2,
                )
            )
            # Printed: the default log level shows warnings only, and the user needs the address.
            print(_banner(settings, f"http://{where}{MCP_PATH}"), file=sys.stderr, flush=True)
            rate_limited_accept_errors(asyncio.get_running_loop())
            async with application, anyio.create_task_group() as serving:
                serving.start_soon(_stop_when_asked, server, guard, stop, application)
                await server.serve(sockets=sockets)
                serving.cancel_scope.cancel()
        finally:
            for sock in sockets:
                sock.close()
        signals.cancel_scope.cancel()
    return 0


async def _stop_when_asked(
    server: uvicorn.Server, guard: HttpGuard, stop: StopSignals, app: Application
) -> None:
    await stop.requested.wait()
    server.should_exit = True  # uvicorn's public way to stop: no new connections, idle ones closed
    await guard.drain(app.settings.limits.stop_grace_seconds, stop.now, app.tools.changes_finished)


# implements: extensions.REMOTE.17
def _banner(settings: Settings, url: str) -> str:
    """Where, for which account, who may connect, how to stop; the login name only on a terminal
    (a log gets where it comes from)."""
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
        f"cooked-mcp: serving MCP over HTTP at {url} (Cooked account {account} at "
        f"{settings.base_url}); {who}. Press Ctrl-C to stop."
    )


# implements: server.TRANSPORT.5, server.SECURITY.3, server.SECURITY.7
def build_app(application: Application) -> tuple[Starlette, HttpGuard]:
    """The ASGI app serving ``application``, and its guard (which the stop drains): the SDK's
    session manager with the bounds of ``Limits`` and its DNS-rebinding defence for every address."""
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
    middleware = [Middleware(AnswersInFlight), Middleware(Refusals)]
    if settings.http_token is not None and remote is None:
        middleware.append(Middleware(BearerTokenMiddleware, token=settings.http_token, served_path=MCP_PATH))
    if remote is not None:
        # A stranger's body is a form of a few KiB; /mcp reads its 4 MiB (HttpGuard) only once the
        # access token let it through.
        middleware.append(Middleware(_StrangersBodies))

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with sessions.run():
            yield
            await guard.drained()  # uvicorn shuts the app down once no connection is left

    routes = [
        Route(
            MCP_PATH,
            endpoint=remote.guard(guard) if remote else guard,
        ),
        *(remote.routes if remote else []),
    ]
    app = Starlette(routes=routes, middleware=middleware, lifespan=lifespan)
    # /mcp is the one endpoint: /mcp/ is a 404 like any other path, not a redirect to /mcp.
    app.router.redirect_slashes = False
    return app, guard


class _StrangersBodies:
    """Remote mode: every path but /mcp (the OAuth endpoints, the consent form) reads at most
    ``Limits.MAX_FORM_BYTES``; /mcp is limited inside its token check."""

    def __init__(self, app: ASGIApp) -> None:
        self.app, self.limited = app, RequestBodyLimitMiddleware(app, Limits.MAX_FORM_BYTES)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        served = self.app if scope["type"] != "http" or scope["path"] == MCP_PATH else self.limited
        await served(scope, receive, send)


def transport_security(settings: Settings) -> TransportSecuritySettings:
    """Which ``Host`` and ``Origin`` values a request may carry: the loopback names on any port (or
    none: port 80), the bound address unless a wildcard (a browser page must not reach the server
    via ``http://0.0.0.0:PORT``), and what the user configured."""
    hosts = [*_LOCAL_NAMES, *(f"{name}:*" for name in _LOCAL_NAMES)]
    if not _is_wildcard(settings.http_host):
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
