"""``--check --write``: change the account and back, on one recipe and one shopping-list line marked
by a random token, by which ``undo`` finds them: a step can fail after Cooked acted, the ID unknown."""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Awaitable
from dataclasses import dataclass, field

from cooked_mcp.cooked import endpoints
from cooked_mcp.cooked.client import CookedClient
from cooked_mcp.cooked.models import Preview, ShoppingList
from cooked_mcp.exceptions import CookedError, CookedNotFound

from .steps import Failed, Mismatch, Outcome, Steps, answered, safe_code

#: What Cooked must answer for a recipe that no longer exists.
_GONE_STATUS = 404
_GONE_CODE = "NOT_FOUND"


def new_token() -> str:
    """The random mark that tells the check's own recipe and line from the user's."""
    return secrets.token_hex(4)


def recipe_title(token: str) -> str:
    return f"cooked-mcp check {token}"


def line_name(token: str) -> str:
    return f"cooked-mcp check item {token}"


@dataclass
class RoundTrip:
    """One round trip's plan and what it has left behind so far."""

    client: CookedClient
    outcomes: Steps = field(default_factory=Steps)
    token: str = field(default_factory=new_token)
    undo_notes: list[str] = field(default_factory=list)
    undo_complete: bool = True
    _recipe_pending: bool = False
    _recipe_id: str | None = None
    _line_pending: bool = False
    _before_selected: list[str] = field(default_factory=list)
    _before_groups: set[str] = field(default_factory=set)

    @property
    def title(self) -> str:
        return recipe_title(self.token)

    async def run(self) -> list[Outcome]:
        try:
            await self._recipe()
            await self._shopping_line()
        finally:
            await self.undo()
        return self.outcomes

    # --- the recipe ----------------------------------------------------------------------------

    async def _recipe(self) -> None:
        c, out = self.client, self.outcomes
        text = "1 cup red lentils\n2 cups water\nSimmer the lentils in the water for 20 minutes."
        preview = await out.step(
            "preview a recipe from raw text",
            endpoints.PREVIEW_RECIPE,
            lambda: c.preview_recipe(self.title, text),
        )
        if preview is None:
            return
        self._recipe_pending = True
        recipe_id = await out.step(
            "save the previewed recipe",
            endpoints.SAVE_RECIPE,
            lambda: c.save_recipe(preview.title, preview.description, preview.portions),
        )
        if recipe_id is None:
            return
        self._recipe_id = recipe_id
        # Steps that find a difference do not stop the round trip: later endpoints still get checked.
        await self._read_back(recipe_id, preview)
        await out.step(
            "update the recipe",
            endpoints.UPDATE_RECIPE,
            lambda: self._same_id(
                c.update_recipe(recipe_id, preview.description + "\n\nUpdated.", 1), recipe_id
            ),
        )
        await out.step(
            "delete the recipe",
            endpoints.DELETE_RECIPE,
            lambda: self._same_id(c.delete_recipe(recipe_id), recipe_id),
        )
        if not out[-1].ok:
            return
        self._recipe_pending = False
        await out.step(
            "read the deleted recipe (expect not found)",
            endpoints.GET_RECIPE,
            lambda: self._gone(recipe_id),
        )

    async def _read_back(self, recipe_id: str, preview: Preview) -> None:
        async def read() -> None:
            recipe = await self.client.get_recipe(recipe_id)
            if recipe.id != recipe_id:
                raise Failed(Mismatch("the recipe read back has another id than the one saved"))
            if (
                recipe.description.strip() != preview.description.strip()
                or recipe.portions != preview.portions
            ):
                raise Failed(
                    Mismatch("the recipe read back differs from what was saved (description or portions)")
                )

        await self.outcomes.step("read the saved recipe", endpoints.GET_RECIPE, read)

    async def _gone(self, recipe_id: str) -> None:
        try:
            await self.client.get_recipe(recipe_id)
        except CookedError as exc:
            if isinstance(exc, CookedNotFound) and exc.code in (None, _GONE_CODE):
                return
            code = safe_code(exc.code)
            shown = answered(exc.status, code) or "an error"
            expected = f"{_GONE_STATUS} {_GONE_CODE}"
            raise Failed(Mismatch(f"answered {shown}, expected {expected}", exc.status, code)) from None
        raise Failed(
            Mismatch(f"the deleted recipe is still readable (answered 200, expected {_GONE_STATUS})", 200)
        )

    @staticmethod
    async def _same_id(answer: Awaitable[str], expected: str) -> str:
        got = await answer
        if got != expected:
            raise Failed(Mismatch("the answer names another recipe than the one changed"))
        return expected

    # --- the shopping-list line ----------------------------------------------------------------

    async def _shopping_line(self) -> None:
        c, out = self.client, self.outcomes
        before = await out.step(
            "read the shopping list before", endpoints.GET_SHOPPING_LIST, c.get_shopping_list
        )
        if before is None:
            return
        self._before_groups = {g.id for a in before.aisles for g in a.product_groups}
        self._before_selected = [g.id for a in before.aisles for g in a.product_groups if g.selected]
        self._line_pending = True
        added = await out.step(
            "add one line",
            endpoints.ADD_INGREDIENTS,
            lambda: self._one_added(c.add_ingredients(f"1 {line_name(self.token)}")),
        )
        if added is None:
            return
        found = await out.step("read the added line", endpoints.GET_SHOPPING_LIST, self._find_line)
        if found is None:
            return
        group_id, aisle_id = found
        ticked = [*self._before_selected, group_id]
        await out.step(
            "tick the line", endpoints.SET_SELECTED, lambda: self._selected(ticked, group_id, True)
        )
        unticked = self._before_selected
        await out.step(
            "untick the line", endpoints.SET_SELECTED, lambda: self._selected(unticked, group_id, False)
        )
        name = f"{line_name(self.token)} updated"
        await out.step(
            "update the line",
            endpoints.UPDATE_PRODUCT_GROUP,
            lambda: c.update_product_group(
                group_id, name=name, quantity="2", aisle_id=aisle_id, selected=False
            ),
        )
        await out.step("remove the line", endpoints.REMOVE_PRODUCT_GROUPS, lambda: self._removed(group_id))
        self._line_pending = not out[-1].ok

    async def _removed(self, group_id: str) -> list[str]:
        removed = await self.client.remove_product_groups([group_id])
        if removed != [group_id]:
            raise Failed(Mismatch("the answer's removed list does not name the removed line"))
        return removed

    @staticmethod
    async def _one_added(answer: Awaitable[int]) -> int:
        added = await answer
        if added != 1:
            raise Failed(Mismatch(f"Cooked counted {added} added ingredients for one line, expected 1"))
        return 1

    def _ours(self, shopping: ShoppingList) -> list[tuple[str, str]]:
        """(group ID, aisle ID) of the groups this check created."""
        return [
            (g.id, a.id)
            for a in shopping.aisles
            for g in a.product_groups
            if g.id not in self._before_groups and self.token in g.name.casefold()
        ]

    async def _find_line(self) -> tuple[str, str]:
        ours = self._ours(await self.client.get_shopping_list())
        if len(ours) != 1:
            raise Failed(
                Mismatch(f"the list shows {len(ours)} new product groups for the added line, expected 1")
            )
        return ours[0]

    async def _selected(self, ids: list[str], group_id: str, ticked: bool) -> list[str]:
        answer = await self.client.set_selected(ids)
        if (group_id in answer) != ticked:
            raise Failed(Mismatch("the answer's product-group-ids do not match the selection sent"))
        return answer

    # --- undo ----------------------------------------------------------------------------------

    async def undo(self) -> None:
        """Remove what the check created; say so, or say what the user must remove by hand."""
        if self._recipe_pending:
            await self._undo_recipe()
        if self._line_pending:
            await self._undo_line()

    async def _undo_recipe(self) -> None:
        try:
            if self._recipe_id is not None:
                hits = [self._recipe_id]
            else:  # saved or not? The answer was lost: look for the title.
                found = await self.client.search_recipes(self.token, 1)
                hits = [s.id for s in found if s.title and self.token in s.title]
            for recipe_id in hits:
                with contextlib.suppress(CookedNotFound):  # already gone: the delete step acted after all
                    await self.client.delete_recipe(recipe_id)
        except CookedError:
            self.undo_complete = False
            self.undo_notes.append(
                f"could not delete the check's recipe: delete the recipe titled {self.title!r} by hand"
            )
            return
        if hits:
            self.undo_notes.append("deleted the recipe the check had saved")

    async def _undo_line(self) -> None:
        try:
            shopping = await self.client.get_shopping_list()
            ours = [group_id for group_id, _ in self._ours(shopping)]
            selected = [
                g.id for a in shopping.aisles for g in a.product_groups if g.selected and g.id not in ours
            ]
            if set(selected) != set(self._before_selected):
                await self.client.set_selected(self._before_selected)
                self.undo_notes.append("restored the ticked items")
            if ours:
                await self.client.remove_product_groups(ours)
                self.undo_notes.append("removed the shopping-list line the check had added")
        except CookedError:
            self.undo_complete = False
            self.undo_notes.append(
                f"could not clean up the shopping list: remove the line {line_name(self.token)!r} by hand"
                " and check which items are ticked"
            )
