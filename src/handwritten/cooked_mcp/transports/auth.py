"""The bearer token in front of every path: anyone who can talk to the server can read and change
the Cooked account, so without ``Authorization: Bearer <token>`` a request gets nowhere near the
MCP code or its body. The token is compared in constant time, never echoed or logged.
"""

from __future__ import annotations

import hmac
import logging

from pydantic import SecretStr
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from cooked_mcp.text import printable

from .http_middleware import HttpMiddleware

logger = logging.getLogger(__name__)

_NOT_OAUTH = (
    "this server takes the fixed token it was started with (COOKED_MCP_HTTP_TOKEN, mcp.http_token or "
    "mcp.http_token_cmd), sent as 'Authorization: Bearer <token>'; there is nothing to log in to"
)


# implements: server.SECURITY.3, server.SECURITY.6, server.SECURITY.7
class BearerTokenMiddleware(HttpMiddleware):
    """401 to every HTTP request without the token, on every path: an unauthenticated caller
    learns nothing, not even which paths exist."""

    def __init__(self, app: ASGIApp, token: SecretStr, *, served_path: str) -> None:
        super().__init__(app)
        self._token = token.get_secret_value().encode("ascii")
        self._served_path = served_path

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        values = [value for name, value in scope.get("headers", ()) if name.lower() == b"authorization"]
        scheme, _, credentials = (values[0] if len(values) == 1 else b"").strip().partition(b" ")
        credentials = credentials.strip(b" \t") if scheme.lower() == b"bearer" else b""
        # compare_digest takes as long for a near miss as for a wild guess (length aside).
        if credentials and hmac.compare_digest(credentials, self._token):
            await self.app(scope, receive, send)
            return
        path = self._served_path if scope.get("path") == self._served_path else "(another path)"
        problem = "wrong bearer token" if credentials else "no single Authorization: Bearer header"
        logger.info("refused %s %s: %s", printable(scope.get("method", "?"))[:20], path, problem)
        # RFC 6750 section 3.1 for a static token: ``invalid_token`` whether missing or wrong, so a
        # client reads "bad token" rather than "start an OAuth flow" (a word the text avoids).
        description = (
            f"The bearer token is wrong; {_NOT_OAUTH}"
            if credentials
            else f"No bearer token was sent; {_NOT_OAUTH}"
        )
        challenge = f'Bearer realm="cooked-mcp", error="invalid_token", error_description="{description}"'
        refusal = JSONResponse(
            {"error": "invalid_token", "error_description": description},
            status_code=401,
            headers={"www-authenticate": challenge, "cache-control": "no-store"},
        )
        await refusal(scope, receive, send)
