"""What the shopping-list tests share: Cooked's paths, the tool calls, and views of the fake's state."""

from __future__ import annotations

from typing import Any

import mcp_types as types
from guidance import data_only
from mcp import Client

from cooked_fake import SEED_USERNAME, FakeCooked

LIST = f"/api/user/{SEED_USERNAME}/shopping-list"
INGREDIENTS = f"{LIST}/ingredients"
SELECTED = f"{LIST}/selected"
REMOVE = f"{LIST}/remove"
SEED_GROUP_IDS = ("pg-01", "pg-02", "pg-03", "pg-04", "pg-05", "pg-06")
SEED_AISLE_IDS = ("produce", "dairy", "meat", "pantry", "other")

GET_LIST = ("GET", LIST)


def group_path(group_id: str) -> str:
    return f"{LIST}/product-groups/{group_id}"


async def change(client: Client, **arguments: Any) -> types.CallToolResult:
    return await client.call_tool("change_shopping_list", arguments)


async def read_list(client: Client) -> types.CallToolResult:
    return await client.call_tool("read", {"target": "shopping_list"})


def structured(result: types.CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result
    return data_only(result)


def groups_now(fake: FakeCooked) -> dict[str, dict[str, Any]]:
    """The fake's product groups as the four editable fields, aisle from nesting."""
    with fake.state.lock:
        return {
            group.id: {
                "name": group.name,
                "quantity": group.quantity,
                "aisle_id": aisle.id,
                "selected": group.selected,
            }
            for aisle in fake.state.aisles
            for group in aisle.groups
        }


def selected_in_list_order(fake: FakeCooked) -> list[str]:
    return [gid for gid, fields in groups_now(fake).items() if fields["selected"]]


def set_selection(fake: FakeCooked, ids: set[str]) -> None:
    with fake.state.lock:
        for group in fake.state.groups.values():
            group.selected = group.id in ids
