"""Cooked's refusals and failures as tool errors an agent can act on, and IDs that stay one path segment."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client
from pydantic import SecretStr
from recipe_support import failed, ok, segment, session_cookies
from sessions import call, cooked_session, text_of

from cooked_fake import DRAFT_ID, FOREIGN_RECIPE_ID, SEED_LOGIN, SEED_PASSWORD, FakeCooked
from cooked_mcp.app import build_server
from cooked_mcp.cooked.client import CookedClient

pytestmark = pytest.mark.anyio

EDIT = {"markdown": "## Steps\n1. Eat", "portions": None}


@pytest.mark.req("api-client.ERRORS.1", "api-client.ERRORS.5", "tools.RESPONSES.6")
@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        pytest.param(
            "read", {"target": "recipe", "recipe_id": "r-9999"}, marks=pytest.mark.req("recipes.READ.5")
        ),
        pytest.param("delete_recipe", {"recipe_id": "r-9999"}, marks=pytest.mark.req("recipes.DELETE.1")),
        pytest.param(
            "save_recipe",
            {"source": "existing", "recipe_id": "r-9999", **EDIT},
            marks=pytest.mark.req("recipes.SAVE.8"),
        ),
    ],
)
async def test_an_unknown_recipe_id_is_a_404_that_points_to_the_recipe_list(
    fake: FakeCooked, tool: str, arguments: dict[str, Any]
) -> None:
    text = failed(await call(fake, tool, arguments))

    assert "(404 NOT_FOUND)" in text
    assert "Cooked says: No recipe with id 'r-9999'" in text
    assert "Next step: no saved recipe has this ID" in text and "read target=recipes" in text


@pytest.mark.req("api-client.ERRORS.1", "api-client.ERRORS.5", "tools.RESPONSES.6", "recipes.SAVE.7")
async def test_an_unknown_draft_id_is_a_404_that_says_how_to_get_a_new_draft(fake: FakeCooked) -> None:
    text = failed(await call(fake, "save_recipe", {"source": "draft", "draft_id": "x-9999", **EDIT}))

    assert "(404 NOT_FOUND)" in text and "x-9999" in text
    assert "a draft is gone once saved" in text and "save_recipe source=url" in text


@pytest.mark.req("api-client.ERRORS.1", "api-client.ERRORS.5", "tools.RESPONSES.6")
@pytest.mark.parametrize(
    ("tool", "arguments", "next_step"),
    [
        pytest.param(
            "delete_recipe",
            {"recipe_id": FOREIGN_RECIPE_ID},
            "cannot delete it (only its owner can) and nothing was deleted; tell the person so",
            marks=pytest.mark.req("recipes.DELETE.1"),
        ),
        pytest.param(
            "save_recipe",
            {"source": "existing", "recipe_id": FOREIGN_RECIPE_ID, **EDIT},
            "cannot change it; to keep an edited version, save a copy with save_recipe source=prepared",
            marks=pytest.mark.req("recipes.SAVE.8"),
        ),
    ],
)
async def test_someone_elses_recipe_is_a_403_that_says_so(
    fake: FakeCooked, tool: str, arguments: dict[str, Any], next_step: str
) -> None:
    """Issue 42 item 15: each operation gets the next step that fits it. Before, a refused
    deletion also advised saving an edited copy, which deletes nothing."""
    before = fake.state.recipes[FOREIGN_RECIPE_ID].description

    text = failed(await call(fake, tool, arguments))

    assert "(403 FORBIDDEN)" in text
    assert "belongs to someone else" in text and next_step in text
    assert ("save_recipe" in text) == (tool == "save_recipe"), text
    assert text.count("someone else") == 1, text  # Cooked's message says it; the next step does not repeat it
    assert fake.state.recipes[FOREIGN_RECIPE_ID].description == before


@pytest.mark.req("api-client.ERRORS.1", "api-client.ERRORS.5", "tools.RESPONSES.6")
@pytest.mark.parametrize(
    ("arguments", "path_regex", "operation"),
    [
        ({"target": "recipes"}, r"/recipes$", "list recipes"),
        ({"target": "recipes", "query": "soup"}, r"/recipes/search$", "search recipes"),
        ({"target": "shopping_list"}, r"/shopping-list$", "get shopping list"),
    ],
)
async def test_a_403_on_a_listing_names_the_operation_not_someone_elses_recipe(
    fake: FakeCooked, arguments: dict[str, Any], path_regex: str, operation: str
) -> None:
    """Issue 30 item 5. Before: every 403 said "this recipe belongs to someone else", a listing's too."""
    fake.fail(method="GET", path_regex=path_regex, status=403)

    text = failed(await call(fake, "read", arguments))

    assert "(403 FORBIDDEN)" in text
    assert "someone else" not in text and "this recipe" not in text
    assert f"Cooked does not let this account {operation}" in text and "cooked-mcp --check" in text


