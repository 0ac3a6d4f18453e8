"""How Cooked's failures become CookedErrors: status, code, message, hints, bounds and secrecy."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import httpx
import pytest
import respx
from canaries import assert_no_canary
from client_support import CANARIES, LOGIN_NAME, PASSWORD, SESSION_COOKIE, make_client, user_path

from cooked_mcp.cooked.sender import MAX_ERROR_BODY_BYTES
from cooked_mcp.exceptions import (
    CookedAuthError,
    CookedError,
    CookedForbidden,
    CookedInvalidRequest,
    CookedNotFound,
    CookedRateLimited,
    CookedRejected,
    CookedResponseError,
    CookedServerError,
    CookedUnavailable,
    CookedUnprocessable,
    UnexpectedAnswer,
)
from cooked_mcp.logging_setup import quiet_library_loggers

#: Status, Cooked's code and message, Retry-After, a piece of the next step, and the error's kind.
CONTRACT_ERRORS = [
    (400, "INVALID_REQUEST", "portions must be positive", None, "check the arguments", CookedInvalidRequest),
    (403, "FORBIDDEN", "Recipe belongs to bob", None, "save a copy", CookedForbidden),
    (404, "NOT_FOUND", "Recipe not found", None, "check the ID", CookedNotFound),
    (409, "CONFLICT", "Edited elsewhere", None, "check the arguments", CookedRejected),
    (422, "EXTRACTION_FAILED", "No recipe on page", None, "raw text", CookedUnprocessable),
    (429, "RATE_LIMITED", "Slow down", "7", "wait 7 seconds", CookedRateLimited),
    (500, "INTERNAL_ERROR", "Boom", None, "retry later", CookedServerError),
    (503, "UNAVAILABLE", "Maintenance", None, "retry later", CookedServerError),
]


@pytest.mark.req(
    "api-client.ERRORS.2",
    "api-client.ERRORS.3",
    "api-client.ERRORS.4",
    "api-client.ERRORS.5",
    "api-client.ERRORS.1",
)
@pytest.mark.anyio
@pytest.mark.parametrize(("status", "code", "message", "retry_after", "hint", "kind"), CONTRACT_ERRORS)
async def test_contract_errors_keep_status_code_message_and_a_next_step(
    router: respx.MockRouter,
    status: int,
    code: str,
    message: str,
    retry_after: str | None,
    hint: str,
    kind: type[CookedError],
) -> None:
    """The status decides the error's kind (so a handler catches a 404 as ``CookedNotFound``)."""
    headers = {"Retry-After": retry_after} if retry_after else {}
    router.put("/api/saved/r-1").mock(
        return_value=httpx.Response(status, json={"code": code, "message": message}, headers=headers)
    )
    async with make_client(router) as client:
        with pytest.raises(CookedError) as caught:
            await client.update_recipe("r-1", "## x", None)

    error = caught.value
    assert type(error) is kind
    assert (error.status, error.code, error.cooked_message) == (status, code, message)
    assert error.retry_after == (float(retry_after) if retry_after else None)
    assert hint in error.next_step
    text = str(error)
    assert str(status) in text and code in text and message in text and hint in text
    assert "\n" not in text
    assert len(text) < 600


@pytest.mark.req("api-client.ERRORS.5")
@pytest.mark.anyio
@pytest.mark.parametrize("header", ["Wed, 21 Oct 2015 07:28:00 GMT", "-5", "1e999", "nan", "9" * 400])
async def test_a_retry_after_that_is_no_count_of_seconds_is_not_guessed_at(
    router: respx.MockRouter, header: str
) -> None:
    router.put("/api/saved/r-1").mock(
        return_value=httpx.Response(429, json={"code": "RATE_LIMITED"}, headers={"Retry-After": header})
    )
    async with make_client(router) as client:
        with pytest.raises(CookedRateLimited) as caught:
            await client.update_recipe("r-1", "## x", None)

    assert caught.value.retry_after is None
    assert "wait a little, then retry once" in caught.value.next_step


