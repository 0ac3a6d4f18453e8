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
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Literal

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp_types.version import MODERN_PROTOCOL_VERSIONS, is_version_at_least

Answer = Literal["accept", "decline", "cancel"]

#: The key of the one input request; its answer comes back under it.
KEY = "confirm"
#: No fields: accepting is yes, declining is no. One answer, nothing to type.
SCHEMA: types.ElicitRequestedSchema = {"type": "object", "properties": {}}


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
    async def ask(self, question: str) -> Answer:
        """The person's answer to ``question``; in the 2026-07-28 era, raises InputRequired first."""
        assert self.ctx is not None and self.can_ask, "ask only when can_ask"
        if _modern(self.ctx.protocol_version):
            return self._answered(question)
        result = await self.ctx.session.elicit_form(question, SCHEMA, related_request_id=self.ctx.request_id)
        return result.action

    def _answered(self, question: str) -> Answer:
        state = json.dumps({"question": hashlib.sha256(question.encode()).hexdigest()})
        params = self.params
        if params is not None and params.request_state == state:
            response = (params.input_responses or {}).get(KEY)
            if isinstance(response, types.ElicitResult):
                return response.action
        request = types.ElicitRequest(
            params=types.ElicitRequestFormParams(message=question, requested_schema=SCHEMA)
        )
        raise InputRequired(types.InputRequiredResult(input_requests={KEY: request}, request_state=state))


NO_ASKER = Asker(None, None)


def _modern(version: str | None) -> bool:
    return version is not None and is_version_at_least(version, MODERN_PROTOCOL_VERSIONS[0])
