"""The steps of ``--check`` and the round trip of ``--write``. A ``Mismatch`` holds only what is safe
in a report (status, a code-like code, our sentence, the answer's shape), never Cooked's free text."""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TextIO

from cooked_mcp import exceptions as errors
from cooked_mcp.cooked import endpoints
from cooked_mcp.cooked.client import CookedClient
from cooked_mcp.cooked.endpoints import Endpoint
from cooked_mcp.cooked.models import ShoppingList

_CODE = re.compile(r"[A-Z][A-Z0-9_]{0,63}")
#: How the client opens an error about one request: the step's line already says FAILED.
_REQUEST_FAILED = re.compile(r"^The [\w -]+ request failed: ")
#: What the check creates, each marked by its token (``str.format``).
RECIPE_TITLE = "cooked-mcp check {}"
LINE_NAME = "cooked-mcp check item {}"
_RECIPE_TEXT = "1 cup red lentils\n2 cups water\nSimmer the lentils in the water for 20 minutes."
_OTHER_RECIPE = "the answer names another recipe than the one changed"
_OTHER_SELECTION = "the answer's product-group-ids do not match the selection sent"


@dataclass(eq=False)
class Mismatch(Exception):
    """Cooked answered, but not as expected; raised by a step's checks, kept in its outcome."""

    problem: str
    status: int | None = None
    code: str | None = None
    shape: Any = None
    #: Cooked answered, but not as the contract says: what a report is for.
    disagrees: bool = False


@dataclass
class Outcome:
    step: str
    endpoint: Endpoint
    ok: bool = True
    detail: str = ""
    mismatch: Mismatch | None = None
    #: No request was made (nothing to make it on): the endpoint was not checked.
    skipped: bool = False

    def fields(self) -> dict[str, Any]:
        if (m := self.mismatch) is None:
            return {}
        shown = {"problem": m.problem, "status": m.status, "code": m.code, "answer-shape": m.shape}
        return {key: value for key, value in shown.items() if value is not None}


def answered(*parts: object) -> str:
    """``404 NOT_FOUND``: what of status and code is known."""
    return " ".join(str(part) for part in parts if part is not None)


def mismatch_of(error: errors.CookedError, expected: str = "success") -> Mismatch:
    # Cooked's error code only when it looks like one (``NOT_FOUND``): anything else could be any text.
    code = error.code if error.code and _CODE.fullmatch(error.code) else None
    if isinstance(error, errors.UnexpectedAnswer):
        return Mismatch(f"the answer {error.problem}", error.status, None, error.shape, disagrees=True)
    if isinstance(error, errors.CookedUnavailable):
        return Mismatch("no usable answer (connection, timeout or redirect)", error.status, code)
    if isinstance(error, errors.CookedRequestError):
        return Mismatch("not sent: an ID Cooked returned cannot be put in a path")
    shown = answered(error.status, code) or "an error"
    disagrees = isinstance(error, errors.CookedResponseError | errors.CookedRejected)
    return Mismatch(f"answered {shown}, expected {expected}", error.status, code, disagrees=disagrees)


class Steps(list[Outcome]):
    """The outcomes so far; each step's line is shown as it starts, so the step waited on is on screen."""

    def __init__(self, out: TextIO | None = None) -> None:
        super().__init__()
        self.out = out or io.StringIO()  # no terminal: the lines go nowhere

    @contextlib.contextmanager
    def step(
        self, name: str, endpoint: Endpoint, explain: Callable[[errors.CookedError], str] = str
    ) -> Iterator[Outcome]:
        """One step: OK (with the ``detail`` its block may set on the outcome) unless the block raises a
        Cooked error or a ``Mismatch``, which ends the block, not the check."""
        print(f"  {name} ... ", end="", file=self.out, flush=True)
        outcome = Outcome(name, endpoint)
        try:
            yield outcome
        except errors.CookedError as exc:
            mismatch = mismatch_of(exc)
            # A person reads this: where Cooked disagreed, the summary asks for a report, not a retry.
            shown = exc.with_next_step("") if mismatch.disagrees else exc
            detail = _REQUEST_FAILED.sub("", explain(shown))
            outcome = Outcome(name, endpoint, False, detail, mismatch)
        except Mismatch as exc:
            outcome = Outcome(name, endpoint, False, exc.problem, exc)
        self.append(outcome)
        verdict = "OK" if outcome.ok else "FAILED"
        print(f"{verdict} - {outcome.detail}" if outcome.detail else verdict, file=self.out, flush=True)


def expect(holds: bool, problem: str) -> None:
    """A step's check of Cooked's answer beyond its shape."""
    if not holds:
        raise Mismatch(problem)


