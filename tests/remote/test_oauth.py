"""Remote mode's authorization server, in this process: metadata, PKCE, redirect URIs, codes,
tokens, resources, registration. Each adversarial case is a request a hostile client could send."""

from __future__ import annotations

import asyncio
import json
import stat
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from mcp.server.auth.provider import TokenError
from remote_support import PUBLIC, REDIRECT, RESOURCE, Harness, harness, pkce

from cooked_mcp.config.limits import RemoteLimits
from cooked_mcp.remote.store import Store

pytestmark = pytest.mark.anyio


@pytest.mark.req("extensions.REMOTE.1", "extensions.REMOTE.4", "extensions.REMOTE.3")
async def test_the_metadata_names_the_public_url_only_and_advertises_what_claude_needs(
    oauth: Harness,
) -> None:
    forged = {"Host": "evil.example", "X-Forwarded-Host": "evil.example", "X-Forwarded-Proto": "https"}
    server = (await oauth.http.get("/.well-known/oauth-authorization-server", headers=forged)).json()
    assert server["issuer"] == PUBLIC  # exactly: RFC 8414 compares it with the URL the client holds
    assert server["code_challenge_methods_supported"] == ["S256"]
    assert "none" in server["token_endpoint_auth_methods_supported"]
    assert server["client_id_metadata_document_supported"] is True
    assert server["registration_endpoint"] == f"{PUBLIC}/register"
    assert server["revocation_endpoint"] == f"{PUBLIC}/revoke"
    assert server["grant_types_supported"] == ["authorization_code", "refresh_token"]
    for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
        resource = (await oauth.http.get(path, headers=forged)).json()
        assert resource["resource"] == RESOURCE
        assert resource["authorization_servers"] == [PUBLIC]
    assert "evil" not in json.dumps(server)


@pytest.mark.req("extensions.REMOTE.1")
async def test_mcp_without_a_valid_token_is_401_naming_the_resource_metadata(oauth: Harness) -> None:
    for headers in ({}, {"Authorization": "Bearer not-a-token"}):
        answer = await oauth.http.post("/mcp", headers=headers)
        assert answer.status_code == 401
        challenge = answer.headers["www-authenticate"]
        assert challenge.startswith("Bearer ")
        assert f'resource_metadata="{PUBLIC}/.well-known/oauth-protected-resource/mcp"' in challenge


