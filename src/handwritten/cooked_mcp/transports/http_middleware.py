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


class CloseWhenBodyUnread(HttpMiddleware):
    """``Connection: close`` on any answer sent before the request body was read to its end (a
    401, a 413): uvicorn would go on reading and discarding the rest, so an endless upload would
    keep the server busy."""

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = Headers(scope=scope)
        declared = headers.get("content-length", "0").strip()
        body_done = "transfer-encoding" not in headers and declared in ("", "0")

        async def tracking_receive() -> Message:
            nonlocal body_done
            message = await receive()
            if message["type"] == "http.disconnect" or not message.get("more_body", False):
                body_done = True
            return message

        async def closing_send(message: Message) -> None:
            if message["type"] == "http.response.start" and not body_done:
                message = {**message, "headers": message.get("headers", [])}
                MutableHeaders(scope=message)["connection"] = "close"  # on a copy of the list
            await send(message)

        await self.app(scope, tracking_receive, closing_send)


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


class NameTheSetting(HttpMiddleware):
    """The SDK's DNS-rebinding refusals ("Invalid Host header", 421; "Invalid Origin header", 403)
    name the setting to change, for a user who reached the server through a new name (a LAN
    address, a reverse proxy). Nothing else here answers 421 or 403."""

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        replacement: bytes | None = None

        async def rewrite(message: Message) -> None:
            nonlocal replacement
            if message["type"] == "http.response.start" and message["status"] in _MESSAGES:
                replacement = _MESSAGES[message["status"]]
                message = {**message, "headers": list(message.get("headers", []))}
                headers = MutableHeaders(scope=message)  # on a copy of the list
                headers["content-type"] = "text/plain; charset=utf-8"
                headers["content-length"] = str(len(replacement))
            elif message["type"] == "http.response.body" and replacement is not None:
                message = {**message, "body": replacement}  # a Starlette Response: one body message
            await send(message)

        await self.app(scope, receive, rewrite)
