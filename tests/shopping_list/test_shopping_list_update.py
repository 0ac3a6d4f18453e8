"""change_shopping_list action=update_item: partial changes over Cooked's whole-group PUT."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sessions import cooked_session, text_of
from shopping_support import (
    GET_LIST,
    SEED_AISLE_IDS,
    SEED_GROUP_IDS,
    change,
    group_path,
    groups_now,
    read_list,
    structured,
)

from cooked_fake import EMPTY_AISLE_ID, FakeCooked

pytestmark = pytest.mark.anyio

EDITABLE = ("name", "quantity", "aisle_id", "selected")
_VISIBLE = st.characters(
    exclude_categories=("Cs", "Cc", "Cf", "Zl", "Zp", "Zs")
)  # see strategies.ANY_CHARACTER
_LINE_TEXT = st.text(_VISIBLE, min_size=1, max_size=30)
CHANGES = st.fixed_dictionaries(
    {},
    optional={
        "name": _LINE_TEXT,
        "quantity": st.just("") | _LINE_TEXT,  # "" removes the quantity
        "aisle_id": st.sampled_from(SEED_AISLE_IDS),
        "selected": st.booleans(),
    },
).filter(bool)  # update_item with nothing to change is refused (see the test at the end)


def wire(fields: dict[str, Any]) -> dict[str, Any]:
    """The four fields as Cooked's PUT body spells them."""
    return {
        "name": fields["name"],
        "quantity": fields["quantity"],
        "aisle-id": fields["aisle_id"],
        "selected": fields["selected"],
    }


@pytest.mark.req(
    "shopping-list.UPDATE_ITEM.1",
    "shopping-list.UPDATE_ITEM.2",
    "shopping-list.UPDATE_ITEM.3",
    "shopping-list.UPDATE_ITEM.4",
    "shopping-list.UPDATE_ITEM.5",
    "shopping-list.UPDATE_ITEM.8",
    "shopping-list.UPDATE_ITEM.9",
    "shopping-list.VERIFICATION.1",
    "shopping-list.VERIFICATION.2",
)
@settings(max_examples=25, deadline=None)
@given(group_id=st.sampled_from(SEED_GROUP_IDS), changes=CHANGES)
async def test_a_partial_update_sends_current_values_overridden_by_the_given_ones(
    running_fake: FakeCooked, group_id: str, changes: dict[str, Any]
) -> None:
    running_fake.reset()
    before = groups_now(running_fake)[group_id]
    async with cooked_session(running_fake) as client:
        result = await change(client, action="update_item", product_group_id=group_id, **changes)

    expected = {**before, **changes}
    if expected["quantity"] == "":
        expected["quantity"] = None
    put = ("PUT", group_path(group_id), wire(expected))
    read_first = [(*GET_LIST, None)] if len(changes) < len(EDITABLE) else []
    assert running_fake.api_calls() == [*read_first, put]
    assert groups_now(running_fake)[group_id] == expected
    output = structured(result)
    assert output["product_group_id"] == group_id
    assert output["item"]["id"] == group_id
    assert output["item"]["aisle_id"] == expected["aisle_id"]
    assert output["item"]["selected"] is expected["selected"]
    assert group_id in text_of(result)


@pytest.mark.req("shopping-list.UPDATE_ITEM.3", "shopping-list.UPDATE_ITEM.4", "shopping-list.UPDATE_ITEM.9")
async def test_an_empty_quantity_removes_it_and_an_omitted_or_null_one_is_kept(fake: FakeCooked) -> None:
    async with cooked_session(fake) as client:
        await change(client, action="update_item", product_group_id="pg-01", name="Plum tomatoes")
        kept = fake.api_calls()[-1]
        fake.clear_requests()
        await change(client, action="update_item", product_group_id="pg-01", name="Tomatoes", quantity=None)
        kept_null = fake.api_calls()[-1]
        fake.clear_requests()
        result = await change(client, action="update_item", product_group_id="pg-01", quantity="")
        cleared = fake.api_calls()[-1]
    assert kept[2] == {"name": "Plum tomatoes", "quantity": "1 can", "aisle-id": "produce", "selected": False}
    assert kept_null[2] == {"name": "Tomatoes", "quantity": "1 can", "aisle-id": "produce", "selected": False}
    assert cleared[2] == {"name": "Tomatoes", "quantity": None, "aisle-id": "produce", "selected": False}
    assert groups_now(fake)["pg-01"]["quantity"] is None
    assert "no quantity" in text_of(result) and "quantity" not in structured(result)["item"]