@pytest.mark.req("extensions.REMOTE.6")
async def test_pkce_is_required_s256_only_and_checked(oauth: Harness) -> None:
    client_id = await oauth.register()
    verifier, challenge = pkce()
    base = {"response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT, "state": "x"}
    missing = await oauth.http.get("/authorize", params=base)
    plain = await oauth.http.get(
        "/authorize", params={**base, "code_challenge": verifier, "code_challenge_method": "plain"}
    )
    for refused in (missing, plain):
        assert refused.status_code == 302
        assert parse_qs(urlsplit(refused.headers["location"]).query)["error"] == ["invalid_request"]
    code = await oauth.code(client_id, challenge)
    wrong = await oauth.exchange(client_id, code, pkce()[0])
    assert wrong.status_code == 400
    assert wrong.json()["error"] == "invalid_grant"
    no_verifier = await oauth.token(
        grant_type="authorization_code", client_id=client_id, code=code, redirect_uri=REDIRECT
    )
    assert no_verifier.status_code == 400


@pytest.mark.req("extensions.REMOTE.15")
@pytest.mark.parametrize(
    ("registered", "redirect"),
    [
        (REDIRECT, "http://127.0.0.1:9/callback/evil"),  # the registered one is a prefix
        (REDIRECT, "http://127.0.0.1:9/callbackx"),
        (REDIRECT, "http://127.0.0.1:9/other"),  # another path
        (REDIRECT, "http://127.0.0.1:10/other"),  # the loopback port rule frees the port only
        (REDIRECT, "http://127.0.0.1:9/c%61llback"),  # an encoded character
        (REDIRECT, "http://127.0.0.1:10/c%61llback"),
        (REDIRECT, "http://127.0.0.1:9/callback?x=1"),
        (REDIRECT, "http://127.0.0.2:9/callback"),  # another loopback address is another host
        (REDIRECT, "http://localhost:9/callback"),
        (REDIRECT, "https://127.0.0.1:9/callback"),
        ("https://app.example/callback", "https://app.example:8443/callback"),  # a port
        ("https://app.example/callback", "https://app.example/callback/x"),
        ("https://app.example/callback", "https://app.example/c%61llback"),
        ("https://app.example/callback", "https://app.example.evil/callback"),
        ("http://localhost:9/callback", "http://localhost:10/callback"),  # localhost is a name
    ],
)
async def test_a_redirect_uri_must_match_exactly(oauth: Harness, registered: str, redirect: str) -> None:
    client_id = await oauth.register(registered)
    _, challenge = pkce()
    answer = await oauth.authorize(
        client_id, challenge, redirect=redirect, state="x", code_challenge_method=None, resource=None
    )
    assert answer.status_code == 400  # shown to the person, never sent to the unregistered URI
    assert "location" not in answer.headers


@pytest.mark.req("extensions.REMOTE.15")
@pytest.mark.parametrize(
    ("registered", "redirect"),
    [
        (REDIRECT, "http://127.0.0.1:50123/callback"),
        ("http://127.0.0.1/callback", "http://127.0.0.1:50123/callback"),
        ("http://[::1]:9/callback", "http://[::1]:50123/callback"),
    ],
)
async def test_a_loopback_ip_redirect_uri_accepts_any_port(
    oauth: Harness, registered: str, redirect: str
) -> None:
    """RFC 8252 section 7.3: a native client gets its port from the system when it asks."""
    client_id = await oauth.register(registered)
    verifier, challenge = pkce()
    code = await oauth.code(client_id, challenge, redirect=redirect)
    elsewhere = await oauth.exchange(client_id, code, verifier, redirect=registered)
    assert elsewhere.status_code == 400  # the token request names the URI the code went to
    code = await oauth.code(client_id, challenge, redirect=redirect)
    answer = await oauth.exchange(client_id, code, verifier, redirect=redirect)
    assert answer.status_code == 200, answer.text


@pytest.mark.req("extensions.REMOTE.6")
async def test_a_code_used_twice_revokes_what_the_first_use_issued(oauth: Harness) -> None:
    client_id = await oauth.register()
    verifier, challenge = pkce()
    code = await oauth.code(client_id, challenge)
    first = await oauth.exchange(client_id, code, verifier)
    assert first.status_code == 200
    assert await oauth.mcp_status(first.json()["access_token"]) == 200
    second = await oauth.exchange(client_id, code, verifier)
    assert second.status_code == 400
    assert second.json()["error"] == "invalid_grant"
    assert await oauth.mcp_status(first.json()["access_token"]) == 401
    assert (await oauth.refresh(client_id, first.json()["refresh_token"])).status_code == 400


@pytest.mark.req("extensions.REMOTE.6")
async def test_a_late_code_is_refused(tmp_path: Path) -> None:
    async for late in harness(tmp_path, bounds=RemoteLimits(code_seconds=0.05)):
        client_id = await late.register()
        verifier, challenge = pkce()
        code = await late.code(client_id, challenge)
        await asyncio.sleep(0.1)
        answer = await late.exchange(client_id, code, verifier)
        assert answer.status_code == 400
        assert answer.json()["error"] == "invalid_grant"


@pytest.mark.req("extensions.REMOTE.6")
async def test_codes_live_at_most_a_minute_whatever_the_bound_says(tmp_path: Path) -> None:
    async for lax in harness(tmp_path, bounds=RemoteLimits(code_seconds=3600)):
        client_id = await lax.register()
        _, challenge = pkce()
        code = await lax.code(client_id, challenge)
        loaded = await lax.remote.provider.load_authorization_code(
            await lax.remote.provider.get_client(client_id),  # type: ignore[arg-type]
            code,
        )
        assert loaded is not None
        import time

        assert loaded.expires_at <= time.time() + 60


@pytest.mark.req("extensions.REMOTE.7")
async def test_refresh_tokens_rotate_and_a_reused_one_revokes_the_family(oauth: Harness) -> None:
    client_id, first = await oauth.connect()
    rotated = await oauth.refresh(client_id, first["refresh_token"])
    assert rotated.status_code == 200
    second = rotated.json()
    assert second["refresh_token"] != first["refresh_token"]
    assert second["access_token"] != first["access_token"]
    assert await oauth.mcp_status(second["access_token"]) == 200
    reused = await oauth.refresh(client_id, first["refresh_token"])
    assert reused.status_code == 400
    assert await oauth.mcp_status(second["access_token"]) == 401
    assert (await oauth.refresh(client_id, second["refresh_token"])).status_code == 400


@pytest.mark.req("extensions.REMOTE.7")
async def test_an_expired_access_token_is_refused_and_the_refresh_token_gets_a_new_one(
    tmp_path: Path,
) -> None:
    async for short in harness(tmp_path, bounds=RemoteLimits(access_token_seconds=1)):
        client_id, first = await short.connect()
        assert first["expires_in"] == 1
        assert await short.mcp_status(first["access_token"]) == 200
        await asyncio.sleep(2.05)  # the bearer check compares whole seconds
        assert await short.mcp_status(first["access_token"]) == 401
        renewed = (await short.refresh(client_id, first["refresh_token"])).json()
        assert await short.mcp_status(renewed["access_token"]) == 200


@pytest.mark.req("extensions.REMOTE.7", "extensions.REMOTE.14")
async def test_an_expired_refresh_token_is_refused_and_its_connection_forgotten(tmp_path: Path) -> None:
    async for short in harness(
        tmp_path, bounds=RemoteLimits(access_token_seconds=0.3, refresh_token_seconds=0.3)
    ):
        client_id, tokens = await short.connect()
        await asyncio.sleep(0.4)
        answer = await short.refresh(client_id, tokens["refresh_token"])
        assert answer.status_code == 400
        assert answer.json()["error"] == "invalid_grant"
        await short.register()  # any change of the state drops what expired
        assert Store(short.state).read().grants == {}


@pytest.mark.req("extensions.REMOTE.7")
async def test_access_tokens_live_at_most_an_hour(tmp_path: Path) -> None:
    async for lax in harness(tmp_path, bounds=RemoteLimits(access_token_seconds=86400)):
        _, tokens = await lax.connect()
        assert tokens["expires_in"] == 3600


@pytest.mark.req("extensions.REMOTE.5")
async def test_an_authorization_for_another_resource_is_refused(oauth: Harness) -> None:
    client_id = await oauth.register()
    _, challenge = pkce()
    answer = await oauth.authorize(
        client_id, challenge, state="x", code_challenge_method=None, resource="https://other.example/mcp"
    )
    assert answer.status_code == 302
    assert parse_qs(urlsplit(answer.headers["location"]).query)["error"] == ["invalid_target"]


@pytest.mark.req("extensions.REMOTE.5")
async def test_a_token_bound_to_another_resource_is_refused(oauth: Harness) -> None:
    _, tokens = await oauth.connect()
    assert await oauth.mcp_status(tokens["access_token"]) == 200
    with Store(oauth.state).change() as state:
        for grant in state.grants.values():
            grant.resource = "https://other.example/mcp"
    assert await oauth.mcp_status(tokens["access_token"]) == 401


@pytest.mark.req("extensions.REMOTE.8")
async def test_a_registration_flood_is_refused(tmp_path: Path) -> None:
    async for flooded in harness(tmp_path, bounds=RemoteLimits(registrations=3)):
        for _ in range(3):
            await flooded.register()
        answer = await flooded.http.post("/register", json={"redirect_uris": [REDIRECT]})
        assert answer.status_code == 429
        assert int(answer.headers["retry-after"]) >= 1


@pytest.mark.req("extensions.REMOTE.8")
async def test_registered_clients_are_bounded_the_oldest_unused_dropped_first(tmp_path: Path) -> None:
    async for capped in harness(tmp_path, bounds=RemoteLimits(max_clients=2)):
        connected, _ = await capped.connect()
        unused = await capped.register()
        newest = await capped.register()
        provider = capped.remote.provider
        assert await provider.get_client(connected) is not None
        assert await provider.get_client(unused) is None
        assert await provider.get_client(newest) is not None


@pytest.mark.req("extensions.REMOTE.8")
async def test_every_registered_client_is_public(oauth: Harness) -> None:
    answer = await oauth.http.post(
        "/register", json={"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "client_secret_post"}
    )
    assert answer.status_code == 201
    assert answer.json()["token_endpoint_auth_method"] == "none"
    assert "client_secret" not in answer.json()


@pytest.mark.req("extensions.REMOTE.14")
async def test_grants_survive_a_restart_in_a_private_file_holding_hashes_only(tmp_path: Path) -> None:
    async for before in harness(tmp_path):
        client_id, tokens = await before.connect()
    state_file = tmp_path / "cooked-mcp" / "remote.json"
    assert stat.S_IMODE(state_file.stat().st_mode) == 0o600
    text = state_file.read_text()
    assert tokens["access_token"] not in text
    assert tokens["refresh_token"] not in text
    async for after in harness(tmp_path):
        assert await after.mcp_status(tokens["access_token"]) == 200
        assert (await after.refresh(client_id, tokens["refresh_token"])).status_code == 200


@pytest.mark.req("extensions.REMOTE.7")
async def test_revoking_a_token_ends_its_whole_grant(oauth: Harness) -> None:
    client_id, tokens = await oauth.connect()
    # A public client sends no client_secret (mcp 2.3.0's handler alone answered that 400).
    answer = await oauth.http.post("/revoke", data={"token": tokens["refresh_token"], "client_id": client_id})
    assert answer.status_code == 200
    assert await oauth.mcp_status(tokens["access_token"]) == 401


@pytest.mark.req("extensions.REMOTE.7")
async def test_a_refresh_token_used_twice_at_once_revokes_the_family(oauth: Harness) -> None:
    """Both requests load the token before either rotates it: the second exchange is the reuse."""
    client_id, tokens = await oauth.connect()
    provider = oauth.remote.provider
    client = await provider.get_client(client_id)
    assert client is not None
    loaded = [await provider.load_refresh_token(client, tokens["refresh_token"]) for _ in range(2)]
    assert loaded[0] is not None and loaded[1] is not None
    first = await provider.exchange_refresh_token(client, loaded[0], [])
    with pytest.raises(TokenError):
        await provider.exchange_refresh_token(client, loaded[1], [])
    assert await oauth.mcp_status(first.access_token) == 401


@pytest.mark.req("extensions.REMOTE.7")
async def test_the_rotated_refresh_tokens_kept_are_bounded_and_the_newest_reuse_still_revokes(
    tmp_path: Path,
) -> None:
    async for kept in harness(tmp_path, bounds=RemoteLimits(rotated_kept=3)):
        client_id, tokens = await kept.connect()
        rotated = []
        for _ in range(6):
            rotated.append(tokens["refresh_token"])
            tokens = (await kept.refresh(client_id, tokens["refresh_token"])).json()
        state = Store(kept.state).read()
        assert sum(token.used for token in state.refresh.values()) == 3
        assert len(state.refresh) == 4
        assert (await kept.refresh(client_id, rotated[-1])).status_code == 400
        assert await kept.mcp_status(tokens["access_token"]) == 401  # the reuse revoked the family