@dataclass
class RoundTrip:
    client: CookedClient
    outcomes: Steps
    token: str
    undo_notes: list[str] = field(default_factory=list)
    undo_complete: bool = True
    _recipe_pending: bool = False
    _recipe_id: str | None = None
    _line_pending: bool = False
    _before_selected: list[str] = field(default_factory=list)

    async def run(self) -> None:
        try:
            await self._recipe()
            await self._shopping_line()
        finally:
            if self._recipe_pending:
                title = RECIPE_TITLE.format(self.token)
                by_hand = f"could not delete the check's recipe: delete the recipe titled {title!r} by hand"
                await self._undo(self._undo_recipe, by_hand)
            if self._line_pending:
                line = LINE_NAME.format(self.token)
                by_hand = f"could not clean up the shopping list: remove the line {line!r} by hand"
                await self._undo(self._undo_line, by_hand + " and check which items are ticked")

    async def _undo(self, undo: Callable[[], Awaitable[None]], by_hand: str) -> None:
        """A failed undo is noted with what the person removes by hand."""
        try:
            await undo()
        except errors.CookedError:
            self.undo_complete = False
            self.undo_notes.append(by_hand)

    async def _recipe(self) -> None:
        c, out = self.client, self.outcomes
        with out.step("preview a recipe from raw text", endpoints.PREVIEW_RECIPE):
            preview = await c.preview_recipe(RECIPE_TITLE.format(self.token), _RECIPE_TEXT)
        if not out[-1].ok:
            return
        self._recipe_pending = True
        with out.step("save the previewed recipe", endpoints.SAVE_RECIPE):
            recipe_id = await c.save_recipe(preview.title, preview.description, preview.portions)
            self._recipe_id = recipe_id
        if not out[-1].ok:
            return
        saved = (recipe_id, preview.description.strip(), preview.portions)
        # Steps that find a difference do not stop the round trip: later endpoints still get checked.
        with out.step("read the saved recipe", endpoints.GET_RECIPE):
            read = await c.get_recipe(recipe_id)
            got = (read.id, read.description.strip(), read.portions)
            expect(got == saved, "the recipe read back is not what was saved (id, description or portions)")
        with out.step("update the recipe", endpoints.UPDATE_RECIPE):
            updated = await c.update_recipe(recipe_id, preview.description + "\n\nUpdated.", 1)
            expect(updated == recipe_id, _OTHER_RECIPE)
        with out.step("delete the recipe", endpoints.DELETE_RECIPE):
            expect(await c.delete_recipe(recipe_id) == recipe_id, _OTHER_RECIPE)
        if not out[-1].ok:
            return
        self._recipe_pending = False
        with out.step("read the deleted recipe (expect not found)", endpoints.GET_RECIPE):
            try:
                await c.get_recipe(recipe_id)
            except errors.CookedError as exc:
                if not isinstance(exc, errors.CookedNotFound) or exc.code not in (None, "NOT_FOUND"):
                    raise mismatch_of(exc, expected="404 NOT_FOUND") from None
            else:
                raise Mismatch("the deleted recipe is still readable (answered 200, expected 404)", 200)

    async def _shopping_line(self) -> None:
        c, out, line = self.client, self.outcomes, LINE_NAME.format(self.token)
        with out.step("read the shopping list before", endpoints.GET_SHOPPING_LIST):
            before = await c.get_shopping_list()
        if not out[-1].ok:
            return
        self._before_selected = [g.id for a in before.aisles for g in a.product_groups if g.selected]
        self._line_pending = True
        with out.step("add one line", endpoints.ADD_INGREDIENTS):
            added = await c.add_ingredients(f"1 {line}")
            expect(added == 1, f"Cooked counted {added} added ingredients for one line, expected 1")
        if not out[-1].ok:
            return
        with out.step("read the added line", endpoints.GET_SHOPPING_LIST):
            ours = self._ours(await c.get_shopping_list())
            expect(len(ours) == 1, f"the list shows {len(ours)} new product groups for the line, expected 1")
        if not out[-1].ok:
            return
        [(group_id, aisle_id)] = ours
        with out.step("tick the line", endpoints.SET_SELECTED):
            ticked = await c.set_selected([*self._before_selected, group_id])
            expect(group_id in ticked, _OTHER_SELECTION)
        with out.step("untick the line", endpoints.SET_SELECTED):
            expect(group_id not in await c.set_selected(self._before_selected), _OTHER_SELECTION)
        with out.step("update the line", endpoints.UPDATE_PRODUCT_GROUP):
            name = f"{line} updated"
            await c.update_product_group(group_id, name=name, quantity="2", aisle_id=aisle_id, selected=False)
        with out.step("remove the line", endpoints.REMOVE_PRODUCT_GROUPS):
            removed = await c.remove_product_groups([group_id])
            expect(removed == [group_id], "the answer's removed list does not name the removed line")
        self._line_pending = not out[-1].ok

    def _ours(self, shopping: ShoppingList) -> list[tuple[str, str]]:
        """(group ID, aisle ID) of the groups this check created."""
        return [
            (g.id, a.id) for a in shopping.aisles for g in a.product_groups if self.token in g.name.casefold()
        ]

    async def _undo_recipe(self) -> None:
        if self._recipe_id is not None:
            hits = [self._recipe_id]
        else:  # saved or not? The answer was lost: look for the title.
            found = await self.client.search_recipes(self.token, 1)
            hits = [s.id for s in found if s.title and self.token in s.title]
        for recipe_id in hits:  # one already gone: the delete step acted after all
            with contextlib.suppress(errors.CookedNotFound):
                await self.client.delete_recipe(recipe_id)
        if hits:
            self.undo_notes.append("deleted the recipe the check had saved")

    async def _undo_line(self) -> None:
        shopping = await self.client.get_shopping_list()
        ours = [group_id for group_id, _ in self._ours(shopping)]
        selected = {g.id for a in shopping.aisles for g in a.product_groups if g.selected} - set(ours)
        if selected != set(self._before_selected):
            await self.client.set_selected(self._before_selected)
            self.undo_notes.append("restored the ticked items")
        if ours:
            await self.client.remove_product_groups(ours)
            self.undo_notes.append("removed the shopping-list line the check had added")
