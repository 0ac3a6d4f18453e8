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
    ReadShoppingList,
    SaveRecipeArguments,
    SaveRecipeOutput,
)
from cooked_mcp_runtime.results import ToolCall, ToolResult

from ..config.limits import Limits
from ..cooked.client import CookedClient
from .confirmation import Confirmation
from .recipes import RecipeTools
from .shopping_list import ShoppingListTools
from .writes import Writes


class CookedTools:
    """Implements the generated ToolHandlers protocol against one Cooked account."""

    def __init__(
        self,
        client: CookedClient,
        *,
        writable: bool = True,
        import_answer_seconds: float,
        confirmation: Confirmation,
        limits: Limits | None = None,
    ) -> None:
        # writable=False (read-only mode): results suggest no follow-up call to a write tool.
        # One Writes for both: an outcome kept for one tool is checked by a read of the other's kind.
        writes = Writes(limits)
        self.changes_finished = writes.finished
        self._recipes = RecipeTools(
            client,
            writes=writes,
            writable=writable,
            import_answer_seconds=import_answer_seconds,
            confirmation=confirmation,
        )
        self._shopping_list = ShoppingListTools(
            client, writes=writes, writable=writable, confirmation=confirmation
        )

    async def read(self, args: ReadArguments, call: ToolCall) -> ToolResult[ReadOutput]:
        if isinstance(args, ReadShoppingList):
            return await self._shopping_list.read(args, call)
        return await self._recipes.read(args, call)

    async def preview_recipe_text(
        self, args: PreviewRecipeTextArguments, call: ToolCall
    ) -> ToolResult[PreviewRecipeTextOutput]:
        return await self._recipes.preview(args)

    async def save_recipe(self, args: SaveRecipeArguments, call: ToolCall) -> ToolResult[SaveRecipeOutput]:
        return await self._recipes.save(args, call)

    async def delete_recipe(
        self, args: DeleteRecipeArguments, call: ToolCall
    ) -> ToolResult[DeleteRecipeOutput]:
        return await self._recipes.delete(args, call)

    async def change_shopping_list(
        self, args: ChangeShoppingListArguments, call: ToolCall
    ) -> ToolResult[ChangeShoppingListOutput]:
        return await self._shopping_list.change(args, call)
