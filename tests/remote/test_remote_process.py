"""The whole flow against the real process over HTTP on loopback, driven by the Python SDK's own
OAuth client (``OAuthClientProvider``): DCR and CIMD, every tool, expiry and refresh, a restart
the client carries on through without a new consent, ``--clients`` and ``--revoke``, and no
token, code or owner password in anything the server wrote."""

from __future__ import annotations

import contextlib
import re
import socket
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import anyio
import httpx
import httpx2
import pytest
from canaries import assert_no_canary
from https_support import https_documents
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from servers import COOKED_MCP, HttpServer, free_port, http_server, run_server, server_env

from cooked_fake import FakeCooked

pytestmark = pytest.mark.anyio

OWNER = "owner-canary-Zq81"
REDIRECT = "http://127.0.0.1:9/callback"
LAUNCHER = (sys.executable, str(Path(__file__).with_name("launch_remote.py")))
CALLS = [
    ("read", {"target": "recipes"}),
    ("read", {"target": "recipe", "recipe_id": "r-0001"}),
    ("read", {"target": "shopping_list"}),
    ("preview_recipe_text", {"title": "Toast", "text": "Toast the bread. Butter it."}),
    ("save_recipe", {"source": "raw_text", "title": "Toast", "text": "Toast the bread. Butter it."}),
    ("change_shopping_list", {"action": "add", "ingredients": "1 lemon"}),
]


@dataclass
class Storage:
    """The client's token storage, kept across server restarts as a real client keeps it."""

    tokens: OAuthToken | None = None
    client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


@dataclass
class Person:
    """The owner in a browser: follows the authorization URL, types the password, allows."""

    consents: int = 0
    seen: list[str] = field(default_factory=list)
    result: AuthorizationCodeResult | None = None

    async def visit(self, authorization_url: str) -> None:
        async with httpx2.AsyncClient(timeout=10) as browser:
            answer = await browser.get(authorization_url)
            assert answer.status_code == 302, answer.text
            page = await browser.get(urljoin(authorization_url, answer.headers["location"]))
            assert page.status_code == 200, page.text
            key = re.search(r'name="request" value="([^"]+)"', page.text)
            csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
            assert key and csrf
            form = {
                "request": key.group(1),
                "csrf": csrf.group(1),
                "password": "a guess",
                "decision": "allow",
            }
            guessed = await browser.post(urljoin(authorization_url, "/consent"), data=form)
            assert guessed.status_code == 401  # through the transport's own layers, which rewrite 403 and 421
            assert "That password is not right." in guessed.text
            form["password"] = OWNER
            allowed = await browser.post(urljoin(authorization_url, "/consent"), data=form)
            assert allowed.status_code == 303, allowed.text
        query = parse_qs(urlsplit(allowed.headers["location"]).query)
        self.consents += 1
        self.seen.append(query["code"][0])
        self.result = AuthorizationCodeResult(code=query["code"][0], state=query.get("state", [None])[0])

    async def callback(self) -> AuthorizationCodeResult:
        assert self.result is not None
        return self.result


@contextlib.asynccontextmanager
async def _streams(url: str, auth: OAuthClientProvider) -> AsyncIterator[Any]:
    async with (
        httpx2.AsyncClient(auth=auth, timeout=httpx2.Timeout(30, read=300)) as http,
        streamable_http_client(url, http_client=http) as streams,
    ):
        yield streams


def _provider(
    url: str, storage: Storage, person: Person, client_metadata_url: str | None = None
) -> OAuthClientProvider:
    return OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(redirect_uris=[REDIRECT], client_name="test"),  # type: ignore[list-item]
        storage=storage,
        redirect_handler=person.visit,
        callback_handler=person.callback,
        client_metadata_url=client_metadata_url,
    )


async def _use_every_tool(url: str, auth: OAuthClientProvider) -> None:
    async with Client(_streams(url, auth), read_timeout_seconds=30) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert names == {name for name, _ in CALLS} | {"delete_recipe"}
        saved = None
        for name, arguments in CALLS:
            result = await client.call_tool(name, arguments)
            assert not result.is_error, (name, result.content)
            if name == "save_recipe":
                saved = (result.structured_content or {})["recipe_id"]
        deleted = await client.call_tool("delete_recipe", {"recipe_id": saved})
        assert not deleted.is_error, deleted.content


@contextlib.contextmanager
def _remote(home: Path, fake: FakeCooked, port: int, **extra: str) -> Iterator[HttpServer]:
    env = server_env(
        home, fake.base_url, COOKED_MCP_OWNER_PASSWORD=OWNER, COOKED_MCP_LOG_LEVEL="debug", **extra
    )
    public = f"http://127.0.0.1:{port}"
    with http_server(
        env, "--http-addr", f"127.0.0.1:{port}", "--public-url", public, port=port, command=LAUNCHER
    ) as server:
        yield server


