"""The ASGI layers around the SDK's app that make its refusals cheap and say what to do."""

from __future__ import annotations

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send


class HttpMiddleware:
    """An ASGI layer for HTTP requests (``handle``); every other scope passes through untouched."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            await self.handle(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        raise NotImplementedError  # each layer's own


HOST_REFUSED = (
    "Host header not allowed: this server answers to 127.0.0.1, localhost, [::1], its own address and "
    "its public URL's host; behind a reverse proxy, have the proxy pass the Host header it received "
    "(docs/remote.md); otherwise add the name to mcp.allowed_hosts in the config file (as NAME:PORT; "
    "it needs a bearer token)"
)
ORIGIN_REFUSED = (
    "Origin header not allowed: browsers may call this server only from its local names; add the "
    "origin to mcp.allowed_origins in the config file (as http://NAME:PORT; it needs a bearer token)"
)
_MESSAGES = {421: HOST_REFUSED.encode(), 403: ORIGIN_REFUSED.encode()}


class Refusals(HttpMiddleware):
    """``Connection: close`` on any answer sent before the request body was read to its end (a 401,
    a 413): uvicorn would go on reading and discarding the rest, so an endless upload would keep
    the server busy. And the SDK's DNS-rebinding refusals ("Invalid Host header", 421; "Invalid
    Origin header", 403; nothing else here answers them) name the setting to change, for a user
    who reached the server through a new name (a LAN address, a reverse proxy)."""

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = Headers(scope=scope)
        body_done = "transfer-encoding" not in headers and headers.get("content-length", "0").strip() in (
            "",
            "0",
        )
        replacement: bytes | None = None

        async def tracking_receive() -> Message:
            nonlocal body_done
            message = await receive()
            body_done = (
                body_done or message["type"] == "http.disconnect" or not message.get("more_body", False)
            )
            return message

        async def rewrite(message: Message) -> None:
            nonlocal replacement
            if message["type"] == "http.response.start":
                message = {**message, "headers": list(message.get("headers", []))}
                headers = MutableHeaders(scope=message)  # on a copy of the list
                if not body_done:
                    headers["connection"] = "close"
                if (replacement := _MESSAGES.get(message["status"])) is not None:
                    headers["content-type"] = "text/plain; charset=utf-8"
                    headers["content-length"] = str(len(replacement))
            elif message["type"] == "http.response.body" and replacement is not None:
                message = {**message, "body": replacement}  # a Starlette Response: one body message
            await send(message)

        await self.app(scope, tracking_receive, rewrite)