@pytest.mark.req("api-client.ERRORS.1", "api-client.ERRORS.5", "tools.RESPONSES.6", "recipes.SAVE.3")
async def test_a_page_without_a_recipe_is_a_422_that_suggests_raw_text(fake: FakeCooked) -> None:
    url = "https://example.org/about-us"
    fake.set_import_result(url, "fail")

    text = failed(await call(fake, "save_recipe", {"source": "url", "url": url}))

    assert "(422 EXTRACTION_FAILED)" in text
    assert "Cooked found no recipe on that page" in text and "save_recipe source=raw_text" in text
    assert fake.api_calls() == [("POST", "/api/new", {"url": url})]


EVERY_RECIPE_TOOL: list[tuple[str, dict[str, Any]]] = [
    ("read", {"target": "recipes", "query": "soup"}),
    ("read", {"target": "recipe", "recipe_id": "r-0001"}),
    ("preview_recipe_text", {"title": "T", "text": "2 eggs"}),
    ("save_recipe", {"source": "prepared", "title": "T", "markdown": "M", "portions": 1}),
    ("save_recipe", {"source": "url", "url": "https://example.org/soup"}),
    ("delete_recipe", {"recipe_id": "r-0001"}),
]


@pytest.mark.req("api-client.ERRORS.1", "api-client.ERRORS.5", "tools.RESPONSES.6")
@pytest.mark.parametrize(
    ("fault", "expected"),
    [
        ("rate_limited", ["(429 RATE_LIMITED)", "Too many requests", "wait 7 seconds, then retry once"]),
        ("rate_limited_no_retry_after", ["(429 RATE_LIMITED)", "wait a little, then retry once"]),
        ("html_502", ["(502)", "problem on Cooked's side; retry later"]),
        ("empty_503", ["(503)", "problem on Cooked's side; retry later"]),
    ],
)
async def test_rate_limits_and_outages_say_when_to_retry(
    fake: FakeCooked, fault: str, expected: list[str]
) -> None:
    fake.fail_with(fault, path_regex="^/api/(?!public)", times=None)
    async with cooked_session(fake) as client:
        texts = [failed(await client.call_tool(tool, arguments)) for tool, arguments in EVERY_RECIPE_TOOL]

    for text in texts:
        assert all(phrase in text for phrase in expected), text
        assert "<html" not in text
    assert fake.state.saved_count == 0 and "r-0001" in fake.state.recipes


@pytest.mark.req("api-client.ERRORS.1", "api-client.ERRORS.5", "tools.RESPONSES.6")
async def test_a_500_is_reported_and_the_next_call_works(fake: FakeCooked) -> None:
    fake.fail("GET", "/api/saved/r-0001", status=500)
    async with cooked_session(fake) as client:
        first = await client.call_tool("read", {"target": "recipe", "recipe_id": "r-0001"})
        second = await client.call_tool("read", {"target": "recipe", "recipe_id": "r-0001"})

    text = failed(first)
    assert "Cooked failed while handling the get recipe request (500 INTERNAL_ERROR)" in text
    assert "Cooked says: Injected fault 500" in text and "retry later" in text
    ok(second, "read")


@pytest.mark.req("api-client.ERRORS.1", "tools.RESPONSES.6")
async def test_an_answer_that_breaks_the_contract_is_a_tool_error_not_a_crash(fake: FakeCooked) -> None:
    fake.fail_with("wrong_shape", "GET", "/api/saved/r-0001")

    text = failed(await call(fake, "read", {"target": "recipe", "recipe_id": "r-0001"}))

    assert "get recipe" in text
    assert "failed inside cooked-mcp" not in text


# --- IDs are data, never path syntax ------------------------------------------------------------

