"""The SDK's own floor: a bare low-level mcp server with one trivial tool.

Started exactly like cooked-mcp (same python, clean environment) so start-up and
per-call costs can be compared with the real server's. Not imported by the benchmark:
it runs as ``python bench/baseline_server.py`` (stdio) or
``python bench/baseline_server.py --http 127.0.0.1:PORT`` (Streamable HTTP at /mcp,
served by uvicorn configured like cooked-mcp's, without the bearer-token layer).

``--replay FILE`` adds one tool per recorded call (bench/overhead.py writes the file): it
declares the output schema cooked-mcp declares for that call and answers with the very
result cooked-mcp gave, content and structured content. The SDK client validates every
structured result against its tool's output schema with jsonschema, a cost that grows with
the result (0.32 ms for the shopping list's, 0.05 ms for a recipe's, nothing for ``echo``'s
text); the replayed tool makes the SDK's floor include the same client-side work, so what
remains of a difference is the server's.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
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


#: Recorded tool name -> (its tool definition, the result it answers with).
_REPLAYS: dict[str, tuple[types.Tool, types.CallToolResult]] = {}


def _load_replays(path: str) -> None:
    for name, entry in json.loads(Path(path).read_text()).items():
        tool = types.Tool(
            name=name,
            description="Answers with a result cooked-mcp gave.",
            input_schema={"type": "object"},
            output_schema=entry["output_schema"],
        )
        _REPLAYS[name] = (tool, types.CallToolResult.model_validate(entry["result"]))


async def _list_tools(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[_TOOL, *(tool for tool, _ in _REPLAYS.values())])


async def _call_tool(
    ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    if params.name in _REPLAYS:
        return _REPLAYS[params.name][1]
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
    if argv[:1] == ["--replay"] and len(argv) >= 2:
        _load_replays(argv[1])
        argv = argv[2:]
    if argv[:1] == ["--http"] and len(argv) == 2:
        _serve_http(argv[1])
    else:
        anyio.run(_serve_stdio)


if __name__ == "__main__":
    main(sys.argv[1:])
