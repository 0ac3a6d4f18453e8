"""FastMCP's client: Client.list_tools and Client.call_tool (no conversion: the served schema as is);
also its elicitation handler (the person confirms a deletion) and its prompt and completion calls."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types
from fastmcp import Client
from fastmcp.client.elicitation import ElicitResult
from fastmcp.client.transports import StdioTransport
from fastmcp.exceptions import ToolError

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import harness

JOURNEYS = ["import_recipe", "shop_for_recipe", "tidy_shopping_list", "plan_meals"]


class FastMCP:
    def __init__(self, client: Client[Any], tools: list[Any], fresh: Callable[..., Client[Any]]) -> None:
        self.client = client
        self.schemas = {tool.name: dict(tool.inputSchema) for tool in tools}
        #: Another client to the same server, with the given elicitation handler.
        self.fresh = fresh

    async def call(self, tool: str, arguments: dict[str, Any]) -> str:
        result = await self.client.call_tool(tool, arguments)  # raises ToolError on an error result
        return json.dumps(result.structured_content)


@asynccontextmanager
async def connect(args: Any) -> Any:
    if args.transport == "stdio":
        client = harness.run_snippet("fastmcp")["client"]

        def fresh(handler: Any) -> Client[Any]:
            return Client(
                StdioTransport(command="cooked-mcp", args=[]), timeout=120, elicitation_handler=handler
            )

    else:
        client = Client(args.url, auth=args.token, timeout=120)

        def fresh(handler: Any) -> Client[Any]:
            return Client(args.url, auth=args.token, timeout=120, elicitation_handler=handler)

    async with client:
        yield FastMCP(client, await client.list_tools(), fresh)


async def confirmation(lib: FastMCP, fake: harness.Fake) -> str | None:
    """The person declines, cancels, accepts: no DELETE, no DELETE, exactly one."""
    for answer, wanted in (("decline", 0), ("cancel", 0), ("accept", 1)):
        fake.post("reset")
        questions: list[str] = []
        refused = None
        async with lib.fresh(_person(answer, questions)) as client:
            try:
                await client.call_tool("delete_recipe", {"recipe_id": "r-0001"})
            except ToolError as exc:
                refused = str(exc)
        sent = sum(1 for r in fake.requests() if (r["method"], r["path"]) == ("DELETE", "/api/saved/r-0001"))
        if sent != wanted:
            return f"{answer}: {sent} DELETE requests reached Cooked, not {wanted}"
        if len(questions) != 1 or '"Shakshuka" (r-0001)' not in questions[0]:
            return f"{answer}: asked {questions}"
        if (refused is None) != (answer == "accept"):
            return f"{answer}: the call {'failed' if refused else 'succeeded'}: {refused}"
        if refused is not None and "was not deleted; nothing was sent to Cooked." not in refused:
            return f"{answer}: {refused[:200]}"
    return None


def _person(answer: str, questions: list[str]) -> Callable[..., Any]:
    """A person who answers every question with ``answer`` and remembers it."""

    async def person(message: str, response_type: Any, params: Any, context: Any) -> ElicitResult[Any]:
        questions.append(message)
        return ElicitResult(action=answer, content={} if answer == "accept" else None)  # type: ignore[arg-type]

    return person


async def prompts(lib: FastMCP, fake: harness.Fake) -> str | None:
    listed = [prompt.name for prompt in await lib.client.list_prompts()]
    if listed != JOURNEYS:
        return f"prompts listed: {listed}"
    got = await lib.client.get_prompt("shop_for_recipe", {"recipe": "Fish Tacos"})
    text = got.messages[0].content.text  # type: ignore[union-attr]
    if "Recipe: Fish Tacos" not in text or text.index("read") > text.index("change_shopping_list"):
        return f"shop_for_recipe rendered: {text[:200]}"
    ref = mcp_types.PromptReference(type="ref/prompt", name="shop_for_recipe")
    done = await lib.client.complete(ref, {"name": "recipe", "value": "fish"})
    if "Fish Tacos" not in done.values or len(done.values) > 20:
        return f"completion of 'fish': {done.values}"
    return None


harness.CASES["elicitation: declined and cancelled delete send nothing, accepted once"] = confirmation
harness.CASES["prompts list, render and complete recipe titles"] = prompts


if __name__ == "__main__":
    harness.main("fastmcp", connect)
