"""Remote mode in this process: the routes ``remote.wiring.build`` returns, over httpx's ASGI
transport, with a guarded ``/mcp`` that answers 200 when the token is let through."""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from cooked_mcp.config import Settings
from cooked_mcp.config.limits import RemoteLimits
from cooked_mcp.remote.provider import ClientFetcher
from cooked_mcp.remote.wiring import Remote, build

PUBLIC = "http://127.0.0.1:8123"
RESOURCE = f"{PUBLIC}/mcp"
OWNER = "owner-canary-Pa55word"
REDIRECT = "http://127.0.0.1:9/callback"


def settings() -> Settings:
    return Settings(transport="http", username="u", password="p", public_url=PUBLIC, owner_password=OWNER)


@dataclass
class Harness:
    http: httpx.AsyncClient
    remote: Remote
    state: Path

    async def register(self, redirect: str = REDIRECT, **extra: object) -> str:
        answer = await self.http.post("/register", json={"redirect_uris": [redirect], **extra})
        assert answer.status_code == 201, answer.text
        return str(answer.json()["client_id"])

    async def authorize(
        self, client_id: str, challenge: str, *, redirect: str = REDIRECT, **extra: str | None
    ) -> httpx.Response:
        """An S256 authorization request; ``extra`` adds or replaces parameters (None leaves one out)."""
        params: dict[str, str | None] = {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": redirect,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "state": "st4te",
            "resource": RESOURCE,
            **extra,
        }
        return await self.http.get("/authorize", params={k: v for k, v in params.items() if v is not None})

    async def consent_page(
        self, client_id: str, challenge: str, *, redirect: str = REDIRECT, **extra: str
    ) -> tuple[httpx.Response, str, str]:
        """The authorization request's redirect followed: the page, its request key and CSRF token."""
        answer = await self.authorize(client_id, challenge, redirect=redirect, **extra)
        assert answer.status_code == 302, answer.text
        location = answer.headers["location"]
        assert location.startswith(f"{PUBLIC}/consent?request="), location
        page = await self.http.get(location.removeprefix(PUBLIC))
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
        assert csrf is not None, page.text
        return page, parse_qs(urlsplit(location).query)["request"][0], csrf.group(1)

    async def answer(
        self, key: str, csrf: str | None, *, decision: str = "allow", password: str = OWNER
    ) -> httpx.Response:
        form = {"request": key, "decision": decision, "password": password}
        if csrf is not None:
            form["csrf"] = csrf
        return await self.http.post("/consent", data=form)

    async def code(self, client_id: str, challenge: str, *, redirect: str = REDIRECT) -> str:
        _, key, csrf = await self.consent_page(client_id, challenge, redirect=redirect)
        answer = await self.answer(key, csrf)
        assert answer.status_code == 303, answer.text
        assert answer.headers["location"].startswith(f"{redirect}?"), answer.headers["location"]
        query = parse_qs(urlsplit(answer.headers["location"]).query)
        assert query["state"] == ["st4te"]
        return query["code"][0]

    async def token(self, **form: str) -> httpx.Response:
        return await self.http.post("/token", data=form)

    async def exchange(
        self, client_id: str, code: str, verifier: str, redirect: str = REDIRECT
    ) -> httpx.Response:
        return await self.token(
            grant_type="authorization_code",
            client_id=client_id,
            code=code,
            code_verifier=verifier,
            redirect_uri=redirect,
            resource=RESOURCE,
        )

    async def refresh(self, client_id: str, refresh_token: str) -> httpx.Response:
        return await self.token(grant_type="refresh_token", client_id=client_id, refresh_token=refresh_token)

    async def connect(self) -> tuple[str, dict[str, Any]]:
        """A registered client through the whole flow: its client_id and its token answer."""
        client_id = await self.register()
        verifier, challenge = pkce()
        answer = await self.exchange(client_id, await self.code(client_id, challenge), verifier)
        assert answer.status_code == 200, answer.text
        return client_id, answer.json()

    async def mcp_status(self, access_token: str) -> int:
        answer = await self.http.post("/mcp", headers={"Authorization": f"Bearer {access_token}"})
        return answer.status_code


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    return verifier, challenge


async def harness(
    state: Path, *, bounds: RemoteLimits | None = None, fetch_client: ClientFetcher | None = None
) -> AsyncIterator[Harness]:
    remote = build(
        settings(), bounds=bounds, fetch_client=fetch_client, environ={"XDG_STATE_HOME": str(state)}
    )
    app = Starlette(
        routes=[
            Route("/mcp", remote.guard(PlainTextResponse("let through")), methods=["POST"]),
            *remote.routes,
        ]
    )
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=PUBLIC) as http:
        yield Harness(http, remote, state / "cooked-mcp")
