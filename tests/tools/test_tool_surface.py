"""The five tools as an MCP client sees them: names, titles, annotations, schemas.

These run the generated registrations through a real mcp SDK client session
(in memory); test_stdio_listing.py repeats the listing over stdio against the
real cooked-mcp process.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from sessions import call

from cooked_mcp_generated.models import (
    ChangeShoppingListOutput,
    DeleteRecipeOutput,
    PreviewRecipeTextOutput,
    ReadOutput,
    SaveRecipeOutput,
)
from cooked_mcp_generated.tools import create_server
from cooked_mcp_runtime.results import ToolCall, ToolResult

pytestmark = pytest.mark.anyio

TOOL_NAMES = ["read", "preview_recipe_text", "save_recipe", "delete_recipe", "change_shopping_list"]
STUB_OUTPUTS: dict[str, Any] = {
    "read": ReadOutput(target="recipes"),
    "preview_recipe_text": PreviewRecipeTextOutput(markdown="## Soup", saved=False),
    "save_recipe": SaveRecipeOutput(source="prepared", saved=True, recipe_id="r-1"),
    "delete_recipe": DeleteRecipeOutput(recipe_id="r-1", deleted=True),
    "change_shopping_list": ChangeShoppingListOutput(action="clear", cleared=True),
}


class RecordingHandlers:
    """Stands in for the Cooked handlers: records calls, answers trivially."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def __getattr__(self, name: str) -> Any:
        if name not in TOOL_NAMES:
            raise AttributeError(name)

        async def handler(args: Any, call: ToolCall) -> ToolResult[Any]:
            self.calls.append((name, args))
            return ToolResult("ok", STUB_OUTPUTS[name])

        return handler


async def list_tools() -> dict[str, types.Tool]:
    async with Client(create_server(RecordingHandlers(), version="test")) as client:
        result = await client.list_tools()
    return {tool.name: tool for tool in result.tools}


async def recorded(
    arguments: dict[str, Any], tool: str = "read"
) -> tuple[types.CallToolResult, RecordingHandlers]:
    """One call on the generated server with handlers that record what they were given."""
    handlers = RecordingHandlers()
    async with Client(create_server(handlers, version="test")) as client:
        return await call(client, tool, arguments), handlers


def error_text(result: types.CallToolResult) -> str:
    assert result.is_error, result
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


@pytest.mark.req(
    "tools.SURFACE.1",
    "tools.SURFACE.2",
    "tools.SURFACE.3",
    "tools.SURFACE.4",
    "tools.SURFACE.5",
    "tools.SURFACE.6",
)
async def test_exactly_the_five_task_shaped_tools() -> None:
    tools = await list_tools()
    assert list(tools) == TOOL_NAMES
    # Cooked's contract has 16 endpoints; the surface is five tools, not a REST mirror.
    assert len(tools) < 16
    assert not any(name.startswith(("get_", "post_", "put_")) for name in tools)


@pytest.mark.req("tools.SURFACE.7", "server.COMPATIBILITY.1")
async def test_no_resources_and_no_client_capabilities_needed() -> None:
    server = create_server(RecordingHandlers(), version="test")
    async with Client(server) as client:
        assert client.server_capabilities.resources is None
        assert client.server_capabilities.tools is not None
        with pytest.raises(MCPError):
            await client.list_resources()
        # A client that declares no capabilities at all (no roots, sampling, resources) can use every tool.
        listed = await client.list_tools()
        assert len(listed.tools) == 5


@pytest.mark.req("server.IDENTITY.1")
async def test_server_identifies_itself_as_cooked() -> None:
    async with Client(create_server(RecordingHandlers(), version="1.2.3")) as client:
        assert client.server_info is not None
        assert client.server_info.name == "Cooked"
        assert client.server_info.version == "1.2.3"


@pytest.mark.req("tools.SURFACE.8", "tools.READ_TOOL.1", "tools.SCHEMA.1")
async def test_read_targets_are_an_explicit_enumeration() -> None:
    schema = (await list_tools())["read"].input_schema
    assert schema["properties"]["target"]["enum"] == ["recipes", "recipe", "shopping_list"]
    assert "target" in schema["required"]


