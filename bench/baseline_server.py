"""The SDK's own floor: a bare low-level mcp server with one trivial tool, over stdio.

Started exactly like cooked-mcp (same python, clean environment) so start-up and
per-call costs can be compared with the real server's. Not imported by the benchmark:
it runs as ``python bench/baseline_server.py``.
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.server.stdio import stdio_server

_TOOL = types.Tool(
    name="echo",
    description="Answers with the text it was given.",
    input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
)


async def _list_tools(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[_TOOL])


async def _call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
    text = str((params.arguments or {}).get("text", ""))
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


async def _serve() -> None:
    server: Server[Any] = Server("baseline", version="0", on_list_tools=_list_tools, on_call_tool=_call_tool)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def main() -> None:
    anyio.run(_serve)


if __name__ == "__main__":
    main()
