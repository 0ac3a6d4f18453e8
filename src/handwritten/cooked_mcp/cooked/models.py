"""Validated shapes of Cooked's answers: only the fields the tools use (never image URLs), aliased
from ``endpoints.Key``. Tolerant where Cooked's own app is (a ``?`` key suffix, a bare list, two
draft ID keys), strict where a tool would otherwise lie (IDs, markdown).
"""

from __future__ import annotations

from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, model_validator

from cooked_mcp.cooked.endpoints import Key


# implements: api-client.RESPONSES.2, tools.RESPONSES.4
class _CookedModel(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)


def _flag(key: str) -> AliasChoices:
    """A boolean key read as Cooked may spell it, ``can-edit`` or ``can-edit?`` (the plain one wins)."""
    return AliasChoices(key, f"{key}?")


class LoginResult(_CookedModel):
    username: str = Field(alias=Key.USERNAME, min_length=1)


# implements: recipes.READ.4, tools.RESPONSES.3
class CookedRecipeSummary(_CookedModel):
    id: str = Field(alias=Key.ID, min_length=1)
    title: str | None = Field(default=None, alias=Key.TITLE)


class RecipeList(_CookedModel):
    """``{"items": [...]}`` or the bare array, both seen from Cooked."""

    items: list[CookedRecipeSummary] = Field(alias=Key.ITEMS)

    @model_validator(mode="before")
    @classmethod
    def _bare_array(cls, data: Any) -> Any:
        return {Key.ITEMS: data} if isinstance(data, list) else data


class Preview(_CookedModel):
    title: str | None = Field(default=None, alias=Key.TITLE)
    description: str = Field(alias=Key.DESCRIPTION)
    portions: int | None = Field(default=None, alias=Key.PORTIONS)


# implements: recipes.READ.9
class CookedRecipe(Preview):
    id: str = Field(alias=Key.ID, min_length=1)
    owner: str | None = Field(default=None, alias=Key.OWNER)
    can_edit: bool | None = Field(default=None, alias=Key.CAN_EDIT, validation_alias=_flag(Key.CAN_EDIT))


class SavedRef(_CookedModel):
    recipe_id: str = Field(alias=Key.RECIPE_ID, min_length=1)


class ImportResult(_CookedModel):
    """Either the recipe was saved at once (``recipe_id``) or a draft awaits review (``extraction_id``)."""

    recipe_id: str | None = Field(default=None, alias=Key.RECIPE_ID, min_length=1)
    extraction_id: str | None = Field(
        default=None,
        alias=Key.EXTRACTION_ID,
        validation_alias=AliasChoices(Key.EXTRACTION_ID, Key.EXTRACT_ID),
        min_length=1,
    )

    @model_validator(mode="after")
    def _exactly_one(self) -> ImportResult:
        if (self.recipe_id is None) == (self.extraction_id is None):
            raise ValueError(
                f"exactly one of {Key.RECIPE_ID} and {Key.EXTRACTION_ID} (or {Key.EXTRACT_ID}) must be present"
            )
        return self


class CookedDraft(Preview):
    id: str = Field(
        alias=Key.ID, validation_alias=AliasChoices(Key.ID, Key.EXTRACT_ID, Key.EXTRACTION_ID), min_length=1
    )


class CookedProductGroup(_CookedModel):
    id: str = Field(alias=Key.ID, min_length=1)
    name: str = Field(alias=Key.NAME)
    quantity: str | None = Field(default=None, alias=Key.QUANTITY)
    selected: bool = Field(alias=Key.SELECTED, validation_alias=_flag(Key.SELECTED))


class CookedAisle(_CookedModel):
    id: str = Field(alias=Key.ID, min_length=1)
    name: str = Field(alias=Key.NAME)
    product_groups: list[CookedProductGroup] = Field(alias=Key.PRODUCT_GROUPS)


class ShoppingList(_CookedModel):
    aisles: list[CookedAisle] = Field(alias=Key.AISLES)
    recipe_ids: list[str] | None = Field(default=None, alias=Key.RECIPE_IDS)


class AddResult(_CookedModel):
    added: int = Field(alias=Key.ADDED, ge=0)


class GroupRef(_CookedModel):
    id: str = Field(alias=Key.ID, min_length=1)


class SelectedSet(_CookedModel):
    product_group_ids: list[str] = Field(alias=Key.PRODUCT_GROUP_IDS)


class Removed(_CookedModel):
    removed: list[str] = Field(alias=Key.REMOVED)


class Empty(_CookedModel):
    """``{}``: the answer of operations that return nothing."""
