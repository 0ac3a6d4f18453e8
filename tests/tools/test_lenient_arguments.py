"""What real MCP clients send: defaults and nulls for every property, numbers as strings.

Clients that fill in a schema's defaults, or send every property with null where unused
(the OpenAI Agents SDK's strict-schema option), must be able to use every tool and mode;
whatever is still wrong is refused, naming the parameter, before any handler runs.
The validation step is cooked_mcp_runtime.arguments, driven by rules generated from
features/tools.yaml; these tests go through the generated registrations and an MCP client.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from servers import stdio_client
from strategies import ANY_CHARACTER, SPECS, properties, valid_arguments
from test_tool_surface import error_text, recorded

from cooked_fake import FakeCooked
from cooked_mcp_runtime.arguments import InvalidArguments

pytestmark = pytest.mark.anyio

TOOLS = sorted(SPECS)
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def null_filled(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """What a strict-schema client sends: every property, null where it has nothing to say."""
    return {name: arguments.get(name) for name in properties(tool)}


_PLAINEST = {"string": "", "array": [], "boolean": False}


def blank_filled(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """What a strict model may send instead: the plainest value of its type ("" / [] / false /
    the default) for every parameter the mode does not use, null for the ones it uses."""
    rules = SPECS[tool].arguments
    mode = arguments[rules.modes.param] if rules.modes is not None else ""
    used = rules.models[mode].model_fields
    filled = dict(arguments)
    for name, schema in properties(tool).items():
        if name in arguments:
            continue
        kind = schema["type"][0] if isinstance(schema["type"], list) else schema["type"]
        if name in used:
            filled[name] = None
        else:
            filled[name] = schema.get("default", _PLAINEST.get(kind))
    return filled


def default_filled(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """What a default-filling client sends: every property that declares a default, at it."""
    defaults = {name: p["default"] for name, p in properties(tool).items() if "default" in p}
    return {**defaults, **arguments}


@pytest.mark.req("server.COMPATIBILITY.2", "tools.SCHEMA.4")
@pytest.mark.parametrize("tool", TOOLS)
@FAST
@given(data=st.data())
def test_null_blank_and_default_filled_arguments_mean_what_they_leave_out(
    tool: str, data: st.DataObject
) -> None:
    """server.COMPATIBILITY.2 (every operation reachable through the tools) is the closest
    requirement: without this, strict-schema clients could reach none of the moded tools.
    Null means "not given" for every parameter the call leaves out, in every mode."""
    arguments = data.draw(valid_arguments(tool))
    rules = SPECS[tool].arguments
    plain = rules.validate(arguments)
    expected = plain.model_dump(exclude_unset=True)
    assert rules.validate(null_filled(tool, arguments)).model_dump(exclude_unset=True) == expected
    assert rules.validate(blank_filled(tool, arguments)).model_dump(exclude_unset=True) == expected
    defaulted = rules.validate(default_filled(tool, arguments))
    assert type(defaulted) is type(plain) and defaulted.model_dump() == plain.model_dump()


@pytest.mark.req("tools.READ_TOOL.5", "tools.READ_TOOL.6", "tools.SCHEMA.2")
@pytest.mark.parametrize(
    ("sent", "page", "limit"),
    [("5", 5, 10), (" 7 ", 7, 10), ("+2", 2, 10), ("1", 1, 10), (3.0, 3, 10)],
)
async def test_an_integer_sent_as_a_numeric_string_is_read_as_that_integer(
    sent: str | float, page: int, limit: int
) -> None:
    """3.0 is an integer to JSON Schema, so a client that validated against the served schema sends it."""
    result, handlers = await recorded({"target": "recipes", "page": sent})
    assert not result.is_error, result
    [(_, args)] = handlers.calls
    assert (args.page, args.limit) == (page, limit)


@pytest.mark.req("tools.READ_TOOL.6", "tools.SCHEMA.2")
@pytest.mark.parametrize(
    "sent", ["31", "0", "-1", "3.5", "ten", "", "1e3", "99999999999999999999", 3.5, 31.0, 1e300]
)
async def test_a_numeric_string_keeps_every_bound_and_anything_else_is_refused(sent: str | float) -> None:
    result, handlers = await recorded({"target": "recipes", "limit": sent})
    text = error_text(result)
    assert text.startswith("Invalid arguments for read: limit ")
    assert handlers.calls == []


@pytest.mark.req("tools.READ_TOOL.5", "tools.READ_TOOL.6", "tools.SCHEMA.4")
async def test_an_unused_parameter_is_ignored_at_its_plainest_value_and_refused_otherwise() -> None:
    result, handlers = await recorded({"target": "shopping_list", "page": 1, "limit": 10, "query": None})
    assert not result.is_error, result
    assert type(handlers.calls[0][1]).__name__ == "ReadShoppingList"
    # What a strict model fills in: "" for strings, the default for page and limit.
    strict = {"target": "shopping_list", "recipe_id": "", "query": "", "page": 1, "limit": 10}
    result, handlers = await recorded(strict)
    assert not result.is_error, result
    assert handlers.calls[0][1].model_fields_set == {"target"}
    result, handlers = await recorded({"target": "shopping_list", "page": 2})
    assert "page is not used when target is 'shopping_list'" in error_text(result)
    assert handlers.calls == []
    # A value that would mean something is refused with the message it always had.
    result, handlers = await recorded({**strict, "recipe_id": "r-1"})
    assert error_text(result) == (
        "Invalid arguments for read: recipe_id is not used when target is 'shopping_list'; "
        "remove it (or send null). Nothing was sent to Cooked."
    )
    assert handlers.calls == []
    # True is not the default 1, and "1" is: a numeric string counts as its integer.
    result, _ = await recorded({"target": "recipe", "recipe_id": "r-1", "page": True})
    assert "page is not used when target is 'recipe'" in error_text(result)
    result, handlers = await recorded({"target": "recipe", "recipe_id": "r-1", "page": "1"})
    assert not result.is_error and handlers.calls[0][1].recipe_id == "r-1"


@pytest.mark.req("tools.SAVE_RECIPE_TOOL.2", "tools.SAVE_RECIPE_TOOL.3", "tools.SAVE_RECIPE_TOOL.6")
async def test_null_keeps_its_meaning_where_a_mode_uses_the_parameter() -> None:
    raw = {"source": "raw_text", "title": "Soup", "text": "water", "portions": None, "url": None}
    result, handlers = await recorded(raw, tool="save_recipe")
    assert not result.is_error, result
    assert "portions" not in handlers.calls[0][1].model_fields_set
    prepared = {"source": "prepared", "title": "Soup", "markdown": "## Soup", "portions": None}
    result, handlers = await recorded(prepared, tool="save_recipe")
    assert not result.is_error and handlers.calls[0][1].portions is None
    # Null is no value for a required parameter that does not allow it.
    result, handlers = await recorded({**prepared, "title": None}, tool="save_recipe")
    assert "title must not be null: it is required when source is 'prepared'" in error_text(result)
    assert handlers.calls == []


@pytest.mark.req("server.COMPATIBILITY.2", "tools.SAVE_RECIPE_TOOL.3", "tools.SCHEMA.2")
def test_every_optional_parameter_is_served_nullable_with_every_bound() -> None:
    portions = properties("save_recipe")["portions"]
    assert {k: v for k, v in portions.items() if k != "description"} == {
        "type": ["integer", "null"], "minimum": 1, "maximum": 1000, "nullable": True
    }  # fmt: skip
    for tool in TOOLS:
        required = SPECS[tool].definition.input_schema.get("required", [])
        for name, schema in properties(tool).items():
            if name in required:
                assert isinstance(schema["type"], str) and "nullable" not in schema, f"{tool}.{name}"
            else:
                assert schema["type"][1] == "null" and schema["nullable"] is True, f"{tool}.{name}"
    with pytest.raises(InvalidArguments, match="portions must be at most 1000"):
        SPECS["save_recipe"].arguments.validate({**_PREPARED, "portions": 1001})


_PREPARED = {"source": "prepared", "title": "Soup", "markdown": "## Soup"}


@pytest.mark.req("tools.RESPONSES.6")
@pytest.mark.parametrize(
    ("tool", "arguments", "wanted"),
    [
        pytest.param(
            "save_recipe",
            {"source": "url", "url": "ftp://example.org/x"},
            "an http:// or https:// URL",
            marks=pytest.mark.req("tools.SAVE_RECIPE_TOOL.4"),
        ),
        pytest.param(
            "save_recipe",
            {"source": "url", "url": "https://example.org/a b"},
            "without spaces",
            marks=pytest.mark.req("tools.SAVE_RECIPE_TOOL.4"),
        ),
        pytest.param(
            "change_shopping_list",
            {"action": "add", "ingredients": " \n "},
            "one line with text on it",
            marks=pytest.mark.req("tools.CHANGE_SHOPPING_LIST_TOOL.2"),
        ),
    ],
)
async def test_a_pattern_mismatch_says_what_is_wanted_not_the_regular_expression(
    tool: str, arguments: dict[str, Any], wanted: str
) -> None:
    result, handlers = await recorded(arguments, tool=tool)
    text = error_text(result)
    assert wanted in text
    assert "pattern" not in text and "^" not in text and "\\S" not in text
    assert handlers.calls == []


@pytest.mark.req("tools.RESPONSES.6", "tools.SAVE_RECIPE_TOOL.6")
async def test_a_title_with_source_existing_says_cooked_cannot_change_a_title() -> None:
    arguments = {"source": "existing", "recipe_id": "r-1", "markdown": "## Soup", "portions": 2}
    result, handlers = await recorded({**arguments, "title": "New name"}, tool="save_recipe")
    text = error_text(result)
    assert "title is not used when source is 'existing'" in text
    assert "a title cannot be changed" in text
    assert handlers.calls == []
    result, handlers = await recorded({**arguments, "title": None}, tool="save_recipe")
    assert not result.is_error, result


@pytest.mark.req("tools.RESPONSES.6", "tools.CHANGE_SHOPPING_LIST_TOOL.6", "shopping-list.SELECTION.7")
async def test_an_empty_replace_selection_says_how_to_untick_everything() -> None:
    result, handlers = await recorded(
        {"action": "replace_selection", "product_group_ids": []}, tool="change_shopping_list"
    )
    text = error_text(result)
    assert "product_group_ids needs at least 1 item" in text
    assert "to untick everything, use action=remove_selection" in text
    assert handlers.calls == []
    # The other actions taking the same parameter do not get that advice.
    result, _ = await recorded({"action": "remove", "product_group_ids": []}, tool="change_shopping_list")
    assert "untick" not in error_text(result)


# --- the MCP Inspector 0.15 form: every value of a ["T", "null"] parameter arrives as text -------

_CHANGE = SPECS["change_shopping_list"].arguments


@pytest.mark.req(
    "server.COMPATIBILITY.2", "tools.CHANGE_SHOPPING_LIST_TOOL.5", "tools.CHANGE_SHOPPING_LIST_TOOL.9"
)
@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"action": "update_item", "product_group_id": "pg-1", "selected": "true"}, {"selected": True}),
        ({"action": "update_item", "product_group_id": "pg-1", "selected": "false"}, {"selected": False}),
        ({"action": "remove", "product_group_ids": '["pg-10"]'}, {"product_group_ids": ["pg-10"]}),
        ({"action": "add_selection", "product_group_ids": ' ["a", "b"] '}, {"product_group_ids": ["a", "b"]}),
        # "false" for a parameter the mode does not use is its plainest value, as false is.
        (
            {"action": "remove", "product_group_ids": '["a"]', "selected": "false"},
            {"product_group_ids": ["a"]},
        ),
        # A string parameter keeps its text, whatever it looks like.
        (
            {"action": "update_item", "product_group_id": "pg-1", "name": "true", "quantity": '["1"]'},
            {"name": "true", "quantity": '["1"]'},
        ),
    ],
)
async def test_a_boolean_or_a_list_sent_as_text_is_read_as_that_value(
    arguments: dict[str, Any], expected: dict[str, Any]
) -> None:
    """Issue 42 item 11: before, "true" and '["pg-10"]' were refused, so remove could not be called."""
    result, handlers = await recorded(arguments, tool="change_shopping_list")
    assert not result.is_error, result
    [(_, args)] = handlers.calls
    assert {name: getattr(args, name) for name in expected} == expected


@pytest.mark.req("tools.RESPONSES.6", "tools.CHANGE_SHOPPING_LIST_TOOL.9", "tools.SCHEMA.2")
@pytest.mark.parametrize(
    ("tool", "arguments", "clause"),
    [
        (
            "change_shopping_list",
            {"action": "update_item", "product_group_id": "pg-1", "selected": "yes"},
            "selected must be true or false (got a string, not a boolean: 'yes')",
        ),
        (
            "change_shopping_list",
            {"action": "update_item", "product_group_id": "pg-1", "selected": "True"},
            "selected must be true or false (got a string, not a boolean: 'True')",
        ),
        (
            "change_shopping_list",
            {"action": "remove", "product_group_ids": "pg-10"},
            "product_group_ids must be a list of strings (got a string, not a list: 'pg-10')",
        ),
        (
            "change_shopping_list",
            {"action": "remove", "product_group_ids": '["pg-10"'},
            "product_group_ids must be a list of strings (got a string, not a list: '[\"pg-10\"')",
        ),
        (
            "change_shopping_list",
            {"action": "remove", "product_group_ids": '{"ids": ["pg-10"]}'},
            "(got a string, not a list: ",
        ),
        (
            "change_shopping_list",
            {"action": "remove", "product_group_ids": "[" * 100_000},  # too deep to read: no crash
            "product_group_ids must be a list of strings (got a string, not a list)",
        ),
        (
            "change_shopping_list",
            {"action": "remove", "product_group_ids": 5},
            "product_group_ids must be a list of strings (got an integer, not a list: 5)",
        ),
        (
            "change_shopping_list",
            {"action": "remove", "product_group_ids": "[1]"},
            "product_group_ids.0 must be a string (got an integer, not a string: 1)",
        ),
        ("change_shopping_list", {"action": "remove", "product_group_ids": "[]"}, "needs at least 1 item"),
        (
            "change_shopping_list",
            {"action": "remove", "product_group_ids": json.dumps(["pg-1"] * 501)},
            "product_group_ids takes at most 500 items",
        ),
        (
            "change_shopping_list",
            {"action": "remove", "product_group_ids": json.dumps(["p" * 201])},
            "product_group_ids.0 is too long: at most 200 characters",
        ),
        (
            "read",
            {"target": "recipes", "limit": "ten"},
            "limit must be a whole number (got a string, not an integer: 'ten')",
        ),
    ],
)
async def test_a_refusal_names_the_json_type_that_came_and_every_bound_holds_for_text(
    tool: str, arguments: dict[str, Any], clause: str
) -> None:
    result, handlers = await recorded(arguments, tool=tool)
    assert clause in error_text(result)
    assert handlers.calls == []


_ITEM = st.one_of(
    st.text(ANY_CHARACTER, max_size=4),
    st.sampled_from(["", "p" * 200, "p" * 201]),
    st.integers(),
    st.booleans(),
    st.none(),
)
_ID_LISTS = st.one_of(
    st.lists(_ITEM, max_size=4),
    st.builds(
        lambda n, item: [item] * n, st.sampled_from([499, 500, 501]), st.sampled_from(["pg-1", "p" * 201])
    ),
)


def _outcome(arguments: dict[str, Any]) -> object:
    try:
        return _CHANGE.validate(arguments).model_dump()
    except InvalidArguments as exc:
        return str(exc)


@pytest.mark.req("tools.SCHEMA.2", "shopping-list.SELECTION.7", "tools.CHANGE_SHOPPING_LIST_TOOL.5")
@FAST
@given(
    action=st.sampled_from(
        ["replace_selection", "add_selection", "remove_selection", "remove", "update_item"]
    ),
    ids=_ID_LISTS,
    selected=st.booleans(),
)
def test_a_value_read_from_text_meets_every_bound_the_value_itself_meets(
    action: str, ids: list[Any], selected: bool
) -> None:
    """Text never gets further than the value it spells: the same model, or the same refusal."""
    native: dict[str, Any] = {"action": action, "product_group_ids": ids, "selected": selected}
    if action == "update_item":
        native = {"action": action, "product_group_id": "pg-1", "selected": selected}
    as_text = {
        name: value if name in ("action", "product_group_id") else json.dumps(value)
        for name, value in native.items()
    }
    assert _outcome(as_text) == _outcome(native)


@pytest.mark.req(
    "server.COMPATIBILITY.2",
    "tools.READ_TOOL.5",
    "tools.CHANGE_SHOPPING_LIST_TOOL.5",
    "tools.CHANGE_SHOPPING_LIST_TOOL.7",
)
async def test_the_real_server_takes_arguments_sent_as_text_as_the_inspector_form_sends_them(
    process_env: dict[str, str], fake: FakeCooked
) -> None:
    async with stdio_client(process_env) as client:
        ticked = await client.call_tool(
            "change_shopping_list", {"action": "add_selection", "product_group_ids": '["pg-01"]'}
        )
        unticked = await client.call_tool(
            "change_shopping_list",
            {"action": "update_item", "product_group_id": "pg-02", "selected": "false"},
        )
        listed = await client.call_tool("read", {"target": "recipes", "page": "1", "limit": "2"})
        sent = len(fake.requests)
        refused = await client.call_tool(
            "change_shopping_list", {"action": "remove", "product_group_ids": "pg-01"}
        )
        assert len(fake.requests) == sent  # refused before any request to Cooked
        shopping = await client.call_tool("read", {"target": "shopping_list"})
    assert not ticked.is_error and not unticked.is_error and not listed.is_error, (ticked, unticked, listed)
    assert listed.structured_content is not None and len(listed.structured_content["recipes"]) == 2
    assert "(got a string, not a list: 'pg-01')" in error_text(refused)
    assert shopping.structured_content is not None
    selected = {g["id"]: g["selected"] for g in shopping.structured_content["product_groups"]}
    assert selected["pg-01"] is True and selected["pg-02"] is False
