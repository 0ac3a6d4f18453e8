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

from cooked_mcp import exceptions as errors
from cooked_mcp.cooked.endpoints import Endpoint, Key
from cooked_mcp.text import one_line

_MAX_MESSAGE_CHARS = 300
_MAX_CODE_CHARS = 64
_NEXT_STEPS_BY_CODE = {
    "INVALID_REQUEST": "check the arguments (IDs, required fields) and try again with corrected values",
    "NOT_FOUND": "check the ID; read the recipe list or the shopping list again to get current IDs",
    "EXTRACTION_FAILED": (
        "Cooked found no recipe on that page; copy the recipe text from the page and "
        "preview and save it as raw text instead"
    ),
}
#: The kind of error each status is; any other 4xx is a ``CookedRejected``, any 5xx a ``CookedServerError``.
_KINDS: dict[int, type[errors.CookedError]] = {
    400: errors.CookedInvalidRequest,
    403: errors.CookedForbidden,
    404: errors.CookedNotFound,
    422: errors.CookedUnprocessable,
    429: errors.CookedRateLimited,
}


# implements: api-client.ERRORS.1, api-client.ERRORS.5, api-client.ERRORS.6, api-client.ERRORS.3, api-client.ERRORS.4
def error_from_response(
    status: int,
    body: bytes,
    retry_after_header: str | None,
    *,
    endpoint: Endpoint,
    redact: Callable[[str], str] | None = None,
) -> errors.CookedError:
    """A non-2xx answer (other than a session 401) as an error; ``body`` is already bounded, and one that
    is not a JSON object adds nothing but its status. ``redact`` scrubs Cooked's message.
    """
    try:
        data = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        data = None
    fields = data if isinstance(data, dict) else {}
    code = _cleaned(fields.get(Key.CODE), redact, _MAX_CODE_CHARS)
    message = _cleaned(fields.get(Key.MESSAGE), redact, _MAX_MESSAGE_CHARS)
    retry_after = _seconds(retry_after_header)
    kind = errors.CookedServerError if status >= 500 else _KINDS.get(status, errors.CookedError)
    if kind is errors.CookedError and 400 <= status < 500:
        kind = errors.CookedRejected
    summary = f"Cooked rejected the {endpoint.name} request"
    if kind is errors.CookedRateLimited:
        wait = f"wait {retry_after:g} seconds" if retry_after is not None else "wait a little"
        next_step = f"Cooked is rate limiting; {wait}, then retry once"
    elif kind is errors.CookedServerError:
        summary = f"Cooked failed while handling the {endpoint.name} request"
        next_step = "this is a problem on Cooked's side; retry later"
    elif kind is errors.CookedForbidden or code == "FORBIDDEN":
        # An account changes only the recipes it owns; a 403 on listing recipes or the shopping list
        # is about the account, not about a recipe.
        next_step = (
            "this recipe belongs to someone else and cannot be changed; read it and save a copy instead"
            if endpoint.changes and "recipe_id" in endpoint.path_params
            else f"Cooked does not let this account {endpoint.name}; check that cooked-mcp is set up for the "
            "right Cooked account (cooked-mcp --check), and do not repeat the call unchanged"
        )
    else:  # Cooked's own code says more than the status, when it has one we know
        next_step = _NEXT_STEPS_BY_CODE.get(code or "") or (
            _NEXT_STEPS_BY_CODE["NOT_FOUND"]
            if kind is errors.CookedNotFound
            else "check the arguments and try again; do not repeat the same call unchanged"
        )
    return kind(
        summary,
        status=status,
        code=code,
        cooked_message=message,
        retry_after=retry_after,
        next_step=next_step,
    )


def _cleaned(value: object, redact: Callable[[str], str] | None, limit: int) -> str | None:
    if not isinstance(value, str):
        return None
    return one_line(redact(value) if redact is not None else value, "", limit) or None


def _seconds(value: str | None) -> float | None:
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
