"""Read-only mode, end to end: only ``read`` and ``preview_recipe_text`` exist, over both transports.

Least privilege for agents that should only look: with ``COOKED_MCP_READ_ONLY=1`` or TOML
``mcp.read_only = true`` the server registers the two tools that change nothing. A write
tool is not merely refused: it does not exist, so calling it is a JSON-RPC -32602 error that
says the server is read-only and which setting made it so (the source the settings recorded,
down to ``file:line``, never a guess), and Cooked receives nothing. No
description, instruction or result points the agent at a tool that is not served. Checked on
the real process over stdio (environment variable) and over Streamable HTTP (TOML file), plus
the in-memory wiring.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import BlockingPortal
from hardening_support import FIGURES, OPERATIONS, api_paths, succeeded
from mcp import Client
from mcp.shared.exceptions import MCPError
from servers import http_client, http_server, server_env, stdio_client
from sessions import call

from cooked_fake import SEED_LOGIN, SEED_PASSWORD, FakeCooked
from cooked_mcp.app import build_application
from cooked_mcp.config import load_settings

pytestmark = pytest.mark.anyio

READ_ONLY_TOOLS = ["read", "preview_recipe_text"]
WRITE_CALLS = [op for op in OPERATIONS if op.tool not in READ_ONLY_TOOLS]


WRITE_TOOLS = sorted({op.tool for op in WRITE_CALLS})


def names_no_write_tool(text: str) -> bool:
    return not any(tool in text for tool in WRITE_TOOLS)


async def exercise(client: Client, fake: FakeCooked, how: str) -> int:
    """List the tools, try every write, then read: returns how many writes were refused.

    ``how`` is the setting the refusal must name as the one that made the server read-only.
    """
    tools = (await client.list_tools()).tools
    assert [tool.name for tool in tools] == READ_ONLY_TOOLS
    assert all(tool.annotations is not None and tool.annotations.read_only_hint for tool in tools)
    assert all(names_no_write_tool(tool.description or "") for tool in tools), tools
    assert names_no_write_tool(client.instructions or "")
    fake.reset()
    for op in WRITE_CALLS:
        with pytest.raises(MCPError) as caught:
            await call(client, op.tool, op.arguments)
        assert caught.value.code == -32602
        message = caught.value.message
        assert f"Tool {op.tool!r} is not available: this server runs read-only ({how}" in message, message
        assert "Available tools: read, preview_recipe_text." in message
    assert fake.requests == [], "a write tool reached Cooked in read-only mode"
    # The read-only tools still work, and what they answer suggests no write tool.
    texts = [
        succeeded(await call(client, "read", {"target": "shopping_list"})),
        succeeded(await call(client, "preview_recipe_text", {"title": "Stew", "text": "2 carrots"})),
        succeeded(await call(client, "read", {"target": "recipe", "recipe_id": "r-0001"})),
    ]
    assert all(names_no_write_tool(text) for text in texts), texts
    assert [path for path in api_paths(fake)] == [
        "/api/user/alice/shopping-list",
        "/api/recipes/preview",
        "/api/saved/r-0001",
    ]
    return len(WRITE_CALLS)


@pytest.mark.req("tools.READ_WRITE_SPLIT.1", "server.CONFIG.1", "server.CONFIG.2", "server.CONFIG.3")
@pytest.mark.parametrize(
    ("environ", "toml", "expected"),
    [
        ({"COOKED_MCP_READ_ONLY": "1"}, "", True),
        ({"COOKED_MCP_READ_ONLY": "yes"}, "", True),
        ({}, "[mcp]\nread_only = true\n", True),
        ({"COOKED_MCP_READ_ONLY": "0"}, "[mcp]\nread_only = true\n", False),
        ({}, "", False),
    ],
)
def test_read_only_comes_from_the_environment_or_toml(
    tmp_path: Path, environ: dict[str, str], toml: str, expected: bool
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(toml, "utf-8")
    env = {"COOKED_LOGIN_USERNAME": SEED_LOGIN, "COOKED_LOGIN_PASSWORD": SEED_PASSWORD, **environ}
    assert load_settings(config_path=str(config), environ=env).read_only is expected


@pytest.mark.req("tools.READ_WRITE_SPLIT.1", "tools.ANNOTATIONS.1", "server.CONFIG.2")
async def test_read_only_wiring_in_memory(
    fake: FakeCooked, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The refusal names the setting the settings used, not whatever the process environment holds."""
    monkeypatch.setenv("COOKED_MCP_READ_ONLY", "0")  # not what the settings were loaded from
    config = tmp_path / "config.toml"
    config.write_text(f'[cooked]\nbase_url = "{fake.base_url}"\n\n[mcp]\nread_only = true\n', "utf-8")
    environ = {
        "HOME": str(tmp_path),
        "COOKED_LOGIN_USERNAME": SEED_LOGIN,
        "COOKED_LOGIN_PASSWORD": SEED_PASSWORD,
    }
    settings = load_settings(config_path=str(config), environ=environ)
    async with build_application(settings) as application, Client(application.server) as client:
        count = await exercise(client, fake, f"set by mcp.read_only in {config}:5")
    FIGURES.add("read_only", "writes_refused_in_memory", count)


@pytest.mark.req("tools.READ_WRITE_SPLIT.1", "server.CONFIG.1", "server.TRANSPORT.1")
def test_read_only_over_stdio_from_the_environment(
    portal: BlockingPortal, fake: FakeCooked, tmp_path: Path
) -> None:
    env = server_env(tmp_path, fake.base_url, COOKED_MCP_READ_ONLY="1")

    async def run() -> int:
        async with stdio_client(env) as client:
            return await exercise(client, fake, "set by the environment variable COOKED_MCP_READ_ONLY")

    FIGURES.add("read_only", "writes_refused_stdio", portal.call(run))


@pytest.mark.req("tools.READ_WRITE_SPLIT.1", "server.CONFIG.2", "server.TRANSPORT.2-2")
def test_read_only_over_http_from_toml(portal: BlockingPortal, fake: FakeCooked, tmp_path: Path) -> None:
    env = server_env(tmp_path, fake.base_url)
    config = tmp_path / "config.toml"
    config.write_text("[mcp]\nread_only = true\n", "utf-8")

    async def run(url: str) -> Any:
        async with http_client(url) as client:
            return await exercise(client, fake, f"set by mcp.read_only in {config}:2")

    with http_server(env, "--config", str(config)) as server:
        FIGURES.add("read_only", "writes_refused_http", portal.call(run, server.url))