@pytest.mark.req("api-client.ERRORS.5")
def test_with_next_step_keeps_the_kind_and_the_facts_and_is_a_new_error() -> None:
    """The one way to give an error another next step: same kind, same facts, a fresh instance."""
    error = CookedNotFound(
        "Cooked rejected the get recipe request", status=404, code="NOT_FOUND", next_step="old"
    )
    error.__traceback__ = None
    twin = error.with_next_step("read the recipe list again")

    assert twin is not error and type(twin) is CookedNotFound
    assert (twin.summary, twin.status, twin.code) == (error.summary, 404, "NOT_FOUND")
    assert twin.next_step == "read the recipe list again" and error.next_step == "old"
    assert str(twin) == twin.args[0] and str(twin).endswith("Next step: read the recipe list again.")
    assert "old" not in str(twin)


@pytest.mark.req("api-client.ERRORS.5")
def test_an_error_takes_only_its_summary_by_position() -> None:
    """Every other fact is named: ``CookedUnavailable(summary, True)`` would read as nothing."""
    for make in (
        lambda: CookedUnavailable("Cooked did not answer", True),
        lambda: UnexpectedAnswer("Cooked answered oddly", "a problem"),
        lambda: CookedNotFound("Cooked has no such recipe", 404),
    ):
        with pytest.raises(TypeError, match="positional argument"):
            make()


@pytest.mark.req("api-client.ERRORS.2", "api-client.ERRORS.3", "api-client.ERRORS.4")
@pytest.mark.anyio
@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b"<html><body><h1>502 Bad Gateway</h1></body></html>", "text/html"),
        (b"", "application/json"),
        (b'["not", "an", "object"]', "application/json"),
        (b'{"code": 5, "message": ["x"]}', "application/json"),
        (b"\xff\xfe garbage", "application/json"),
    ],
    ids=["html", "empty", "json-list", "wrong-types", "not-utf8"],
)
async def test_error_bodies_without_usable_json_still_give_the_status(
    router: respx.MockRouter, body: bytes, content_type: str
) -> None:
    router.get("/api/saved/r-1").mock(
        return_value=httpx.Response(502, content=body, headers={"Content-Type": content_type})
    )
    async with make_client(router) as client:
        with pytest.raises(CookedError) as caught:
            await client.get_recipe("r-1")

    assert caught.value.status == 502
    assert caught.value.code is None and caught.value.cooked_message is None
    assert "502" in str(caught.value)
    assert "html" not in str(caught.value).lower()


@pytest.mark.req("api-client.ERRORS.3", "api-client.ERRORS.4")
@pytest.mark.anyio
async def test_either_error_key_may_be_missing(router: respx.MockRouter) -> None:
    router.get("/api/saved/a").mock(return_value=httpx.Response(404, json={"message": "Gone"}))
    router.get("/api/saved/b").mock(return_value=httpx.Response(404, json={"code": "NOT_FOUND"}))
    async with make_client(router) as client:
        with pytest.raises(CookedError) as only_message:
            await client.get_recipe("a")
        with pytest.raises(CookedError) as only_code:
            await client.get_recipe("b")

    assert (only_message.value.code, only_message.value.cooked_message) == (None, "Gone")
    assert (only_code.value.code, only_code.value.cooked_message) == ("NOT_FOUND", None)


@pytest.mark.req("api-client.ERRORS.4", "api-client.ERRORS.6")
@pytest.mark.anyio
async def test_cookeds_message_is_cleaned_and_shortened(router: respx.MockRouter) -> None:
    hostile = "line one\nline two\r\x1b[31mred\x1b[0m\u202etxet\x00" + "A" * 2000
    router.get("/api/saved/r-1").mock(
        return_value=httpx.Response(400, json={"code": "INVALID\nREQUEST", "message": hostile})
    )
    async with make_client(router) as client:
        with pytest.raises(CookedError) as caught:
            await client.get_recipe("r-1")

    message = caught.value.cooked_message
    assert message is not None
    assert message.startswith("line one line two")
    assert len(message) <= 300
    assert all(char.isprintable() for char in message)
    assert "\u202e" not in message and "\x1b" not in message
    assert "\n" not in str(caught.value) and "\n" not in (caught.value.code or "")


