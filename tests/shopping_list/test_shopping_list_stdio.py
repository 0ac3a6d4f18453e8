"""An agent's whole shopping trip through the real cooked-mcp process over stdio.

Every ID the agent sends was read from an earlier result (and shown in its text too),
never taken from the seed data: this is the loop an LLM agent actually runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from servers import server_env, stdio_client
from sessions import call, text_of
from shopping_support import GET_LIST, INGREDIENTS, LIST, REMOVE, SELECTED, group_path

from cooked_fake import FakeCooked

pytestmark = pytest.mark.anyio


def done(result: types.CallToolResult) -> tuple[str, dict[str, Any]]:
    """The text and the structured output of a call that succeeded."""
    assert not result.is_error, text_of(result)
    assert result.structured_content is not None
    return text_of(result), result.structured_content


def ingredient_lines(markdown: str) -> str:
    """What an agent copies from a recipe: the bullet lines under its Ingredients heading."""
    section = markdown.split("## Ingredients", 1)[1].split("\n## ", 1)[0]
    return "\n".join(line.removeprefix("- ") for line in section.splitlines() if line.startswith("- "))


def group_named(listing: dict[str, Any], name: str) -> dict[str, Any]:
    return next(group for group in listing["product_groups"] if group["name"] == name)


@pytest.mark.req(
    "shopping-list.READ.1",
    "shopping-list.READ.9",
    "shopping-list.ADD.1",
    "shopping-list.ADD.3",
    "shopping-list.SELECTION.2",
    "shopping-list.SELECTION.3",
    "shopping-list.UPDATE_ITEM.1",
    "shopping-list.REMOVE.1",
    "shopping-list.CLEAR.1",
    "shopping-list.VERIFICATION.1",
    "shopping-list.VERIFICATION.2",
    "tools.RESPONSES.2",
)
async def test_an_agent_shops_for_a_recipe_over_stdio(tmp_path: Path) -> None:
    with FakeCooked() as fake:
        env = server_env(tmp_path, fake.base_url)
        async with stdio_client(env) as client:
            text, found = done(await call(client, "read", {"target": "recipes", "query": "pad thai"}))
            recipe_id = found["recipes"][0]["id"]
            assert recipe_id in text
            _, opened = done(await call(client, "read", {"target": "recipe", "recipe_id": recipe_id}))
            lines = ingredient_lines(opened["recipe"]["markdown"])

            text, added = done(
                await call(
                    client,
                    "change_shopping_list",
                    {"action": "add", "ingredients": lines, "recipe_id": recipe_id},
                )
            )
            assert added["added_count"] == added["lines_sent"] == 4

            text, listing = done(await call(client, "read", {"target": "shopping_list"}))
            assert recipe_id in listing["recipe_ids"]
            shrimp, eggs = group_named(listing, "Shrimp"), group_named(listing, "Eggs")
            ticked_before = [g["id"] for g in listing["product_groups"] if g["selected"]]
            assert shrimp["id"] in text and eggs["id"] in text

            _, ticked = done(
                await call(
                    client,
                    "change_shopping_list",
                    {"action": "add_selection", "product_group_ids": [shrimp["id"], eggs["id"]]},
                )
            )
            assert ticked["selected_ids"] == [*ticked_before, shrimp["id"], eggs["id"]]
            _, unticked = done(
                await call(
                    client,
                    "change_shopping_list",
                    {"action": "remove_selection", "product_group_ids": ticked_before},
                )
            )
            assert set(unticked["selected_ids"]) == {shrimp["id"], eggs["id"]}

            other_aisle = next(a["id"] for a in listing["aisles"] if a["id"] != shrimp["aisle_id"])
            text, moved = done(
                await call(
                    client,
                    "change_shopping_list",
                    {"action": "update_item", "product_group_id": shrimp["id"], "aisle_id": other_aisle},
                )
            )
            assert moved["item"] == {**shrimp, "aisle_id": other_aisle, "selected": True}
            assert f"Updated product group {shrimp['id']}" in text

            _, removed = done(
                await call(
                    client, "change_shopping_list", {"action": "remove", "product_group_ids": [eggs["id"]]}
                )
            )
            assert removed["removed_ids"] == [eggs["id"]] and removed["not_found_ids"] == []

            _, cleared = done(await call(client, "change_shopping_list", {"action": "clear"}))
            assert cleared["cleared"] is True
            _, emptied = done(await call(client, "read", {"target": "shopping_list"}))
            assert emptied["product_groups"] == []

        assert fake.login_count == 1
        shopping = [(m, p) for m, p, _ in fake.api_calls() if p.startswith(LIST)]
        assert shopping == [
            ("POST", INGREDIENTS),
            GET_LIST,
            GET_LIST,
            ("PUT", SELECTED),
            GET_LIST,
            ("PUT", SELECTED),
            GET_LIST,
            ("PUT", group_path(shrimp["id"])),
            ("POST", REMOVE),
            ("DELETE", LIST),
            GET_LIST,
        ]