@pytest.mark.req("tools.SAVE_RECIPE_TOOL.1", "tools.CHANGE_SHOPPING_LIST_TOOL.1", "tools.SCHEMA.1")
async def test_save_sources_and_shopping_actions_are_explicit_enumerations() -> None:
    tools = await list_tools()
    assert tools["save_recipe"].input_schema["properties"]["source"]["enum"] == [
        "raw_text",
        "prepared",
        "url",
        "draft",
        "existing",
    ]
    assert tools["change_shopping_list"].input_schema["properties"]["action"]["enum"] == [
        "add",
        "update_item",
        "replace_selection",
        "add_selection",
        "remove_selection",
        "remove",
        "clear",
    ]


@pytest.mark.req("tools.READ_TOOL.5", "tools.READ_TOOL.6", "tools.SCHEMA.2")
async def test_page_and_limit_carry_bounds_and_defaults() -> None:
    props = (await list_tools())["read"].input_schema["properties"]
    assert props["page"]["default"] == 1 and props["page"]["minimum"] == 1
    assert (props["limit"]["default"], props["limit"]["minimum"], props["limit"]["maximum"]) == (10, 1, 30)


@pytest.mark.req("tools.SCHEMA.2")
@pytest.mark.parametrize(
    ("arguments", "parameter"),
    [
        pytest.param({"target": "recipes", "page": 0}, "page", marks=pytest.mark.req("tools.READ_TOOL.5")),
        pytest.param({"target": "recipes", "limit": 0}, "limit", marks=pytest.mark.req("tools.READ_TOOL.6")),
        pytest.param({"target": "recipes", "limit": 31}, "limit", marks=pytest.mark.req("tools.READ_TOOL.6")),
        pytest.param(
            {"target": "recipes", "limit": "ten"}, "limit", marks=pytest.mark.req("tools.READ_TOOL.6")
        ),
        pytest.param(
            {"target": "recipes", "limit": "31"}, "limit", marks=pytest.mark.req("tools.READ_TOOL.6")
        ),
        pytest.param(
            {"target": "recipes", "limit": 10.5}, "limit", marks=pytest.mark.req("tools.READ_TOOL.6")
        ),
    ],
)
async def test_out_of_bounds_numbers_are_rejected_before_the_handler(
    arguments: dict[str, Any], parameter: str
) -> None:
    result, handlers = await recorded(arguments)
    assert parameter in error_text(result)
    assert handlers.calls == []


@pytest.mark.req("tools.READ_TOOL.5", "tools.READ_TOOL.6")
async def test_defaults_reach_the_handler() -> None:
    result, handlers = await recorded({"target": "recipes"})
    assert not result.is_error
    [(_, args)] = handlers.calls
    assert (args.page, args.limit) == (1, 10)
    result, handlers = await recorded({"target": "recipes", "page": 3, "limit": 30, "query": "soup"})
    [(_, args)] = handlers.calls
    assert (args.page, args.limit, args.query) == (3, 30, "soup")


@pytest.mark.req("tools.READ_TOOL.2", "tools.READ_TOOL.3", "tools.READ_TOOL.4")
async def test_read_recipe_requires_recipe_id_and_recipes_accepts_query() -> None:
    result, handlers = await recorded({"target": "recipe"})
    text = error_text(result)
    assert "recipe_id is required when target is 'recipe'" in text
    assert handlers.calls == []
    result, handlers = await recorded({"target": "recipe", "recipe_id": "r-1"})
    assert not result.is_error and handlers.calls[0][1].recipe_id == "r-1"
    result, handlers = await recorded({"target": "recipes", "query": "soup"})
    assert not result.is_error and handlers.calls[0][1].query == "soup"
    result, handlers = await recorded({"target": "recipe", "recipe_id": "r-1", "query": "soup"})
    assert "query is not used when target is 'recipe'" in error_text(result)


@pytest.mark.req("tools.PREVIEW_RECIPE_TEXT_TOOL.1", "tools.PREVIEW_RECIPE_TEXT_TOOL.2")
async def test_preview_requires_title_and_text() -> None:
    schema = (await list_tools())["preview_recipe_text"].input_schema
    assert schema["required"] == ["title", "text"]
    for missing in ("title", "text"):
        arguments = {"title": "Soup", "text": "water"}
        del arguments[missing]
        result, handlers = await recorded(arguments, tool="preview_recipe_text")
        assert f"{missing} is required" in error_text(result)
        assert handlers.calls == []


def case(*values: Any, proves: tuple[str, ...] | str) -> Any:
    """A case that cites only the requirements it proves itself."""
    return pytest.param(*values, marks=pytest.mark.req(*([proves] if isinstance(proves, str) else proves)))


