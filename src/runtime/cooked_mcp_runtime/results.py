"""What a handler gives back: a result for the agent, or an error the agent can act on.

Handlers (in cooked_mcp.handlers) return ToolResult or raise ToolError; the dispatcher
in dispatch.py turns both into MCP tool results.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from pydantic import BaseModel

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
