"""Every exception cooked-mcp's hand-written code raises, in one tree: a Cooked error's kind is its
class, so handlers catch ``CookedNotFound`` rather than compare statuses. No message holds a secret."""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, replace
from typing import Any, Self


class ConfigError(Exception):
    """A configuration mistake found before serving; ``str()`` is one line: what is wrong, how to fix it."""


class CredentialCommandError(ConfigError):
    """A ``*_cmd`` command produced no value."""


class ListenError(Exception):
    """The HTTP address cannot be listened on; ``str()`` is the reason, for one stderr line."""


# eq and repr stay Exception's: an error is itself, not its fields, and shows as its message.
@dataclass(eq=False, repr=False)
class CookedError(Exception):
    """Cooked did not do what was asked; ``str()`` is one sentence an agent can act on."""

    summary: str
    _: KW_ONLY
    status: int | None = None
    code: str | None = None
    cooked_message: str | None = None
    retry_after: float | None = None
    next_step: str = ""

    # implements: api-client.ERRORS.2, api-client.ERRORS.3, api-client.ERRORS.4, api-client.ERRORS.5
    def __post_init__(self) -> None:
        details = " ".join(str(item) for item in (self.status, self.code) if item is not None)
        parts = (
            f"{self.summary} ({details})" if details else self.summary,
            self.cooked_message and f"Cooked says: {self.cooked_message}",
            self.next_step and f"Next step: {self.next_step}",
        )
        super().__init__(". ".join(part.rstrip(".") for part in parts if part) + ".")

    def with_next_step(self, next_step: str) -> Self:
        """A new error of the same kind with ``next_step`` (new, so no traceback is shared between tasks)."""
        return replace(self, next_step=next_step)


class CookedRequestError(CookedError):
    """A value cannot be sent to Cooked at all (e.g. an ID of ``..``), so no request was made."""


class CookedAuthError(CookedError):
    """Cooked rejected the configured credentials, or the session right after a fresh login."""


@dataclass(eq=False, repr=False)
class CookedUnavailable(CookedError):
    """Cooked was not reached, did not answer in time, or redirected (``may_have_changed``: after a change)."""

    _: KW_ONLY  # not inherited: each class's own fields are keyword-only too
    may_have_changed: bool = False


class CookedServerError(CookedError):
    """Cooked answered 5xx: the failure is on its side, and a later retry may succeed."""


class CookedRateLimited(CookedError):
    """Cooked answered 429; ``retry_after`` says how long to wait when Cooked said so."""


class CookedRejected(CookedError):
    """Cooked refused the request as sent (a 4xx other than 401 and 429)."""


class CookedInvalidRequest(CookedRejected):
    """400: Cooked found the request malformed (an unknown aisle, a missing field)."""


class CookedForbidden(CookedRejected):
    """403: the recipe belongs to another account."""


class CookedNotFound(CookedRejected):
    """404: the recipe, draft or shopping-list entry does not exist (any more)."""


class CookedUnprocessable(CookedRejected):
    """422: well formed but not doable, such as importing a page that holds no recipe."""


class CookedResponseError(CookedError):
    """A successful answer that is not what the contract promises (bad JSON, missing field)."""


@dataclass(eq=False, repr=False)
class UnexpectedAnswer(CookedResponseError):
    """A 2xx answer the contract does not describe; ``problem`` and ``shape`` hold no value (``--check``)."""

    _: KW_ONLY
    problem: str = ""
    shape: Any = None
