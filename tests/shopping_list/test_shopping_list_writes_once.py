"""add, remove and clear happen once (handlers/writes.py): a cancelled call's change goes on and its
outcome answers the identical call; a lost answer is said to be unknown until the list has been read."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

import pytest
from mcp import Client
from pydantic import BaseModel
from sessions import client_for, text_of
from writes_support import (
    LIST_CHANGES,
    Change,
    cancelled_then_repeated,
    lost_then_a_failed_look,
    lost_then_looked_at,
    unknown_outcome,
)

from cooked_fake import FakeCooked
from cooked_mcp.app import build_server
from cooked_mcp.handlers.writes import Write
from cooked_mcp_runtime.results import ToolCall

pytestmark = pytest.mark.anyio

PROVES = {"add": "shopping-list.ADD.1", "remove": "shopping-list.REMOVE.1", "clear": "shopping-list.CLEAR.1"}
CASES = [
    pytest.param(change, id=label, marks=pytest.mark.req(PROVES[label], "shopping-list.VERIFICATION.1"))
    for label, change in LIST_CHANGES.items()
]


@pytest.mark.parametrize(
    "scenario",
    [cancelled_then_repeated, lost_then_looked_at, lost_then_a_failed_look],
    ids=["cancelled", "answer-lost", "answer-lost-failed-look"],
)
@pytest.mark.parametrize("change", CASES)
async def test_a_list_change_is_made_once_when_cancelled_and_said_unknown_when_its_answer_is_lost(
    fake: FakeCooked, change: Change, scenario: Callable[[FakeCooked, Client, Change], Awaitable[object]]
) -> None:
    """cancelled: the identical call gets the kept outcome; answer-lost: nothing is sent until the
    list has been read (writes_support says each step)."""
    cooked = client_for(fake)
    async with cooked, Client(build_server(cooked)) as client:
        await scenario(fake, client, change)


@pytest.mark.req("shopping-list.ADD.1", "recipes.DELETE.1", "shopping-list.VERIFICATION.1")
async def test_deleting_a_recipe_leaves_an_unknown_list_change_naming_it_unknown(fake: FakeCooked) -> None:
    """Whether the list got the recipe's lines is still unknown after the recipe is gone: the
    identical add sends nothing until the list has been read."""
    base = LIST_CHANGES["add"]
    add = replace(base, arguments={**base.arguments, "recipe_id": "r-0001"})
    fake.fail_with("answer_lost", add.method, add.path, seconds=0)
    cooked = client_for(fake)
    async with cooked, Client(build_server(cooked)) as client:
        await add.call(client)
        deleted = await client.call_tool("delete_recipe", {"recipe_id": "r-0001"})
        repeat = await add.call(client)

    assert not deleted.is_error, text_of(deleted)
    unknown_outcome(repeat, add, repeat=True)
    assert add.sent(fake) == 1


@pytest.mark.parametrize(
    ("label", "spelled"),
    [
        pytest.param(
            "add",
            {"ingredients": "  2 onions\n\n1 lemon  \n"},
            id="add-blank-lines-and-spaces",
            marks=pytest.mark.req("shopping-list.ADD.1", "shopping-list.VERIFICATION.1"),
        ),
        pytest.param(
            "remove",
            {"product_group_ids": ["pg-01", "pg-01"]},
            id="remove-an-id-twice",
            marks=pytest.mark.req("shopping-list.REMOVE.1", "shopping-list.VERIFICATION.1"),
        ),
    ],
)
async def test_calls_that_send_cooked_the_same_request_are_identical_calls(
    fake: FakeCooked, label: str, spelled: dict[str, object]
) -> None:
    """Kept outcomes are keyed on what is sent to Cooked, not on how the arguments were spelled."""
    change = LIST_CHANGES[label]
    respelled = replace(change, arguments={**change.arguments, **spelled})
    fake.fail_with("answer_lost", change.method, change.path, seconds=0)
    cooked = client_for(fake)
    async with cooked, Client(build_server(cooked)) as client:
        await change.call(client)
        repeat = await respelled.call(client)

    unknown_outcome(repeat, change, repeat=True)
    assert change.sent(fake) == 1


@pytest.mark.req(
    "shopping-list.ACTIONS.1", "shopping-list.ADD.1", "shopping-list.REMOVE.1", "shopping-list.CLEAR.1"
)
async def test_only_the_actions_made_once_digest_their_arguments(
    fake: FakeCooked, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The other four set a state and go straight to Cooked: no kept-outcome key is made for them."""
    keyed: list[str] = []
    of = Write.of

    def counted(call: ToolCall, arguments: BaseModel, **options: Any) -> Write:
        keyed.append(arguments.model_dump()["action"])
        return of(call, arguments, **options)

    monkeypatch.setattr(Write, "of", counted)
    every_action: list[dict[str, Any]] = [
        {"action": "add", "ingredients": "1 lemon"},
        {"action": "update_item", "product_group_id": "pg-01", "quantity": "3"},
        {"action": "replace_selection", "product_group_ids": ["pg-01"]},
        {"action": "add_selection", "product_group_ids": ["pg-02"]},
        {"action": "remove_selection", "product_group_ids": ["pg-01"]},
        {"action": "remove", "product_group_ids": ["pg-02"]},
        {"action": "clear"},
    ]
    cooked = client_for(fake)
    async with cooked, Client(build_server(cooked)) as client:
        for arguments in every_action:
            result = await client.call_tool("change_shopping_list", arguments)
            assert not result.is_error, text_of(result)

    assert keyed == ["add", "remove", "clear"]