SAVE_CASES = [
    case("raw_text", {"title": "Soup", "text": "water, salt"}, proves="tools.SAVE_RECIPE_TOOL.2"),
    case(
        "prepared", {"title": "Soup", "markdown": "## Soup", "portions": 2}, proves="tools.SAVE_RECIPE_TOOL.3"
    ),
    case("url", {"url": "https://example.org/soup"}, proves="tools.SAVE_RECIPE_TOOL.4"),
    case(
        "draft",
        {"draft_id": "x-1", "markdown": "## Soup", "portions": None},
        proves="tools.SAVE_RECIPE_TOOL.5",
    ),
    case(
        "existing",
        {"recipe_id": "r-1", "markdown": "## Soup", "portions": 4},
        proves="tools.SAVE_RECIPE_TOOL.6",
    ),
]


@pytest.mark.parametrize(("source", "complete"), SAVE_CASES)
async def test_each_save_source_requires_its_parameters(source: str, complete: dict[str, Any]) -> None:
    result, handlers = await recorded({"source": source, **complete}, tool="save_recipe")
    assert not result.is_error, result
    assert handlers.calls[0][1].source == source
    for missing in complete:
        partial = {k: v for k, v in complete.items() if k != missing}
        result, handlers = await recorded({"source": source, **partial}, tool="save_recipe")
        assert f"{missing} is required when source is {source!r}" in error_text(result)
        assert handlers.calls == []


@pytest.mark.req("tools.DELETE_RECIPE_TOOL.1")
async def test_delete_requires_recipe_id() -> None:
    result, handlers = await recorded({}, tool="delete_recipe")
    assert "recipe_id is required" in error_text(result)
    assert handlers.calls == []
    result, handlers = await recorded({"recipe_id": ""}, tool="delete_recipe")
    assert "recipe_id" in error_text(result)
    result, handlers = await recorded({"recipe_id": "r-1"}, tool="delete_recipe")
    assert not result.is_error and handlers.calls[0][1].recipe_id == "r-1"


SHOPPING_CASES = [
    case(
        "add",
        {"ingredients": "4 eggs\n1 can tomatoes"},
        {"recipe_id": "r-1"},
        proves=("tools.CHANGE_SHOPPING_LIST_TOOL.2", "tools.CHANGE_SHOPPING_LIST_TOOL.3"),
    ),
    case(
        "update_item",
        {"product_group_id": "pg-1"},
        {"name": "Eggs", "quantity": None, "aisle_id": "a", "selected": True},
        proves=("tools.CHANGE_SHOPPING_LIST_TOOL.4", "tools.CHANGE_SHOPPING_LIST_TOOL.5"),
    ),
    case(
        "replace_selection", {"product_group_ids": ["pg-1"]}, {}, proves="tools.CHANGE_SHOPPING_LIST_TOOL.6"
    ),
    case("add_selection", {"product_group_ids": ["pg-1"]}, {}, proves="tools.CHANGE_SHOPPING_LIST_TOOL.7"),
    case("remove_selection", {"product_group_ids": ["pg-1"]}, {}, proves="tools.CHANGE_SHOPPING_LIST_TOOL.8"),
    case("remove", {"product_group_ids": ["pg-1", "pg-2"]}, {}, proves="tools.CHANGE_SHOPPING_LIST_TOOL.9"),
    case("clear", {}, {}, proves="tools.CHANGE_SHOPPING_LIST_TOOL.10"),
]


@pytest.mark.parametrize(("action", "required", "optional"), SHOPPING_CASES)
async def test_each_shopping_action_requires_and_accepts_its_parameters(
    action: str, required: dict[str, Any], optional: dict[str, Any]
) -> None:
    result, handlers = await recorded({"action": action, **required, **optional}, tool="change_shopping_list")
    assert not result.is_error, result
    for name, value in optional.items():
        assert getattr(handlers.calls[0][1], name) == value
    for missing in required:
        partial = {k: v for k, v in required.items() if k != missing}
        result, handlers = await recorded({"action": action, **partial}, tool="change_shopping_list")
        assert f"{missing} is required when action is {action!r}" in error_text(result)
        assert handlers.calls == []


