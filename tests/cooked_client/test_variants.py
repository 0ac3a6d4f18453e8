"""Every tool that reads an answer Cooked is seen to vary reads each variant like the contract's shape.

Each journey runs twice on the fake, once answering in the contract's shapes and once switched
to a variant (cooked_fake/variants.py); the agent must see exactly the same thing both times.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from mcp import Client
from pydantic import SecretStr
from sessions import cooked_session, text_of

from cooked_fake import DRAFT_ID, FOREIGN_RECIPE_ID, SEED_LOGIN, SEED_PASSWORD, FakeCooked
from cooked_mcp.app import build_server
from cooked_mcp.cooked.client import CookedClient
from cooked_mcp.cooked.decoding import decode
from cooked_mcp.cooked.endpoints import GET_SHOPPING_LIST
from cooked_mcp.cooked.models import ShoppingList
from cooked_mcp.cooked.sender import Answer

Seen = list[tuple[bool, str, Any]]
Journey = Callable[[Client], Awaitable[Seen]]


async def _calls(client: Client, *calls: tuple[str, dict[str, Any]]) -> Seen:
    seen: Seen = []
    for tool, arguments in calls:
        result = await client.call_tool(tool, arguments)
        seen.append((result.is_error, text_of(result), result.structured_content))
    return seen


async def lists(client: Client) -> Seen:
    return await _calls(
        client,
        ("read", {"target": "recipes", "limit": 5}),
        ("read", {"target": "recipes", "limit": 30, "page": 2}),
        ("read", {"target": "recipes", "limit": 30, "page": 9}),  # past the end: Cooked's empty page
        ("read", {"target": "recipes", "query": "soup"}),
        ("read", {"target": "recipes", "query": "soup", "page": 2}),
        ("read", {"target": "recipes", "query": "no such dish"}),
    )


async def flags(client: Client) -> Seen:
    return await _calls(
        client,
        ("read", {"target": "recipe", "recipe_id": "r-0001"}),
        ("read", {"target": "recipe", "recipe_id": FOREIGN_RECIPE_ID}),
        ("read", {"target": "shopping_list"}),
        ("change_shopping_list", {"action": "add_selection", "product_group_ids": ["pg-01"]}),
        ("change_shopping_list", {"action": "remove_selection", "product_group_ids": ["pg-02"]}),
        ("change_shopping_list", {"action": "update_item", "product_group_id": "pg-04", "quantity": "1 kg"}),
        ("read", {"target": "shopping_list"}),
    )


async def drafts(client: Client) -> Seen:
    seen = await _calls(
        client, ("save_recipe", {"source": "url", "url": "https://example.org/green-shakshuka-draft"})
    )
    draft = seen[0][2]["draft"]
    return seen + await _calls(
        client,
        (
            "save_recipe",
            {"source": "draft", "draft_id": draft["draft_id"], "markdown": draft["markdown"], "portions": 2},
        ),
        (
            "save_recipe",
            {"source": "draft", "draft_id": DRAFT_ID, "markdown": "## Kept\n- 1 egg", "portions": None},
        ),
    )


async def journey_twice(fake: FakeCooked, journey: Journey, *variants: str) -> tuple[Seen, Seen]:
    async with cooked_session(fake) as client:
        expected = await journey(client)
    fake.reset()
    fake.use_variants(*variants)
    async with cooked_session(fake) as client:
        return expected, await journey(client)


def raw(fake: FakeCooked, method: str, path: str, **kwargs: Any) -> httpx.Response:
    """What the fake answers on the wire, to prove the variant is really being served."""
    with httpx.Client(base_url=fake.base_url) as http:
        http.post("/api/public/login", json={"username": SEED_LOGIN, "password": SEED_PASSWORD})
        return http.request(method, path, **kwargs)


@pytest.mark.req(
    "api-client.RESPONSES.1", "api-client.RESPONSES.2", "recipes.READ.1", "recipes.READ.2", "recipes.READ.3"
)
@pytest.mark.anyio
async def test_bare_array_lists_read_like_items_lists(fake: FakeCooked) -> None:
    expected, seen = await journey_twice(fake, lists, "bare-lists")
    assert seen == expected
    assert not any(is_error for is_error, _, _ in seen)
    assert seen[2][2]["recipes"] == []  # the empty page that ends the list
    assert isinstance(raw(fake, "GET", "/api/user/recipes/search", params={"query": "soup"}).json(), list)


@pytest.mark.req(
    "api-client.RESPONSES.1",
    "api-client.RESPONSES.2",
    "recipes.READ.6-2",
    "shopping-list.READ.7",
    "shopping-list.SELECTION.9",
    "shopping-list.SELECTION.10",
    "shopping-list.UPDATE_ITEM.8",
)
@pytest.mark.anyio
async def test_question_mark_flags_read_like_plain_flags(fake: FakeCooked) -> None:
    expected, seen = await journey_twice(fake, flags, "question-flags")
    assert seen == expected
    assert not any(is_error for is_error, _, _ in seen)
    assert {seen[0][2]["recipe"]["can_edit"], seen[1][2]["recipe"]["can_edit"]} == {True, False}
    assert "can-edit?" in raw(fake, "GET", "/api/saved/r-0001").json()


@pytest.mark.req("api-client.RESPONSES.1", "recipes.SAVE.5", "recipes.SAVE.7", "recipes.SAVE.14")
@pytest.mark.anyio
async def test_extract_id_reads_like_extraction_id(fake: FakeCooked) -> None:
    expected, seen = await journey_twice(fake, drafts, "extract-id")
    assert seen == expected
    assert not any(is_error for is_error, _, _ in seen)
    assert seen[0][2]["draft"]["draft_id"].startswith("x-")
    answer = raw(fake, "POST", "/api/new", json={"url": "https://example.org/x-draft"}).json()
    assert set(answer) == {"extract-id"}


@pytest.mark.req("api-client.RESPONSES.1", "api-client.RESPONSES.2")
@pytest.mark.anyio
async def test_every_observed_variant_at_once(fake: FakeCooked) -> None:
    async def everything(client: Client) -> Seen:
        return await lists(client) + await flags(client) + await drafts(client)

    expected, seen = await journey_twice(fake, everything, "observed")
    assert seen == expected


@asynccontextmanager
async def wrong_password_session(fake: FakeCooked) -> AsyncIterator[Client]:
    cooked = CookedClient(fake.base_url, SEED_LOGIN, SecretStr("not the password"))
    async with cooked, Client(build_server(cooked)) as client:
        yield client


@pytest.mark.req("authentication.LOGIN.4", "api-client.ERRORS.1")
@pytest.mark.parametrize("variant", [(), ("login-403",)], ids=["401", "403"])
@pytest.mark.anyio
async def test_a_login_rejected_with_403_is_a_rejected_login(
    fake: FakeCooked, variant: tuple[str, ...]
) -> None:
    fake.use_variants(*variant)
    async with wrong_password_session(fake) as client:
        result = await client.call_tool("read", {"target": "shopping_list"})
    text = text_of(result)
    assert result.is_error
    assert "rejected the configured username or password" in text
    assert "COOKED_LOGIN_PASSWORD" in text
    assert [r.status for r in fake.requests] == [403 if variant else 401]


@pytest.mark.req("api-client.RESPONSES.1", "api-client.RESPONSES.3")
@pytest.mark.parametrize(
    ("method", "path", "body", "call", "words"),
    [
        pytest.param(
            "GET",
            "/api/user/recipes/search",
            [{"title": "No ID"}],
            ("read", {"target": "recipes", "query": "x"}),
            "items[0].id: field required",
            id="bare-list-without-recipe-id",
        ),
        pytest.param(
            "GET",
            "/api/saved/r-0001",
            {"id": "r-0001", "description": 5, "can-edit?": True},
            ("read", {"target": "recipe", "recipe_id": "r-0001"}),
            "description: input should be a valid string",
            id="markdown-of-wrong-type",
        ),
        pytest.param(
            "POST",
            "/api/new",
            {"extract-id": "x-1", "recipe-id": "r-1"},
            ("save_recipe", {"source": "url", "url": "https://example.org/soup"}),
            "exactly one of recipe-id and extraction-id (or extract-id)",
            id="both-a-recipe-and-a-draft",
        ),
    ],
)
@pytest.mark.anyio
async def test_tolerance_stops_where_a_tool_would_lie(
    fake: FakeCooked, method: str, path: str, body: Any, call: tuple[str, dict[str, Any]], words: str
) -> None:
    fake.use_variants("observed")
    fake.fail(method=method, path=path, status=200, body=body)
    async with cooked_session(fake) as client:
        result = await client.call_tool(*call)
    assert result.is_error
    assert words in text_of(result)


@pytest.mark.req("api-client.RESPONSES.1")
def test_an_answer_the_one_pass_decoder_refuses_is_read_as_the_json_module_reads_it() -> None:
    """Answers are parsed and validated in one pass; one that pass refuses, as a leading byte-order
    mark that the json module skips, is read the way it always was."""
    body = {"aisles": [{"id": "a", "name": "A", "product-groups": []}], "recipe-ids": ["r-1"]}
    answer = Answer(200, codecs.BOM_UTF8 + json.dumps(body).encode(), truncated=False, retry_after=None)
    assert decode(ShoppingList, answer, GET_SHOPPING_LIST) == ShoppingList.model_validate(body)
