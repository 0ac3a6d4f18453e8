"""Wires the hand-written handlers into the generated tool registrations, and builds the
running application from the settings: the one start-up path every transport serves."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

from mcp.server import Server

from cooked_mcp_generated.tools import TOOLS, ToolHandlers, create_server
from cooked_mcp_runtime.results import ANSWERS

from . import __version__
from .config import Settings, default, how_to_set
from .config.limits import Limits
from .cooked.client import CookedClient
from .handlers import CookedTools
from .handlers.confirmation import Confirmation
from .logging_setup import register_secret_source
from .prompts import register_prompts


# implements: server.COMPATIBILITY.2, server.SINGLE_USER.2
def build_server(
    client: CookedClient,
    *,
    read_only_from: str | None = None,
    import_answer_seconds: float = default("import_answer_seconds"),
    confirm_changes: bool = True,
    limits: Limits | None = None,
) -> Server[Any]:
    """``read_only_from`` is where read-only mode was switched on; ``None`` serves every tool."""
    tools = _tools(client, read_only_from is None, import_answer_seconds, confirm_changes, limits or Limits())
    return _server(tools, read_only_from, client)


# implements: extensions.CONFIRMATION.10
def _tools(
    client: CookedClient, writable: bool, import_answer_seconds: float, confirm_changes: bool, limits: Limits
) -> CookedTools:
    """The handlers; a declined question names how the person turns asking off."""
    turn_off = how_to_set("confirm_changes", "false", "false", " in the config file")
    return CookedTools(
        client,
        writable=writable,
        import_answer_seconds=import_answer_seconds,
        confirmation=Confirmation(
            enabled=confirm_changes, turn_off=turn_off, answer_seconds=limits.confirm_answer_seconds
        ),
        limits=limits,
    )


def _server(tools: ToolHandlers, read_only_from: str | None, client: CookedClient) -> Server[Any]:
    withheld: dict[str, Any] = {}
    if read_only_from is not None:
        withheld = {
            "tool_names": [spec.name for spec in TOOLS if spec.read_only],
            "withheld_because": f"this server runs read-only (set by {read_only_from}), so it serves only "
            "the tools that change nothing; ask the user to change that setting if Cooked should be changed",
        }
    server = create_server(tools, version=__version__, website_url=default("base_url"), **withheld)
    register_prompts(server, client, writable=read_only_from is None)
    return server


@dataclass(frozen=True)
class Application(AbstractAsyncContextManager["Application"]):
    """What a transport serves: building it opens nothing (the client connects at its first
    request), and leaving it closes the client."""

    settings: Settings
    client: CookedClient
    tools: CookedTools
    server: Server[Any]

    async def __aexit__(self, *exc_info: object) -> None:
        await self.client.aclose()


def build_application(settings: Settings) -> Application:
    client = CookedClient.from_settings(settings)
    tools = _tools(
        client,
        not settings.read_only,
        settings.import_answer_seconds,
        settings.confirm_changes,
        settings.limits,
    )
    ANSWERS.configure(
        settings.limits.answers_in_flight_mib, settings.limits.answers_wait_seconds, Limits.SMALL_ANSWER_BYTES
    )
    register_secret_source(client.secret_values)  # the log filter scrubs session cookies too
    read_only_from = settings.describe_source("read_only") if settings.read_only else None
    return Application(settings, client, tools, _server(tools, read_only_from, client))
