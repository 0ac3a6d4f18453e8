"""Wires the hand-written handlers into the generated tool registrations, and builds the
running application from the settings: the one start-up path every transport serves."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcp.server import Server

from cooked_mcp_generated.tools import TOOLS, ToolHandlers, create_server
from cooked_mcp_runtime.results import ANSWERS

from . import __version__
from .config import Settings, default, how_to_set
from .config.limits import Limits
from .logging_setup import register_secret_source
from .prompts import register_prompts

if TYPE_CHECKING:
    from .cooked.client import CookedClient
    from .handlers import CookedTools


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
    return _server(tools, read_only_from, lambda: client)


# implements: extensions.CONFIRMATION.10
def _tools(
    client: CookedClient, writable: bool, import_answer_seconds: float, confirm_changes: bool, limits: Limits
) -> CookedTools:
    """The handlers; a declined question names how the person turns asking off."""
    from .handlers import CookedTools
    from .handlers.confirmation import Confirmation

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


def _server(
    tools: ToolHandlers, read_only_from: str | None, client: Callable[[], CookedClient]
) -> Server[Any]:
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


class ToolsOnFirstCall:
    """The tool handlers and the Cooked client, built at the first tool call: importing them is most
    of cooked-mcp's start-up (bench/startup.py), and listing tools needs neither."""

    _HANDLER_METHODS = frozenset(spec.name for spec in TOOLS)

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._tools: CookedTools | None = None
        self.client: CookedClient | None = None

    def cooked_client(self) -> CookedClient:
        if self.client is None:
            from .cooked.client import CookedClient

            s = self._settings
            client = CookedClient.from_settings(s)
            self._tools = _tools(
                client, not s.read_only, s.import_answer_seconds, s.confirm_changes, s.limits
            )
            # Later calls find the methods on the instance and no longer pass through __getattr__.
            self.__dict__.update({name: getattr(self._tools, name) for name in self._HANDLER_METHODS})
            self.client = client
        return self.client

    def __getattr__(self, name: str) -> Any:
        if name not in ToolsOnFirstCall._HANDLER_METHODS:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        self.cooked_client()
        return self.__dict__[name]

    def secret_values(self) -> list[str]:
        return self.client.secret_values() if self.client is not None else []

    async def changes_finished(self) -> None:
        """Every change sent to Cooked has ended: what a stop waits for, within its grace."""
        if self._tools is not None:
            await self._tools.changes_finished()


@dataclass(frozen=True)
class Application(AbstractAsyncContextManager["Application"]):
    """What a transport serves: building it opens nothing, and leaving it closes the client."""

    settings: Settings
    tools: ToolsOnFirstCall
    server: Server[Any]

    async def __aexit__(self, *exc_info: object) -> None:
        if self.tools.client is not None:
            await self.tools.client.aclose()


def build_application(settings: Settings) -> Application:
    tools = ToolsOnFirstCall(settings)
    ANSWERS.configure(
        settings.limits.answers_in_flight_mib, settings.limits.answers_wait_seconds, Limits.SMALL_ANSWER_BYTES
    )
    register_secret_source(tools.secret_values)  # the log filter scrubs session cookies too
    read_only_from = settings.describe_source("read_only") if settings.read_only else None
    return Application(settings, tools, _server(tools, read_only_from, tools.cooked_client))
