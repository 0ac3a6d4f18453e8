"""The ASGI layers that refuse a request before its body is read, and keep that cheap.

Each is an ``HttpMiddleware``: it acts on HTTP requests and passes lifespan events through.
Their answers are Starlette responses, sent as ASGI apps.
"""

from __future__ import annotations

import logging

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["CloseWhenBodyUnread", "HttpMiddleware"]

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
