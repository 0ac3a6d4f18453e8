"""How long the transports wait for a peer or for calls still running, and how much memory the
answers in flight may hold: ``[mcp.limits]`` in the file.

Defaults suit every client; the table exists so that an operator (or a test) can shorten or
lengthen them without a new release. Each bound is named, with the test proving it, in
SECURITY.md.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Limits"]

#: The description is how the config file's messages name what a key must be.
Seconds = Annotated[
    float,
    Field(gt=0, le=3600, allow_inf_nan=False, description="a number of seconds above 0 and at most 3600"),
]


class Limits(BaseModel):
    """The transports' time bounds, in seconds, and the bound on answers in flight."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: After SIGINT or SIGTERM, how long calls still running (and changes sent to Cooked in the
    #: background) may take before each is answered as cut off; a second signal ends it at once.
    stop_grace_seconds: Seconds = 3.0
    #: After the end of stdin, how long the requests read before it may still run: the slowest
    #: tool call (a URL import, up to 90 s at Cooked, after a login) fits.
    input_end_grace_seconds: Seconds = 120.0
    #: HTTP: from connecting (or the previous answer) to the end of the request head.
    http_head_seconds: Seconds = 5.0
    #: HTTP: from the end of the head to the end of the body (4 MiB at 140 KB/s).
    http_body_seconds: Seconds = 30.0
    #: MiB of Cooked's answers the tool calls in flight may hold, from before each is read until
    #: the call's answer is written (cooked_mcp_runtime.results.AnswerBudget): the memory bound
    #: on big results. A read that finds no room waits ``answers_wait_seconds``, then is refused.
    answers_in_flight_mib: Annotated[
        int,
        Field(ge=8, le=4096, description="a whole number of MiB from 8 (the largest answer read) to 4096"),
    ] = 32
    #: At most 20 s: the wait is part of the read's own 40 s deadline (cooked.sender.Timeouts).
    answers_wait_seconds: Annotated[
        float,
        Field(gt=0, le=20, allow_inf_nan=False, description="a number of seconds above 0 and at most 20"),
    ] = 10.0
