"""The read-only part of ``--check``: log in, list, search, read the shopping list, read one recipe."""

from __future__ import annotations

from collections.abc import Callable

from cooked_mcp.cooked import endpoints
from cooked_mcp.cooked.client import CookedClient
from cooked_mcp.cooked.models import CookedRecipeSummary, ShoppingList
from cooked_mcp.exceptions import CookedError

from .steps import Outcome, Steps, step

#: What the search step looks for: one letter, so any account with recipes finds some.
SEARCH_QUERY = "a"
#: How many recipes the list step asks for.
LIST_PAGE = 5


async def read_checks(
    client: CookedClient, outcomes: Steps, explain_login: Callable[[CookedError], str] = str
) -> bool:
    """Append the read steps' outcomes; False when the login failed (nothing else can work)."""
    await step(outcomes, "log in", endpoints.LOGIN, client.ensure_session, explain=explain_login)
    if not outcomes[-1].ok:
        return False
    found: list[str] = []  # a recipe ID to read: from the list, or from the search when listing failed

    def remember(page: str, what: str) -> Callable[[list[CookedRecipeSummary]], str]:
        # The page first: "5 recipes on the first page" read as "the account has 5 recipes".
        def describe(items: list[CookedRecipeSummary]) -> str:
            found.extend(item.id for item in items[:1])
            return f"{page}: {len(items)} {what}"

        return describe

    await step(
        outcomes,
        "list recipes",
        endpoints.LIST_RECIPES,
        lambda: client.list_recipes(1, LIST_PAGE),
        remember(f"page of {LIST_PAGE}", "recipes"),
    )
    await step(
        outcomes,
        "search recipes",
        endpoints.SEARCH_RECIPES,
        lambda: client.search_recipes(SEARCH_QUERY, 1),
        remember(f"first page of the search for '{SEARCH_QUERY}'", "matches"),
    )
    await step(
        outcomes, "read the shopping list", endpoints.GET_SHOPPING_LIST, client.get_shopping_list, _sizes
    )
    if found:
        await step(outcomes, "read one recipe", endpoints.GET_RECIPE, lambda: client.get_recipe(found[0]))
    else:
        none = all(o.ok for o in outcomes)  # else listing failed: no ID could be had
        why = "the account has no saved recipes" if none else "no recipe ID could be listed or found"
        outcomes.append(
            Outcome("read one recipe", endpoints.GET_RECIPE, none, f"skipped: {why}", skipped=True)
        )
    return True


def _sizes(shopping: ShoppingList) -> str:
    groups = sum(len(a.product_groups) for a in shopping.aisles)
    return f"{len(shopping.aisles)} aisles, {groups} product groups"
