"""The ASGI layers in front of ``/mcp`` (``http.build_app`` orders them): each refusal as cheap as
it can be and saying what to do next. Every scope but ``http`` passes through untouched."""

from __future__ import annotations

import hmac
import logging

from pydantic import SecretStr
from starlette.datastructures import Headers, MutableHeaders
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from cooked_mcp.text import printable
from cooked_mcp_runtime.results import ANSWERS, HANDED_OVER, HandedOver

logger = logging.getLogger("cooked_mcp.transports.http")

# implements: server.TRANSPORT.5
MCP_PATH = "/mcp"
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
_NOT_OAUTH = (
    "this server takes the fixed token it was started with (COOKED_MCP_HTTP_TOKEN, mcp.http_token or "
    "mcp.http_token_cmd), sent as 'Authorization: Bearer <token>'; there is nothing to log in to"
)


# implements: extensions.MEMORY.1
class AnswersInFlight:
    """A call's answer of ``Limits.SMALL_ANSWER_BYTES`` or more (the dispatcher leaves it in the scope's
    ``HandedOver``) keeps its room in ``results.ANSWERS`` until written: a slow client keeps it here."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        handed = HandedOver()
        if scope["type"] == "http":
            scope[HANDED_OVER] = handed

        async def written(message: Message) -> None:
            if not handed.calls or message["type"] != "http.response.body" or message.get("more_body"):
                await send(message)
                return
            # The server waits for a slow client before each part it sends, not after the last:
            # an empty last part returns only once the socket has taken the answer.
            await send({**message, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})

        try:
            await self.app(scope, receive, written)
        finally:
            handed.written = True
            for call in handed.calls:
                ANSWERS.release(call)


class Refusals:
    """The bearer token's 401; ``Connection: close`` on an answer sent before the body was read whole
    (uvicorn would go on reading it, so an endless upload would keep the server busy); the SDK's
    DNS-rebinding refusals (421, 403) reworded to name the setting to change."""

    def __init__(self, app: ASGIApp, token: SecretStr | None) -> None:
        self.app = app
        self._token = token.get_secret_value().encode("ascii") if token is not None else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        declared = headers.get("content-length", "").strip()
        body_done = "transfer-encoding" not in headers and declared in ("", "0")
        replacement: bytes | None = None

        async def tracking_receive() -> Message:
            nonlocal body_done
            message = await receive()
            body_done = body_done or message["type"] == "http.disconnect" or not message.get("more_body")
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

        refused = unauthorised(scope, self._token) if self._token is not None else None
        served = self.app if refused is None else refused
        await served(scope, tracking_receive, rewrite)


# implements: server.SECURITY.3, server.SECURITY.6, server.SECURITY.7
def unauthorised(scope: Scope, token: bytes) -> JSONResponse | None:
    """The 401 to an HTTP request without ``token``, on every path, before its body is read: an
    unauthenticated caller learns nothing, not even which paths exist. The token is compared in
    constant time, never echoed or logged."""
    values = [value for name, value in scope["headers"] if name.lower() == b"authorization"]
    scheme, _, credentials = (values[0] if len(values) == 1 else b"").strip().partition(b" ")
    credentials = credentials.strip(b" \t") if scheme.lower() == b"bearer" else b""
    if credentials and hmac.compare_digest(credentials, token):
        return None
    path = MCP_PATH if scope["path"] == MCP_PATH else "(another path)"
    problem = "wrong bearer token" if credentials else "no single Authorization: Bearer header"
    logger.info("refused %s %s: %s", printable(scope["method"])[:20], path, problem)
    # RFC 6750 section 3.1 for a static token: ``invalid_token`` whether missing or wrong, so a
    # client reads "bad token" rather than "start an OAuth flow" (a word the text avoids).
    sent = "The bearer token is wrong" if credentials else "No bearer token was sent"
    description = f"{sent}; {_NOT_OAUTH}"
    challenge = f'Bearer realm="cooked-mcp", error="invalid_token", error_description="{description}"'
    return JSONResponse(
        {"error": "invalid_token", "error_description": description},
        status_code=401,
        headers={"www-authenticate": challenge, "cache-control": "no-store"},
    )
