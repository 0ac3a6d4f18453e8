"""A stateful fake of the Cooked REST API (../shared/cooked-api.md) for tests, the demo and the benchmark."""

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
