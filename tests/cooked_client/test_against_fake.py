"""The client against the fake Cooked over real HTTP on 127.0.0.1: sessions, scoping, faults."""

from __future__ import annotations

import asyncio
import logging

import pytest
from canaries import assert_no_canary
from client_support import CANARIES
from sessions import client_for

from cooked_fake import SEED_LOGIN, SEED_PASSWORD, SEED_USERNAME, FakeCooked
from cooked_mcp.cooked.sender import MAX_ERROR_BODY_BYTES
from cooked_mcp.exceptions import CookedAuthError, CookedError, CookedResponseError, CookedUnavailable
from cooked_mcp.logging_setup import quiet_library_loggers

LOGIN = "/api/public/login"


def _non_login(fake: FakeCooked) -> list[tuple[str, str, int]]:
    return [(r.method, r.path, r.status) for r in fake.api_requests()]


@pytest.mark.req(
    "authentication.LOGIN.5",
    "authentication.LOGIN.6",
    "api-client.REQUESTS.5",
    "authentication.VERIFICATION.1",
    "api-client.VERIFICATION.1",
    "authentication.CREDENTIALS.10",
)
@pytest.mark.anyio
async def test_user_scoped_paths_use_the_canonical_username(fake: FakeCooked) -> None:
    assert SEED_LOGIN != SEED_USERNAME
    async with client_for(fake) as client:
        await client.list_recipes(1, 5)
        shopping = await client.get_shopping_list()
        await client.add_ingredients("2 eggs")

    assert shopping.aisles
    user_paths = [path for _, path, _ in _non_login(fake)]
    assert user_paths == [
        f"/api/user/{SEED_USERNAME}/recipes",
        f"/api/user/{SEED_USERNAME}/shopping-list",
        f"/api/user/{SEED_USERNAME}/shopping-list/ingredients",
    ]
    assert fake.login_count == 1
    login = fake.requests[0]
    assert login.path == LOGIN and login.json == {"username": SEED_LOGIN, "password": SEED_PASSWORD}


@pytest.mark.req(
    "authentication.SESSION.3",
    "authentication.SESSION.4",
    "authentication.SESSION.5",
    "authentication.VERIFICATION.1",
)
@pytest.mark.anyio
async def test_an_expired_session_is_renewed_with_exactly_one_login_for_20_concurrent_calls(
    fake: FakeCooked,
) -> None:
    async with client_for(fake) as client:
        await client.get_shopping_list()
        assert fake.login_count == 1
        fake.expire_sessions()
        fake.delay = 0.02
        results = await asyncio.gather(*(client.get_recipe("r-0001") for _ in range(20)))

    assert all(recipe.id == "r-0001" for recipe in results)
    assert fake.login_count == 2
    statuses = [status for method, path, status in _non_login(fake) if path == "/api/saved/r-0001"]
    assert statuses.count(200) == 20
    assert statuses.count(401) == 20  # all 20 really were rejected together, yet only one login followed


@pytest.mark.req("authentication.SESSION.6", "authentication.VERIFICATION.1", "authentication.SECRETS.3")
@pytest.mark.anyio
async def test_a_persistently_rejected_session_costs_exactly_two_logins(fake: FakeCooked) -> None:
    fake.reject_sessions = True
    async with client_for(fake) as client:
        with pytest.raises(CookedAuthError) as caught:
            await client.get_shopping_list()

    assert fake.login_count == 2
    assert _non_login(fake) == [("GET", f"/api/user/{SEED_USERNAME}/shopping-list", 401)] * 2
    assert SEED_PASSWORD not in str(caught.value) and SEED_LOGIN not in str(caught.value)


@pytest.mark.req("authentication.LOGIN.4", "authentication.SECRETS.3", "authentication.VERIFICATION.1")
@pytest.mark.anyio
async def test_a_wrong_password_is_an_auth_error_without_the_password(fake: FakeCooked) -> None:
    wrong = "CANARY-PW-7f3a"
    async with client_for(fake, password=wrong) as client:
        with pytest.raises(CookedAuthError) as caught:
            await client.list_recipes(1, 5)

    assert fake.login_count == 1
    assert _non_login(fake) == []
    assert caught.value.code == "INVALID_AUTHENTICATION"
    assert wrong not in str(caught.value) and SEED_LOGIN not in str(caught.value)
    assert "COOKED_LOGIN_PASSWORD" in str(caught.value)


