"""Read-only mode, end to end: only ``read`` and ``preview_recipe_text`` exist, over both transports.

Least privilege for agents that should only look: with ``COOKED_MCP_READ_ONLY=1`` or TOML
``mcp.read_only = true`` the server registers the two tools that change nothing. A write
tool is not merely refused: it does not exist, so calling it is an unknown-tool error and
Cooked receives nothing. Checked on the real process over stdio (environment variable) and
over Streamable HTTP (TOML file), plus the in-memory wiring.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hardening_support import FIGURES, OPERATIONS, api_paths, call, session, succeeded
from mcp import Client
from servers import http_client, http_server, server_env, stdio_client
from sessions import text_of

from cooked_fake import SEED_LOGIN, SEED_PASSWORD, FakeCooked
from cooked_mcp.config import load_settings

pytestmark = pytest.mark.anyio

READ_ONLY_TOOLS = ["read", "preview_recipe_text"]
WRITE_CALLS = [op for op in OPERATIONS if op.tool not in READ_ONLY_TOOLS]


@pytest.fixture(scope="module")
def portal() -> Iterator[BlockingPortal]:
    with start_blocking_portal("asyncio") as running:
        yield running


async def exercise(client: Client, fake: FakeCooked) -> int:
    """List the tools, try every write, then read: returns how many writes were refused."""
    tools = (await client.list_tools()).tools
    assert [tool.name for tool in tools] == READ_ONLY_TOOLS
    assert all(tool.annotations is not None and tool.annotations.read_only_hint for tool in tools)
    fake.reset()
    for op in WRITE_CALLS:
        result = await call(client, op.tool, op.arguments)
        assert result.is_error and f"Unknown tool {op.tool!r}" in text_of(result), text_of(result)
        assert "read, preview_recipe_text" in text_of(result)
    assert fake.requests == [], "a write tool reached Cooked in read-only mode"
    # The read-only tools still work.
    succeeded(await call(client, "read", {"target": "shopping_list"}))
    succeeded(await call(client, "preview_recipe_text", {"title": "Stew", "text": "2 carrots"}))
    assert [path for path in api_paths(fake)] == ["/api/user/alice/shopping-list", "/api/recipes/preview"]
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


@pytest.mark.req("tools.READ_WRITE_SPLIT.1", "tools.ANNOTATIONS.1")
async def test_read_only_wiring_in_memory(fake: FakeCooked) -> None:
    async with session(fake, read_only=True) as client:
        FIGURES.add("read_only", "writes_refused_in_memory", await exercise(client, fake))


@pytest.mark.req("tools.READ_WRITE_SPLIT.1", "server.CONFIG.1", "server.TRANSPORT.1")
def test_read_only_over_stdio_from_the_environment(
    portal: BlockingPortal, fake: FakeCooked, tmp_path: Path
) -> None:
    env = server_env(
        tmp_path, fake.base_url, login=SEED_LOGIN, password=SEED_PASSWORD, COOKED_MCP_READ_ONLY="1"
    )

    async def run() -> int:
        async with stdio_client(env) as client:
            return await exercise(client, fake)

    FIGURES.add("read_only", "writes_refused_stdio", portal.call(run))


@pytest.mark.req("tools.READ_WRITE_SPLIT.1", "server.CONFIG.2", "server.TRANSPORT.2-2")
def test_read_only_over_http_from_toml(portal: BlockingPortal, fake: FakeCooked, tmp_path: Path) -> None:
    env = server_env(tmp_path, fake.base_url, login=SEED_LOGIN, password=SEED_PASSWORD)
    config = tmp_path / "config.toml"
    config.write_text("[mcp]\nread_only = true\n", "utf-8")

    async def run(url: str) -> Any:
        async with http_client(url) as client:
            return await exercise(client, fake)

    with http_server(env, "--config", str(config)) as server:
        FIGURES.add("read_only", "writes_refused_http", portal.call(run, server.url))