@pytest.mark.req("shopping-list.UPDATE_ITEM.4", "shopping-list.UPDATE_ITEM.8", "tools.SCHEMA.3")
async def test_a_null_filling_client_keeps_every_field_it_sends_as_null(fake: FakeCooked) -> None:
    """A strict-schema client sends every property, null where it has nothing to say: a move
    sent that way keeps the name, quantity and tick, and the description says how to clear
    the quantity instead ("" ), so a strict model can still do that."""
    before = groups_now(fake)["pg-01"]
    async with cooked_session(fake) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        await change(
            client, action="update_item", product_group_id="pg-01", aisle_id="dairy",
            name=None, quantity=None, selected=None, ingredients=None, recipe_id=None, product_group_ids=None,
        )  # fmt: skip
    assert before["quantity"] is not None
    assert groups_now(fake)["pg-01"] == {**before, "aisle_id": "dairy"}
    description = " ".join((tools["change_shopping_list"].description or "").split())
    assert 'quantity "" (empty string) removes the quantity' in description
    assert "fields left out or sent as null keep their current values" in description


@pytest.mark.req("shopping-list.UPDATE_ITEM.1", "shopping-list.UPDATE_ITEM.5", "tools.RESPONSES.2")
async def test_moving_an_item_into_an_empty_aisle(fake: FakeCooked) -> None:
    async with cooked_session(fake) as client:
        listed = structured(await read_list(client))
        empty = next(a["id"] for a in listed["aisles"] if a["product_group_count"] == 0)
        result = await change(client, action="update_item", product_group_id="pg-03", aisle_id=empty)
        after = structured(await read_list(client))
    assert empty == EMPTY_AISLE_ID
    assert structured(result)["item"] == {
        "id": "pg-03",
        "name": "Garlic",
        "quantity": "3 cloves",
        "selected": False,
        "aisle_id": EMPTY_AISLE_ID,
    }
    assert f"in aisle {EMPTY_AISLE_ID}" in text_of(result)
    assert "Kept the current value of: name, quantity, selected" in text_of(result)
    moved = next(g for g in after["product_groups"] if g["id"] == "pg-03")
    assert moved["aisle_id"] == EMPTY_AISLE_ID
    counts = {a["id"]: a["product_group_count"] for a in after["aisles"]}
    assert counts["produce"] == 2 and counts[EMPTY_AISLE_ID] == 1


@pytest.mark.req(
    "shopping-list.UPDATE_ITEM.6",
    "shopping-list.UPDATE_ITEM.7",
    "tools.RESPONSES.6",
)
async def test_a_missing_group_is_a_tool_error_naming_it_and_nothing_is_written(fake: FakeCooked) -> None:
    async with cooked_session(fake) as client:
        result = await change(client, action="update_item", product_group_id="pg-404", selected=True)
    assert result.is_error
    assert "'pg-404' is not on the shopping list" in text_of(result)
    assert "read target=shopping_list" in text_of(result)
    assert [(method, path) for method, path, _ in fake.api_calls()] == [GET_LIST]


@pytest.mark.req("shopping-list.UPDATE_ITEM.7", "tools.RESPONSES.6")
async def test_a_group_gone_by_the_time_of_a_full_update_is_cookeds_404_as_a_tool_error(
    fake: FakeCooked,
) -> None:
    full = {"name": "Leek", "quantity": "", "aisle_id": "produce", "selected": False}
    async with cooked_session(fake) as client:
        result = await change(client, action="update_item", product_group_id="pg-404", **full)
    assert result.is_error
    assert "404" in text_of(result) and "'pg-404' is not on the shopping list" in text_of(result)
    assert [(method, path) for method, path, _ in fake.api_calls()] == [("PUT", group_path("pg-404"))]


@pytest.mark.req("shopping-list.UPDATE_ITEM.6")
async def test_update_item_without_a_product_group_id_is_rejected_before_cooked(fake: FakeCooked) -> None:
    async with cooked_session(fake) as client:
        result = await change(client, action="update_item", name="Leek")
    assert result.is_error
    assert "product_group_id is required" in text_of(result)
    assert fake.requests == []


@pytest.mark.req("tools.RESPONSES.6")
async def test_an_unknown_aisle_is_a_tool_error_pointing_at_the_aisle_ids(fake: FakeCooked) -> None:
    async with cooked_session(fake) as client:
        result = await change(client, action="update_item", product_group_id="pg-01", aisle_id="bakery")
    assert result.is_error
    assert "400" in text_of(result) and "bakery" in text_of(result)
    assert "aisle_id listed by read target=shopping_list" in text_of(result)
    assert groups_now(fake)["pg-01"]["aisle_id"] == "produce"


@pytest.mark.req("shopping-list.UPDATE_ITEM.2", "tools.CHANGE_SHOPPING_LIST_TOOL.5", "tools.RESPONSES.6")
@pytest.mark.parametrize(
    "nothing",
    [{}, {"name": None, "aisle_id": None, "selected": None}],
    ids=["left-out", "null-filled"],
)
async def test_update_item_with_nothing_to_change_is_refused_before_any_request(
    fake: FakeCooked, nothing: dict[str, Any]
) -> None:
    """Reading the list and writing the same values back could undo a concurrent edit."""
    async with cooked_session(fake) as client:
        fake.clear_requests()
        result = await change(client, action="update_item", product_group_id="pg-01", **nothing)
    assert result.is_error
    assert "needs at least one field to change: name, quantity, aisle_id or selected" in text_of(result)
    assert fake.api_calls() == []
