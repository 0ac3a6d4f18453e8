"""Property tests: the generated argument models accept exactly what the schemas describe."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import ANY_CHARACTER, SPECS, mode_rules, properties, valid_arguments

from cooked_mcp_runtime.arguments import InvalidArguments, shown_name

TOOLS = sorted(SPECS)
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def per_tool(tools: list[str], cites: dict[str, tuple[str, ...]]) -> list[Any]:
    """One case per tool, citing what that tool's case proves beyond what every case proves."""
    return [pytest.param(tool, marks=pytest.mark.req(*cites.get(tool, ())), id=tool) for tool in tools]


def rejection(tool: str, arguments: dict[str, Any]) -> str:
    with pytest.raises(InvalidArguments) as caught:
        SPECS[tool].arguments.validate(arguments)
    return str(caught.value)


@pytest.mark.req("tools.SCHEMA.1", "tools.SCHEMA.2", "tools.SCHEMA.4")
@pytest.mark.parametrize("tool", TOOLS)
@FAST
@given(data=st.data())
def test_valid_arguments_pass_unchanged(tool: str, data: st.DataObject) -> None:
    arguments = data.draw(valid_arguments(tool))
    model = SPECS[tool].arguments.validate(arguments)
    assert model.model_dump(exclude_unset=True) == arguments


@pytest.mark.req("tools.SCHEMA.4")
@pytest.mark.parametrize(
    "tool",
    per_tool(
        [t for t in TOOLS if SPECS[t].modes],
        {
            "read": ("tools.READ_TOOL.1",),
            "save_recipe": ("tools.SAVE_RECIPE_TOOL.1",),
            "change_shopping_list": ("tools.CHANGE_SHOPPING_LIST_TOOL.1",),
        },
    ),
)
@FAST
@given(data=st.data(), wrong=st.text(ANY_CHARACTER, min_size=1, max_size=20))
def test_unknown_mode_values_are_rejected_naming_the_parameter(
    tool: str, data: st.DataObject, wrong: str
) -> None:
    rules = SPECS[tool].modes
    assert rules is not None
    arguments = data.draw(valid_arguments(tool))
    if wrong in rules.requires:
        return
    arguments[rules.param] = wrong
    assert rules.param in rejection(tool, arguments)


@pytest.mark.req("tools.SCHEMA.2")
@pytest.mark.parametrize("tool", per_tool(TOOLS, {"read": ("tools.READ_TOOL.5", "tools.READ_TOOL.6")}))
@FAST
@given(data=st.data())
def test_out_of_range_numbers_are_rejected_naming_the_parameter(tool: str, data: st.DataObject) -> None:
    arguments = data.draw(valid_arguments(tool))
    bounded = [
        (name, props) for name, props in properties(tool).items() if name in arguments and "maximum" in props
    ]
    if not bounded:
        return
    name, props = data.draw(st.sampled_from(bounded))
    arguments[name] = data.draw(
        st.one_of(
            st.integers(max_value=props["minimum"] - 1),
            st.integers(min_value=props["maximum"] + 1),
        )
    )
    assert name in rejection(tool, arguments)


@pytest.mark.req("tools.SCHEMA.4")
@pytest.mark.parametrize(
    "tool",
    per_tool(
        TOOLS,
        {
            "read": ("tools.READ_TOOL.3",),
            "save_recipe": ("tools.SAVE_RECIPE_TOOL.2",),
            "change_shopping_list": ("tools.CHANGE_SHOPPING_LIST_TOOL.6",),
        },
    ),
)
@FAST
@given(data=st.data())
def test_a_missing_per_mode_parameter_is_rejected_naming_it(tool: str, data: st.DataObject) -> None:
    arguments = data.draw(valid_arguments(tool))
    mode_value = arguments.get(SPECS[tool].modes.param, "") if SPECS[tool].modes else ""
    requires = mode_rules(tool)[mode_value][0]
    if not requires:
        return
    missing = data.draw(st.sampled_from(requires))
    del arguments[missing]
    assert f"{missing} is required" in rejection(tool, arguments)


@pytest.mark.req("tools.SCHEMA.4")
@pytest.mark.parametrize("tool", TOOLS)
@FAST
@given(data=st.data(), extra=st.text(ANY_CHARACTER, min_size=1, max_size=15))
def test_unknown_properties_are_rejected_naming_them(tool: str, data: st.DataObject, extra: str) -> None:
    arguments = data.draw(valid_arguments(tool))
    if extra in properties(tool):
        return
    arguments[extra] = data.draw(st.one_of(st.none(), st.integers(), st.text(ANY_CHARACTER, max_size=5)))
    # shown_name: a name whose repr passes 100 characters (15 astral characters do) is shortened.
    assert f"unknown parameter {shown_name(extra)}" in rejection(tool, arguments)
