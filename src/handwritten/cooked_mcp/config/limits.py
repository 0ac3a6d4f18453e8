"""``[mcp.limits]``: how long the server waits (for a peer, for calls still running, for the person's
answer) and how many change outcomes are kept; each bound is named, with its test, in SECURITY.md.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

#: The description is how the config file's messages name what a key must be.
Seconds = Annotated[
    float,
    Field(gt=0, le=3600, allow_inf_nan=False, description="a number of seconds above 0 and at most 3600"),
]


class Limits(BaseModel):
    """The transports' time bounds, in seconds, and the kept outcomes' bounds (handlers/writes.py)."""

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
    #: Ended changes whose outcomes are kept for identical calls; those kept under a promise (a
    #: "still running" or "unknown" answer) are never dropped: at the bound no new change starts.
    kept_outcomes: Annotated[int, Field(ge=1, le=100_000, description="a whole number from 1 to 100000")] = (
        100
    )
    #: Characters those outcomes may hold together (a draft carries its page's markdown), as above.
    kept_outcome_chars: Annotated[
        int, Field(ge=1, le=1 << 30, description="a whole number from 1 to 1073741824")
    ] = 16 * 1024 * 1024
    #: How long a question asking the person to confirm a change waits for its answer; at most
    #: the 10 minutes for which the SDK keeps a 2026-07-28 question's sealed state.
    confirm_answer_seconds: Annotated[
        Seconds, Field(le=600, description="a number of seconds above 0 and at most 600")
    ] = 300.0
