"""Every action by its explicit name, with the fewest Cooked requests, and nothing for bad arguments."""

from __future__ import annotations

import socket
from typing import Any

import pytest
from hypothesis import given, settings
from mcp import Client
from pydantic import SecretStr
from sessions import cooked_session, text_of
from shopping_support import GET_LIST, INGREDIENTS, LIST, REMOVE, SELECTED, change, group_path
from strategies import valid_arguments

from cooked_fake import SEED_LOGIN, SEED_PASSWORD, FakeCooked
from cooked_mcp.app import build_server
from cooked_mcp.cooked.client import CookedClient

pytestmark = pytest.mark.anyio

PUT_GROUP = ("PUT", group_path("pg-01"))
PUT_SELECTED = ("PUT", SELECTED)
FULL_UPDATE = {"name": "Leek", "quantity": "2", "aisle_id": "produce", "selected": True}

MINIMUM_REQUESTS: list[tuple[str, dict[str, Any], list[tuple[str, str]]]] = [
    ("add", {"action": "add", "ingredients": "1 leek\n2 carrots"}, [("POST", INGREDIENTS)]),
    (
        "update_item, all four given",
        {"action": "update_item", "product_group_id": "pg-01", **FULL_UPDATE},
        [PUT_GROUP],
    ),
    (
        "update_item, one omitted",
        {
            "action": "update_item",
            "product_group_id": "pg-01",
            "name": "Leek",
            "quantity": "",
            "selected": True,
        },
        [GET_LIST, PUT_GROUP],
    ),
    ("replace_selection", {"action": "replace_selection", "product_group_ids": ["pg-01"]}, [PUT_SELECTED]),
    ("add_selection", {"action": "add_selection", "product_group_ids": ["pg-01"]}, [GET_LIST, PUT_SELECTED]),
    (
        "remove_selection",
        {"action": "remove_selection", "product_group_ids": ["pg-02"]},
        [GET_LIST, PUT_SELECTED],
    ),
    ("remove", {"action": "remove", "product_group_ids": ["pg-01"]}, [("POST", REMOVE)]),
    ("clear", {"action": "clear"}, [("DELETE", LIST)]),
]


@pytest.mark.req(
    "shopping-list.ACTIONS.1",
    "shopping-list.UPDATE_ITEM.3",
    "shopping-list.SELECTION.4",
    "shopping-list.SELECTION.8",
    "shopping-list.VERIFICATION.1",
    "shopping-list.VERIFICATION.2",
)
@pytest.mark.parametrize(
    ("arguments", "expected"),
    [pytest.param(arguments, expected, id=name) for name, arguments, expected in MINIMUM_REQUESTS],
)
async def test_each_action_sends_the_fewest_requests_cooked_needs(
    fake: FakeCooked, arguments: dict[str, Any], expected: list[tuple[str, str]]
) -> None:
    async with cooked_session(fake) as client:
        result = await change(client, **arguments)
    assert not result.is_error, text_of(result)
    assert [(m, p) for m, p, _ in fake.api_calls()] == expected
    assert result.structured_content is not None
    assert result.structured_content["action"] == arguments["action"]


@pytest.mark.req("shopping-list.ACTIONS.2", "shopping-list.ACTIONS.1")
@pytest.mark.parametrize("action", ["delete", "CLEAR", "clear_all", "tick", "", "remove "])
async def test_unknown_actions_are_rejected_before_any_cooked_request(fake: FakeCooked, action: str) -> None:
    async with cooked_session(fake) as client:
        result = await change(client, action=action, product_group_ids=["pg-01"])
    assert result.is_error
    assert "action" in text_of(result) and "Nothing was sent to Cooked" in text_of(result)
    assert fake.requests == []


@pytest.mark.req("shopping-list.ACTIONS.1", "shopping-list.ACTIONS.2")
@pytest.mark.parametrize(
    "arguments",
    [
        {},
        {"action": None},
        {"action": "add"},
        {"action": "add", "ingredients": ""},
        {"action": "add", "ingredients": " \n\t"},
        {"action": "update_item"},
        {"action": "update_item", "product_group_id": ""},
        {"action": "update_item", "product_group_id": "pg-01", "name": None},
        {"action": "add", "ingredients": "1 leek", "product_group_id": "pg-01"},
    ],
    ids=[
        "no action",
        "null action",
        "add without ingredients",
        "add with empty ingredients",
        "add with blank ingredients",
        "update without id",
        "update with empty id",
        "update with null name",
        "add with an update parameter",
    ],
)
async def test_missing_or_empty_required_parameters_send_nothing(
    fake: FakeCooked, arguments: dict[str, Any]
) -> None:
    async with cooked_session(fake) as client:
        result = await client.call_tool("change_shopping_list", arguments)
    assert result.is_error
    assert "Nothing was sent to Cooked" in text_of(result)
    assert fake.requests == []


@pytest.mark.req("shopping-list.SAFETY.3", "shopping-list.ACTIONS.1", "shopping-list.VERIFICATION.1")
@settings(max_examples=30, deadline=None)
@given(arguments=valid_arguments("change_shopping_list").filter(lambda a: a["action"] != "clear"))
async def test_no_action_but_clear_ever_deletes_the_list(
    running_fake: FakeCooked, arguments: dict[str, Any]
) -> None:
    running_fake.reset()
    async with cooked_session(running_fake) as client:
        await change(client, **arguments)
    sent = [(m, p) for m, p, _ in running_fake.api_calls()]
    assert ("DELETE", LIST) not in sent
    assert len(sent) <= 2


@pytest.mark.req("shopping-list.VERIFICATION.2")
async def test_the_real_cooked_is_out_of_reach_for_these_tests() -> None:
    """The package's network guard refuses cooked.wiki, so a misconfigured test fails instead of calling it."""
    with pytest.raises(OSError, match="test network guard"):
        socket.getaddrinfo("cooked.wiki", 443)
    cooked = CookedClient("https://cooked.wiki", SEED_LOGIN, SecretStr(SEED_PASSWORD), connect_timeout=2)
    async with cooked, Client(build_server(cooked)) as client:
        result = await client.call_tool("read", {"target": "shopping_list"})
    assert result.is_error
    assert "could not be reached" in text_of(result)
