"""The MCP server around the generated tool specs: listing, validation, dispatch, errors.

Registered on the low-level ``mcp.server.Server`` so that the input schemas clients see
are exactly the table's (MCPServer derives schemas from function signatures instead),
and every call is validated by the tool's ArgumentRules before its handler runs.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass
from typing import Any

import anyio.lowlevel
import mcp_types as types
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.shared.exceptions import MCPError

from .arguments import ArgumentRules, ModeRules, shown_name
from .confirmation import Asker, InputRequired, unreadable_answers
from .results import ANSWERS, CURRENT_CALL, ToolCall, ToolError, ToolResult

logger = logging.getLogger("cooked_mcp.tools")

#: JSON-RPC "Invalid params": what the MCP spec answers for a tool the server does not have.
INVALID_PARAMS = -32602


@dataclass(frozen=True)
class ToolSpec:
    """One tool: its MCP definition, argument rules and handler lookup."""

    definition: types.Tool
    arguments: ArgumentRules
    invoke: Callable[[Any, Any, ToolCall], Awaitable[ToolResult[Any]]]

    @property
    def name(self) -> str:
        return self.definition.name

    @property
    def read_only(self) -> bool:
        """As the tool's annotations tell clients (served in read-only mode)."""
        annotations = self.definition.annotations
        return annotations is not None and annotations.read_only_hint is True

    @property
    def modes(self) -> ModeRules | None:
        return self.arguments.modes


def dispatching_server(
    specs: Collection[ToolSpec],
    handlers: Any,
    *,
    name: str,
    instructions: str,
    version: str,
    tool_names: Collection[str] | None = None,
    withheld_because: str | None = None,
    website_url: str | None = None,
) -> Server[Any]:
    """A server offering ``tool_names`` of ``specs`` (default: all).

    Descriptions and instructions lose every line that names a tool not served, so an
    agent is never pointed at a tool it cannot call; a call to a withheld tool is answered
    with ``withheld_because`` (e.g. how read-only mode was switched on).
    """
    enabled = {spec.name: spec for spec in specs if tool_names is None or spec.name in tool_names}
    withheld = [spec.name for spec in specs if spec.name not in enabled]
    listing = types.ListToolsResult(
        tools=[
            spec.definition.model_copy(
                update={"description": without_lines_naming(spec.definition.description or "", withheld)}
            )
            for spec in enabled.values()
        ]
    )

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return listing

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        try:
            return await answer(ctx, params)
        finally:  # the answer is handed over (or given up): the Cooked bytes it held go with it
            ANSWERS.hand_over(CURRENT_CALL.get(), getattr(ctx.request, "scope", None))

    # implements: tools.RESPONSES.5, tools.RESPONSES.6
    async def answer(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        spec = enabled.get(params.name)
        if spec is None:
            raise MCPError(
                INVALID_PARAMS, _unknown_tool(params.name, list(enabled), withheld, withheld_because)
            )
        call = ToolCall(tool=spec.name, report_progress=ctx.session.report_progress, asker=Asker(ctx, params))
        CURRENT_CALL.set(call)  # this request's own task: the Cooked answers it reads are charged to it
        try:
            args = spec.arguments.validate(params.arguments)
            result = await spec.invoke(handlers, args, call)
        except InputRequired as asked:
            return asked.result  # 2026-07-28: the client asks the person and calls again
        except ToolError as exc:
            answer = _error(str(exc))
        except Exception:
            logger.exception("tool %s failed unexpectedly", spec.name)
            return _error(
                f"{spec.name} failed inside cooked-mcp (the server log has the details). Try again."
            )
        else:
            answer = types.CallToolResult(
                content=[types.TextContent(type="text", text=result.text)],
                structured_content=result.output.model_dump(mode="json", exclude_none=True),
            )
        # A cancelled request raises here and its answer is never written; otherwise nothing
        # awaits between this check and the SDK writing the answer (ToolCall.when_answered).
        await anyio.lowlevel.checkpoint_if_cancelled()
        call.answered()
        return answer

    server = Server(
        name,
        version=version,
        title=name,
        instructions=without_lines_naming(instructions, withheld),
        website_url=website_url,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    # Seals the 2026-07-28 request state (confirmation.py) under a key held by this process only.
    server.middleware.append(RequestStateBoundary(RequestStateSecurity.ephemeral(), default_audience=name))
    server.middleware.append(unreadable_answers)
    return server


def without_lines_naming(text: str, tools: Collection[str]) -> str:
    """``text`` without the lines that name any of ``tools`` as a word."""
    if not tools:
        return text
    named = re.compile(r"\b(?:" + "|".join(re.escape(tool) for tool in tools) + r")\b")
    return "\n".join(line for line in text.split("\n") if not named.search(line))


def _unknown_tool(name: str, enabled: list[str], withheld: list[str], because: str | None) -> str:
    available = ", ".join(enabled)
    if name in withheld and because:
        return f"Tool {shown_name(name)} is not available: {because}. Available tools: {available}."
    return f"Unknown tool {shown_name(name)}. Available tools: {available}."


def _error(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)], is_error=True)
