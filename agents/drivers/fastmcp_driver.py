"""FastMCP's client: Client.list_tools and Client.call_tool (no conversion: the served schema as is)."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastmcp import Client

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import harness


class FastMCP:
    def __init__(self, client: Client[Any], tools: list[Any]) -> None:
        self.client = client
        self.schemas = {tool.name: dict(tool.inputSchema) for tool in tools}

    async def call(self, tool: str, arguments: dict[str, Any]) -> str:
        result = await self.client.call_tool(tool, arguments)  # raises ToolError on an error result
        return json.dumps(result.structured_content)


@asynccontextmanager
async def connect(args: Any) -> AsyncIterator[FastMCP]:
    if args.transport == "stdio":
        client = harness.run_snippet("fastmcp")["client"]
    else:
        client = Client(args.url, auth=args.token, timeout=120)
    async with client:
        yield FastMCP(client, await client.list_tools())


if __name__ == "__main__":
    harness.main("fastmcp", connect)
