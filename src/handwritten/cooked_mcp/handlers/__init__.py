"""The tool handlers: what each tool does with Cooked, behind the generated dispatch."""

from __future__ import annotations

from cooked_mcp_generated.models import (
    ChangeShoppingListArguments,
    ChangeShoppingListOutput,
    DeleteRecipeArguments,
    DeleteRecipeOutput,
    PreviewRecipeTextArguments,
    PreviewRecipeTextOutput,
    ReadArguments,
    ReadOutput,
    SaveRecipeArguments,
    SaveRecipeOutput,
)
from cooked_mcp_generated.runtime import ToolCall, ToolError, ToolResult

from ..cooked.client import CookedClient


class CookedTools:
    """Implements the generated ToolHandlers protocol against one Cooked account."""

    def __init__(self, client: CookedClient) -> None:
        self._client = client

    async def read(self, args: ReadArguments, call: ToolCall) -> ToolResult[ReadOutput]:
        raise _not_yet(f"read target={args.target}")

    async def preview_recipe_text(
        self, args: PreviewRecipeTextArguments, call: ToolCall
    ) -> ToolResult[PreviewRecipeTextOutput]:
        raise _not_yet("preview_recipe_text")

    async def save_recipe(self, args: SaveRecipeArguments, call: ToolCall) -> ToolResult[SaveRecipeOutput]:
        raise _not_yet(f"save_recipe source={args.source}")

    async def delete_recipe(self, args: DeleteRecipeArguments, call: ToolCall) -> ToolResult[DeleteRecipeOutput]:
        raise _not_yet("delete_recipe")

    async def change_shopping_list(
        self, args: ChangeShoppingListArguments, call: ToolCall
    ) -> ToolResult[ChangeShoppingListOutput]:
        raise _not_yet(f"change_shopping_list action={args.action}")


def _not_yet(operation: str) -> ToolError:
    return ToolError(f"{operation} is not available yet in this version of cooked-mcp.")
