"""A token given to ``Refusals`` guards every path, whatever its value: the layer fails closed."""

from __future__ import annotations

import httpx
import pytest
from pydantic import SecretStr
from starlette.responses import PlainTextResponse
from starlette.types import Receive, Scope, Send

from cooked_mcp.transports.http_middleware import Refusals

pytestmark = pytest.mark.anyio


async def _inner(scope: Scope, receive: Receive, send: Send) -> None:
    await PlainTextResponse("the MCP app")(scope, receive, send)


@pytest.mark.req("server.SECURITY.3")
async def test_an_empty_token_given_to_refusals_refuses_rather_than_lets_everyone_in() -> None:
    app = Refusals(_inner, token=SecretStr(""))  # Settings refuses "", but this layer must not rely on it
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        answer = await http.post("/mcp", json={})
    assert answer.status_code == 401, answer.text
