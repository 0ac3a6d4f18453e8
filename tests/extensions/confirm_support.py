"""The four changes that lose data, an elicitation callback that answers as told and records each
question, and the fake's change requests: what the confirmation tests share."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import mcp_types as types
from mcp.client.session import ClientRequestContext

from cooked_fake import SEED_USERNAME, FakeCooked

USER = f"/api/user/{SEED_USERNAME}"
#: Every protocol era the SDK client speaks: the handshake ones (elicitation/create) and 2026-07-28.
ERAS = ("legacy", "2026-07-28")


@dataclass(frozen=True)
class Loss:
    """One call that loses data, the change request it makes, and words its question must hold."""

    label: str
    tool: str
    arguments: dict[str, Any]
    method: str
    path: str
    named: tuple[str, ...]

    def sent(self, fake: FakeCooked) -> int:
        return sum(
            1 for r in fake.api_requests(renewals=False) if (r.method, r.path) == (self.method, self.path)
        )


LOSSES = (
    Loss(
        "delete",
        "delete_recipe",
        {"recipe_id": "r-0001"},
        "DELETE",
        "/api/saved/r-0001",
        ('"Shakshuka"', "r-0001"),
    ),
    Loss(
        "existing",
        "save_recipe",
        {"source": "existing", "recipe_id": "r-0001", "markdown": "## Ingredients\n- 5 eggs", "portions": 3},
        "PUT",
        "/api/saved/r-0001",
        ('"Shakshuka"', "r-0001"),
    ),
    Loss(
        "remove",
        "change_shopping_list",
        {"action": "remove", "product_group_ids": ["pg-01", "pg-03"]},
        "POST",
        f"{USER}/shopping-list/remove",
        ('"Tomatoes"', '"Garlic"', "2 entries"),
    ),
    Loss(
        "clear",
        "change_shopping_list",
        {"action": "clear"},
        "DELETE",
        f"{USER}/shopping-list",
        ("all 6 entries on the shopping list",),
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
