"""The four changes that lose data, an elicitation callback that answers as told and records each
question, and the fake's change requests: what the confirmation tests share."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import mcp_types as types
from mcp.client.session import ClientRequestContext
from writes_support import Change

from cooked_fake import DRAFT_ID, SEED_USERNAME

USER = f"/api/user/{SEED_USERNAME}"
#: How every question ends (handlers/confirmation.py ANSWERS, spelled out: the test states the text).
ANSWERS = "Accepting makes this change; declining keeps everything as it is."
#: Every protocol era the SDK client speaks: the handshake ones (elicitation/create) and 2026-07-28.
ERAS = ("legacy", "2026-07-28")


@dataclass(frozen=True)
class Loss(Change):
    """One call that loses data, the change request it makes, words its question must hold, and
    what a no leaves unchanged."""

    named: tuple[str, ...] = ()
    unchanged: str = ""


LOSSES = (
    Loss(
        "delete",
        "delete_recipe",
        {"recipe_id": "r-0001"},
        "DELETE",
        "/api/saved/r-0001",
        look={},
        named=('Delete the recipe "Shakshuka" (r-0001) from Cooked?',),
        unchanged='the recipe "Shakshuka" (r-0001) was not deleted',
    ),
    Loss(
        "existing",
        "save_recipe",
        {"source": "existing", "recipe_id": "r-0001", "markdown": "## Ingredients\n- 5 eggs", "portions": 3},
        "PUT",
        "/api/saved/r-0001",
        look={},
        named=('the recipe "Shakshuka" (r-0001)',),
        unchanged='the recipe "Shakshuka" (r-0001) was not changed',
    ),
    Loss(
        "remove",
        "change_shopping_list",
        {"action": "remove", "product_group_ids": ["pg-01", "pg-03"]},
        "POST",
        f"{USER}/shopping-list/remove",
        look={},
        named=('Remove 2 entries from the shopping list: "Tomatoes", "Garlic"?',),
        unchanged='the shopping list still holds "Tomatoes", "Garlic"',
    ),
    Loss(
        "clear",
        "change_shopping_list",
        {"action": "clear"},
        "DELETE",
        f"{USER}/shopping-list",
        look={},
        named=(
            'This deletes all 6 entries on it: "Tomatoes", "Onion", "Garlic", "Chicken thighs", "Olive oil", '
            '"Baking paper".',
        ),
        unchanged="the shopping list was not cleared",
    ),
)


@dataclass
class Person:
    """Answers every question with ``action`` and remembers the questions."""

    action: Literal["accept", "decline", "cancel"]
    questions: list[str] = field(default_factory=list)
    schemas: list[dict[str, Any]] = field(default_factory=list)

    async def __call__(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestFormParams)
        self.questions.append(params.message)
        self.schemas.append(dict(params.requested_schema))
        return types.ElicitResult(action=self.action, content={} if self.action == "accept" else None)


#: Every other call, of every tool, action and source: none of them is ever asked about.
HARMLESS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("read", {"target": "recipes"}),
    ("read", {"target": "recipes", "query": "soup"}),
    ("read", {"target": "recipe", "recipe_id": "r-0001"}),
    ("read", {"target": "shopping_list"}),
    ("preview_recipe_text", {"title": "Stew", "text": "2 carrots\n1 onion\nSimmer."}),
    ("save_recipe", {"source": "raw_text", "title": "Stew", "text": "2 carrots\n1 onion\nSimmer."}),
    (
        "save_recipe",
        {"source": "prepared", "title": "Stew", "markdown": "## Ingredients\n- 2 carrots", "portions": 2},
    ),
    ("save_recipe", {"source": "url", "url": "https://example.com/a-recipe"}),
    (
        "save_recipe",
        {"source": "draft", "draft_id": DRAFT_ID, "markdown": "## Ingredients\n- 1 egg", "portions": None},
    ),
    ("change_shopping_list", {"action": "add", "ingredients": "2 onions\n1 lemon"}),
    ("change_shopping_list", {"action": "update_item", "product_group_id": "pg-01", "quantity": "2 cans"}),
    ("change_shopping_list", {"action": "replace_selection", "product_group_ids": ["pg-01"]}),
    ("change_shopping_list", {"action": "add_selection", "product_group_ids": ["pg-03"]}),
    ("change_shopping_list", {"action": "remove_selection", "product_group_ids": ["pg-01"]}),
)
