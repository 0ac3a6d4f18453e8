"""The real cooked-mcp process over stdio, as a desktop MCP client starts it."""

from __future__ import annotations

from pathlib import Path

import pytest
from servers import server_env, stdio_client

from cooked_fake import FakeCooked

pytestmark = pytest.mark.anyio


@pytest.mark.req(
    "server.TRANSPORT.1",
    "server.IDENTITY.1",
    "server.IDENTITY.2",
    "tools.SURFACE.1",
    "tools.SURFACE.5",
    "tools.SURFACE.7",
    "tools.ANNOTATIONS.5",
)
async def test_stdio_by_default_lists_five_tools_with_titles_annotations_and_schemas(tmp_path: Path) -> None:
    with FakeCooked() as fake:
        env = server_env(tmp_path, fake.base_url)
        # No subcommand and no --transport: stdio is the default.
        async with stdio_client(env) as client:
            assert client.server_info is not None and client.server_info.name == "Cooked"
            assert client.server_capabilities.resources is None
            tools = (await client.list_tools()).tools
        # Listing tools needs no Cooked session: the server logs in only when a tool needs it.
        assert fake.requests == []
    assert [t.name for t in tools] == [
        "read",
        "preview_recipe_text",
        "save_recipe",
        "delete_recipe",
        "change_shopping_list",
    ]
    for tool in tools:
        assert tool.title and tool.annotations is not None and tool.annotations.title == tool.title
        assert tool.input_schema["type"] == "object" and "oneOf" not in tool.input_schema
        assert tool.output_schema is not None and tool.output_schema["type"] == "object"
