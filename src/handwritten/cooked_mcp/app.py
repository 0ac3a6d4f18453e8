"""Wires the hand-written handlers into the generated tool registrations, and builds the
running application from the settings: the one start-up path every transport serves."""

from __future__ import annotations

from dataclasses import dataclass
from types import TracebackType
from typing import Any

from mcp.server import Server

from cooked_mcp_generated.tools import TOOLS, create_server

from . import __version__
from .config import DEFAULT_IMPORT_ANSWER_SECONDS, Settings
from .cooked.client import CookedClient
from .handlers import CookedTools
from .logging_setup import register_secret_source


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
    import_answer_seconds: float = DEFAULT_IMPORT_ANSWER_SECONDS,
) -> Server[Any]:
    """``read_only_from`` is where read-only mode was switched on (``Settings.describe_source``);
    ``None`` serves every tool. One argument for both, so the mode never lacks its reason."""
    read_only = read_only_from is not None
    return create_server(
        CookedTools(client, writable=not read_only, import_answer_seconds=import_answer_seconds),
        version=__version__,
        tool_names=read_only_tool_names() if read_only else None,
        withheld_because=read_only_reason(read_only_from) if read_only_from is not None else None,
    )


@dataclass(frozen=True)
class Application:
    """What a transport serves: the MCP server and the one Cooked client behind it.

    Building it opens nothing (the client connects and logs in at the first tool call that
    needs it), so a transport may still refuse to start without cleaning up; once serving,
    it enters the application (``async with``) in its event loop, which closes the client.
    """

    settings: Settings
    client: CookedClient
    server: Server[Any]

    async def __aenter__(self) -> Application:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.client.aclose()


def build_application(settings: Settings) -> Application:
    """The running application for ``settings``: the one place settings become a client and a server."""
    client = CookedClient.from_settings(settings)
    register_secret_source(client.secret_values)  # the log filter scrubs session cookies too
    server = build_server(
        client,
        read_only_from=settings.describe_source("read_only") if settings.read_only else None,
        import_answer_seconds=settings.import_answer_seconds,
    )
    return Application(settings, client, server)
