"""The destructive actions, remove and clear, and the guard rails around them."""

from __future__ import annotations

import pytest
from sessions import cooked_session, text_of
from shopping_support import LIST, REMOVE, change, groups_now, read_list, structured

from cooked_fake import EMPTY_AISLE_ID, FakeCooked

pytestmark = pytest.mark.anyio


@pytest.mark.req(
    "shopping-list.REMOVE.1",
    "shopping-list.REMOVE.2",
    "shopping-list.VERIFICATION.1",
    "tools.RESPONSES.1",
    "tools.RESPONSES.5",
)
async def test_remove_reports_what_cooked_removed_and_what_was_not_there(fake: FakeCooked) -> None:
    async with cooked_session(fake) as client:
        result = await change(
            client, action="remove", product_group_ids=["pg-03", "pg-404", "pg-05", "pg-03"]
        )
    assert fake.api_calls() == [("POST", REMOVE, {"product-group-ids": ["pg-03", "pg-404", "pg-05"]})]
    assert structured(result) == {
        "action": "remove",
        "removed_ids": ["pg-03", "pg-05"],
        "not_found_ids": ["pg-404"],
    }
    assert text_of(result) == (
        "Removed 2 product groups for good: pg-03, pg-05. Not on the list, so not removed: pg-404."
    )
    assert groups_now(fake).keys() == {"pg-01", "pg-02", "pg-04", "pg-06"}


@pytest.mark.req("shopping-list.REMOVE.1", "shopping-list.REMOVE.2")
async def test_removing_one_group(fake: FakeCooked) -> None:
    async with cooked_session(fake) as client:
        result = await change(client, action="remove", product_group_ids=["pg-06"])
    assert structured(result) == {"action": "remove", "removed_ids": ["pg-06"], "not_found_ids": []}
    assert text_of(result) == "Removed 1 product group for good: pg-06."


@pytest.mark.req("shopping-list.SAFETY.1", "shopping-list.ACTIONS.1")
@pytest.mark.parametrize(
    "extra",
    [{}, {"product_group_ids": []}, {"product_group_ids": None}],
    ids=["missing", "empty list", "null"],
)
async def test_remove_needs_at_least_one_id_and_sends_nothing_without_one(
    fake: FakeCooked, extra: dict[str, object]
) -> None:
    async with cooked_session(fake) as client:
        result = await change(client, action="remove", **extra)
    assert result.is_error
    assert "product_group_ids" in text_of(result) and "Nothing was sent to Cooked" in text_of(result)
    assert fake.requests == []
    assert len(groups_now(fake)) == 6


@pytest.mark.req(
    "shopping-list.CLEAR.1",
    "shopping-list.CLEAR.2",
    "shopping-list.SAFETY.3",
    "shopping-list.VERIFICATION.1",
    "shopping-list.VERIFICATION.2",
)
async def test_clear_deletes_every_group_keeps_the_aisles_and_says_so(fake: FakeCooked) -> None:
    async with cooked_session(fake) as client:
        result = await change(client, action="clear")
        after = structured(await read_list(client))
    assert fake.api_calls()[0] == ("DELETE", LIST, None)
    assert len(fake.api_calls()) == 2
    assert structured(result) == {"action": "clear", "cleared": True}
    assert text_of(result).startswith("Cleared the shopping list")
    assert "cannot be restored" in text_of(result)
    assert after["product_groups"] == []
    assert EMPTY_AISLE_ID in [a["id"] for a in after["aisles"]]


@pytest.mark.req("shopping-list.SAFETY.2", "shopping-list.SAFETY.3")
async def test_clear_is_announced_as_destructive_and_only_an_explicit_action(fake: FakeCooked) -> None:
    async with cooked_session(fake) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    tool = tools["change_shopping_list"]
    assert tool.annotations is not None and tool.annotations.destructive_hint is True
    assert tool.annotations.read_only_hint is False
    destructive_part = tool.description.split("DESTRUCTIVE", 1)[1] if tool.description else ""
    assert "`clear`" in destructive_part and "`remove`" in destructive_part
    # clear has its own enum value: no other action, parameter or default means "clear".
    schema = tool.input_schema
    assert "clear" in schema["properties"]["action"]["enum"]
    assert "default" not in schema["properties"]["action"]
    assert schema["required"] == ["action"]


@pytest.mark.req("shopping-list.SAFETY.3", "shopping-list.ACTIONS.1")
async def test_clear_takes_no_other_parameters(fake: FakeCooked) -> None:
    async with cooked_session(fake) as client:
        result = await change(client, action="clear", product_group_ids=["pg-01"])
    assert result.is_error
    assert "product_group_ids is not used when action is 'clear'" in text_of(result)
    assert fake.requests == []
