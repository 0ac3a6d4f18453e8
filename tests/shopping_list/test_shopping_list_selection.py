"""Selection actions: the agent names only what changes; Cooked always gets the complete selected set."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sessions import cooked_session, text_of
from shopping_support import (
    GET_LIST,
    SEED_GROUP_IDS,
    SELECTED,
    change,
    selected_in_list_order,
    set_selection,
    structured,
)

from cooked_fake import SELECTED_GROUP_IDS, FakeCooked

pytestmark = pytest.mark.anyio

SUBSETS = st.sets(st.sampled_from(SEED_GROUP_IDS))
ASKED = st.lists(st.sampled_from(SEED_GROUP_IDS), min_size=1, max_size=8)


@pytest.mark.req(
    "shopping-list.SELECTION.2",
    "shopping-list.SELECTION.4",
    "shopping-list.SELECTION.5",
    "shopping-list.SELECTION.9",
    "shopping-list.VERIFICATION.1",
    "shopping-list.VERIFICATION.2",
)
@settings(max_examples=25, deadline=None)
@given(initial=SUBSETS, asked=ASKED)
async def test_add_selection_sends_the_union_current_order_first(
    running_fake: FakeCooked, initial: set[str], asked: list[str]
) -> None:
    running_fake.reset()
    set_selection(running_fake, initial)
    current = selected_in_list_order(running_fake)
    async with cooked_session(running_fake) as client:
        result = await change(client, action="add_selection", product_group_ids=asked)

    union = list(dict.fromkeys([*current, *asked]))
    assert running_fake.api_calls() == [(*GET_LIST, None), ("PUT", SELECTED, {"product-group-ids": union})]
    assert running_fake.state.selected == initial | set(asked)
    assert structured(result) == {"action": "add_selection", "selected_ids": union}
    assert text_of(result).startswith(f"Ticked now ({len(union)}): {', '.join(union)}.")


@pytest.mark.req(
    "shopping-list.SELECTION.3",
    "shopping-list.SELECTION.4",
    "shopping-list.SELECTION.5",
    "shopping-list.SELECTION.10",
    "shopping-list.VERIFICATION.1",
)
@settings(max_examples=25, deadline=None)
@given(initial=SUBSETS, asked=ASKED)
async def test_remove_selection_sends_the_difference_in_current_order(
    running_fake: FakeCooked, initial: set[str], asked: list[str]
) -> None:
    running_fake.reset()
    set_selection(running_fake, initial)
    current = selected_in_list_order(running_fake)
    async with cooked_session(running_fake) as client:
        result = await change(client, action="remove_selection", product_group_ids=asked)

    difference = [gid for gid in current if gid not in asked]
    assert running_fake.api_calls() == [
        (*GET_LIST, None),
        ("PUT", SELECTED, {"product-group-ids": difference}),
    ]
    assert running_fake.state.selected == initial - set(asked)
    assert structured(result) == {"action": "remove_selection", "selected_ids": difference}


@pytest.mark.req(
    "shopping-list.SELECTION.1",
    "shopping-list.SELECTION.5",
    "shopping-list.SELECTION.8",
    "tools.RESPONSES.2",
)
async def test_replace_selection_sends_exactly_the_given_set_without_reading(fake: FakeCooked) -> None:
    assert set(SELECTED_GROUP_IDS) == {"pg-02", "pg-04"}
    async with cooked_session(fake) as client:
        result = await change(
            client, action="replace_selection", product_group_ids=["pg-05", "pg-01", "pg-05"]
        )
    assert fake.api_calls() == [("PUT", SELECTED, {"product-group-ids": ["pg-05", "pg-01"]})]
    assert fake.state.selected == {"pg-01", "pg-05"}
    assert structured(result) == {"action": "replace_selection", "selected_ids": ["pg-05", "pg-01"]}
    assert "Every other product group is unticked" in text_of(result)


@pytest.mark.req("shopping-list.SELECTION.5")
async def test_unticking_everything_says_nothing_is_ticked(fake: FakeCooked) -> None:
    async with cooked_session(fake) as client:
        result = await change(client, action="remove_selection", product_group_ids=list(SELECTED_GROUP_IDS))
    assert structured(result) == {"action": "remove_selection", "selected_ids": []}
    assert text_of(result) == "No product group is ticked now."
    assert fake.state.selected == set()


@pytest.mark.req("tools.RESPONSES.6")
async def test_ticking_an_unknown_id_is_a_tool_error_and_the_selection_is_unchanged(fake: FakeCooked) -> None:
    async with cooked_session(fake) as client:
        result = await change(client, action="add_selection", product_group_ids=["pg-01", "pg-404"])
    assert result.is_error
    assert "400" in text_of(result) and "pg-404" in text_of(result)
    assert "read target=shopping_list" in text_of(result)
    assert fake.state.selected == set(SELECTED_GROUP_IDS)


@pytest.mark.req("shopping-list.SELECTION.6", "shopping-list.SELECTION.7", "shopping-list.ACTIONS.1")
@pytest.mark.parametrize("action", ["replace_selection", "add_selection", "remove_selection"])
@pytest.mark.parametrize(
    ("extra", "problem"),
    [
        ({}, "product_group_ids is required"),
        ({"product_group_ids": []}, "product_group_ids"),
        ({"product_group_ids": [""]}, "product_group_ids.0"),
        ({"product_group_ids": None}, "product_group_ids must not be null"),
    ],
    ids=["missing", "empty list", "empty ID", "null"],
)
async def test_selection_changes_need_product_group_ids_and_send_nothing_without_them(
    fake: FakeCooked, action: str, extra: dict[str, object], problem: str
) -> None:
    async with cooked_session(fake) as client:
        result = await change(client, action=action, **extra)
    assert result.is_error
    assert problem in text_of(result) and "Nothing was sent to Cooked" in text_of(result)
    assert fake.requests == []