@pytest.mark.req("api-client.ERRORS.6", "authentication.SECRETS.3")
@pytest.mark.anyio
async def test_credentials_echoed_by_cooked_are_redacted_from_errors(router: respx.MockRouter) -> None:
    echo = f"user {LOGIN_NAME} with password {PASSWORD} and cookie {SESSION_COOKIE} cannot do that"
    router.get("/api/saved/r-1").mock(
        return_value=httpx.Response(403, json={"code": "FORBIDDEN", "message": echo})
    )
    async with make_client(router) as client:
        with pytest.raises(CookedError) as caught:
            await client.get_recipe("r-1")

    error = caught.value
    assert_no_canary(
        CANARIES, str(error), repr(error), error.args, error.cooked_message, error.summary, error.next_step
    )
    assert "[redacted]" in (error.cooked_message or "")


class _CountingBody(httpx.AsyncByteStream):
    """A 10 MB body produced lazily, counting how much of it the client actually pulled."""

    def __init__(self, total: int, chunk: int = 4096) -> None:
        self.total = total
        self.chunk = chunk
        self.produced = 0
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while self.produced < self.total:
            self.produced += self.chunk
            yield b"x" * self.chunk

    async def aclose(self) -> None:
        self.closed = True


@pytest.mark.req("api-client.LIMITS.1", "api-client.ERRORS.2")
@pytest.mark.anyio
async def test_a_huge_error_body_is_read_only_up_to_the_bound(router: respx.MockRouter) -> None:
    body = _CountingBody(10 * 1024 * 1024)
    router.get(user_path("/shopping-list")).mock(
        return_value=httpx.Response(500, stream=body, headers={"Content-Type": "application/json"})
    )
    async with make_client(router) as client:
        with pytest.raises(CookedError) as caught:
            await client.get_shopping_list()

    assert caught.value.status == 500
    assert body.produced <= MAX_ERROR_BODY_BYTES + body.chunk
    assert body.closed
    assert len(str(caught.value)) < 600


@pytest.mark.req("api-client.ERRORS.6", "authentication.SESSION.1", "api-client.ERRORS.5")
@pytest.mark.anyio
async def test_a_redirect_is_not_followed_and_no_cookie_leaves_for_another_host(
    router: respx.MockRouter,
) -> None:
    router.get("/api/saved/r-1").mock(
        return_value=httpx.Response(302, headers={"Location": "https://evil.test/steal?x=1"})
    )
    evil = router.route(host="evil.test").mock(return_value=httpx.Response(200, json={}))
    async with make_client(router) as client:
        with pytest.raises(CookedUnavailable) as caught:
            await client.get_recipe("r-1")

    assert evil.call_count == 0
    assert caught.value.status == 302
    assert "https://cooked.test" in str(caught.value)
    assert "https://evil.test" in str(caught.value)
    assert "COOKED_BASE_URL" in caught.value.next_step
    assert "steal" not in str(caught.value)
    assert all(call.request.url.host == "cooked.test" for call in router.calls)


@pytest.mark.req("api-client.ERRORS.5", "api-client.ERRORS.6")
@pytest.mark.anyio
@pytest.mark.parametrize(
    ("failure", "words"),
    [
        (httpx.ConnectError("connection refused"), "could not be reached"),
        (httpx.ConnectTimeout("connect timeout"), "did not answer in time"),
        (httpx.ReadTimeout("read timeout"), "did not answer in time"),
        (httpx.RemoteProtocolError("peer closed"), "broke off the connection"),
    ],
)
async def test_network_failures_name_the_base_url_and_say_to_retry(
    router: respx.MockRouter, failure: Exception, words: str
) -> None:
    router.get(user_path("/recipes")).mock(side_effect=failure)
    async with make_client(router) as client:
        with pytest.raises(CookedUnavailable) as caught:
            await client.list_recipes(1, 10)

    text = str(caught.value)
    assert words in text
    assert "https://cooked.test" in text
    assert "retry later" in caught.value.next_step and "COOKED_BASE_URL" in caught.value.next_step
    assert caught.value.status is None
    assert_no_canary(CANARIES, text)