@pytest.mark.req("authentication.SESSION.9", "authentication.VERIFICATION.1")
@pytest.mark.anyio
async def test_a_restarted_client_logs_in_again(fake: FakeCooked) -> None:
    async with client_for(fake) as client:
        await client.get_shopping_list()
    async with client_for(fake) as client:
        await client.get_shopping_list()

    assert fake.login_count == 2


@pytest.mark.req("authentication.SECRETS.1", "api-client.ERRORS.6", "authentication.VERIFICATION.1")
@pytest.mark.anyio
async def test_debug_logs_over_real_http_hold_no_username_password_or_cookie(
    fake: FakeCooked, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    quiet_library_loggers()  # as the entry point's configure_logging does: the client leaves global logging alone
    async with client_for(fake) as client:
        await client.get_shopping_list()
        fake.expire_sessions()
        await client.list_recipes(1, 3)
        cookies = client._sender.cookie_values()

    assert cookies
    logged = "\n".join(f"{record.name} {record.getMessage()}" for record in caplog.records)
    assert "cooked_mcp.cooked" in logged
    for secret in (SEED_LOGIN, SEED_PASSWORD, f"/{SEED_USERNAME}/", *cookies):
        assert secret not in logged


@pytest.mark.req(
    "api-client.ERRORS.2",
    "api-client.ERRORS.3",
    "api-client.ERRORS.4",
    "api-client.ERRORS.5",
    "api-client.VERIFICATION.1",
)
@pytest.mark.anyio
async def test_contract_errors_from_the_fake(fake: FakeCooked) -> None:
    async with client_for(fake) as client:
        with pytest.raises(CookedError) as not_found:
            await client.get_recipe("r-9999")
        with pytest.raises(CookedError) as forbidden:
            await client.delete_recipe("r-0046")
        fake.fail_with("rate_limited", path="/api/user/recipes/search")
        with pytest.raises(CookedError) as limited:
            await client.search_recipes("soup", 1)

    assert (not_found.value.status, not_found.value.code) == (404, "NOT_FOUND")
    assert not_found.value.cooked_message
    assert (forbidden.value.status, forbidden.value.code) == (403, "FORBIDDEN")
    assert "copy" in forbidden.value.next_step
    assert (limited.value.status, limited.value.code, limited.value.retry_after) == (429, "RATE_LIMITED", 7.0)


@pytest.mark.req("api-client.LIMITS.1", "api-client.ERRORS.2", "api-client.VERIFICATION.1")
@pytest.mark.anyio
async def test_a_10_mb_error_body_is_not_read_whole(fake: FakeCooked) -> None:
    fake.fail_with("huge_error", path=f"/api/user/{SEED_USERNAME}/shopping-list")
    async with client_for(fake) as client:
        with pytest.raises(CookedError) as caught:
            await client.get_shopping_list()
        assert len(caught.value.cooked_message or "") <= 300
        # The connection was dropped, not drained: the next call still works.
        assert (await client.get_shopping_list()).aisles

    assert caught.value.status == 500
    assert len(str(caught.value)) < MAX_ERROR_BODY_BYTES // 100


@pytest.mark.req("api-client.ERRORS.2", "api-client.VERIFICATION.1")
@pytest.mark.anyio
@pytest.mark.parametrize(("kind", "status"), [("html_502", 502), ("empty_503", 503)])
async def test_proxy_error_pages_give_just_the_status(fake: FakeCooked, kind: str, status: int) -> None:
    fake.fail_with(kind, path="/api/saved/r-0001")
    async with client_for(fake) as client:
        with pytest.raises(CookedError) as caught:
            await client.get_recipe("r-0001")

    assert (caught.value.status, caught.value.code, caught.value.cooked_message) == (status, None, None)
    assert "retry later" in caught.value.next_step


@pytest.mark.req("api-client.RESPONSES.3", "api-client.VERIFICATION.1")
@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["malformed_json", "wrong_shape"])
async def test_broken_success_answers_are_response_errors(fake: FakeCooked, kind: str) -> None:
    fake.fail_with(kind, path=f"/api/user/{SEED_USERNAME}/recipes")
    async with client_for(fake) as client:
        with pytest.raises(CookedResponseError) as caught:
            await client.list_recipes(1, 5)

    assert "Shaksh" not in str(caught.value)


