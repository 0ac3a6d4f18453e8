"""Answers to a refused ``Host`` (421) or ``Origin`` (403) that name the setting to change.

The SDK's DNS-rebinding check answers "Invalid Host header" / "Invalid Origin header",
which leaves a user who reached the server through a new name (a LAN address, a reverse
proxy) guessing. The check itself stays the SDK's; only the text of those two answers is
replaced, on the way out. Nothing else in this server answers 421 or 403.
"""

from __future__ import annotations

from starlette.types import Message, Receive, Scope, Send

from .http_middleware import HttpMiddleware

__all__ = ["HOST_REFUSED", "ORIGIN_REFUSED", "NameTheSetting"]

HOST_REFUSED = (
    "Host header not allowed: this server answers to 127.0.0.1, localhost, [::1] and its own address; "
    "add the name to mcp.allowed_hosts in the config file (as NAME:PORT; it needs a bearer token)"
)
ORIGIN_REFUSED = (
    "Origin header not allowed: browsers may call this server only from its local names; add the "
    "origin to mcp.allowed_origins in the config file (as http://NAME:PORT; it needs a bearer token)"
)
_MESSAGES = {421: HOST_REFUSED.encode(), 403: ORIGIN_REFUSED.encode()}


class NameTheSetting(HttpMiddleware):
    """Replace the body of a 421 or 403 answer; pass every other message through untouched."""

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        replacement: bytes | None = None

        async def rewrite(message: Message) -> None:
            nonlocal replacement
            if message["type"] == "http.response.start" and message["status"] in _MESSAGES:
                replacement = _MESSAGES[message["status"]]
                headers = [
                    (name, value)
                    for name, value in message.get("headers", [])
                    if name.lower() not in (b"content-length", b"content-type")
                ]
                headers += [
                    (b"content-type", b"text/plain; charset=utf-8"),
                    (b"content-length", str(len(replacement)).encode()),
                ]
                message = {**message, "headers": headers}
            elif message["type"] == "http.response.body" and replacement is not None:
                if message.get("more_body", False):
                    return  # the original body is dropped; the replacement goes out with its last part
                message = {**message, "body": replacement}
            await send(message)

        await self.app(scope, receive, rewrite)
