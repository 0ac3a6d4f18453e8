"""One generated model per mode: only that mode's parameters, required where the spec requires them."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter, ValidationError
from strategies import SPECS

from cooked_mcp_generated import models

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
    rules = SPECS[tool].modes
    assert rules is not None
    for value, model in SPECS[tool].arguments.models.items():
        fields = model.model_fields
        assert set(fields) == {rules.param, *rules.requires[value], *rules.accepts[value]}, value
        required = {name for name, field in fields.items() if field.is_required()}
        assert required == {rules.param, *rules.requires[value]}, value


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
def test_bounds_are_named_constants_matching_the_served_schema() -> None:
    limit = SPECS["read"].definition.input_schema["properties"]["limit"]
    assert (limit["minimum"], limit["maximum"]) == (models.READ_LIMIT_MINIMUM, models.READ_LIMIT_MAXIMUM)
    portions = SPECS["save_recipe"].definition.input_schema["properties"]["portions"]
    assert models.SAVE_RECIPE_PORTIONS_MAXIMUM == portions["maximum"] == 1000
