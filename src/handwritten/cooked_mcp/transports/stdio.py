"""MCP over the process's stdin and stdout."""

from __future__ import annotations

import anyio
from mcp.server.stdio import stdio_server

from ..app import build_server
from ..config import Settings
from ..cooked.client import CookedClient
from ..logging_setup import register_secret_source


def serve_stdio(settings: Settings) -> int:
    anyio.run(_serve, settings)
    return 0


async def _serve(settings: Settings) -> None:
    async with CookedClient(settings.base_url, settings.username, settings.password) as client:
        register_secret_source(client.secret_values)
        server = build_server(client, read_only=settings.read_only)
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