@pytest.mark.req("api-client.ERRORS.5")
@pytest.mark.anyio
async def test_a_slow_import_gets_90_seconds_and_its_timeout_says_it_may_still_finish(
    router: respx.MockRouter,
) -> None:
    """10 s to connect and 30 s to read, but 90 s for an import, which Cooked says can take a minute.

    When even that runs out, Cooked may still save the recipe, so the hint says to look before
    retrying instead of creating a duplicate.
    """
    timeouts: dict[str, dict[str, float]] = {}

    def search(request: httpx.Request) -> httpx.Response:
        timeouts["search"] = request.extensions["timeout"]
        return httpx.Response(200, json={"items": []})

    def slow_import(request: httpx.Request) -> httpx.Response:
        timeouts["import"] = request.extensions["timeout"]
        raise httpx.ReadTimeout("slow", request=request)

    router.get("/api/user/recipes/search").mock(side_effect=search)
    router.post("/api/new").mock(side_effect=slow_import)
    async with make_client(router) as client:
        await client.search_recipes("x", 1)
        with pytest.raises(CookedUnavailable) as caught:
            await client.import_url("https://example.org/r")

    assert (timeouts["search"]["connect"], timeouts["search"]["read"]) == (10.0, 30.0)
    assert (timeouts["import"]["connect"], timeouts["import"]["read"]) == (10.0, 90.0)
    assert "may still finish" in caught.value.next_step
    assert "list the recipes before retrying" in caught.value.next_step


@pytest.mark.req("api-client.RESPONSES.1", "api-client.RESPONSES.3")
@pytest.mark.anyio
async def test_a_wrong_shape_names_the_field_and_never_dumps_the_body(router: respx.MockRouter) -> None:
    items = [{"id": f"r-{n}", "title": f"SECRET-RECIPE-TEXT-{n}"} for n in range(5)]
    del items[3]["id"]
    router.get(user_path("/recipes")).mock(return_value=httpx.Response(200, json={"items": items}))
    async with make_client(router) as client:
        with pytest.raises(CookedResponseError) as caught:
            await client.list_recipes(1, 10)

    text = str(caught.value)
    assert "items[3].id: field required" in text
    assert "SECRET-RECIPE-TEXT" not in text
    assert caught.value.status == 200
    assert caught.value.next_step


@pytest.mark.req("api-client.RESPONSES.1", "api-client.RESPONSES.3")
@pytest.mark.anyio
@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b'{"items": [', "not valid JSON"),
        (b"", "is empty"),
        (b'[{"title": "x"}]', "items[0].id: field required"),
        (b'"r-1"', "not a JSON object"),
        (b'{"items": "r-1"}', "items: input should be a valid list"),
        (b'{"items": [{"id": 7}]}', "items[0].id: input should be a valid string"),
        (b"[" * 100_000, "not valid JSON"),
    ],
    ids=[
        "truncated",
        "empty",
        "bare-list-without-id",
        "string",
        "items-not-list",
        "id-not-string",
        "deeply-nested",
    ],
)
async def test_malformed_success_answers_are_response_errors(
    router: respx.MockRouter, content: bytes, words: str
) -> None:
    router.get("/api/user/recipes/search").mock(return_value=httpx.Response(200, content=content))
    async with make_client(router) as client:
        with pytest.raises(CookedResponseError) as caught:
            await client.search_recipes("x", 1)

    assert words in str(caught.value)


@pytest.mark.req("api-client.RESPONSES.1", "api-client.RESPONSES.3")
@pytest.mark.anyio
@pytest.mark.parametrize(
    "answer",
    [{}, {"recipe-id": "r-1", "extraction-id": "x-1"}, {"recipe-id": None}],
    ids=["neither", "both", "null"],
)
async def test_an_import_must_return_exactly_one_of_recipe_or_draft(
    router: respx.MockRouter, answer: dict[str, object]
) -> None:
    router.post("/api/new").mock(return_value=httpx.Response(200, json=answer))
    async with make_client(router) as client:
        with pytest.raises(CookedResponseError) as caught:
            await client.import_url("https://example.org/r")

    assert "exactly one of recipe-id and extraction-id" in str(caught.value)