@pytest.mark.req("tools.CHANGE_SHOPPING_LIST_TOOL.9", "tools.SCHEMA.4")
async def test_empty_id_lists_and_unknown_modes_are_rejected() -> None:
    result, handlers = await recorded(
        {"action": "remove", "product_group_ids": []}, tool="change_shopping_list"
    )
    assert "product_group_ids" in error_text(result)
    for tool, arguments, parameter in [
        ("read", {"target": "recipe_list"}, "target"),
        ("save_recipe", {"source": "clipboard"}, "source"),
        ("change_shopping_list", {"action": "delete_everything"}, "action"),
    ]:
        result, handlers = await recorded(arguments, tool=tool)
        assert parameter in error_text(result)
        assert "Nothing was sent to Cooked" in error_text(result)
        assert handlers.calls == []


@pytest.mark.req("tools.SCHEMA.4")
async def test_unknown_parameters_are_rejected() -> None:
    result, handlers = await recorded({"target": "recipes", "username": "bob"})
    assert "unknown parameter 'username'" in error_text(result)
    assert handlers.calls == []


@pytest.mark.req("tools.SCHEMA.4", "tools.SURFACE.1")
async def test_an_unknown_tool_is_a_protocol_error_naming_the_available_tools() -> None:
    """The MCP spec lists unknown tools among protocol errors (JSON-RPC -32602), not tool results.

    tools.SCHEMA.4 is the closest requirement: it covers rejecting what the tools do not offer.
    """
    handlers = RecordingHandlers()
    async with Client(create_server(handlers, version="test")) as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool("get_api_saved", {})
    assert caught.value.code == -32602
    assert "Unknown tool 'get_api_saved'" in caught.value.message
    assert ", ".join(TOOL_NAMES) in caught.value.message
    assert handlers.calls == []


@pytest.mark.req("tools.ANNOTATIONS.1", "tools.ANNOTATIONS.2", "tools.ANNOTATIONS.3", "tools.ANNOTATIONS.6")
async def test_read_only_and_destructive_annotations() -> None:
    tools = await list_tools()
    hints = {name: tool.annotations for name, tool in tools.items()}
    for name in ("read", "preview_recipe_text"):
        assert hints[name] is not None and hints[name].read_only_hint is True
    for name in ("save_recipe", "delete_recipe", "change_shopping_list"):
        annotations = hints[name]
        assert annotations is not None
        assert annotations.read_only_hint is False
        assert annotations.destructive_hint is True
    assert hints["read"] is not None and hints["read"].destructive_hint is False


@pytest.mark.req("tools.ANNOTATIONS.4", "tools.ANNOTATIONS.5")
async def test_every_tool_is_open_world_and_titled() -> None:
    for tool in (await list_tools()).values():
        assert tool.annotations is not None
        assert tool.annotations.open_world_hint is True
        assert tool.title and tool.annotations.title == tool.title


@pytest.mark.req("tools.NAMING.1", "tools.NAMING.2")
async def test_names_are_concise_and_do_not_repeat_the_server_name() -> None:
    for name in await list_tools():
        # Clients prefix tool names, e.g. Claude Code's mcp__<server>__<tool>, within a 64-character limit.
        assert len(f"mcp__Cooked__{name}") <= 40
        assert "cooked" not in name.lower()


@pytest.mark.req("tools.READ_WRITE_SPLIT.1", "tools.READ_WRITE_SPLIT.2", "tools.READ_WRITE_SPLIT.3")
async def test_reads_writes_previews_and_deletes_are_separate_tools() -> None:
    tools = await list_tools()
    read_only = {n for n, t in tools.items() if t.annotations and t.annotations.read_only_hint}
    assert read_only == {"read", "preview_recipe_text"}
    save_props = tools["save_recipe"].input_schema["properties"]
    assert "delete" not in " ".join(save_props["source"]["enum"])
    assert set(tools["delete_recipe"].input_schema["properties"]) == {"recipe_id"}
    assert "preview" not in save_props["source"]["enum"]


@pytest.mark.req("tools.SCHEMA.3", "tools.SCHEMA.5")
async def test_descriptions_state_limits_follow_ups_and_destructive_actions() -> None:
    tools = await list_tools()
    read = tools["read"].description or ""
    assert "at most 30" in read and "save_recipe" in read and "change_shopping_list" in read
    assert "NOT saved" in (tools["save_recipe"].description or "")
    assert "save_recipe" in (tools["preview_recipe_text"].description or "")
    assert "cannot be undone" in (tools["delete_recipe"].description or "")
    shopping = tools["change_shopping_list"].description or ""
    destructive_part = shopping[shopping.index("DESTRUCTIVE") :]
    non_destructive_part = shopping[: shopping.index("DESTRUCTIVE")]
    assert "`remove`" in destructive_part and "`clear`" in destructive_part
    for action in ("add", "update_item", "replace_selection", "add_selection", "remove_selection"):
        assert f"`{action}`" in non_destructive_part


