"""Wires the hand-written handlers into the generated tool registrations, and builds the
running application from the settings: the one start-up path every transport serves."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any

from mcp.server import Server

from cooked_mcp_generated.tools import TOOLS, ToolHandlers, create_server
from cooked_mcp_runtime.results import ANSWERS

from . import __version__
from .config import Settings, default, how_to_set
from .logging_setup import register_secret_source
from .prompts import register_prompts

if TYPE_CHECKING:
    from .cooked.client import CookedClient
    from .handlers.confirmation import Confirmation


def read_only_tool_names() -> list[str]:
    """The tools that change nothing, for read-only mode."""
    return [spec.name for spec in TOOLS if spec.read_only]


def read_only_reason(read_only_from: str) -> str:
    """What a call to a write tool is told in read-only mode: the mode, and the setting that chose it."""
    return (
        f"this server runs read-only (set by {read_only_from}), so it serves only the tools that change "
        "nothing; ask the user to change that setting if Cooked should be changed"
    )


# implements: server.COMPATIBILITY.2, server.SINGLE_USER.2
def build_server(
    client: CookedClient,
    *,
    read_only_from: str | None = None,
    import_answer_seconds: float = default("import_answer_seconds"),
    confirm_changes: bool = True,
) -> Server[Any]:
    """``read_only_from`` is where read-only mode was switched on (``Settings.describe_source``);
    ``None`` serves every tool. One argument for both, so the mode never lacks its reason."""
    from .handlers import CookedTools

    tools = CookedTools(
        client,
        writable=read_only_from is None,
        import_answer_seconds=import_answer_seconds,
        confirmation=_confirmation(confirm_changes),
    )
    return _server(tools, read_only_from, lambda: client)


# implements: extensions.CONFIRMATION.10
def _confirmation(enabled: bool) -> Confirmation:
    """Asking on or off, and how the person turns it off, named wherever a question was declined."""
    from .handlers.confirmation import Confirmation

    turn_off = how_to_set("confirm_changes", "false", "false", " in the config file")
    return Confirmation(enabled=enabled, turn_off=turn_off)


def _server(
    tools: ToolHandlers, read_only_from: str | None, client: Callable[[], CookedClient]
) -> Server[Any]:
    """The tools, and the journeys as prompts (prompts.py) completing from ``client``'s recipes."""
    if read_only_from is None:
        server = create_server(tools, version=__version__)
    else:
        server = create_server(
            tools,
            version=__version__,
            tool_names=read_only_tool_names(),
            withheld_because=read_only_reason(read_only_from),
        )
    register_prompts(server, client, writable=read_only_from is None)
    return server


class ToolsOnFirstCall:
    """The tool handlers and the Cooked client behind them, built when the first tool call
    reaches them.

    Listing the tools needs neither, and importing them (the Cooked client, its response
    models, httpx) was about 35 ms of cooked-mcp's own start-up, which `make bench` holds
    to 1.10x a bare SDK server's (bench/startup.py); the first call, which also waits for the
    first login to Cooked, pays it instead. The handler methods (one per tool, named like it: the generated
    dispatch calls ``handlers.<tool>``) are the built handlers'; any other attribute is not
    there, so a stray lookup builds nothing. Building is synchronous, so calls arriving
    together build once.
    """

    _HANDLER_METHODS = frozenset(spec.name for spec in TOOLS)

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._tools: ToolHandlers | None = None
        self._changes_finished: Callable[[], Awaitable[None]] | None = None
        self.client: CookedClient | None = None

    def _built(self) -> ToolHandlers:
        if self._tools is None:
            from .cooked.client import CookedClient
            from .handlers import CookedTools

            settings = self._settings
            client = CookedClient.from_settings(settings)
            tools = CookedTools(
                client,
                writable=not settings.read_only,
                import_answer_seconds=settings.import_answer_seconds,
                confirmation=_confirmation(settings.confirm_changes),
            )
            self.client, self._tools = client, tools
            self._changes_finished = tools.changes_finished
            # Later calls find the methods on the instance and no longer pass through __getattr__.
            self.__dict__.update({name: getattr(tools, name) for name in ToolsOnFirstCall._HANDLER_METHODS})
        return self._tools

    def __getattr__(self, name: str) -> Any:
        if name not in ToolsOnFirstCall._HANDLER_METHODS:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return getattr(self._built(), name)

    def cooked_client(self) -> CookedClient:
        """The Cooked client, built as the first tool call would (for completing prompt arguments)."""
        self._built()
        assert self.client is not None
        return self.client

    def secret_values(self) -> list[str]:
        """The session's secrets once there is a client (the password is the settings')."""
        return self.client.secret_values() if self.client is not None else []

    async def changes_finished(self) -> None:
        """Return once every change sent to Cooked has ended: what a stop waits for, within its grace."""
        if self._changes_finished is not None:
            await self._changes_finished()

    async def aclose(self) -> None:
        if self.client is not None:
            await self.client.aclose()


@dataclass(frozen=True)
class Application:
    """What a transport serves: the MCP server and the handlers behind it.

    Building it opens nothing (the handlers and the Cooked client are built at the first
    tool call, which connects and logs in), so a transport may still refuse to start without
    cleaning up; once serving, it enters the application (``async with``) in its event
    loop, which closes the client.
    """

    settings: Settings
    tools: ToolsOnFirstCall
    server: Server[Any]

    async def __aenter__(self) -> Application:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.tools.aclose()


def build_application(settings: Settings) -> Application:
    """The running application for ``settings``: the one place settings become handlers and a server."""
    tools = ToolsOnFirstCall(settings)
    ANSWERS.configure(settings.limits.answers_in_flight_mib, settings.limits.answers_wait_seconds)
    register_secret_source(tools.secret_values)  # the log filter scrubs session cookies too
    read_only_from = settings.describe_source("read_only") if settings.read_only else None
    # The handlers are what the first call builds: CookedTools, checked against ToolHandlers in ``_built``.
    return Application(settings, tools, _server(tools, read_only_from, tools.cooked_client))
