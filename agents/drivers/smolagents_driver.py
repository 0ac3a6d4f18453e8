"""smolagents through mcpadapt: MCPAdapt + SmolAgentsAdapter, validate_tool_arguments, Tool.__call__."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcpadapt.core import MCPAdapt
from mcpadapt.smolagents_adapter import SmolAgentsAdapter
from smolagents.tools import validate_tool_arguments

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import harness


class Smolagents:
    def __init__(self, tools: list[Any], served: dict[str, dict[str, Any]]) -> None:
        self.tools = {tool.name: tool for tool in tools}
        self.served = served
        self.schemas = {tool.name: {"properties": tool.inputs} for tool in tools}

    async def call(self, tool: str, arguments: dict[str, Any]) -> str:
        """What a ToolCallingAgent does with a model's call: validate against the inputs, then call."""
        target = self.tools[tool]
        validate_tool_arguments(target, arguments)
        out = await asyncio.to_thread(target, **arguments)
        return harness.succeeded(out if isinstance(out, str) else json.dumps(out))


async def keeps_types_and_optionality(lib: Any, fake: harness.Fake) -> str | None:
    problems = []
    for tool, served in lib.served.items():
        inputs = lib.tools[tool].inputs
        for name, prop in served["properties"].items():
            if inputs[name]["type"] != prop["type"]:
                problems.append(f"{tool}.{name} type {inputs[name]['type']}")
            if (name not in served.get("required", [])) != bool(inputs[name].get("nullable")):
                problems.append(
                    f"{tool}.{name} may{'' if inputs[name].get('nullable') else ' not'} be left out"
                )
    return f"lost: {problems}" if problems else None


harness.CASES["every parameter keeps its type; optional ones may be left out"] = keeps_types_and_optionality


@asynccontextmanager
async def connect(args: Any) -> AsyncIterator[Smolagents]:
    if args.transport == "stdio":
        adapt = harness.run_snippet("smolagents")["cooked"]
    else:
        adapt = MCPAdapt(
            {
                "url": args.url,
                "transport": "streamable-http",
                "headers": {"Authorization": f"Bearer {args.token}"},
            },
            SmolAgentsAdapter(),
            client_session_timeout_seconds=120,
        )
    tools = await asyncio.to_thread(adapt.__enter__)
    try:
        served = {
            tool.name: json.loads(json.dumps(getattr(tool, "inputSchema", None) or tool.input_schema))
            for listed in adapt.mcp_tools
            for tool in listed
        }
        yield Smolagents(tools, served)
    finally:
        await asyncio.to_thread(adapt.__exit__, None, None, None)


if __name__ == "__main__":
    harness.main("smolagents", connect)
