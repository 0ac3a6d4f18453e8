"""The tool handlers: what each tool does with Cooked, behind the generated dispatch."""

from __future__ import annotations

from cooked_mcp_generated.models import ReadArguments, ReadOutput, ReadShoppingList
from cooked_mcp_runtime.results import ToolCall, ToolResult

from ..config.limits import Limits
from ..cooked.client import CookedClient
from .confirmation import Confirmation
from .recipes import RecipeTools
from .shopping_list import ShoppingListTools
from .writes import Writes


class CookedTools(RecipeTools, ShoppingListTools):
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
        self._client, self._writable = client, writable
        self._writes = Writes(limits, confirmation)
        self._import_answer_seconds = import_answer_seconds
        self.changes_finished = self._writes.finished

    async def read(self, args: ReadArguments, call: ToolCall) -> ToolResult[ReadOutput]:
        if isinstance(args, ReadShoppingList):
            return await self.read_shopping_list(args, call)
        return await self.read_recipes(args, call)
