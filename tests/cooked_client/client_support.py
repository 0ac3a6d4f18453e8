"""Constants and helpers shared by the Cooked client tests (imported by name: test dirs are not packages).

The canaries are distinctive strings that must never show up in an exception, a repr or a
log line; tests search for them verbatim.
"""

from __future__ import annotations

from typing import Any

import httpx
import respx
from pydantic import SecretStr

from cooked_mcp.cooked import CookedClient

BASE_URL = "https://cooked.test"
LOGIN_NAME = "CANARY-login-5e2d@example.com"
PASSWORD = "CANARY-PW-7f3a"
CANONICAL_USERNAME = "canary-user-9b1e"
SESSION_COOKIE = "CANARY-COOKIE-31c4"
CANARIES = (LOGIN_NAME, PASSWORD, CANONICAL_USERNAME, SESSION_COOKIE)
LOGIN_PATH = "/api/public/login"


def login_response(username: str = CANONICAL_USERNAME, cookie: str = SESSION_COOKIE) -> httpx.Response:
    return httpx.Response(
        200,
        json={"message": "Authenticated successfully", "username": username},
        headers={"Set-Cookie": f"ring-session={cookie}; Path=/; HttpOnly"},
    )


def make_client(router: respx.MockRouter, **kwargs: Any) -> CookedClient:
    """A client whose transport is the respx router itself: nothing unmocked can get out."""
    transport = httpx.MockTransport(router.async_handler)
    return CookedClient(BASE_URL, LOGIN_NAME, SecretStr(PASSWORD), transport=transport, **kwargs)


def user_path(suffix: str = "") -> str:
    return f"/api/user/{CANONICAL_USERNAME}{suffix}"
