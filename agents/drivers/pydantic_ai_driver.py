"""Pydantic AI: MCPToolset (on FastMCP's client), OpenAI's strict JSON-schema transformer, direct_call_tool."""

from __future__ import annotations

import copy
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from pydantic_ai.mcp import MCPToolset
from pydantic_ai.profiles.openai import OpenAIJsonSchemaTransformer

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import harness


class PydanticAI:
    def __init__(self, toolset: MCPToolset[Any], tools: list[Any]) -> None:
        self.toolset = toolset
        # What Pydantic AI's OpenAI models send for a tool definition with strict=True.
        self.schemas = {
            tool.name: OpenAIJsonSchemaTransformer(copy.deepcopy(_input_schema(tool)), strict=True).walk()
            for tool in tools
        }

    async def call(self, tool: str, arguments: dict[str, Any]) -> str:
        # Tool errors raise (ModelRetry); a result is what the model sees: the structured output.
        return json.dumps(await self.toolset.direct_call_tool(tool, arguments), default=str)


def _input_schema(tool: Any) -> dict[str, Any]:
    schema = getattr(tool, "inputSchema", None) or getattr(tool, "input_schema", None)
    return dict(schema)


@asynccontextmanager
async def connect(args: Any) -> AsyncIterator[PydanticAI]:
    if args.transport == "stdio":
        toolset = harness.run_snippet("pydantic-ai")["cooked"]
    else:
        toolset = MCPToolset(args.url, headers={"Authorization": f"Bearer {args.token}"}, read_timeout=120)
    async with toolset:
        yield PydanticAI(toolset, await toolset.list_tools())


if __name__ == "__main__":
    harness.main("pydantic-ai", connect)
