"""The ASGI layers that refuse a request before its body is read, and keep that cheap.

Each is an ``HttpMiddleware``: it acts on HTTP requests and passes lifespan events through.
Their answers are Starlette responses, sent as ASGI apps.
"""

from __future__ import annotations

import logging

from starlette.datastructures import Headers, MutableHeaders
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["CloseWhenBodyUnread", "DeclaredSizeLimit", "HttpMiddleware"]

logger = logging.getLogger("cooked_mcp.transports.http")


class HttpMiddleware:
    """An ASGI layer for HTTP requests (``handle``); every other scope goes to ``other``, which
    passes it through untouched unless a layer says otherwise."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            await self.handle(scope, receive, send)
        else:
            await self.other(scope, receive, send)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        raise NotImplementedError

    async def other(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)


class DeclaredSizeLimit(HttpMiddleware):
    """413 for a body declared too large, before a byte of it is read, on any path.

    The SDK does the same check inside its ``/mcp`` route and also counts bytes of chunked
    bodies as they arrive; this layer only moves the declared-size refusal in front of
    routing so an oversized upload never reaches Starlette at all. The connection is kept:
    uvicorn discards the rest of the upload unbuffered, and a client that is still sending
    (most are) then reads a clean 413 instead of a connection reset.
    """

    def __init__(self, app: ASGIApp, limit: int) -> None:
        super().__init__(app)
        self.limit = limit

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        declared = Headers(scope=scope).get("content-length")
        if declared is not None and declared.strip().isdigit() and int(declared) > self.limit:
            logger.info("refused a request declaring a body of %s bytes", declared.strip())
            await PlainTextResponse("Request body too large", status_code=413)(scope, receive, send)
            return
        await self.app(scope, receive, send)


class CloseWhenBodyUnread(HttpMiddleware):
    """``Connection: close`` on any answer sent before the request body was read to its end.

    A refusal (401 without the token, 413 for too large a body) is answered without reading
    the body. uvicorn would then keep the connection alive by reading and discarding the
    rest of the body for up to its keep-alive timeout, so an endless upload would keep the
    server busy; closing the connection stops reading at once.
    """

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
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
                message = {**message, "headers": message.get("headers", [])}
                MutableHeaders(scope=message)["connection"] = "close"  # on a copy of the list
            await send(message)

        await self.app(scope, tracking_receive, closing_send)
