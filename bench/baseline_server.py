"""The SDK's own floor: a bare low-level mcp server with one trivial tool.

Started exactly like cooked-mcp (same python, clean environment) so start-up and
per-call costs can be compared with the real server's. Not imported by the benchmark:
it runs as ``python bench/baseline_server.py`` (stdio) or
``python bench/baseline_server.py --http 127.0.0.1:PORT`` (Streamable HTTP at /mcp,
served by uvicorn configured like cooked-mcp's, without the bearer-token layer).
"""

from __future__ import annotations

import sys
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


async def _call_tool(
    ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    text = str((params.arguments or {}).get("text", ""))
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


def _server() -> Server[Any]:
    return Server("baseline", version="0", on_list_tools=_list_tools, on_call_tool=_call_tool)


async def _serve_stdio() -> None:
    server = _server()
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def _serve_http(addr: str) -> None:
    import uvicorn

    host, _, port = addr.rpartition(":")
    app = _server().streamable_http_app(streamable_http_path="/mcp", host=host)
    config = uvicorn.Config(
        app,
        host=host,
        port=int(port),
        log_config=None,
        log_level=None,
        access_log=False,
        http="h11",
        ws="none",
        lifespan="on",
        server_header=False,
    )
    uvicorn.Server(config).run()


def main(argv: list[str]) -> None:
    if argv[:1] == ["--http"] and len(argv) == 2:
        _serve_http(argv[1])
    else:
        anyio.run(_serve_stdio)


if __name__ == "__main__":
    main(sys.argv[1:])
