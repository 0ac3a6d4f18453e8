"""An MCP client session against the real server wiring and a fake Cooked.

In memory, so it is fast; the Cooked side is real HTTP to the fake on
127.0.0.1, so the requests Cooked receives can be asserted exactly.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
from mcp import Client
from pydantic import SecretStr

from cooked_fake import SEED_LOGIN, SEED_PASSWORD, FakeCooked, RecordedRequest
from cooked_mcp.app import build_server
from cooked_mcp.config import default
from cooked_mcp.cooked.client import CookedClient


def client_for(fake: FakeCooked, password: str = SEED_PASSWORD, **kwargs: Any) -> CookedClient:
    """A client logging in to the fake Cooked as its seed account (over real HTTP on 127.0.0.1)."""
    return CookedClient(fake.base_url, SEED_LOGIN, SecretStr(password), **kwargs)


@asynccontextmanager
async def cooked_session(
    fake: FakeCooked,
    *,
    read_only_from: str | None = None,
    import_answer_seconds: float = default("import_answer_seconds"),
    **client_options: Any,
) -> AsyncIterator[Client]:
    """A connected MCP client whose server talks to ``fake`` as the seed user (read-only when
    ``read_only_from`` names the setting that made it so)."""
    cooked = client_for(fake, **client_options)
    server = build_server(cooked, read_only_from=read_only_from, import_answer_seconds=import_answer_seconds)
    async with cooked, Client(server) as client:
        yield client


#: Every call through ``call`` comes back within this many seconds, whatever Cooked does.
CALL_TIMEOUT = 30.0


async def call(
    on: Client | FakeCooked, tool: str, arguments: dict[str, Any] | None = None
) -> types.CallToolResult:
    """One tool call on ``on``'s MCP session or, given a fake Cooked, on a fresh in-memory session
    on it, that must come back within CALL_TIMEOUT: a hang fails the test, never the run."""
    with anyio.fail_after(CALL_TIMEOUT):
        if isinstance(on, FakeCooked):
            async with cooked_session(on) as client:
                return await client.call_tool(tool, arguments)
        return await on.call_tool(tool, arguments)


def text_of(result: types.CallToolResult) -> str:
    """The text the agent sees."""
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


async def until(fake: FakeCooked, done: Callable[[list[RecordedRequest]], bool], seconds: float = 20) -> None:
    """Wait, without blocking the event loop, until ``done`` holds for the fake's recorded requests
    (checked as each arrives and as each answer is chosen): the event, not a sleep or a poll."""
    await anyio.to_thread.run_sync(fake.wait_until, done, seconds)