AWKWARD_IDS = ["a/b", "../r-0001", "r-0001/../../recipes", "r?x=1", "100%", "50%2F50", "a b#c", "ün", "..."]


@pytest.mark.req("tools.RESPONSES.6", "api-client.REQUESTS.3")
@pytest.mark.parametrize(
    ("tool", "extra", "method", "template"),
    [
        pytest.param(
            "read", {"target": "recipe"}, "GET", "/api/saved/{}", marks=pytest.mark.req("recipes.READ.5")
        ),
        pytest.param(
            "delete_recipe", {}, "DELETE", "/api/saved/{}", marks=pytest.mark.req("recipes.SAFETY.3")
        ),
        pytest.param(
            "save_recipe",
            {"source": "existing", **EDIT},
            "PUT",
            "/api/saved/{}",
            marks=pytest.mark.req("recipes.SAFETY.2"),
        ),
        pytest.param(
            "save_recipe",
            {"source": "draft", **EDIT},
            "POST",
            "/api/extract/{}/save",
            marks=pytest.mark.req("recipes.SAFETY.1"),
        ),
    ],
)
async def test_an_id_stays_one_percent_encoded_path_segment(
    fake: FakeCooked, tool: str, extra: dict[str, Any], method: str, template: str
) -> None:
    key = "draft_id" if extra.get("source") == "draft" else "recipe_id"
    async with cooked_session(fake) as client:
        texts = [failed(await client.call_tool(tool, {**extra, key: rid})) for rid in AWKWARD_IDS]

    assert [(m, path) for m, path, _ in fake.api_calls()] == [
        (method, template.format(segment(rid))) for rid in AWKWARD_IDS
    ]
    assert not any("/" in segment(rid) or "?" in segment(rid) for rid in AWKWARD_IDS)
    assert all("(404 NOT_FOUND)" in text for text in texts)
    assert len(fake.state.recipes) == 46


@pytest.mark.req("tools.RESPONSES.6", "recipes.SAFETY.3")
@pytest.mark.parametrize("recipe_id", [".", ".."])
async def test_dot_ids_are_refused_without_a_request(fake: FakeCooked, recipe_id: str) -> None:
    text = failed(await call(fake, "delete_recipe", {"recipe_id": recipe_id}))

    assert "Nothing was sent to Cooked" in text and "not a valid Cooked ID" in text
    assert fake.api_calls() == []


# --- secrets ------------------------------------------------------------------------------------


@pytest.mark.req("tools.RESPONSES.7", "api-client.ERRORS.1")
async def test_no_result_or_error_carries_the_session_cookie_or_credentials(fake: FakeCooked) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("read", {"target": "recipes"}),
        ("read", {"target": "recipe", "recipe_id": "r-0001"}),
        ("read", {"target": "recipe", "recipe_id": "r-9999"}),
        ("save_recipe", {"source": "url", "url": "https://example.org/draft/pie"}),
        ("save_recipe", {"source": "existing", "recipe_id": FOREIGN_RECIPE_ID, **EDIT}),
        ("save_recipe", {"source": "draft", "draft_id": DRAFT_ID, **EDIT}),
        ("delete_recipe", {"recipe_id": "r-0002"}),
    ]
    results = []
    async with cooked_session(fake) as client:
        for number, (tool, arguments) in enumerate(calls):
            if number % 3 == 2:
                fake.expire_sessions()  # a fresh login (and cookie) mid-way
            results.append(await client.call_tool(tool, arguments))

    cookies = session_cookies(fake)
    assert len(cookies) >= 2 and fake.login_count >= 2
    for result in results:
        seen = text_of(result) + repr(result.structured_content)
        assert SEED_PASSWORD not in seen
        assert not any(cookie in seen for cookie in cookies)


@pytest.mark.req("recipes.VERIFICATION.2", "tools.RESPONSES.6")
async def test_recipe_tests_cannot_reach_the_real_cooked(fake: FakeCooked) -> None:
    cooked = CookedClient("https://cooked.wiki", SEED_LOGIN, SecretStr(SEED_PASSWORD))
    async with cooked, Client(build_server(cooked)) as client:
        result = await client.call_tool("read", {"target": "recipes"})

    assert "Cooked at https://cooked.wiki could not be reached" in failed(result)
