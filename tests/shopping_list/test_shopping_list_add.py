"""change_shopping_list action=add: ingredient lines go to Cooked in one request, the count comes back."""

from __future__ import annotations

import pytest
from sessions import cooked_session, text_of
from shopping_support import INGREDIENTS, change, groups_now, structured

from cooked_fake import DRAFT_ID, FakeCooked

pytestmark = pytest.mark.anyio


@pytest.mark.req(
    "shopping-list.ADD.1",
    "shopping-list.ADD.2",
    "shopping-list.ADD.4",
    "shopping-list.VERIFICATION.1",
    "tools.RESPONSES.1",
    "tools.RESPONSES.5",
)
async def test_newline_separated_lines_are_added_in_one_request_and_counted(fake: FakeCooked) -> None:
    async with cooked_session(fake) as client:
        result = await change(client, action="add", ingredients="2 lemons\n  \n250 g flour\r\n")
    assert structured(result) == {"action": "add", "added_count": 2, "lines_sent": 2}
    assert text_of(result).startswith("Cooked added 2 ingredients from 2 lines sent.")
    assert "NOT added" not in text_of(result)
    # Blank lines are dropped and line ends normalised, so what is counted is exactly what is sent.
    assert fake.api_calls() == [("POST", INGREDIENTS, {"text": "2 lemons\n250 g flour"})]
    names = {fields["name"] for fields in groups_now(fake).values()}
    assert {"Lemons", "Flour"} <= names


@pytest.mark.req("shopping-list.ADD.3", "shopping-list.ADD.4", "tools.RESPONSES.2")
@pytest.mark.parametrize("recipe_id", ["r-0001", DRAFT_ID], ids=["saved recipe", "import draft"])
async def test_ingredients_can_belong_to_a_saved_recipe_or_an_import_draft(
    fake: FakeCooked, recipe_id: str
) -> None:
    async with cooked_session(fake) as client:
        result = await change(client, action="add", ingredients="4 eggs", recipe_id=recipe_id)
    assert structured(result) == {"action": "add", "added_count": 1, "lines_sent": 1}
    assert f"linked to recipe {recipe_id}" in text_of(result)
    assert "read target=shopping_list" in text_of(result)
    assert fake.api_calls() == [("POST", INGREDIENTS, {"text": "4 eggs", "recipe-id": recipe_id})]
    assert recipe_id in fake.state.recipe_ids


@pytest.mark.req("shopping-list.ADD.4", "tools.RESPONSES.1", "tools.RESPONSES.5")
async def test_lines_cooked_could_not_parse_are_reported_as_not_added(fake: FakeCooked) -> None:
    async with cooked_session(fake) as client:
        result = await change(client, action="add", ingredients="1 onion\n?? smudged\n# Sauce\n2 carrots")
    assert structured(result) == {"action": "add", "added_count": 2, "lines_sent": 4}
    assert "2 lines could not be parsed and were NOT added" in text_of(result)
    assert len(fake.api_calls()) == 1
    # An agent that reads only the structured output is warned too (structured() checked the words).
    out = result.structured_content or {}
    assert out["notice"].startswith("2 lines could not be parsed and were NOT added")
    assert "read target=shopping_list" in out["next_step"]


@pytest.mark.req("tools.RESPONSES.6", "shopping-list.ADD.3")
async def test_an_unknown_recipe_id_is_a_tool_error_saying_where_ids_come_from(fake: FakeCooked) -> None:
    async with cooked_session(fake) as client:
        result = await change(client, action="add", ingredients="1 onion", recipe_id="r-nope")
    assert result.is_error
    assert "404" in text_of(result) and "'r-nope'" in text_of(result)
    assert "read target=recipes" in text_of(result)
    assert groups_now(fake).keys() == {f"pg-0{n}" for n in range(1, 7)}