@pytest.mark.req("api-client.RESPONSES.2", "api-client.RESPONSES.1")
@pytest.mark.anyio
async def test_unknown_fields_are_ignored_and_image_urls_are_dropped(router: respx.MockRouter) -> None:
    router.get("/api/saved/r-1").mock(
        return_value=httpx.Response(
            200,
            json={
                "id": "r-1",
                "description": "## Ingredients",
                "portions": 2,
                "thumbnail-url": "https://cdn.cooked.wiki/t.jpg",
                "image-url": "https://cdn.cooked.wiki/i.jpg",
                "brand-new-field": {"nested": [1, 2, 3]},
            },
        )
    )
    async with make_client(router) as client:
        recipe = await client.get_recipe("r-1")

    assert (recipe.id, recipe.description, recipe.portions, recipe.title) == (
        "r-1",
        "## Ingredients",
        2,
        None,
    )
    dumped = recipe.model_dump_json()
    assert "cdn.cooked.wiki" not in dumped and "brand-new-field" not in dumped


@pytest.mark.req("authentication.SECRETS.1", "api-client.ERRORS.6")
@pytest.mark.anyio
async def test_debug_logs_never_hold_credentials_cookies_or_bodies(
    router: respx.MockRouter, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    quiet_library_loggers()  # as cooked-mcp's logging does at start-up: httpx's own lines print URLs
    calls = {"n": 0}

    def expire_once(request: httpx.Request) -> httpx.Response:
        calls["n"] += 1
        if calls["n"] == 1:
            return httpx.Response(401, json={"code": "UNAUTHORIZED", "message": f"bad {SESSION_COOKIE}"})
        return httpx.Response(200, json={"aisles": []})

    router.get(user_path("/shopping-list")).mock(side_effect=expire_once)
    router.post(user_path("/shopping-list/ingredients")).mock(
        return_value=httpx.Response(500, json={"message": f"echo {PASSWORD}"})
    )
    async with make_client(router) as client:
        await client.get_shopping_list()
        with pytest.raises(CookedError):
            await client.add_ingredients("BODY-CANARY-eggs")

    assert any(
        "Cooked GET /api/user/{username}/shopping-list" in record.getMessage() for record in caplog.records
    )
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert_no_canary(CANARIES, logged)
    assert "BODY-CANARY" not in logged
    assert all(canary not in logged for canary in CANARIES)


@pytest.mark.req("authentication.LOGIN.4", "authentication.SECRETS.3", "api-client.ERRORS.6")
@pytest.mark.anyio
async def test_errors_carry_no_secrets_in_any_form(router: respx.MockRouter) -> None:
    router.routes["login"].mock(
        return_value=httpx.Response(
            401, json={"code": "INVALID_AUTHENTICATION", "message": f"no {LOGIN_NAME}"}
        )
    )
    async with make_client(router) as client:
        with pytest.raises(CookedAuthError) as caught:
            await client.get_shopping_list()

    error = caught.value
    assert_no_canary(CANARIES, str(error), repr(error), error.args, vars(error))


@pytest.mark.req("authentication.SECRETS.1")
def test_the_http_stack_cannot_log_urls_or_headers_even_at_debug() -> None:
    """httpx logs full URLs (with the username) at INFO and httpcore raw headers at DEBUG.

    The entry point's ``configure_logging`` quiets them (tests/hardening/test_secrets.py); the
    client itself leaves global logging alone."""
    root = logging.getLogger()
    previous = root.level
    root.setLevel(logging.DEBUG)
    for name in ("httpx", "httpcore"):
        logging.getLogger(name).setLevel(logging.NOTSET)  # as in a fresh process
    try:
        quiet_library_loggers()
        for name in ("httpx", "httpcore", "httpcore.http11", "httpcore.connection"):
            assert not logging.getLogger(name).isEnabledFor(logging.INFO), name
    finally:
        root.setLevel(previous)


@pytest.mark.req("api-client.LIMITS.1")
@pytest.mark.anyio
async def test_answers_are_asked_for_uncompressed_so_the_read_bound_is_a_byte_bound(
    router: respx.MockRouter,
) -> None:
    route = router.get("/api/saved/r-1").mock(return_value=httpx.Response(404, json={"code": "NOT_FOUND"}))
    async with make_client(router) as client:
        with pytest.raises(CookedError):
            await client.get_recipe("r-1")
    assert route.calls.last.request.headers["accept-encoding"] == "identity"
