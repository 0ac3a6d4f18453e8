"""From what Cooked answered (or failed to) to the ``CookedError`` that says so, with a next step
an agent can act on; Cooked's own message is untrusted, cleaned and shortened.
"""

from __future__ import annotations

import json
import math
import socket
import ssl
from collections.abc import Callable, Iterator

import anyio

from cooked_mcp.cooked.endpoints import Endpoint, Key
from cooked_mcp.exceptions import (
    CookedError,
    CookedForbidden,
    CookedInvalidRequest,
    CookedNotFound,
    CookedRateLimited,
    CookedRejected,
    CookedServerError,
    CookedUnprocessable,
)
from cooked_mcp.text import one_line

_MAX_MESSAGE_CHARS = 300
_MAX_CODE_CHARS = 64


#: A 403 on a change to one recipe: Cooked lets an account change only the recipes it owns.
_NOT_YOURS = "this recipe belongs to someone else and cannot be changed; read it and save a copy instead"
_NEXT_STEPS_BY_CODE = {
    "INVALID_REQUEST": "check the arguments (IDs, required fields) and try again with corrected values",
    "NOT_FOUND": "check the ID; read the recipe list or the shopping list again to get current IDs",
    "EXTRACTION_FAILED": (
        "Cooked found no recipe on that page; copy the recipe text from the page and "
        "preview and save it as raw text instead"
    ),
}


# implements: api-client.ERRORS.1, api-client.ERRORS.5, api-client.ERRORS.6
def error_from_response(
    status: int,
    body: bytes,
    retry_after_header: str | None,
    *,
    endpoint: Endpoint,
    redact: Callable[[str], str] | None = None,
) -> CookedError:
    """A non-2xx answer (other than a session 401) as an error; ``body`` is already bounded, and one that
    is not a JSON object adds nothing but its status. ``redact`` scrubs Cooked's message.
    """
    operation = endpoint.name
    code, message = _parse_error_body(body, redact)
    retry_after = parse_retry_after(retry_after_header)
    kind = _kind(status)
    summary = f"Cooked rejected the {operation} request"
    if kind is CookedRateLimited:
        wait = f"wait {retry_after:g} seconds" if retry_after is not None else "wait a little"
        next_step = f"Cooked is rate limiting; {wait}, then retry once"
    elif kind is CookedServerError:
        summary = f"Cooked failed while handling the {operation} request"
        next_step = "this is a problem on Cooked's side; retry later"
    elif kind is CookedForbidden or code == "FORBIDDEN":
        next_step = _forbidden(endpoint)
    else:  # Cooked's own code says more than the status, when it has one we know
        next_step = _NEXT_STEPS_BY_CODE.get(code or "") or _NEXT_STEPS_BY_KIND.get(kind, _CHECK_ARGUMENTS)
    return kind(
        summary,
        status=status,
        code=code,
        cooked_message=message,
        retry_after=retry_after,
        next_step=next_step,
    )


#: The kind of error each status is; any other 4xx is a ``CookedRejected``, any 5xx a ``CookedServerError``.
_KINDS: dict[int, type[CookedError]] = {
    400: CookedInvalidRequest,
    403: CookedForbidden,
    404: CookedNotFound,
    422: CookedUnprocessable,
    429: CookedRateLimited,
}
_NEXT_STEPS_BY_KIND: dict[type[CookedError], str] = {CookedNotFound: _NEXT_STEPS_BY_CODE["NOT_FOUND"]}
_CHECK_ARGUMENTS = "check the arguments and try again; do not repeat the same call unchanged"


def _forbidden(endpoint: Endpoint) -> str:
    """What a 403 means for this operation: ownership only where one recipe is changed (a 403
    on listing recipes or the shopping list is about the account, not about a recipe)."""
    if endpoint.changes and "recipe_id" in endpoint.path_params:
        return _NOT_YOURS
    return (
        f"Cooked does not let this account {endpoint.name}; check that cooked-mcp is set up for the "
        "right Cooked account (cooked-mcp --check), and do not repeat the call unchanged"
    )


def _kind(status: int) -> type[CookedError]:
    if status >= 500:
        return CookedServerError
    return _KINDS.get(status, CookedRejected if 400 <= status < 500 else CookedError)


# implements: api-client.ERRORS.3, api-client.ERRORS.4
def _parse_error_body(body: bytes, redact: Callable[[str], str] | None) -> tuple[str | None, str | None]:
    try:
        data = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None, None
    if not isinstance(data, dict):
        return None, None
    code = data.get(Key.CODE)
    message = data.get(Key.MESSAGE)
    if redact is not None:
        code = redact(code) if isinstance(code, str) else code
        message = redact(message) if isinstance(message, str) else message
    return (
        (one_line(code, "", _MAX_CODE_CHARS) or None) if isinstance(code, str) else None,
        (one_line(message, "", _MAX_MESSAGE_CHARS) or None) if isinstance(message, str) else None,
    )


def parse_retry_after(value: str | None) -> float | None:
    """``Retry-After`` in delta-seconds; an HTTP-date or garbage is ignored rather than guessed at."""
    try:
        seconds = float(value.strip()) if value is not None else math.nan
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def base_url_setting(base_url: str, source: str | None = None) -> str:
    """The base URL and the setting it came from, as every message names it (both places when unknown)."""
    if source is None:
        return f"COOKED_BASE_URL or cooked.base_url ({base_url})"
    return f"the base URL {base_url} from {source}"


def connect_failure(exc: BaseException, setting: str) -> tuple[str, str]:
    """What went wrong while connecting, and the advice for that cause, found in the exceptions httpx's
    ``ConnectError`` wraps: "retry later" only where time can fix it (refused, unknown trouble).
    """
    causes = list(_causes(exc))
    if any(isinstance(cause, ssl.SSLCertVerificationError) for cause in causes):
        return (
            "could not be reached: its TLS certificate was not accepted",
            f"check that {setting} names Cooked itself; behind a TLS-inspecting proxy, point SSL_CERT_FILE "
            "at the proxy's CA certificate",
        )
    # anyio's end of stream inside a connect failure: the server hung up on the TLS client hello.
    tls_failures = ssl.SSLError | anyio.EndOfStream | anyio.BrokenResourceError
    if any(isinstance(cause, tls_failures) for cause in causes):
        return (
            "could not be reached: the TLS handshake failed",
            f"check the scheme in {setting}: https:// for Cooked (a server that speaks plain HTTP fails "
            "this way), http:// only for a local test server",
        )
    if any(isinstance(cause, socket.gaierror) for cause in causes):
        return (
            "could not be reached: its host name was not found",
            f"check the host name in {setting} and this machine's network connection and DNS",
        )
    if any(isinstance(cause, ConnectionRefusedError) for cause in causes):
        return (
            "could not be reached: the connection was refused (nothing is listening there)",
            f"check the host and port in {setting}; if they are right, Cooked is down: retry later",
        )
    return (
        "could not be reached",
        f"check this machine's network connection and {setting}; retry later",
    )


def _causes(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and everything it wraps: causes, contexts and the members of exception groups."""
    pending, seen = [exc], set()
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        pending.extend(e for e in (current.__cause__, current.__context__) if e is not None)
        if isinstance(current, BaseExceptionGroup):
            pending.extend(current.exceptions)
