"""The OpenAI Agents SDK: Agent.get_mcp_tools with convert_schemas_to_strict, FunctionTool.on_invoke_tool."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from agents.mcp import MCPServerStdio, MCPServerStreamableHttp
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


#: The transport of this run, for the case that connects a second time with the SDK's defaults.
_ARGS: list[Any] = []
#: The fake's import takes this long; the SDK gives up on a call after its default 5 s.
SLOW_IMPORT_SECONDS = 8
SLOW_URL = "https://example.org/recipes/slow-stew"


async def default_timeout_import_is_made_once(lib: OpenAIAgents, fake: harness.Fake) -> str | None:
    """Issue 29's first story with the real SDK: its default 5 s timeout gives up on a slow URL
    import, the agent retries as it is told to, and Cooked must still import the page once."""
    args = _ARGS[0]
    fake.post("fail", {"kind": "slow", "method": "POST", "path": "/api/new", "seconds": SLOW_IMPORT_SECONDS})
    if args.transport == "stdio":
        server: Any = MCPServerStdio(params={"command": "cooked-mcp"})
    else:
        server = MCPServerStreamableHttp(
            params={"url": args.url, "headers": {"Authorization": f"Bearer {args.token}"}}
        )
    agent = Agent(name="Cook", mcp_servers=[server], mcp_config={"convert_schemas_to_strict": True})
    answers = []
    async with server:
        tools = await agent.get_mcp_tools(RunContextWrapper(context=None))
        save = OpenAIAgents({tool.name: tool for tool in tools})
        arguments = harness.strict_filled(save.schemas["save_recipe"], {"source": "url", "url": SLOW_URL})
        for _ in range(4):  # the first call times out; each retry comes as an agent's would, at once
            try:
                answers.append(await save.call("save_recipe", arguments))
            except Exception as exc:  # an error result in words
                answers.append(f"error: {exc}")
            if "Read it with" in answers[-1]:  # the saved recipe's next step
                break
    # A 401 is not an import: the fake's reset ended the session, and the server logged in again.
    imports = [
        r for r in fake.requests() if (r["method"], r["path"]) == ("POST", "/api/new") and r["status"] != 401
    ]
    if len(imports) != 1:
        return f"Cooked got {len(imports)} imports for one page; answers: {answers}"
    if not answers or not answers[0].startswith("An error occurred while running the tool"):
        return f"the first call did not time out as the SDK's default 5 s should make it: {answers[:1]}"
    if "Read it with" not in answers[-1]:
        return f"no retry got the imported recipe: {answers}"
    return None


harness.CASES["default 5 s timeout: a slow import, retried, is made once"] = (
    default_timeout_import_is_made_once
)


@asynccontextmanager
async def connect(args: Any) -> AsyncIterator[OpenAIAgents]:
    _ARGS[:] = [args]
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
