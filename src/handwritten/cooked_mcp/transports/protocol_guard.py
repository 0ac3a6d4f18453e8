"""What both transports share: the protocol rules the SDK lacks, and the stop signals. What is no
JSON-RPC message, and a request whose ``id`` is no string or integer, the SDK leaves unanswered
(python-sdk #2751, #2848): answered -32700 or -32600, with the ``id`` when it can be read. A request
reusing the id of one still running (python-sdk #3060) and an oversized ``initialize`` are refused."""

from __future__ import annotations

import contextlib
import json
import logging
import re
import signal
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import mcp_types as types
import pydantic_core
from anyio.abc import TaskStatus
from pydantic import ValidationError

from ..config.limits import Limits

logger = logging.getLogger("cooked_mcp.transports")

#: What a request cut off by a stop is told: a write may have reached Cooked.
INTERRUPTED = (
    "The server shut down before this call finished; if it was a change (save, delete, shopping "
    "list), it may or may not have been made. Read the current state before trying again."
)
_STRING = rb'"(?:[^"\\]|\\.)*"'
#: A top-level ``id`` after string members only (``"jsonrpc"``, ``"method"``), and its value.
_HEAD_ID = re.compile(rb'\s*\{(?:\s*%s\s*:\s*%s\s*,)*?\s*"id"\s*:\s*(-?\d+|%s)\s*[,}]' % ((_STRING,) * 3))


class Refusal(types.JSONRPCError):
    """A JSON-RPC error made here, to be sent (distinct from an error a client sent)."""


def make_answer(
    request_id: types.RequestId | None, message: str, code: int = types.INVALID_REQUEST
) -> Refusal:
    return Refusal(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))


def read_message(raw: bytes) -> types.JSONRPCMessage | Refusal:
    try:
        data: Any = pydantic_core.from_json(raw)
    except ValueError:  # also valid JSON its parser refuses: a lone surrogate, deep nesting
        return make_answer(
            find_id(raw[: Limits.PEEK_BYTES], raw[-Limits.PEEK_BYTES :]),
            "Parse error: the message is not valid JSON",
            types.PARSE_ERROR,
        )
    if isinstance(data, list):
        return make_answer(None, "Batches are not supported: send one message at a time")
    if not isinstance(data, dict):
        return make_answer(None, "Invalid request: a message must be a JSON object")
    readable = data.get("id") if type(data.get("id")) in (int, str) else None
    if "id" in data and readable is None:
        return make_answer(None, "Invalid request: id must be a string or an integer")
    try:
        return types.jsonrpc_message_adapter.validate_python(data, by_name=False)
    except ValidationError as exc:
        where = "; ".join(
            f"{'.'.join(str(part) for part in error['loc'][-2:]) or 'message'}: {error['msg']}"
            for error in exc.errors(include_input=False, include_url=False)[:3]
        )
        return make_answer(readable, f"Invalid request ({where})")


def refusal(
    message: types.JSONRPCMessage | Refusal, size: int, running: Callable[[types.RequestId], bool]
) -> Refusal | None:
    """What to answer ``message`` (of ``size`` bytes) with instead of passing it on, or None;
    ``running`` says whether a request with that id is still running in its session."""
    if isinstance(message, Refusal) or not isinstance(message, types.JSONRPCRequest):
        return message if isinstance(message, Refusal) else None
    if message.method == "initialize" and size > Limits.MAX_INITIALIZE_BYTES:
        too_big = (
            f"initialize request larger than {Limits.MAX_INITIALIZE_BYTES} bytes; send fewer capabilities"
        )
        return make_answer(message.id, too_big, types.INVALID_PARAMS)
    if running(message.id):
        return make_answer(message.id, f"A request with id {message.id!r} is still running; use a new id")
    return None


def find_id(head: bytes, tail: bytes) -> types.RequestId | None:
    """The top-level ``id`` of a message that cannot be read whole, from its first and last bytes:
    clients write it near the start, after string members only (the Python SDK), or at the very
    end (the TypeScript SDK), where only the last few ``"id":`` are tried (each parses the tail)."""
    value = None
    with contextlib.suppress(ValueError):
        value = json.loads(match[1]) if (match := _HEAD_ID.match(head)) else None
    for found in [] if match else list(re.finditer(rb'"id"\s*:', tail))[-Limits.ID_TRIES :][::-1]:
        with contextlib.suppress(ValueError):  # ``{`` plus the rest from a top-level ``"id":``
            value = json.loads(b"{" + tail[found.start() :]).get("id")
            break
    return value if type(value) in (int, str) else None


class StopSignals:
    """SIGINT and SIGTERM, taken by the event loop: its handler runs no Python code (one that logs
    could deadlock on a lock its thread holds). The first asks to stop (``requested``: calls get
    their grace); a second ends the grace at once (``now``: they are answered as cut off)."""

    def __init__(self) -> None:
        self.requested = anyio.Event()
        self.now = anyio.Event()
        self.signal = 0  # the first signal received, for the exit status

    async def watch(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Receive signals until cancelled; started with ``TaskGroup.start``, it returns once
        they are caught, so a signal from then on always finds the loop's handler."""
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as received:
            task_status.started()
            async for signum in received:
                name = signal.Signals(signum).name
                if not self.signal:
                    logger.info("received %s, stopping", name)
                    self.signal = int(signum)
                    self.requested.set()
                elif not self.now.is_set():
                    logger.info("received %s again, stopping now", name)
                    self.now.set()

    async def after_grace(self, grace: float, scope: anyio.CancelScope | None = None) -> None:
        """Once a stop's grace is over (``grace`` seconds after the first signal, or a second)."""
        await self.requested.wait()
        with anyio.move_on_after(grace):
            await self.now.wait()
        if scope is not None:
            scope.cancel()

    async def within_grace(self, grace: float, *waits: Callable[[], Awaitable[object]]) -> None:
        """Each of ``waits`` in turn, until a stop's grace is over."""
        async with anyio.create_task_group() as group:
            group.start_soon(self.after_grace, grace, group.cancel_scope)
            for wait in waits:
                await wait()
            group.cancel_scope.cancel()