@pytest.mark.req("api-client.ERRORS.5", "api-client.VERIFICATION.1")
@pytest.mark.anyio
async def test_a_body_cut_off_mid_answer_is_reported_as_unavailable(fake: FakeCooked) -> None:
    fake.fail_with("cut_off", path=f"/api/user/{SEED_USERNAME}/recipes")
    async with client_for(fake) as client:
        with pytest.raises(CookedUnavailable) as caught:
            await client.list_recipes(1, 5)

    assert fake.base_url in str(caught.value)


@pytest.mark.req("api-client.RESPONSES.2", "api-client.VERIFICATION.1")
@pytest.mark.anyio
async def test_unknown_fields_everywhere_do_not_break_any_read(fake: FakeCooked) -> None:
    fake.fail_with("extra_fields", times=None)
    async with client_for(fake) as client:
        recipes = await client.list_recipes(1, 5)
        recipe = await client.get_recipe("r-0001")
        shopping = await client.get_shopping_list()
        draft = await client.get_draft("x-0001")

    assert len(recipes) == 5 and recipe.title == "Shakshuka" and shopping.aisles and draft.id == "x-0001"


@pytest.mark.req("api-client.ERRORS.6", "authentication.SESSION.1", "api-client.VERIFICATION.1")
@pytest.mark.anyio
async def test_a_redirect_to_another_host_is_refused_and_the_cookie_stays_home(fake: FakeCooked) -> None:
    fake.fail_with("redirect_other_host", path="/api/saved/r-0001")
    async with client_for(fake) as client:
        await client.get_shopping_list()
        with pytest.raises(CookedUnavailable) as caught:
            await client.get_recipe("r-0001")

    assert caught.value.status == 302
    assert "127.0.0.2" in str(caught.value)
    assert [path for _, path, _ in _non_login(fake)].count("/api/saved/r-0001") == 1
    assert_no_canary(CANARIES, str(caught.value))


@pytest.mark.req("api-client.REQUESTS.3", "api-client.REQUESTS.4", "api-client.VERIFICATION.1")
@pytest.mark.anyio
async def test_hostile_ids_and_queries_reach_the_fake_as_data(fake: FakeCooked) -> None:
    async with client_for(fake) as client:
        with pytest.raises(CookedError) as caught:
            await client.get_recipe("../user/alice/shopping-list")
        await client.search_recipes("soup&page=99 #x", 1)

    assert caught.value.status == 404
    paths = [(r.path, r.query) for r in fake.api_requests()]
    assert paths[0] == ("/api/saved/..%2Fuser%2Falice%2Fshopping-list", {})
    assert paths[1] == ("/api/user/recipes/search", {"query": ["soup&page=99 #x"], "page": ["1"]})


@pytest.mark.req("api-client.REQUESTS.1", "api-client.REQUESTS.2", "api-client.VERIFICATION.1")
@pytest.mark.anyio
async def test_every_request_to_the_fake_accepts_json_and_bodies_are_json(fake: FakeCooked) -> None:
    async with client_for(fake) as client:
        preview = await client.preview_recipe("Toast", "2 slices bread\nToast them.")
        recipe_id = await client.save_recipe(preview.title, preview.description, preview.portions)
        await client.update_recipe(recipe_id, preview.description + "\nMore.", 2)
        await client.delete_recipe(recipe_id)
        await client.clear_shopping_list()

    for request in fake.requests:
        assert request.headers["accept"] == "application/json"
        if request.body:
            assert request.headers["content-type"] == "application/json"
            assert request.json is not None
        else:
            assert "content-type" not in request.headers
