"""What a handler gives back: a result for the agent, or an error the agent can act on.

Handlers (in cooked_mcp.handlers) return ToolResult or raise ToolError; the dispatcher
in dispatch.py turns both into MCP tool results.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from pydantic import BaseModel

from .confirmation import NO_ASKER, Asker

OutputT = TypeVar("OutputT", bound=BaseModel)

ProgressReporter = Callable[[float, float | None, str | None], Awaitable[None]]


class ToolError(Exception):
    """A failure the agent can act on; its message is shown to the agent as is."""


@dataclass(frozen=True)
class ToolResult(Generic[OutputT]):
    """Concise text for the agent plus the same facts as structured output."""

    text: str
    output: OutputT


@dataclass(frozen=True)
class ToolCall:
    """The parts of the MCP request a handler may use."""

    tool: str
    report_progress: ProgressReporter
    #: How to ask the person before a change that loses data (confirmation.py).
    asker: Asker = NO_ASKER
    _on_answer: list[Callable[[], None]] = field(default_factory=list, repr=False)

    def when_answered(self, hook: Callable[[], None]) -> None:
        """Run ``hook`` when this call's answer reaches the client, as far as the server can know.

        That is when the dispatcher hands the answer (a result or a ToolError) to the SDK and
        the request has not been cancelled (notifications/cancelled, or its session ending):
        the hooks run right after the last cancellation check, with no await between them and
        the return, so the SDK then writes the answer. An HTTP client whose connection drops
        before its answer cancels the request that way too (the HTTP transport sends the
        cancellation for it), so an answer it never got does not count as received; only a
        drop in the instant between this hook and the write goes unseen.
        """
        self._on_answer.append(hook)

    def answered(self) -> None:
        """Called by the dispatcher only (see ``when_answered``)."""
        for hook in self._on_answer:
            hook()
