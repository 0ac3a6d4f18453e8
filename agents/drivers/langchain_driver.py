"""LangChain: langchain-mcp-adapters' load_mcp_tools, convert_to_openai_tool(strict=True), tool.ainvoke."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from langchain_core.utils.function_calling import convert_to_openai_tool
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_mcp_adapters.tools import load_mcp_tools

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import harness


class LangChain:
    def __init__(self, tools: list[Any]) -> None:
        self.tools = {tool.name: tool for tool in tools}
        self.schemas = {
            tool.name: convert_to_openai_tool(tool, strict=True)["function"]["parameters"] for tool in tools
        }

    async def call(self, tool: str, arguments: dict[str, Any]) -> str:
        # A tool error raises ToolException; the model sees the text.
        return harness.succeeded(str(await self.tools[tool].ainvoke(arguments)))


@asynccontextmanager
async def connect(args: Any) -> AsyncIterator[LangChain]:
    if args.transport == "stdio":
        client = harness.run_snippet("langchain")["client"]
    else:
        client = MultiServerMCPClient(
            {
                "cooked": {
                    "transport": "streamable_http",
                    "url": args.url,
                    "headers": {"Authorization": f"Bearer {args.token}"},
                    "sse_read_timeout": 120,
                }
            }
        )
    async with client.session("cooked") as session:
        yield LangChain(await load_mcp_tools(session))


if __name__ == "__main__":
    harness.main("langchain", connect)
