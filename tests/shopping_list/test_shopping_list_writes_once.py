"""add, remove and clear happen once (handlers/writes.py): a cancelled call's change goes on and its
outcome answers the identical call; a lost answer is said to be unknown until the list has been read."""

from __future__ import annotations

import pytest
from mcp import Client
from sessions import client_for, text_of
from writes_support import (
    USER,
    Change,
    cancelled_then_repeated,
    kept_outcome_note,
    lost_then_looked_at,
    unknown_outcome,
)

from cooked_fake import FakeCooked
from cooked_mcp.app import build_server

pytestmark = pytest.mark.anyio

LIST = {"target": "shopping_list"}
CASES = [
    pytest.param(
        Change(
            "add",
            "change_shopping_list",
            {"action": "add", "ingredients": "2 onions\n1 lemon"},
            "POST",
            f"{USER}/shopping-list/ingredients",
            LIST,
        ),
        id="add",
        marks=pytest.mark.req("shopping-list.ADD.1", "shopping-list.VERIFICATION.1"),
    ),
    pytest.param(
        Change(
            "remove",
            "change_shopping_list",
            {"action": "remove", "product_group_ids": ["pg-01"]},
            "POST",
            f"{USER}/shopping-list/remove",
            LIST,
        ),
        id="remove",
        marks=pytest.mark.req("shopping-list.REMOVE.1", "shopping-list.VERIFICATION.1"),
    ),
    pytest.param(
        Change("clear", "change_shopping_list", {"action": "clear"}, "DELETE", f"{USER}/shopping-list", LIST),
        id="clear",
        marks=pytest.mark.req("shopping-list.CLEAR.1", "shopping-list.VERIFICATION.1"),
    ),
]


@pytest.mark.parametrize("change", CASES)
async def test_a_cancelled_list_change_goes_on_and_answers_the_identical_call_once(
    fake: FakeCooked, change: Change
) -> None:
    cooked = client_for(fake)
    async with cooked, Client(build_server(cooked)) as client:
        replay, deliberate = await cancelled_then_repeated(fake, client, change)

    assert not replay.is_error
    kept_outcome_note(replay, change.tool)
    assert change.sent(fake) == 2  # the cancelled call's, then the deliberate repeat
    assert "nothing was sent to Cooked again" not in text_of(deliberate)


@pytest.mark.parametrize("change", CASES)
async def test_a_lost_list_answer_is_unknown_until_the_list_is_read_then_a_repeat_is_carried_out(
    fake: FakeCooked, change: Change
) -> None:
    cooked = client_for(fake)
    async with cooked, Client(build_server(cooked)) as client:
        first, repeat, after_look = await lost_then_looked_at(fake, client, change)

    unknown_outcome(first, change, repeat=False)
    unknown_outcome(repeat, change, repeat=True)
    assert change.sent(fake) == 2
    assert "nothing was sent to Cooked again" not in text_of(after_look)
