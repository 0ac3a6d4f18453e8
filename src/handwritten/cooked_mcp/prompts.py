"""The common journeys as MCP prompts, served: listed, rendered with their arguments, completed.
The journeys themselves are features/prompts.yaml, generated into cooked_mcp_generated.prompts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import mcp_types as types
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

from cooked_mcp_generated.prompts import JOURNEYS, STEPS_HEADING, Journey

from .completion import RecipeTitles
from .cooked.client import CookedClient

#: Characters of one argument value put into a prompt's text.
MAX_ARGUMENT_CHARS = 500


def _prompt(journey: Journey) -> types.Prompt:
    return types.Prompt(
        name=journey.name,
        title=journey.title,
        description=journey.description,
        arguments=[
            types.PromptArgument(name=a.name, description=a.description, required=a.required)
            for a in journey.arguments
        ],
    )


def _text(journey: Journey, given: Mapping[str, str]) -> str:
    """The request and steps with each argument's value, or what to ask when it is missing."""
    values = {a.name: given.get(a.name) or a.missing for a in journey.arguments}
    values |= {f"{a.name}_ask": "" if given.get(a.name) else a.ask for a in journey.arguments}
    return f"{journey.request.format(**values)}\n\n{STEPS_HEADING}\n{journey.steps.format(**values)}"


# implements: extensions.PROMPTS.8
def register_prompts(server: Server[Any], client: CookedClient, *, writable: bool) -> None:
    """Offer the journeys on ``server``; read-only mode offers only those that change nothing."""
    journeys = {j.name: j for j in JOURNEYS if writable or not j.changes_account}
    if not journeys:
        return
    titles = RecipeTitles(client)
    listing = types.ListPromptsResult(prompts=[_prompt(j) for j in journeys.values()])

    async def list_prompts(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return listing

    # implements: extensions.PROMPTS.9
    async def get_prompt(
        ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        journey = journeys.get(params.name)
        if journey is None:
            names = ", ".join(journeys)
            raise MCPError(types.INVALID_PARAMS, f"Unknown prompt {params.name[:80]!r}. Prompts: {names}.")
        given = {
            k: " ".join(str(v).split())[:MAX_ARGUMENT_CHARS] for k, v in (params.arguments or {}).items()
        }
        known = {a.name for a in journey.arguments}
        unknown = sorted(set(given) - known)
        if unknown:
            raise MCPError(
                types.INVALID_PARAMS,
                f"Prompt {journey.name} has no argument {', '.join(unknown)}; it takes: {', '.join(sorted(known)) or 'none'}.",
            )
        missing = [a for a in journey.arguments if a.required and not given.get(a.name)]
        if missing:
            raise MCPError(
                types.INVALID_PARAMS,
                f"Prompt {journey.name} needs the argument {missing[0].name}: {missing[0].description}",
            )
        text = _text(journey, given)
        return types.GetPromptResult(
            description=journey.description,
            messages=[types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))],
        )

    async def complete(
        ctx: ServerRequestContext[Any], params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        ref, name = params.ref, params.argument.name
        journey = journeys.get(ref.name) if isinstance(ref, types.PromptReference) else None
        if journey is None or not any(a.recipe and a.name == name for a in journey.arguments):
            return types.CompleteResult(completion=types.Completion(values=[], has_more=False))
        return types.CompleteResult(completion=await titles.matching(params.argument.value))

    server.add_request_handler("prompts/list", types.PaginatedRequestParams, list_prompts)
    server.add_request_handler("prompts/get", types.GetPromptRequestParams, get_prompt)
    server.add_request_handler("completion/complete", types.CompleteRequestParams, complete)