@pytest.mark.req(
    "extensions.REMOTE.1",
    "extensions.REMOTE.7",
    "extensions.REMOTE.8",
    "extensions.REMOTE.14",
    "extensions.REMOTE.16",
    "extensions.REMOTE.17",
)
async def test_a_dcr_client_connects_uses_every_tool_refreshes_and_survives_a_restart(
    fake: FakeCooked, tmp_path: Path
) -> None:
    home, port = tmp_path / "home", free_port()
    storage, person = Storage(), Person()
    url = f"http://127.0.0.1:{port}/mcp"
    outputs: list[str] = []
    auth = _provider(url, storage, person)  # one client, as claude.ai keeps its connection's state
    with _remote(home, fake, port, REMOTE_TEST_ACCESS_SECONDS="2") as server:
        await _use_every_tool(url, auth)
        assert person.consents == 1
        assert storage.client is not None and storage.client.token_endpoint_auth_method == "none"
        first = storage.tokens
        assert first is not None and first.expires_in == 2
        await anyio.sleep(2.5)  # the access token has expired: the client refreshes it
        await _use_every_tool(url, auth)
        assert person.consents == 1
        assert storage.tokens is not None and storage.tokens.access_token != first.access_token
        assert storage.tokens.refresh_token != first.refresh_token
        secrets = [first.access_token, str(first.refresh_token), storage.tokens.access_token]
    outputs.append(server.stderr())
    assert f"paste {url} into claude.ai or ChatGPT" in server.stderr()
    with _remote(home, fake, port, REMOTE_TEST_ACCESS_SECONDS="2") as restarted:
        await anyio.sleep(2.5)  # expired again, while the server was down: refreshed after the restart
        await _use_every_tool(url, auth)
        assert person.consents == 1  # no new consent after the restart
        listed = run_server({"HOME": str(home), "PATH": "/usr/bin:/bin"}, "--clients", command=(COOKED_MCP,))
        assert listed.returncode == 0
        assert "127.0.0.1" in listed.stdout
        revoked = run_server({"HOME": str(home), "PATH": "/usr/bin:/bin"}, "--revoke", "all")
        assert revoked.returncode == 0
        assert storage.tokens is not None
        async with httpx2.AsyncClient() as raw:
            answer = await raw.post(url, headers={"Authorization": f"Bearer {storage.tokens.access_token}"})
        assert answer.status_code == 401
        secrets.append(storage.tokens.access_token)
    outputs += [restarted.stderr(), listed.stdout, listed.stderr, revoked.stdout, revoked.stderr]
    assert "cooked-mcp DEBUG" in outputs[0]  # the canaries were looked for in debug logs
    assert_no_canary([OWNER, *secrets, *person.seen], *outputs)


@pytest.mark.req("extensions.REMOTE.12", "extensions.REMOTE.16", "extensions.REMOTE.7")
async def test_a_cimd_client_connects_uses_every_tool_and_revokes_its_grant(
    fake: FakeCooked, tmp_path: Path
) -> None:
    home, port = tmp_path / "home", free_port()
    with https_documents(tmp_path) as (documents, _):
        metadata_url = documents.document("/oauth/client.json")
        storage, person = Storage(), Person()
        url = f"http://127.0.0.1:{port}/mcp"
        with _remote(home, fake, port, REMOTE_TEST_CA=str(tmp_path / "ca.pem")) as server:
            await _use_every_tool(url, _provider(url, storage, person, client_metadata_url=metadata_url))
            assert storage.tokens is not None
            async with httpx2.AsyncClient() as raw:  # the client disconnects: RFC 7009, no secret
                form = {"token": str(storage.tokens.refresh_token), "client_id": metadata_url}
                revoked = await raw.post(url.removesuffix("/mcp") + "/revoke", data=form)
                assert revoked.status_code == 200
                bearer = {"Authorization": f"Bearer {storage.tokens.access_token}"}
                assert (await raw.post(url, headers=bearer)).status_code == 401
        assert storage.client is not None and storage.client.client_id == metadata_url
        assert documents.hits == {"/oauth/client.json": 1}
        assert person.consents == 1
        assert storage.tokens is not None
    assert_no_canary(
        [OWNER, storage.tokens.access_token, str(storage.tokens.refresh_token), *person.seen], server.stderr()
    )


@pytest.mark.req("extensions.REMOTE.1", "extensions.REMOTE.8")
def test_a_stranger_cannot_make_the_server_hold_big_bodies(fake: FakeCooked, tmp_path: Path) -> None:
    """Before a client has a token only a form's 64 KiB is read (Limits.MAX_FORM_BYTES), and /mcp
    answers 401 before reading a body it was promised 3 MiB of: the SDK's body limit alone would
    read the whole body first, 4 MiB per connection for anyone who asks."""
    home, port = tmp_path / "home", free_port()
    with _remote(home, fake, port):
        huge = httpx.post(
            f"http://127.0.0.1:{port}/register",
            json={"redirect_uris": [REDIRECT], "client_name": "x" * (100 * 1024)},
            timeout=10,
        )
        assert huge.status_code == 413, huge.text[:200]
        with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
            connection.sendall(
                b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
                b"Accept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n"
                % (port, 3 * 1024 * 1024)
            )
            connection.sendall(b"{" + b" " * 1024)
            head = connection.recv(4096)  # answered while 3 MiB are still owed (timeout: 5 s)
        assert head.startswith(b"HTTP/1.1 401"), head[:200]
