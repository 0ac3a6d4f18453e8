"""Every bound: ``[mcp.limits]`` for those an operator (or a test) may change, ``ClassVar`` for the
rest, remote mode's in ``RemoteLimits``. SECURITY.md names each with the test proving it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, ClassVar

from pydantic import BaseModel, ConfigDict, Field

#: The description is how the config file's messages name what a key must be.
Seconds = Annotated[
    float,
    Field(gt=0, le=3600, allow_inf_nan=False, description="a number of seconds above 0 and at most 3600"),
]


class Limits(BaseModel):
    """Times in seconds, sizes in bytes."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: After SIGINT or SIGTERM, how long calls and changes still running may take (a second signal: none).
    stop_grace_seconds: Seconds = 3.0
    #: After the end of stdin, how long requests read before it may run (a URL import takes up to 90 s).
    input_end_grace_seconds: Seconds = 120.0
    #: HTTP: from connecting (or the previous answer) to the end of the request head.
    http_head_seconds: Seconds = 5.0
    #: HTTP: from the end of the head to the end of the body (4 MiB at 140 KB/s).
    http_body_seconds: Seconds = 30.0
    #: Ended changes kept for identical calls; those promised ("still running") stay: then no new change starts.
    kept_outcomes: Annotated[int, Field(ge=1, le=100_000, description="a whole number from 1 to 100000")] = (
        100
    )
    #: Characters those outcomes may hold together (a draft carries its page's markdown), as above.
    kept_outcome_chars: Annotated[
        int, Field(ge=1, le=1 << 30, description="a whole number from 1 to 1073741824")
    ] = 16 * 1024 * 1024
    #: How long a confirming question waits (the SDK keeps a 2026-07-28 question's state 10 minutes).
    confirm_answer_seconds: Annotated[
        Seconds, Field(le=600, description="a number of seconds above 0 and at most 600")
    ] = 300.0

    #: MiB of Cooked's answers in flight (results.AnswerBudget), each held several times over on its way
    #: out: the default keeps a burst under SECURITY.md's bound. A read finding no room waits, then fails.
    answers_in_flight_mib: Annotated[
        int,
        Field(ge=8, le=4096, description="a whole number of MiB from 8 (the largest answer read) to 4096"),
    ] = 16
    #: At most 20 s: the wait is part of the read's own 40 s deadline (cooked.sender.Timeouts).
    answers_wait_seconds: Annotated[
        float,
        Field(gt=0, le=20, allow_inf_nan=False, description="a number of seconds above 0 and at most 20"),
    ] = 10.0

    #: One HTTP request body or one stdio line (the SDK's own HTTP default).
    MAX_MESSAGE_BYTES: ClassVar[int] = 4 * 1024 * 1024
    #: Remote mode: a body sent to the OAuth endpoints or the consent page, read before any sign-in.
    MAX_FORM_BYTES: ClassVar[int] = 64 * 1024
    #: An ``initialize`` request (about 1 KB): its capability keys are kept for the session's life.
    MAX_INITIALIZE_BYTES: ClassVar[int] = 16 * 1024
    #: Of a message too long to read whole, how much of each end is kept to find its ``id``.
    PEEK_BYTES: ClassVar[int] = 64 * 1024
    #: How many ``"id":`` in such a message's last bytes are tried (bounded CPU for a hostile one).
    ID_TRIES: ClassVar[int] = 8
    #: A request head (h11's default, set explicitly).
    MAX_HEAD_BYTES: ClassVar[int] = 16 * 1024
    #: HTTP connections open at once (fewer if the open-files limit is low).
    MAX_CONNECTIONS: ClassVar[int] = 200
    #: The open-files limit raised to, when the hard limit is unlimited.
    OPEN_FILES: ClassVar[int] = 1 << 16
    #: "cannot accept" (out of file descriptors) is logged at most once per this many seconds.
    ACCEPT_ERROR_LOG_SECONDS: ClassVar[float] = 1.0
    #: File descriptors kept free of client connections (Cooked connections, logs, the loop).
    RESERVED_FDS: ClassVar[int] = 64
    #: The listen backlog, which is also how many connections asyncio accepts in one go.
    ACCEPT_BURST: ClassVar[int] = 32
    #: HTTP sessions open at once (the SDK allows 10,000); the longest-idle one makes room.
    MAX_SESSIONS: ClassVar[int] = 100
    #: A session with no request in flight for this long ends (the SDK's default: 30 minutes).
    SESSION_IDLE_SECONDS: ClassVar[float] = 5 * 60
    #: How long buffered stdio answers may take to reach a client that stopped reading.
    FLUSH_SECONDS: ClassVar[float] = 5.0
    #: Over HTTP an answer below this leaves the budget when handed to the SDK (waiting for its write
    #: costs every call an extra write), so a slow reader holds up to twice this a call beyond it.
    SMALL_ANSWER_BYTES: ClassVar[int] = 64 * 1024


@dataclass(frozen=True)
class RemoteLimits:
    """Remote mode's bounds: the authorization server, its consent page, the CIMD fetch."""

    access_token_seconds: float = 3600.0
    refresh_token_seconds: float = 30 * 24 * 3600.0
    #: Rotated refresh tokens remembered per grant, so that their reuse revokes it.
    rotated_kept: int = 8
    code_seconds: float = 60.0
    #: How long a consent page stays valid, and how many can be open at once.
    consent_seconds: float = 600.0
    open_consents: int = 20
    max_clients: int = 50
    #: Registrations (DCR) per ``registration_window`` seconds, all clients together.
    registrations: int = 10
    registration_window: float = 60.0
    #: Wrong owner passwords tolerated per ``lockout_seconds``, then none at all for as long.
    password_failures: int = 5
    lockout_seconds: float = 900.0
    #: A metadata document's size, fetch time, cache time and size; the connections all fetches share.
    cimd_bytes: int = 5120
    cimd_seconds: float = 5.0
    cimd_cache_seconds: float = 300.0
    cimd_cache_size: int = 32
    cimd_connections: int = 4
    #: Documents fetched (not from the cache) per ``cimd_window`` seconds, all clients together: a person
    #: connects a few apps a day, a stranger naming ever new URLs must not turn the server into a crawler.
    cimd_fetches: int = 10
    cimd_window: float = 60.0
