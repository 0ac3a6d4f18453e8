"""Recipe tools: read recipes and one recipe, preview, save from five sources, delete."""

from __future__ import annotations

from cooked_mcp_generated.models import (
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


class RecipeTools:
    def __init__(self, client: CookedClient) -> None:
        self._client = client

    async def read(self, args: ReadArguments) -> ToolResult[ReadOutput]:
        raise ToolError(f"read target={args.target} is not available yet in this version of cooked-mcp.")

    async def preview(self, args: PreviewRecipeTextArguments) -> ToolResult[PreviewRecipeTextOutput]:
        raise ToolError("preview_recipe_text is not available yet in this version of cooked-mcp.")

    async def save(self, args: SaveRecipeArguments, call: ToolCall) -> ToolResult[SaveRecipeOutput]:
        raise ToolError(
            f"save_recipe source={args.source} is not available yet in this version of cooked-mcp."
        )

    async def delete(self, args: DeleteRecipeArguments) -> ToolResult[DeleteRecipeOutput]:
        raise ToolError("delete_recipe is not available yet in this version of cooked-mcp.")
