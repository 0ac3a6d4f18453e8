"""Asking the person, in their own client, one yes/no question before a change that loses data.

MCP elicitation in both protocol eras, through the SDK's public API:

- 2026-07-28: the call is answered with an ``InputRequiredResult`` carrying the question; the
  client asks the person and calls again with the answer in ``input_responses``. The request
  state names the question (a digest of its text), sealed by the SDK's ``RequestStateBoundary``,
  so an answer counts only for the question this server asked, and only when the person's
  answer comes back with it; a retry whose question would now read differently (the recipe was
  renamed, the list changed) is asked again.
- older protocols: an ``elicitation/create`` form request, awaited within the call.

A client that does not declare form elicitation is never asked (``Asker.can_ask`` is false).

A question ends unconfirmed, never as a failure, when no usable answer comes: none within the
time given (``within``; in 2026-07-28 the sealed state carries when it was asked), an answer that
does not parse, or none possible any more (``end_questions``: stdin ended).
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from dataclasses import dataclass, replace
from typing import Any, Literal

import anyio
import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS, is_version_at_least
from pydantic import ValidationError

logger = logging.getLogger("cooked_mcp.tools")

#: The person's three answers, then the ways a question ends without one: not within the time
#: given, an answer that does not parse (or an error instead), and no answer possible any more.
Answer = Literal["accept", "decline", "cancel", "unanswered", "unreadable", "gone"]

#: The key of the one input request; its answer comes back under it.
KEY = "confirm"
#: No fields: accepting is yes, declining is no. One answer, nothing to type.
SCHEMA: types.ElicitRequestedSchema = {"type": "object", "properties": {}}
#: Marks, in ``_meta``, a 2026-07-28 answer put in place of one that did not parse (``unreadable_answers``).
UNREADABLE = "io.github.cooked-mcp/unreadable"


@dataclass(frozen=True)
class Reply:
    answer: Answer
    #: From asking to the answer: a person needs more than a moment to read a question.
    seconds: float


class InputRequired(Exception):
    """Raised by ``Asker.ask`` in the 2026-07-28 era: the dispatcher answers the call with ``result``."""

    def __init__(self, result: types.InputRequiredResult) -> None:
        super().__init__("input required")
        self.result = result


@dataclass(frozen=True)
class Asker:
    """One tool call's way to the person."""

    ctx: ServerRequestContext[Any] | None
    params: types.CallToolRequestParams | None

    # implements: extensions.CONFIRMATION.9
    @property
    def can_ask(self) -> bool:
        """Whether the client declared form elicitation (a bare ``elicitation: {}`` counts as form)."""
        if self.ctx is None:
            return False
        capabilities = self.ctx.session.client_capabilities
        elicitation = capabilities.elicitation if capabilities is not None else None
        return elicitation is not None and (elicitation.form is not None or elicitation.url is None)

    # implements: extensions.CONFIRMATION.4, extensions.CONFIRMATION.7, extensions.CONFIRMATION.8
    async def ask(self, question: str, within: float) -> Reply:
        """The person's answer to ``question``, given within ``within`` seconds; in the 2026-07-28
        era, raises InputRequired first."""
        assert self.ctx is not None and self.can_ask, "ask only when can_ask"
        if _modern(self.ctx.protocol_version):
            return self._answered(question, within)
        asked = time.monotonic()
        answer: Answer = "unanswered"
        with anyio.move_on_after(within), anyio.CancelScope() as waiting:
            if _QUESTIONS.ended:
                waiting.cancel()
            _QUESTIONS.waiting.add(waiting)
            try:
                result = await self.ctx.session.elicit_form(
                    question, SCHEMA, related_request_id=self.ctx.request_id
                )
                answer = result.action
            except (MCPError, ValidationError) as exc:
                logger.warning("unusable answer to a confirmation question: %s", type(exc).__name__)
                answer = "unreadable"
            finally:
                _QUESTIONS.waiting.discard(waiting)
        if waiting.cancelled_caught:
            answer = "gone"
        return Reply(answer, time.monotonic() - asked)

    def _answered(self, question: str, within: float) -> Reply:
        """The answer that came back with this question's sealed state, or InputRequired."""
        digest = hashlib.sha256(question.encode()).hexdigest()
        params = self.params
        if params is not None and params.request_state is not None:
            state = json.loads(params.request_state)
            response = (params.input_responses or {}).get(KEY)
            if state["question"] == digest and isinstance(response, types.ElicitResult):
                seconds = time.time() - state["asked"]
                if (response.meta or {}).get(UNREADABLE):
                    return Reply("unreadable", seconds)
                return Reply(response.action if seconds <= within else "unanswered", seconds)
        request = types.ElicitRequest(
            params=types.ElicitRequestFormParams(message=question, requested_schema=SCHEMA)
        )
        asked = json.dumps({"question": digest, "asked": time.time()})
        raise InputRequired(types.InputRequiredResult(input_requests={KEY: request}, request_state=asked))


async def unreadable_answers(ctx: ServerRequestContext[Any], call_next: CallNext) -> HandlerResult:
    """Server middleware: a 2026-07-28 answer to the question that does not parse is replaced by one
    marked unreadable, so the call ends not confirmed as in the older era, instead of the SDK
    refusing the whole call as invalid before any handler runs."""
    params = ctx.params or {}
    responses = params.get("inputResponses") if ctx.method == "tools/call" else None
    if isinstance(responses, dict) and KEY in responses:
        try:
            types.ElicitResult.model_validate(responses[KEY], by_name=False)
        except ValidationError:
            logger.warning("unusable answer to a confirmation question: it does not parse")
            unreadable = {"action": "decline", "_meta": {UNREADABLE: True}}
            ctx = replace(ctx, params={**params, "inputResponses": {**responses, KEY: unreadable}})
    return await call_next(ctx)


class _Waiting:
    """The questions of this process waiting for an elicitation/create answer."""

    def __init__(self) -> None:
        self.waiting: set[anyio.CancelScope] = set()
        self.ended = False


_QUESTIONS = _Waiting()


def end_questions() -> None:
    """No answer can reach this process any more (stdio: its input ended, or a stop ended reading
    it; one client per process): every question waiting ends now unconfirmed, as does any asked
    later, instead of holding its call until the stop's grace runs out."""
    _QUESTIONS.ended = True
    for waiting in _QUESTIONS.waiting:
        waiting.cancel()


NO_ASKER = Asker(None, None)


def _modern(version: str | None) -> bool:
    return version is not None and is_version_at_least(version, MODERN_PROTOCOL_VERSIONS[0])
