"""Every protocol rule the SDK lacks, for both transports (over HTTP applied by ``HttpGuard``).

- What is no JSON-RPC message, and a request whose ``id`` is no string or integer, the SDK leaves
  unanswered (python-sdk issues #2751 and #2848): answered -32700 or -32600 (JSON-RPC 2.0
  section 5.1), with the request's ``id`` whenever it can be read (``read_message``).
- A request reusing the id of one still running (the SDK's dispatcher overwrites it, python-sdk
  issue #3060) and an ``initialize`` over ``Limits.MAX_INITIALIZE_BYTES`` are refused (``refusal``).
- One answer per request, also when a stop (SIGINT, SIGTERM, the end of stdin) cuts it off: the
  requests read and the changes still running at Cooked get a grace (``Limits``), then each
  request still running is answered ``interrupted``, and anything later for it is dropped.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio
import mcp_types as types
import pydantic_core
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from cooked_mcp_runtime.confirmation import end_questions

from ..config.limits import Limits
from .stop_signals import StopSignals, cancel_when_set

logger = logging.getLogger("cooked_mcp.transports")

#: The streams the SDK's server runs on.
Streams = tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]]
PassOn = Callable[[SessionMessage | Exception], Awaitable[None]]
Answer = Callable[[types.JSONRPCError], Awaitable[None]]
NOT_JSON = "Parse error: the message is not valid JSON"
#: The SDK's answer to a request before ``initialize`` ("Invalid request parameters") says why.
NOT_INITIALIZED = "The session is not initialized: send initialize first, then notifications/initialized"
#: What a request cut off by a stop is told: a write may have reached Cooked.
INTERRUPTED = (
    "The server shut down before this call finished; if it was a change (save, delete, shopping "
    "list), it may or may not have been made. Read the current state before trying again."
)


class _Answer(types.JSONRPCError):
    """A JSON-RPC error made here, to be sent (distinct from an error a client sent)."""


def make_answer(
    request_id: types.RequestId | None, message: str, code: int = types.INVALID_REQUEST
) -> _Answer:
    return _Answer(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))


def is_answer(message: types.JSONRPCMessage | types.JSONRPCError) -> bool:
    """Whether ``message`` came from ``read_message`` as the error to answer with."""
    return isinstance(message, _Answer)


def duplicate(request_id: types.RequestId) -> types.JSONRPCError:
    return make_answer(request_id, f"A request with id {request_id!r} is still running; use a new id")


def interrupted(request_id: types.RequestId) -> types.JSONRPCError:
    return make_answer(request_id, INTERRUPTED, types.INTERNAL_ERROR)


def read_message(raw: str | bytes) -> types.JSONRPCMessage | types.JSONRPCError:
    """The message in ``raw``, or what to answer it with (``is_answer`` tells them apart)."""
    try:
        data: Any = pydantic_core.from_json(raw)
    except ValueError:  # also valid JSON its parser refuses: a lone surrogate, deep nesting
        raw = raw.encode(errors="surrogatepass") if isinstance(raw, str) else raw
        return make_answer(
            find_id(raw[: Limits.PEEK_BYTES], raw[-Limits.PEEK_BYTES :]), NOT_JSON, types.PARSE_ERROR
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
    message: types.JSONRPCMessage | types.JSONRPCError,
    body: bytes,
    running: Callable[[types.RequestId], bool],
) -> types.JSONRPCError | None:
    """The error to answer ``message`` (read from ``body``) with instead of passing it on, or
    None; ``running`` says whether a request with that id is still running in its session."""
    if isinstance(message, _Answer):
        return message
    if not isinstance(message, types.JSONRPCRequest):
        return None
    if message.method == "initialize" and len(body) > Limits.MAX_INITIALIZE_BYTES:
        too_big = (
            f"initialize request larger than {Limits.MAX_INITIALIZE_BYTES} bytes; send fewer capabilities"
        )
        return make_answer(message.id, too_big, types.INVALID_PARAMS)
    return duplicate(message.id) if running(message.id) else None


def find_id(head: bytes, tail: bytes) -> types.RequestId | None:
    """The top-level ``id`` of a message that cannot be read whole, from its first and last bytes:
    clients write it near the start (the Python SDK) or at the very end (the TypeScript SDK)."""
    value = _top_level_id(head.decode("utf-8", errors="replace"))
    if value is _MISSING:  # ``{`` plus the rest from a top-level ``"id":`` is a valid object
        # From the end, and only the last few: each try may parse the whole tail.
        for match in list(re.finditer(rb'"id"\s*:', tail))[-Limits.ID_TRIES :][::-1]:
            with contextlib.suppress(ValueError):
                value = json.loads(b"{" + tail[match.start() :]).get("id")
                break
    return value if type(value) in (int, str) else None  # type: ignore[return-value]


_MISSING = object()


def _top_level_id(text: str) -> object:
    """The value of a top-level ``"id"`` member in the start of a JSON object, or ``_MISSING``."""
    depth, index, in_string = 0, 0, False
    while index < len(text):
        char = text[index]
        if in_string:
            index += char == "\\"
            in_string = char != '"'
        elif char == '"':
            if (
                depth == 1
                and text.startswith('"id"', index)
                and (colon := re.compile(r"\s*:\s*").match(text, index + 4))
            ):
                try:
                    return json.JSONDecoder().raw_decode(text, colon.end())[0]
                except ValueError:
                    return _MISSING  # cut off in the middle of the value
            in_string = True
        else:
            depth += (char in "{[") - (char in "}]")
        index += 1
    return _MISSING


@contextlib.asynccontextmanager
async def guarded_streams(
    read: Callable[[PassOn, Answer], Awaitable[None]],
    send: Callable[[types.JSONRPCMessage], Awaitable[None]],
    limits: Limits,
    stop: StopSignals,
    changes: Callable[[], Awaitable[None]],
) -> AsyncIterator[Streams]:
    """The streams the SDK's server runs on, between a stdio transport's ``read`` (which passes
    on each message read, or answers it) and its ``send`` (``ConnectionError`` once the client
    is gone), with the rules of the module docstring; a request before ``initialize`` is told to
    send it, and the end of input (or a stop) waits for the calls still running."""
    read_send, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_receive = anyio.create_memory_object_stream[SessionMessage](0)
    unanswered = Unanswered(limits)
    before_initialize: set[types.RequestId] | None = set()  # None once initialize is answered

    async def answer(error: types.JSONRPCError) -> None:
        with contextlib.suppress(ConnectionError):
            await send(error)

    async def pass_on(item: SessionMessage | Exception) -> None:
        if not isinstance(item, SessionMessage):  # the SDK's stdio transport could not parse a line
            await answer(make_answer(None, NOT_JSON, types.PARSE_ERROR))
            return
        message = item.message
        if isinstance(message, types.JSONRPCRequest):
            if message.id in unanswered.ids:
                await answer(duplicate(message.id))
                return
            meta = (message.params or {}).get("_meta")
            modern = isinstance(meta, dict) and types.PROTOCOL_VERSION_META_KEY in meta  # needs no initialize
            if before_initialize is not None and not modern:
                before_initialize.add(message.id)
        unanswered.read(message)
        await read_send.send(item)

    def explained(message: types.JSONRPCMessage) -> types.JSONRPCMessage:
        nonlocal before_initialize
        if before_initialize is None or not isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            return message
        asked_first = message.id in before_initialize
        before_initialize.discard(message.id)
        if isinstance(message, types.JSONRPCResponse) and "protocolVersion" in message.result:
            before_initialize = None  # the initialize answer
        elif (
            asked_first
            and isinstance(message, types.JSONRPCError)
            and message.error.code == types.INVALID_PARAMS
        ):
            return make_answer(message.id, NOT_INITIALIZED, types.INVALID_PARAMS)
        return message

    async def serve_input() -> None:
        async with read_send:  # its end is the end of input, which the SDK's server acts on
            async with anyio.create_task_group() as reading:
                reading.start_soon(cancel_when_set, stop.requested, reading.cancel_scope)
                await read(pass_on, answer)
                reading.cancel_scope.cancel()
            end_questions()  # no answer to a confirmation question can be read any more
            await unanswered.settled(stop, changes)
            for error in unanswered.cut_off():
                await answer(error)

    async def serve_output() -> None:
        async with write_receive:
            async for session_message in write_receive:
                if unanswered.may_send(session_message.message):
                    try:
                        await send(explained(session_message.message))
                    except ConnectionError:
                        logger.info("the client stopped reading; no more answers can be sent")
                        unanswered.cut_off()  # none can be delivered: stop waiting for them
                        return

    async with anyio.create_task_group() as stopping:
        stopping.start_soon(_end_after_stop, stop, limits.stop_grace_seconds, stopping.cancel_scope)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(serve_input)
            tasks.start_soon(serve_output)
            yield read_stream, write_stream
        stopping.cancel_scope.cancel()


class Unanswered:
    """The requests read and not yet answered: each is answered once; the end of input waits for them."""

    def __init__(self, limits: Limits) -> None:
        self._limits = limits
        self.ids: set[types.RequestId] = set()
        self._none_left: anyio.Event | None = None  # made by settled(), once input has ended

    def read(self, message: types.JSONRPCMessage) -> None:
        if isinstance(message, types.JSONRPCRequest):
            self.ids.add(message.id)
        elif isinstance(message, types.JSONRPCNotification) and message.method == "notifications/cancelled":
            self._drop((message.params or {}).get("requestId"))  # the MCP spec: it gets no answer

    def may_send(self, message: types.JSONRPCMessage) -> bool:
        """Anything but an answer, or the first answer to a request awaiting one (decided just
        before sending)."""
        if not isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            return True
        if message.id not in self.ids:
            logger.debug("dropped an answer to request %r, which had its answer already", message.id)
            return False
        self._drop(message.id)
        return True

    def cut_off(self) -> list[types.JSONRPCError]:
        """The answers to every request still running, each now answered (see ``INTERRUPTED``)."""
        answers = [interrupted(request_id) for request_id in sorted(self.ids, key=str)]
        self.ids.clear()
        self._drop(None)
        return answers

    async def settled(self, stop: StopSignals, changes: Callable[[], Awaitable[None]]) -> None:
        """Once every request read is answered and ``changes()`` returned (every change sent to
        Cooked has ended), or the grace is over: input ended by a stop, the stop's grace; ended by
        itself, the end of input's, which a signal during it shortens to the stop's."""
        self._none_left = anyio.Event()
        if not self.ids:
            self._none_left.set()
        stopped = stop.requested.is_set()
        with anyio.move_on_after(math.inf if stopped else self._limits.input_end_grace_seconds):
            async with anyio.create_task_group() as group:
                group.start_soon(
                    _cancel_after_grace, stop, self._limits.stop_grace_seconds, group.cancel_scope
                )
                await self._none_left.wait()
                await changes()
                group.cancel_scope.cancel()
        if self.ids:
            logger.warning(
                "%d request(s) still running after the grace period; answering them as cut off", len(self.ids)
            )

    def _drop(self, request_id: object) -> None:
        self.ids.discard(request_id)
        if not self.ids and self._none_left is not None:
            self._none_left.set()


async def _end_after_stop(stop: StopSignals, grace: float, scope: anyio.CancelScope) -> None:
    """A stop ends serving at the latest ``Limits.FLUSH_SECONDS`` after its grace: the answers
    still unwritten then are for a client that stopped reading, and would hold the process."""
    await stop.requested.wait()
    with anyio.move_on_after(grace):
        await stop.now.wait()
    await anyio.sleep(Limits.FLUSH_SECONDS)
    logger.warning("a stop ended serving: the client did not read the answers left")
    scope.cancel()


async def _cancel_after_grace(stop: StopSignals, grace: float, scope: anyio.CancelScope) -> None:
    await stop.requested.wait()
    with anyio.move_on_after(grace):
        await stop.now.wait()
    scope.cancel()
