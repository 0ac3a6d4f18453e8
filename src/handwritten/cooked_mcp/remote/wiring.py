"""The SDK's auth routes, extended where they fall short, and the guard in front of ``/mcp``.

Every URL comes from ``--public-url``: the issuer is it, the resource is it plus ``/mcp``.
The SDK's own authorization-server metadata advertises only ``client_secret_*`` and no CIMD
flag, which makes Claude skip CIMD; the model it builds is extended (``none``, the flag)
and served in place of its route.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import parse_qs

from mcp.server.auth.handlers.metadata import MetadataHandler
from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend, RequireAuthMiddleware
from mcp.server.auth.provider import ProviderTokenVerifier
from mcp.server.auth.routes import (
    build_metadata,
    build_resource_metadata_url,
    cors_middleware,
    create_auth_routes,
    create_protected_resource_routes,
)
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from mcp.server.transport_security import RequestBodyLimitMiddleware
from pydantic import AnyHttpUrl, ConfigDict, TypeAdapter
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from cooked_mcp.config import Settings
from cooked_mcp.logging_setup import register_secret_source

from ..config.limits import Limits, RemoteLimits
from .cimd import CimdFetcher
from .consent import OwnerCheck, consent_routes
from .provider import ClientFetcher, Provider
from .store import Store, state_dir
from .window import Window

MCP_PATH = "/mcp"
_AS_METADATA = "/.well-known/oauth-authorization-server"
_PR_METADATA = "/.well-known/oauth-protected-resource"


@dataclass(frozen=True)
class Remote:
    """What the HTTP transport adds in remote mode."""

    routes: list[BaseRoute]
    #: Wraps the ``/mcp`` endpoint: a valid token for this resource, or 401 naming the metadata.
    guard: Callable[[ASGIApp], ASGIApp]
    provider: Provider
    #: After the transport's own layers: a stranger's body is bounded before any sign-in.
    middleware: list[Middleware]


# implements: extensions.REMOTE.1, extensions.REMOTE.4
def build(
    settings: Settings,
    *,
    bounds: RemoteLimits | None = None,
    fetch_client: ClientFetcher | None = None,
    environ: dict[str, str] | None = None,
) -> Remote:
    """``bounds``, ``fetch_client`` and ``environ`` are for tests; the process passes none."""
    assert settings.public_url is not None and settings.owner_password is not None
    issuer = settings.public_url
    resource = f"{issuer}{MCP_PATH}"
    bounds = bounds or RemoteLimits()
    provider = Provider(
        Store(state_dir(os.environ if environ is None else environ)),
        issuer,
        resource,
        bounds,
        fetch_client or CimdFetcher(limits=bounds),
    )
    # implements: extensions.REMOTE.16
    register_secret_source(lambda: tuple(provider.recent))
    registration = ClientRegistrationOptions(enabled=True)
    revocation = RevocationOptions(enabled=True)
    # Without a trailing slash: RFC 8414 compares the issuer with the URL the client was given.
    issuer_url = TypeAdapter(AnyHttpUrl, config=ConfigDict(url_preserve_empty_path=True)).validate_python(
        issuer
    )
    metadata = build_metadata(issuer_url, None, registration, revocation)
    metadata.token_endpoint_auth_methods_supported = ["none"]
    metadata.revocation_endpoint_auth_methods_supported = ["none"]
    metadata.client_id_metadata_document_supported = True
    routes: list[BaseRoute] = []
    for route in create_auth_routes(provider, issuer_url, None, registration, revocation):
        assert isinstance(route, Route)
        if route.path == _AS_METADATA:
            route = Route(
                _AS_METADATA,
                cors_middleware(MetadataHandler(metadata).handle, ["GET", "OPTIONS"]),
                methods=["GET", "OPTIONS"],
            )
        elif route.path == "/register":
            route = Route(route.path, _RateLimited(route.app, bounds), methods=["POST", "OPTIONS"])
        elif route.path == "/revoke":
            route = Route(route.path, _PublicClientRevokes(route.app), methods=["POST", "OPTIONS"])
        routes.append(route)
    resource_routes = create_protected_resource_routes(
        AnyHttpUrl(resource), [issuer_url], resource_name="cooked-mcp"
    )
    root = resource_routes[0]
    assert isinstance(root, Route)
    # RFC 9728's path-inserted form, and the root form some clients try first.
    routes += [*resource_routes, Route(_PR_METADATA, root.endpoint, methods=["GET", "OPTIONS"])]
    routes += consent_routes(
        provider,
        OwnerCheck(settings.owner_password, Window(bounds.password_failures, bounds.lockout_seconds)),
    )
    backend = BearerAuthBackend(ProviderTokenVerifier(provider), resource_server_url=AnyHttpUrl(resource))
    metadata_url = build_resource_metadata_url(AnyHttpUrl(resource))

    def guard(app: ASGIApp) -> ASGIApp:
        return AuthenticationMiddleware(RequireAuthMiddleware(app, [], metadata_url), backend=backend)

    return Remote(routes, guard, provider, [Middleware(_StrangersBodies)])


class _RateLimited:
    """DCR, ``RemoteLimits.registrations`` per ``RemoteLimits.registration_window`` seconds for everyone
    together, answered 429 beyond (a flood of registrations must not push out real clients)."""

    def __init__(self, app: ASGIApp, bounds: RemoteLimits) -> None:
        self.app, self.window = app, Window(bounds.registrations, bounds.registration_window)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("method") == "POST":
            wait = self.window.wait()
            if wait:
                answer = JSONResponse(
                    {
                        "error": "invalid_client_metadata",
                        "error_description": "too many registrations; try later",
                    },
                    status_code=429,
                    headers={"Retry-After": str(int(wait) + 1)},
                )
                await answer(scope, receive, send)
                return
            self.window.add()
        await self.app(scope, receive, send)


class _PublicClientRevokes:
    """mcp 2.3.0's revocation handler requires a ``client_secret`` field, which a public client
    (every client here) does not send (RFC 7009 section 2.1): without one, an empty one is added,
    so that a client disconnecting really ends its grant. The body is already bounded (transport)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        body, more = b"", True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False) and message["type"] == "http.request"
        if "client_secret" not in parse_qs(body.decode("latin-1"), keep_blank_values=True):
            body += b"&client_secret=" if body else b"client_secret="
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


class _StrangersBodies:
    """Every path but /mcp (the OAuth endpoints, the consent form) reads at most
    ``Limits.MAX_FORM_BYTES``; /mcp reads its 4 MiB (``HttpGuard``) only once its token let it in."""

    def __init__(self, app: ASGIApp) -> None:
        self.app, self.limited = app, RequestBodyLimitMiddleware(app, Limits.MAX_FORM_BYTES)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        served = self.app if scope["type"] != "http" or scope["path"] == MCP_PATH else self.limited
        await served(scope, receive, send)
