"""The OpenAI Agents SDK: Agent.get_mcp_tools with convert_schemas_to_strict, FunctionTool.on_invoke_tool."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from agents.mcp import MCPServerStreamableHttp
from agents.tool_context import ToolContext

from agents import Agent, RunContextWrapper

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import harness


class OpenAIAgents:
    def __init__(self, tools: dict[str, Any]) -> None:
        self.tools = tools
        self.schemas = {name: tool.params_json_schema for name, tool in tools.items()}
        loose = [name for name, tool in tools.items() if not tool.strict_json_schema]
        if loose:
            raise RuntimeError(f"strict conversion fell back to non-strict for {loose}")

    async def call(self, tool: str, arguments: dict[str, Any]) -> str:
        raw = json.dumps(arguments)
        context = ToolContext(context=None, tool_name=tool, tool_call_id="call-1", tool_arguments=raw)
        out = await self.tools[tool].on_invoke_tool(context, raw)
        # What the model gets: the text blocks (isError is dropped), or the structured output as JSON.
        blocks = out if isinstance(out, list) else [out]
        return harness.succeeded("\n".join(b["text"] if isinstance(b, dict) else str(b) for b in blocks))


@asynccontextmanager
async def connect(args: Any) -> AsyncIterator[OpenAIAgents]:
    if args.transport == "stdio":
        readme = harness.run_snippet("openai-agents")
        server, agent = readme["cooked"], readme["agent"]
    else:
        server = MCPServerStreamableHttp(
            params={"url": args.url, "headers": {"Authorization": f"Bearer {args.token}"}},
            client_session_timeout_seconds=120,
        )
        agent = Agent(name="Cook", mcp_servers=[server], mcp_config={"convert_schemas_to_strict": True})
    async with server:
        tools = await agent.get_mcp_tools(RunContextWrapper(context=None))
        yield OpenAIAgents({tool.name: tool for tool in tools})


if __name__ == "__main__":
    harness.main("openai-agents", connect)
