"""MCP over Streamable HTTP at ``/mcp``, served by uvicorn on the configured address.

``build_app`` is the one place the ASGI app is assembled: its routes and its middleware, outermost
first, so that the cheapest refusal comes before any work. Serving stops at SIGINT or SIGTERM
(``StopSignals``, not uvicorn's own handlers): event streams end, calls get the grace, then
their one answer (``HttpGuard.drain``), and uvicorn closes the connections.
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
from .http_middleware import CloseWhenBodyUnread, NameTheSetting
from .http_sockets import listen, raise_open_files_limit, rate_limited_accept_errors
from .stop_signals import StopSignals

# implements: server.TRANSPORT.5
MCP_PATH = "/mcp"
EXIT_STARTUP = 2

_LOCAL_NAMES = ("127.0.0.1", "localhost", "[::1]")


# implements: server.TRANSPORT.2-2, server.TRANSPORT.3
def serve_http(application: Application) -> int:
    """Serve until SIGINT or SIGTERM; 0 on a clean stop, 2 if the address cannot be used.

    Nothing here talks to Cooked: the one ``CookedClient`` (shared by every HTTP client,
    as there is one user) logs in lazily on the first tool call that needs it.
    """
    open_files = raise_open_files_limit()
    return anyio.run(_serve, application, open_files)


async def _serve(application: Application, open_files: int) -> int:
    """SIGINT/SIGTERM are caught before the port is bound, so a signal sent as soon as it
    answers ends the process cleanly; one that arrives while uvicorn starts is seen by it
    before it serves (it checks ``should_exit``)."""
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
            # Printed, not logged: the default log level shows warnings only, and a user who
            # started the server needs its address.
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
    """What the stdio banner says too: where, for which account, who may connect, how to stop.

    The login name is shown only on a terminal, a person reading it, as the stdio banner is;
    when stderr goes to a log, the line names where the username comes from instead.
    """
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
    """The whole ASGI app serving ``application``, and its guard (which the stop drains).

    The SDK's session manager, with the bounds of ``Limits``; its DNS-rebinding defence, which the
    SDK enables by itself only for loopback binds, configured here for every address (hosts and
    origins beyond the local names only with a token, see ``Settings``).
    """
    settings = application.settings
    sessions = StreamableHTTPSessionManager(
        application.server,
        security_settings=transport_security(settings),
        max_request_body_size=Limits.MAX_MESSAGE_BYTES,
        max_sessions=Limits.MAX_SESSIONS,
        session_idle_timeout=Limits.SESSION_IDLE_SECONDS,
    )
    guard = HttpGuard(StreamableHTTPASGIApp(sessions), Limits.MAX_SESSIONS)
    remote = remote_mode(settings) if settings.public_url else None
    middleware = [Middleware(AnswersInFlight), Middleware(CloseWhenBodyUnread), Middleware(NameTheSetting)]
    if settings.http_token is not None and remote is None:
        middleware.append(Middleware(BearerTokenMiddleware, token=settings.http_token, served_path=MCP_PATH))
    if remote is None:
        middleware.append(Middleware(RequestBodyLimitMiddleware, max_body_size=Limits.MAX_MESSAGE_BYTES))
    else:
        # The SDK's limit reads a body whole before the app sees it: a stranger's is a form of a few
        # KiB, and /mcp reads its 4 MiB only once the access token let it through.
        middleware.append(Middleware(_StrangersBodies))

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with sessions.run():
            yield
            await guard.drained()  # uvicorn shuts the app down once no connection is left

    routes = [
        Route(
            MCP_PATH,
            endpoint=remote.guard(RequestBodyLimitMiddleware(guard, Limits.MAX_MESSAGE_BYTES))
            if remote
            else guard,
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
    """DNS-rebinding defence: which ``Host`` and ``Origin`` values a request may carry.

    Always the loopback names on any port (with and without a port, as a client sends no
    port for port 80), plus the bound address itself unless it is a wildcard (``0.0.0.0``
    and ``::`` are not names a client should use; allowing them would let a browser page
    reach the server via ``http://0.0.0.0:PORT``), plus whatever the user configured.
    A request without ``Origin`` (any non-browser client) is not affected by the origin list.
    """
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
    try:
        return ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return False
