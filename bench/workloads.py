"""The tool calls whose overhead is measured, each with the direct Cooked requests it stands for."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from .clients import DirectCooked

RECIPE_ID = "r-0001"


class ToolCaller(Protocol):
    """The SDK client wrapper (clients.McpClient) or a minimal one (lean.py)."""

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> object: ...


SELECTION = ("pg-01",)


@dataclass(frozen=True)
class Workload:
    name: str  # as the report shows it
    tool: str
    arguments: Mapping[str, Any]
    direct_name: str  # the Cooked requests made directly instead
    direct: Callable[[DirectCooked], Awaitable[object]]

    def mcp_call(self, client: ToolCaller) -> Callable[[], Awaitable[object]]:
        return lambda: client.call(self.tool, self.arguments)

    def direct_call(self, cooked: DirectCooked) -> Callable[[], Awaitable[object]]:
        return lambda: self.direct(cooked)

    @property
    def replay_tool(self) -> str:
        """The bare SDK server's tool that answers with this call's recorded result."""
        return "replay_" + re.sub(r"[^A-Za-z0-9]+", "_", self.name)


READ_RECIPE = Workload(
    "read target=recipe",
    "read",
    {"target": "recipe", "recipe_id": RECIPE_ID},
    f"GET /api/saved/{RECIPE_ID}",
    lambda cooked: cooked.get_recipe(RECIPE_ID),
)
READ_SHOPPING_LIST = Workload(
    "read target=shopping_list",
    "read",
    {"target": "shopping_list"},
    "GET /api/user/alice/shopping-list",
    lambda cooked: cooked.get_shopping_list(),
)
ADD_SELECTION = Workload(
    "change_shopping_list action=add_selection",
    "change_shopping_list",
    {"action": "add_selection", "product_group_ids": list(SELECTION)},
    "GET shopping-list + PUT shopping-list/selected",
    lambda cooked: cooked.add_selection(SELECTION),
)

WORKLOADS = (READ_RECIPE, READ_SHOPPING_LIST, ADD_SELECTION)
