"""Shopping-list tools. Cooked's writes replace whole things (a product group's four fields, the
whole selected set), so partial changes read the list once and write once, never retried or
widened: another client may change the list in between."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any, Final

from cooked_mcp_generated import models as tool
from cooked_mcp_runtime.results import ToolCall, ToolError, ToolResult

from ..cooked.client import CookedClient
from ..cooked.models import CookedProductGroup, ShoppingList
from ..exceptions import CookedInvalidRequest, CookedNotFound
from ..text import one_line
from .confirmation import Question, names
from .formatting import cooked_errors, fence, lines, plural, tool_call
from .writes import Write, Writes

#: Group lines shown in a read's text; the structured output always has every group.
MAX_LISTED_GROUPS: Final = 100
#: IDs spelled out in one sentence of text (selected, removed, recipe IDs).
MAX_LISTED_IDS: Final = 50
#: Cooked's names and quantities are kept to this length, the longest the tool accepts back.
MAX_VALUE_CHARS: Final = 500

NO_NAME: Final = "(no name)"
EDITABLE: Final = ("name", "quantity", "aisle_id", "selected")
READ_CALL: Final = tool_call("read", target="shopping_list")
READ_HINT: Final = f"{READ_CALL} for the current product group and aisle IDs"

Output = tool.ChangeShoppingListOutput


class ShoppingListTools:
    """The shopping-list tools; ``CookedTools`` gives them the client and the kept outcomes."""

    _client: CookedClient
    _writes: Writes
    _writable: bool

    # implements: shopping-list.READ.1, shopping-list.READ.9, api-client.LIMITS.2, api-client.LIMITS.3
    async def read_shopping_list(
        self, args: tool.ReadShoppingList, call: ToolCall
    ) -> ToolResult[tool.ReadOutput]:
        """A read the agent receives is its look at list changes whose outcome is unknown (writes);
        a read that failed showed nothing, so it is no look. Cooked nests groups in aisles; the
        agent gets them flat, each naming its aisle."""
        listing = await self._get_list()
        call.when_answered(lambda: self._writes.looked("shopping_list"))
        aisles: list[dict[str, Any]] = []
        groups: list[dict[str, Any]] = []
        shown: list[str] = []  # one header per aisle (empty ones too), one line per group up to the bound
        for aisle in listing.aisles:
            # implements: shopping-list.READ.4, shopping-list.READ.5, shopping-list.READ.6, shopping-list.READ.7, shopping-list.READ.8
            members = [
                _group_fields(group.id, group.name, group.quantity, group.selected, aisle.id)
                for group in aisle.product_groups
            ]
            # implements: shopping-list.READ.2, shopping-list.READ.3
            name = one_line(aisle.name, "", MAX_VALUE_CHARS)
            aisles.append({"id": aisle.id, "name": name, "product_group_count": len(members)})
            count = plural(len(members), "product group") if members else "empty"
            shown.append(f"{one_line(name, NO_NAME)} ({one_line(aisle.id, '?')}): {count}")
            budget = max(0, MAX_LISTED_GROUPS - len(groups))
            for group in members[:budget]:
                tick = "[x]" if group["selected"] else "[ ]"
                quantity = f" — {one_line(group['quantity'], '')}" if group["quantity"] else ""
                shown.append(
                    f"  {tick} {one_line(group['id'], '?')} {one_line(group['name'], NO_NAME)}{quantity}"
                )
            if len(members) > budget:
                shown.append(f"  … {len(members) - budget} more not shown")
            groups.extend(members)
        next_step = None
        if self._writable:
            next_step = (
                "Change items with change_shopping_list using these IDs: tick with add_selection, "
                "move with update_item aisle_id, delete with remove."
                if groups
                else "The list is empty; add ingredient lines with change_shopping_list action=add."
            )
        # Validated in one call from plain values: one model per aisle and group costs ~1.5 us each.
        output = tool.ReadOutput.model_validate(
            {
                "target": args.target,
                "aisles": aisles,
                "product_groups": groups,
                "recipe_ids": listing.recipe_ids,
                "data_from_cooked": ["aisles[].name", "product_groups[].name", "product_groups[].quantity"],
                "next_step": next_step,
            }
        )
        head = (
            f"Shopping list: {plural(len(groups), 'product group')} in {plural(len(aisles), 'aisle')}, "
            f"{sum(group['selected'] for group in groups)} ticked."
        )
        if listing.recipe_ids:
            head += f" Recipes on the list: {_id_list(listing.recipe_ids, 'recipe_ids')}."
        left_out = len(groups) - MAX_LISTED_GROUPS
        bounded = (
            f"This text shows the first {MAX_LISTED_GROUPS} of {len(groups)} product groups; "
            f"{left_out} are left out here (aisles listed with their counts). "
            "The structured output (product_groups) has every group with its ID, name, quantity, "
            "selected state and aisle_id."
        )
        text = lines(
            head,
            fence("\n".join(shown), "Aisles (aisle_id) and product groups"),
            bounded if left_out > 0 else None,
            next_step or (None if groups else "The list is empty."),
        )
        return ToolResult(text, output)

    # implements: shopping-list.ACTIONS.1
    async def change_shopping_list(
        self, args: tool.ChangeShoppingListArguments, call: ToolCall
    ) -> ToolResult[Output]:
        """add, remove and clear are made once (writes.py): each repeat would change the list again.
        The others set a state, so a repeat changes nothing and they go straight to Cooked.
        add and remove are keyed as Cooked gets them (stripped ingredient lines without blank ones,
        each ID once), so two calls that send the same request are identical calls."""
        write = partial(Write.of, call, area="shopping_list", look=READ_CALL)
        match args:
            case tool.ChangeShoppingListAdd():
                sent = [line.strip() for line in args.ingredients.splitlines() if line.strip()]
                args = args.model_copy(update={"ingredients": "\n".join(sent)})
                named = frozenset({args.recipe_id} if args.recipe_id is not None else ())
                return await self._writes.run(write(args, recipe_ids=named), call, partial(self._add, args))
            case tool.ChangeShoppingListUpdateItem():
                return await self._update_item(args)
            # implements: shopping-list.SELECTION.1, shopping-list.SELECTION.8
            case tool.ChangeShoppingListReplaceSelection():
                return await self._select(args, list(dict.fromkeys(args.product_group_ids)))
            # implements: shopping-list.SELECTION.2, shopping-list.SELECTION.4, shopping-list.SELECTION.9
            case tool.ChangeShoppingListAddSelection():
                current = _selected_ids(await self._get_list())
                return await self._select(args, list(dict.fromkeys([*current, *args.product_group_ids])))
            # implements: shopping-list.SELECTION.3, shopping-list.SELECTION.4, shopping-list.SELECTION.10
            case tool.ChangeShoppingListRemoveSelection():
                current = _selected_ids(await self._get_list())
                dropped = set(args.product_group_ids)
                return await self._select(args, [gid for gid in current if gid not in dropped])
            case tool.ChangeShoppingListRemove():
                args = args.model_copy(
                    update={"product_group_ids": list(dict.fromkeys(args.product_group_ids))}
                )
                question = partial(self._remove_question, args)
                return await self._writes.run(
                    write(args), call, partial(self._remove, args), question=question
                )
            case tool.ChangeShoppingListClear():
                clear = partial(self._clear, args)
                return await self._writes.run(write(args), call, clear, question=self._clear_question)

    # implements: shopping-list.ADD.1, shopping-list.ADD.2, shopping-list.ADD.3, shopping-list.ADD.4
    async def _add(self, args: tool.ChangeShoppingListAdd) -> ToolResult[Output]:
        sent = len(args.ingredients.splitlines())  # one ingredient a line, as change_shopping_list made them
        not_found = (
            f"no saved recipe or import draft has ID {args.recipe_id!r}; "
            "use an ID from read target=recipes or a draft_id from save_recipe source=url, "
            "or leave recipe_id out"
            if args.recipe_id is not None
            else None
        )
        with cooked_errors({CookedNotFound: not_found}):
            added = await self._client.add_ingredients(args.ingredients, args.recipe_id)
        not_added = (
            f"{plural(sent - added, 'line')} could not be parsed and were NOT added; Cooked does not say which. "
            "Compare with the list and add them again as 'amount name' lines (e.g. '2 onions')."
            if added < sent
            else ""
        )
        filed = f"Cooked merges and files them into aisles: {READ_HINT}."
        output = Output(
            action=args.action, added_count=added, lines_sent=sent, notice=not_added or None, next_step=filed
        )
        linked = f", linked to recipe {one_line(args.recipe_id, '?')}" if args.recipe_id else ""
        text = f"Cooked added {plural(added, 'ingredient')} from {plural(sent, 'line')} sent{linked}."
        return ToolResult(" ".join(part for part in (text, not_added, filed) if part), output)

    # implements: shopping-list.UPDATE_ITEM.1, shopping-list.UPDATE_ITEM.2, shopping-list.UPDATE_ITEM.4, shopping-list.UPDATE_ITEM.5, shopping-list.UPDATE_ITEM.8, shopping-list.UPDATE_ITEM.9
    async def _update_item(self, args: tool.ChangeShoppingListUpdateItem) -> ToolResult[Output]:
        """Cooked's PUT replaces the group's four fields, so those not given are read first and sent as they are."""
        group_id = args.product_group_id
        given = args.model_dump(include=set(EDITABLE), exclude_unset=True)
        # null means "not given" (keep it), so clearing the quantity is spelled "".
        if given.get("quantity") == "":
            given["quantity"] = None
        fields = given if len(given) == len(EDITABLE) else {**await self._current_fields(group_id), **given}
        with cooked_errors(
            {
                CookedNotFound: f"product group {group_id!r} is not on the shopping list; {READ_HINT}",
                CookedInvalidRequest: "use an aisle_id listed by read target=shopping_list (empty aisles "
                "are listed too) and a non-blank name",
            }
        ):
            changed_id = await self._client.update_product_group(group_id, **fields)
        item = tool.ProductGroup.model_validate(_group_fields(changed_id, **fields))
        kept = [name for name in EDITABLE if name not in given]
        quantity = f", quantity {one_line(item.quantity, '')}" if item.quantity else ", no quantity"
        tick = "ticked" if item.selected else "not ticked"
        kept_text = f" Kept the current value of: {', '.join(kept)}." if kept else ""
        text = (
            f"Updated product group {one_line(item.id, '?')}: {one_line(item.name, NO_NAME)}{quantity}, "
            f"in aisle {one_line(item.aisle_id, '?')}, {tick}.{kept_text}"
        )
        output = Output(
            action=args.action,
            product_group_id=changed_id,
            item=item,
            data_from_cooked=["item.name", "item.quantity"],
        )
        return ToolResult(text, output)

    # implements: shopping-list.REMOVE.1, shopping-list.REMOVE.2
    async def _remove(self, args: tool.ChangeShoppingListRemove) -> ToolResult[Output]:
        asked = args.product_group_ids  # each once, as change_shopping_list made them
        with cooked_errors():
            removed = await self._client.remove_product_groups(asked)
        gone = set(removed)
        not_found = [gid for gid in asked if gid not in gone]
        text = (
            f"Removed {plural(len(removed), 'product group')} for good: {_id_list(removed, 'removed_ids')}."
            if removed
            else "Removed nothing."
        )
        if not_found:
            text += f" Not on the list, so not removed: {_id_list(not_found, 'not_found_ids')}."
        return ToolResult(text, Output(action=args.action, removed_ids=removed, not_found_ids=not_found))

    # implements: shopping-list.CLEAR.1, shopping-list.CLEAR.2
    async def _clear(self, args: tool.ChangeShoppingListClear) -> ToolResult[Output]:
        with cooked_errors():
            await self._client.clear_shopping_list()
        text = (
            "Cleared the shopping list: every product group was deleted and cannot be restored. "
            "The aisles remain; add items again with action=add."
        )
        return ToolResult(text, Output(action=args.action, cleared=True))

    # implements: extensions.CONFIRMATION.2, extensions.CONFIRMATION.3
    async def _remove_question(self, args: tool.ChangeShoppingListRemove) -> Question | None:
        """Names the entries that are on the list; IDs not on it lose nothing and are not mentioned."""
        on_list = {group.id: group.name for group in _groups(await self._get_list())}
        asked = [on_list[gid] for gid in args.product_group_ids if gid in on_list]
        if not asked:
            return None
        return Question(
            f"Remove {plural(len(asked), 'entry', 'entries')} from the shopping list: {names(asked)}? "
            f"{'It' if len(asked) == 1 else 'They'} cannot be restored.",
            f"the shopping list still holds {names(asked)}",
        )

    # implements: extensions.CONFIRMATION.2, extensions.CONFIRMATION.3
    async def _clear_question(self) -> Question | None:
        on_list = [group.name for group in _groups(await self._get_list())]
        if not on_list:
            return None
        every = "the one entry" if len(on_list) == 1 else f"all {len(on_list)} entries"
        return Question(
            f"Clear the shopping list? This deletes {every} on it: {names(on_list)}. It cannot be undone.",
            "the shopping list was not cleared",
        )

    async def _get_list(self) -> ShoppingList:
        with cooked_errors():
            return await self._client.get_shopping_list()

    # implements: shopping-list.UPDATE_ITEM.3, shopping-list.UPDATE_ITEM.7
    async def _current_fields(self, group_id: str) -> dict[str, Any]:
        """The group's current values, so omitted fields survive Cooked's whole-group PUT."""
        for aisle in (await self._get_list()).aisles:
            for group in aisle.product_groups:
                if group.id == group_id:
                    fields = group.model_dump(include={"name", "quantity", "selected"})
                    return {**fields, "aisle_id": aisle.id}
        raise ToolError(
            f"Nothing was changed: product group {group_id!r} is not on the shopping list. "
            f"Next step: {READ_HINT}."
        )

    # implements: shopping-list.SELECTION.5
    async def _select(self, args: tool.ChangeShoppingListArguments, wanted: list[str]) -> ToolResult[Output]:
        invalid = f"every ID must be a product group on the list; {READ_HINT}"
        with cooked_errors({CookedInvalidRequest: invalid}):
            now = await self._client.set_selected(wanted)
        text = (
            f"Ticked now ({len(now)}): {_id_list(now, 'selected_ids')}. "
            "Every other product group is unticked."
            if now
            else "No product group is ticked now."
        )
        return ToolResult(text, Output(action=args.action, selected_ids=now))


def _groups(listing: ShoppingList) -> list[CookedProductGroup]:
    return [group for aisle in listing.aisles for group in aisle.product_groups]


def _selected_ids(listing: ShoppingList) -> list[str]:
    """Ticked IDs in list order, so a union or difference keeps Cooked's order stable."""
    return [group.id for group in _groups(listing) if group.selected]


def _group_fields(
    group_id: str, name: str, quantity: str | None, selected: bool, aisle_id: str
) -> dict[str, Any]:
    """A product group as the tools show it (``tool.ProductGroup``'s fields)."""
    return {
        "id": group_id,
        "name": one_line(name, "", MAX_VALUE_CHARS),
        "quantity": one_line(quantity, "", MAX_VALUE_CHARS) or None,
        "selected": selected,
        "aisle_id": aisle_id,
    }


def _id_list(ids: Sequence[str], field: str) -> str:
    shown = ", ".join(one_line(gid, "?") for gid in ids[:MAX_LISTED_IDS])
    more = len(ids) - MAX_LISTED_IDS
    return shown if more <= 0 else f"{shown} and {more} more (all in {field})"
