"""One generated model per mode: only that mode's parameters, required where the spec requires them."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter, ValidationError
from strategies import SPECS

from codegen.__main__ import FEATURES_DIRS
from codegen.__main__ import TABLE as TABLE_PATH
from codegen.spec import load_features, load_table
from cooked_mcp_generated import models

TABLE = {
    tool.name: tool
    for tool in load_table(
        TABLE_PATH, {r.id for d in FEATURES_DIRS for f in load_features(d) for r in f.requirements}
    ).tools
}
MODED = [name for name in sorted(SPECS) if SPECS[name].modes is not None]


#: What each tool's case proves: the mode rules of that tool only.
MODE_RULES = {
    "read": ("tools.READ_TOOL.2", "tools.READ_TOOL.3", "tools.READ_TOOL.4"),
    "save_recipe": tuple(f"tools.SAVE_RECIPE_TOOL.{n}" for n in (2, 3, 4, 5, 6)),
    "change_shopping_list": tuple(f"tools.CHANGE_SHOPPING_LIST_TOOL.{n}" for n in (2, 3, 4, 5, 10)),
}


@pytest.mark.parametrize(
    "tool", [pytest.param(tool, marks=pytest.mark.req(*MODE_RULES[tool]), id=tool) for tool in MODED]
)
def test_each_mode_model_has_exactly_its_parameters(tool: str) -> None:
    """Against the table itself: the rules the validation step uses are read off these models."""
    modes = {m.value: m for m in TABLE[tool].modes}
    rules = SPECS[tool].modes
    assert rules is not None and list(rules.models) == list(modes)
    for value, model in SPECS[tool].arguments.models.items():
        fields = model.model_fields
        assert set(fields) == {rules.param, *modes[value].requires, *modes[value].accepts}, value
        required = {name for name, field in fields.items() if field.is_required()}
        assert required == {rules.param, *modes[value].requires}, value
        assert (rules.requires[value], rules.accepts[value]) == (modes[value].requires, modes[value].accepts)


@pytest.mark.req("tools.SCHEMA.1", "tools.SCHEMA.4", "tools.SAVE_RECIPE_TOOL.1")
def test_the_arguments_type_is_a_union_discriminated_by_the_mode() -> None:
    adapter: TypeAdapter[models.SaveRecipeArguments] = TypeAdapter(models.SaveRecipeArguments)
    parsed = adapter.validate_python({"source": "url", "url": "https://example.org/soup"})
    assert isinstance(parsed, models.SaveRecipeUrl) and parsed.url == "https://example.org/soup"
    with pytest.raises(ValidationError):
        adapter.validate_python({"source": "url", "url": "https://example.org/soup", "title": "x"})
    with pytest.raises(ValidationError):
        adapter.validate_python({"source": "clipboard"})


@pytest.mark.req("tools.READ_TOOL.5", "tools.READ_TOOL.6", "tools.SCHEMA.2")
def test_the_served_bounds_and_defaults_are_the_models_own() -> None:
    """Each parameter is declared once (e.g. models.ReadLimitParam); the served schema is read off it."""
    properties = SPECS["read"].definition.input_schema["properties"]
    page, limit = properties["page"], properties["limit"]
    assert (page["minimum"], page["maximum"], page["default"]) == (1, 10000, 1)
    assert (limit["minimum"], limit["maximum"], limit["default"]) == (1, 30, 10)
    parsed = models.ReadRecipes.model_validate({"target": "recipes"})
    assert (parsed.page, parsed.limit) == (page["default"], limit["default"])
    assert models.ReadRecipes.model_validate({"target": "recipes", "limit": limit["maximum"]}).limit == 30
    for wrong in (limit["minimum"] - 1, limit["maximum"] + 1):
        with pytest.raises(ValidationError):
            models.ReadRecipes.model_validate({"target": "recipes", "limit": wrong})
    portions = SPECS["save_recipe"].definition.input_schema["properties"]["portions"]
    assert (portions["type"], portions["maximum"]) == (["integer", "null"], 1000)
    prepared = {"source": "prepared", "title": "Soup", "markdown": "## Soup"}
    assert models.SaveRecipePrepared.model_validate({**prepared, "portions": None}).portions is None
    with pytest.raises(ValidationError):
        models.SaveRecipePrepared.model_validate({**prepared, "portions": portions["maximum"] + 1})
