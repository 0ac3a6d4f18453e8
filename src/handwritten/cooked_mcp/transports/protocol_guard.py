"""Every protocol rule the SDK lacks, for both transports: the guard around its streams.

**Framing** (``read_message``): the SDK leaves a message that is no JSON-RPC message, and a
request whose ``id`` is no string or integer (it passes as a notification), unanswered, so its
client waits for ever (python-sdk issues #2751 and #2848). JSON-RPC 2.0 section 5.1 answers
-32700 or -32600, with the request's ``id`` when it can be read.

**Refusals** (``refusal``): a request reusing the id of one still running (the SDK's dispatcher
overwrites it, python-sdk issue #3060) and an ``initialize`` over ``MAX_INITIALIZE_BYTES``;
over HTTP ``HttpGuard`` refuses a session-less one unparsed.

**One answer per request, also when a stop cuts it off.** After a stop (SIGINT, SIGTERM, the end
of stdin) the requests already read, and the changes still running at Cooked in the background,
get a grace (``config.Limits``); a request still running after it is answered ``interrupted``
(its change may or may not have been made), and whatever comes for it later (the SDK's
"Connection closed", a late result) is dropped: ``Unanswered`` over stdio; over HTTP each
request's stream ends at its first answer (``HttpGuard``).
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

from ..config.limits import Limits
from .stop_signals import StopSignals, cancel_when_set

__all__ = [
    "INTERRUPTED",
    "PassOn",
    "ReadStream",
    "WriteStream",
    "find_id",
    "guarded_streams",
    "interrupted",
    "is_answer",
    "make_answer",
    "read_message",
    "refusal",
]

logger = logging.getLogger("cooked_mcp.transports")


ReadStream = MemoryObjectReceiveStream[SessionMessage | Exception]
WriteStream = MemoryObjectSendStream[SessionMessage]
PassOn = Callable[[SessionMessage | Exception], Awaitable[None]]


def read_message(raw: str | bytes) -> types.JSONRPCMessage | types.JSONRPCError:
    """The message in ``raw``, or (as a ``JSONRPCError`` not yet sent) what to answer it with,
    carrying the request's ``id`` whenever it can be read (JSON-RPC 2.0 section 5.1).

    A ``JSONRPCError`` returned here is always the answer to send; a JSON-RPC error the
    client itself sent comes back inside the union like any other valid message, so the
    caller tells them apart by identity, not by type: see ``is_answer``.
    """
    try:
        data: Any = pydantic_core.from_json(raw)
    except ValueError:  # also valid JSON its parser refuses: a lone surrogate, deep nesting
        raw = raw.encode(errors="surrogatepass") if isinstance(raw, str) else raw
        return make_answer(find_id(raw[:PEEK_BYTES], raw[-PEEK_BYTES:]), NOT_JSON, types.PARSE_ERROR)
    if isinstance(data, list):
        return make_answer(None, "Batches are not supported: send one message at a time")
    if not isinstance(data, dict):
        return make_answer(None, "Invalid request: a message must be a JSON object")
    request_id = data.get("id")
    readable = request_id if type(request_id) in (int, str) else None
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


#: How much of each end of a message that cannot be read whole is searched for its ``id``.
PEEK_BYTES = 64 * 1024
NOT_JSON = "Parse error: the message is not valid JSON"
#: The SDK's answer to a request before ``initialize`` ("Invalid request parameters") says why.
NOT_INITIALIZED = "The session is not initialized: send initialize first, then notifications/initialized"


def is_answer(message: types.JSONRPCMessage | types.JSONRPCError) -> bool:
    """Whether ``message`` came from ``read_message`` as the error to answer with."""
    return isinstance(message, _Answer)


def make_answer(
    request_id: types.RequestId | None, message: str, code: int = types.INVALID_REQUEST
) -> types.JSONRPCError:
    """A JSON-RPC error made by this server, to be sent (``is_answer`` is true of it)."""
    return _Answer(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))


def duplicate(request_id: types.RequestId) -> types.JSONRPCError:
    return make_answer(request_id, f"A request with id {request_id!r} is still running; use a new id")


def find_id(head: bytes, tail: bytes) -> types.RequestId | None:
    """The top-level ``id`` of a message too long to read whole, from its first and last bytes.

    Clients write ``id`` near the start (the Python SDK) or at the very end (the TypeScript
    SDK), so both ends are kept. None when neither holds a string or integer ``id``.
    """
    value = _top_level_id(head.decode("utf-8", errors="replace"))
    if value is _MISSING:
        value = _last_members_id(tail)
    return value if type(value) in (int, str) else None  # type: ignore[return-value]


_MISSING = object()
_COLON = re.compile(r"\s*:\s*")
_ID_KEY = re.compile(rb'"id"\s*:')


def _top_level_id(text: str) -> object:
    """The value of a top-level ``"id"`` member in the start of a JSON object, or ``_MISSING``."""
    depth, index, in_string = 0, 0, False
    while index < len(text):
        char = text[index]
        if in_string:
            if char == "\\":
                index += 1
            elif char == '"':
                in_string = False
        elif char == '"':
            if depth == 1 and text.startswith('"id"', index) and (colon := _COLON.match(text, index + 4)):
                try:
                    return json.JSONDecoder().raw_decode(text, colon.end())[0]
                except ValueError:
                    return _MISSING  # cut off in the middle of the value
            in_string = True
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
        index += 1
    return _MISSING


def _last_members_id(tail: bytes) -> object:
    """The ``id`` among the last members of a JSON object: ``{`` plus the rest from a top-level
    ``"id":`` is itself a valid object, which it is not from a nested one (a brace too many)."""
    for match in _ID_KEY.finditer(tail):
        try:
            members = json.loads(b"{" + tail[match.start() :])
        except ValueError:
            continue
        return members.get("id", _MISSING)
    return _MISSING


class _Answer(types.JSONRPCError):
    """A JSON-RPC error made here, to be sent (distinct from an error a client sent)."""


def refusal(
    message: types.JSONRPCMessage | types.JSONRPCError,
    body: bytes,
    running: Callable[[types.RequestId], bool],
) -> types.JSONRPCError | None:
    """The error to answer ``message`` (read from ``body``) with instead of passing it on, or
    None; ``running`` says whether a request with that id is still running in its session."""
    if is_answer(message):
        assert isinstance(message, types.JSONRPCError)
        return message
    if not isinstance(message, types.JSONRPCRequest):
        return None
    if message.method == "initialize" and len(body) > Limits.MAX_INITIALIZE_BYTES:
        return make_answer(
            message.id,
            f"initialize request larger than {Limits.MAX_INITIALIZE_BYTES} bytes; send fewer capabilities",
            types.INVALID_PARAMS,
        )
    return duplicate(message.id) if running(message.id) else None


#: What a request cut off by a stop is told: a write may have reached Cooked.
INTERRUPTED = (
    "The server shut down before this call finished; if it was a change (save, delete, shopping "
    "list), it may or may not have been made. Read the current state before trying again."
)


def interrupted(request_id: types.RequestId) -> types.JSONRPCError:
    """The one answer to a request still running when serving stops (see ``INTERRUPTED``)."""
    return make_answer(request_id, INTERRUPTED, types.INTERNAL_ERROR)


@contextlib.asynccontextmanager
async def guarded_streams(
    read: Callable[[PassOn], Awaitable[None]],
    send: Callable[[types.JSONRPCMessage], Awaitable[None]],
    limits: Limits,
    stop: StopSignals,
    changes: Callable[[], Awaitable[None]],
) -> AsyncIterator[tuple[ReadStream, WriteStream]]:
    """The streams the SDK's server runs on, between a stdio transport's ``read`` (which passes
    on each message read) and its ``send`` (which raises ``ConnectionError`` once the client is
    gone): a request reusing a running id is refused, a line the SDK's transport could not read
    is answered, a request before ``initialize`` is told to send it, input ends at a stop as at
    its end, waits for the calls still running, and each request gets one answer."""
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
            if unanswered.running(message.id):
                await answer(duplicate(message.id))
                return
            if before_initialize is not None and not _modern(message):
                before_initialize.add(message.id)
        unanswered.read(message)
        await read_send.send(item)

    def explained(message: types.JSONRPCMessage) -> types.JSONRPCMessage:
        """An answer before ``initialize`` was answered says what to do (the SDK's says "Invalid
        request parameters" with empty data)."""
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
                await read(pass_on)
                reading.cancel_scope.cancel()
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

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(serve_input)
        tasks.start_soon(serve_output)
        yield read_stream, write_stream


def _modern(request: types.JSONRPCRequest) -> bool:
    """A request of the 2026 protocol era, which needs no ``initialize``."""
    meta = (request.params or {}).get("_meta")
    return isinstance(meta, dict) and types.PROTOCOL_VERSION_META_KEY in meta


class Unanswered:
    """The requests read and not yet answered: each may be answered once, and the end of
    input waits for them."""

    def __init__(self, limits: Limits) -> None:
        self._limits = limits
        self._ids: set[types.RequestId] = set()
        self._none_left: anyio.Event | None = None  # made by settled(), once input has ended

    def read(self, message: types.JSONRPCMessage) -> None:
        if isinstance(message, types.JSONRPCRequest):
            self._ids.add(message.id)
        elif isinstance(message, types.JSONRPCNotification) and message.method == "notifications/cancelled":
            # A cancelled request is not answered (the MCP spec says so), so nothing is awaited for it.
            self._drop((message.params or {}).get("requestId"))

    def may_send(self, message: types.JSONRPCMessage) -> bool:
        """Whether ``message`` may go to the client: anything but an answer, or the first answer
        to a request awaiting one, which is then no longer awaited. Decide just before sending."""
        if not isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            return True
        if message.id not in self._ids:
            logger.debug("dropped an answer to request %r, which had its answer already", message.id)
            return False
        self._drop(message.id)
        return True

    def cut_off(self) -> list[types.JSONRPCError]:
        """The answers to every request still running, each now answered (see ``INTERRUPTED``)."""
        answers = [interrupted(request_id) for request_id in sorted(self._ids, key=str)]
        self._ids.clear()
        self._drop(None)
        return answers

    def running(self, request_id: types.RequestId) -> bool:
        return request_id in self._ids

    async def settled(self, stop: StopSignals, changes: Callable[[], Awaitable[None]]) -> None:
        """Return once every request read has been answered and ``changes()`` has returned (every
        change sent to Cooked has ended, also those of calls already answered or cancelled), or
        the grace is over (see the module docstring); a signal during the end of input's grace
        shortens it."""
        logger.debug("input ended with %d request(s) still running; answering them first", len(self._ids))
        self._none_left = anyio.Event()
        if not self._ids:
            self._none_left.set()
        # Input ended by a stop: the stop's grace alone, as over HTTP; ended by itself: the end of
        # input's grace, which a signal during it shortens to the stop's.
        stopped = stop.requested.is_set()
        with anyio.move_on_after(math.inf if stopped else self._limits.input_end_grace_seconds):
            async with anyio.create_task_group() as group:
                group.start_soon(
                    _cancel_after_grace, stop, self._limits.stop_grace_seconds, group.cancel_scope
                )
                await self._none_left.wait()
                await changes()
                group.cancel_scope.cancel()
        if self._ids:
            logger.warning(
                "%d request(s) still running after the grace period; answering them as cut off",
                len(self._ids),
            )

    def _drop(self, request_id: object) -> None:
        self._ids.discard(request_id)
        if not self._ids and self._none_left is not None:
            self._none_left.set()


async def _cancel_after_grace(stop: StopSignals, grace: float, scope: anyio.CancelScope) -> None:
    await stop.requested.wait()
    with anyio.move_on_after(grace):
        await stop.now.wait()
    scope.cancel()