@pytest.mark.req("tools.SCHEMA.1", "tools.SCHEMA.2", "tools.SCHEMA.4")
async def test_input_schemas_are_flat_objects_every_converter_takes() -> None:
    """No composition keyword, no $ref and no additionalProperties (google-genai's MCP
    conversion crashes on ``additionalProperties: false``; unknown parameters are refused by
    the validation step, see test_unknown_parameters_are_rejected)."""
    for tool in (await list_tools()).values():
        schema = tool.input_schema
        assert schema["type"] == "object"
        assert "additionalProperties" not in schema
        assert not {"oneOf", "anyOf", "allOf", "$ref", "$defs"} & set(schema)
        for prop in schema["properties"].values():
            assert not {"$ref", "oneOf", "anyOf", "allOf", "const"} & set(prop)
            # The one union is a nullable parameter: one type and "null", with its description on top.
            kind = prop["type"]
            assert isinstance(kind, str) or (len(kind) == 2 and kind[1] == "null"), prop
            assert prop["description"]
        assert tool.output_schema is not None and tool.output_schema["type"] == "object"


# Every operation the feature files describe, and the tool call that performs it.
OPERATIONS = {
    "list saved recipes": ("read", "target", "recipes"),
    "search saved recipes": ("read", "target", "recipes"),
    "read one recipe": ("read", "target", "recipe"),
    "read the shopping list": ("read", "target", "shopping_list"),
    "preview recipe text": ("preview_recipe_text", None, None),
    "save raw text": ("save_recipe", "source", "raw_text"),
    "save prepared markdown": ("save_recipe", "source", "prepared"),
    "import a URL": ("save_recipe", "source", "url"),
    "save a reviewed draft": ("save_recipe", "source", "draft"),
    "update a recipe": ("save_recipe", "source", "existing"),
    "delete a recipe": ("delete_recipe", None, None),
    "add ingredients": ("change_shopping_list", "action", "add"),
    "update a product group": ("change_shopping_list", "action", "update_item"),
    "replace the selection": ("change_shopping_list", "action", "replace_selection"),
    "select more": ("change_shopping_list", "action", "add_selection"),
    "deselect some": ("change_shopping_list", "action", "remove_selection"),
    "remove product groups": ("change_shopping_list", "action", "remove"),
    "clear the list": ("change_shopping_list", "action", "clear"),
}


@pytest.mark.req("server.COMPATIBILITY.2", "server.COMPATIBILITY.3")
async def test_every_specified_operation_is_a_tool_call() -> None:
    tools = await list_tools()
    for operation, (tool, mode, value) in OPERATIONS.items():
        assert tool in tools, operation
        if mode is not None:
            assert value in tools[tool].input_schema["properties"][mode]["enum"], operation
    # Every mode value of every tool is an operation above: nothing is reachable only through REST.
    modes = {
        (name, prop, value)
        for name, tool in tools.items()
        for prop, schema in tool.input_schema["properties"].items()
        for value in schema.get("enum", [])
    }
    assert modes <= {op for op in OPERATIONS.values() if op[1] is not None}


@pytest.mark.req("tools.CHANGE_SHOPPING_LIST_TOOL.5", "shopping-list.UPDATE_ITEM.2")
async def test_an_empty_quantity_is_given_and_a_null_one_is_not() -> None:
    """Null means "not given" everywhere, so clearing the quantity has its own spelling, ""."""
    arguments = {"action": "update_item", "product_group_id": "pg-01", "quantity": ""}
    result, handlers = await recorded(arguments, tool="change_shopping_list")
    assert not result.is_error, result
    assert handlers.calls[0][1].quantity == "" and "quantity" in handlers.calls[0][1].model_fields_set
    result, handlers = await recorded(
        {**arguments, "quantity": None, "name": "Leek"}, tool="change_shopping_list"
    )
    assert not result.is_error, result
    assert handlers.calls[0][1].model_fields_set == {"action", "product_group_id", "name"}
    # Null for the only field to change leaves nothing to change.
    result, handlers = await recorded({**arguments, "quantity": None}, tool="change_shopping_list")
    assert "needs at least one field to change" in error_text(result)
    assert handlers.calls == []
