"""The bearer token in front of every path: anyone who can talk to the server can read and change
the Cooked account, so without ``Authorization: Bearer <token>`` a request gets nowhere near the
MCP code or its body. Plain ASGI: a static shared secret is all a single-user server needs.

The token is never echoed or logged (the refusal is fixed text; its log line names the method,
whether the path was /mcp and the kind of mistake), and compared in constant time.
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

_SCHEME = b"bearer"
_NOT_OAUTH = (
    "this server takes the fixed token it was started with (COOKED_MCP_HTTP_TOKEN, mcp.http_token or "
    "mcp.http_token_cmd), sent as 'Authorization: Bearer <token>'; there is nothing to log in to"
)
_DESCRIPTIONS = {
    False: f"No bearer token was sent; {_NOT_OAUTH}",
    True: f"The bearer token is wrong; {_NOT_OAUTH}",
}


# implements: server.SECURITY.3, server.SECURITY.6, server.SECURITY.7
class BearerTokenMiddleware(HttpMiddleware):
    """401 to every HTTP request without the token, on every path: an unauthenticated caller
    learns nothing, not even which paths exist."""

    def __init__(self, app: ASGIApp, token: SecretStr, *, served_path: str) -> None:
        super().__init__(app)
        self._token = token.get_secret_value().encode("ascii")
        self._served_path = served_path

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        problem = self._problem(scope)
        if problem is None:
            await self.app(scope, receive, send)
            return
        path = self._served_path if scope.get("path") == self._served_path else "(another path)"
        logger.info("refused %s %s: %s", printable(scope.get("method", "?"))[:20], path, problem)
        await _unauthorized(invalid=problem == "wrong token")(scope, receive, send)

    def _problem(self, scope: Scope) -> str | None:
        """Why the request is refused (for the log, never containing the header), or None."""
        values = [value for name, value in scope.get("headers", ()) if name.lower() == b"authorization"]
        if not values:
            return "no Authorization header"
        if len(values) > 1:
            return "more than one Authorization header"
        scheme, _, credentials = values[0].strip().partition(b" ")
        if scheme.lower() != _SCHEME:
            return "Authorization scheme is not Bearer"
        credentials = credentials.strip(b" \t")
        if not credentials:
            return "Bearer without a token"
        # compare_digest takes as long for a near miss as for a wild guess (length aside).
        if not hmac.compare_digest(credentials, self._token):
            return "wrong token"
        return None


def _unauthorized(*, invalid: bool) -> JSONResponse:
    """RFC 6750 section 3.1 for a static token: ``invalid_token``, missing or wrong alike, so a
    client reads "bad token" rather than "start an OAuth flow"; the description says which
    (and avoids the word OAuth, which clients' own messages would be taken for)."""
    description = _DESCRIPTIONS[invalid]
    challenge = f'Bearer realm="cooked-mcp", error="invalid_token", error_description="{description}"'
    return JSONResponse(
        {"error": "invalid_token", "error_description": description},
        status_code=401,
        headers={"www-authenticate": challenge, "cache-control": "no-store"},
    )
