"""A stateful fake of the Cooked REST API (docs/cooked-api.md) for tests, the demo and the benchmark.

Where the contract is silent the fake decides, and clients must not rely on more than the contract:

- login accepts the e-mail or the canonical name, case-insensitively, and always answers ``alice``;
- a user-scoped path with any other name than ``alice`` answers 403 FORBIDDEN (never 404);
- checks run route (404/405), session (401), user scope (403), body (400), then the endpoint;
- bob's recipe is in alice's saved list and searches (she saved it), but she cannot edit it;
- a recipe or draft without a title has no ``title`` key at all (summaries too);
- saving a draft deletes it; deleting the shopping list also empties ``recipe-ids``;
- ingredients with an unknown ``recipe-id`` answer 404 NOT_FOUND; the line rule is in text.py.
"""

from .fake import FakeCooked
from .faults import FAULT_KINDS, Fault
from .models import Aisle, Draft, ProductGroup, Recipe
from .recording import RecordedRequest
from .seed import (
    DRAFT_ID,
    EMPTY_AISLE_ID,
    FOREIGN_RECIPE_ID,
    INJECTION_LINE,
    INJECTION_RECIPE_ID,
    NULL_PORTIONS_RECIPE_ID,
    OTHER_OWNER,
    SEED_LOGIN,
    SEED_PASSWORD,
    SEED_USERNAME,
    SELECTED_GROUP_IDS,
    UNTITLED_DRAFT_ID,
    UNTITLED_RECIPE_ID,
)
from .state import State

__all__ = [
    "DRAFT_ID",
    "EMPTY_AISLE_ID",
    "FAULT_KINDS",
    "FOREIGN_RECIPE_ID",
    "INJECTION_LINE",
    "INJECTION_RECIPE_ID",
    "NULL_PORTIONS_RECIPE_ID",
    "OTHER_OWNER",
    "SEED_LOGIN",
    "SEED_PASSWORD",
    "SEED_USERNAME",
    "SELECTED_GROUP_IDS",
    "UNTITLED_DRAFT_ID",
    "UNTITLED_RECIPE_ID",
    "Aisle",
    "Draft",
    "FakeCooked",
    "Fault",
    "ProductGroup",
    "Recipe",
    "RecordedRequest",
    "State",
]
