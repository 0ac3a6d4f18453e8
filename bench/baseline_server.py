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

A recorded call that lists ``cooked_requests`` also makes those requests to Cooked (the fake
at ``COOKED_BASE_URL``, logged in once as ``COOKED_LOGIN_USERNAME``) with a plain
``httpx.AsyncClient`` before it answers, as the benchmark's direct requests do: the bare
server's call then passes through the same processes as cooked-mcp's (client, server, Cooked,
server, client), so a loaded machine's waits for a core fall on both alike.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
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
#: Recorded tool name -> the Cooked requests (method, path, JSON body) it makes before answering.
_REQUESTS: dict[str, list[tuple[str, str, Any]]] = {}
_COOKED: list[httpx.AsyncClient] = []  # the one logged-in client, made at the first call that needs it


def _load_replays(path: str) -> None:
    for name, entry in json.loads(Path(path).read_text()).items():
        tool = types.Tool(
            name=name,
            description="Answers with a result cooked-mcp gave.",
            input_schema={"type": "object"},
            output_schema=entry["output_schema"],
        )
        _REPLAYS[name] = (tool, types.CallToolResult.model_validate(entry["result"]))
        _REQUESTS[name] = [(method, path, body) for method, path, body in entry.get("cooked_requests", [])]


async def _cooked() -> httpx.AsyncClient:
    if not _COOKED:
        client = httpx.AsyncClient(
            base_url=os.environ["COOKED_BASE_URL"], headers={"Accept": "application/json"}
        )
        login = {
            "username": os.environ["COOKED_LOGIN_USERNAME"],
            "password": os.environ["COOKED_LOGIN_PASSWORD"],
        }
        (await client.post("/api/public/login", json=login)).raise_for_status()
        _COOKED.append(client)
    return _COOKED[0]


async def _make_requests(name: str) -> None:
    for method, path, body in _REQUESTS.get(name, ()):
        response = await (await _cooked()).request(method, path, json=body)
        response.raise_for_status()
        response.json()


async def _list_tools(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[_TOOL, *(tool for tool, _ in _REPLAYS.values())])


async def _call_tool(
    ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    if params.name in _REPLAYS:
        await _make_requests(params.name)
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
