"""Google Gen AI: McpToGenAiToolAdapter (mcp_to_gemini_tool, what generate_content does with a session)."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

from google.genai import types
from google.genai._adapters import McpToGenAiToolAdapter
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import harness


class GoogleGenAI:
    def __init__(self, adapter: McpToGenAiToolAdapter, served: dict[str, dict[str, Any]]) -> None:
        self.adapter = adapter
        self.served = served
        self.declarations = {
            d.name: d for tool in adapter.tools for d in (tool.function_declarations or []) if d.name
        }
        self.schemas = {name: _as_json_schema(d.parameters) for name, d in self.declarations.items()}

    async def call(self, tool: str, arguments: dict[str, Any]) -> str:
        result = await self.adapter.call_tool(types.FunctionCall(name=tool, args=arguments))
        text = " ".join(getattr(block, "text", "") for block in result.content)
        if result.is_error:
            raise RuntimeError(text)
        return text


def _as_json_schema(schema: types.Schema | None) -> dict[str, Any]:
    """What Gemini is shown, in JSON Schema words: type, nullable, default per property."""
    properties = {}
    for name, prop in ((schema.properties or {}) if schema else {}).items():
        kind = prop.type.value.lower() if prop.type else None
        properties[name] = {"type": [kind, "null"] if prop.nullable else kind, "default": prop.default}
        if prop.default is None:
            del properties[name]["default"]
    return {"properties": properties}


async def keeps_types_and_descriptions(lib: Any, fake: harness.Fake) -> str | None:
    """Every parameter keeps its type, its description and, when optional, that it may be null."""
    problems = []
    for tool, served in lib.served.items():
        converted = lib.declarations[tool].parameters.properties or {}
        for name, prop in served["properties"].items():
            got = converted.get(name)
            kind = prop["type"] if isinstance(prop["type"], str) else prop["type"][0]
            optional = name not in served.get("required", [])
            if got is None or got.type is None or got.type.value.lower() != kind:
                problems.append(f"{tool}.{name} type")
            elif got.description != prop["description"]:
                problems.append(f"{tool}.{name} description")
            elif bool(got.nullable) != optional:
                problems.append(f"{tool}.{name} nullable")
    return f"lost: {problems}" if problems else None


harness.CASES["every parameter keeps its type and description"] = keeps_types_and_descriptions


@asynccontextmanager
async def connect(args: Any) -> AsyncIterator[GoogleGenAI]:
    async with AsyncExitStack() as stack:
        if args.transport == "stdio":
            session = await stack.enter_async_context(harness.run_snippet("google-genai")["cooked_session"]())
        else:
            http = create_mcp_http_client(headers={"Authorization": f"Bearer {args.token}"})
            await stack.enter_async_context(http)
            read, write = await stack.enter_async_context(streamable_http_client(args.url, http_client=http))
            session = await stack.enter_async_context(ClientSession(read, write, read_timeout_seconds=120))
            await session.initialize()
        listed = await session.list_tools()
        served = {tool.name: json.loads(json.dumps(tool.input_schema)) for tool in listed.tools}
        yield GoogleGenAI(McpToGenAiToolAdapter(session, listed), served)


if __name__ == "__main__":
    harness.main("google-genai", connect)
