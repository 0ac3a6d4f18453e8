"""The one Cooked login session: lazy login, single-flight renewal (Cooked may lock accounts on
bursts of logins: a generation counter lets one caller log in, the others reuse its outcome). After
rejected credentials, calls get the same error for ``LOGIN_BACKOFF_SECONDS`` without asking Cooked.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable

from pydantic import SecretStr

from cooked_mcp.cooked import endpoints
from cooked_mcp.cooked.decoding import decode, error_from_response
from cooked_mcp.cooked.endpoints import Key
from cooked_mcp.cooked.models import LoginResult
from cooked_mcp.cooked.sender import Sender
from cooked_mcp.exceptions import CookedAuthError, CookedError

logger = logging.getLogger("cooked_mcp.cooked")

#: How long rejected credentials are not tried again.
LOGIN_BACKOFF_SECONDS = 60.0
#: Cookie values of earlier sessions kept for redaction (one per login; a long-lived process stays bounded).
_RETIRED_COOKIES_KEPT = 16


# implements: authentication.CREDENTIALS.10, authentication.SESSION.9
class Session:
    def __init__(
        self,
        sender: Sender,
        login_name: str,
        password: SecretStr,
        *,
        credentials_from: str | None = None,
        clock: Callable[[], float] = time.monotonic,
        secrets: Iterable[str] = (),
    ) -> None:
        self._sender = sender
        self._secrets = tuple(secrets)
        self._login_name = login_name
        self._password = password
        self._credentials_from = credentials_from or (
            "COOKED_LOGIN_USERNAME and COOKED_LOGIN_PASSWORD (or user.name / user.password in the config file)"
        )
        self._clock = clock
        self._lock = asyncio.Lock()
        self._generation = 0
        self._username: str | None = None
        self._failure: CookedError | None = None
        self._failed_at = 0.0  # when the last login failed
        self._retired_cookies: list[str] = []
        # The canonical username Cooked last returned: it outlives a re-login, whose error could echo it.
        self._last_username: str | None = None

    # implements: authentication.LOGIN.1
    async def current(self) -> tuple[int, str]:
        """The session to use, logging in first if there is none yet: ``(generation, username)``."""
        if self._username is not None:
            return self._generation, self._username
        return await self.renew(self._generation)

    # implements: authentication.SESSION.4
    async def renew(self, seen_generation: int) -> tuple[int, str]:
        """A new session unless another caller already replaced the one seen (single flight)."""
        async with self._lock:
            # A login interrupted by cancellation leaves neither a username nor an error.
            interrupted = self._username is None and self._failure is None
            if self._generation == seen_generation or interrupted:
                failure = self._failure
                if isinstance(failure, CookedAuthError):  # rejected credentials: not tried in the back-off
                    waited = self._clock() - self._failed_at
                    if waited < LOGIN_BACKOFF_SECONDS:
                        raise failure.with_next_step(
                            f"{failure.next_step}. Cooked was not asked again: it rejected these credentials "
                            f"{waited:.0f} s ago, and they are tried at most once every {LOGIN_BACKOFF_SECONDS:.0f} s"
                        )
                await self._login()
            if self._username is None:
                assert self._failure is not None
                # A new instance per waiter: one raised in many tasks would tangle their tracebacks.
                raise self._failure.with_next_step(self._failure.next_step)
            return self._generation, self._username

    def secret_values(self) -> list[str]:
        """Login name, password, canonical username, the session cookies held now or before (a login's answer
        may echo the old session's), and the ``secrets`` given at construction.
        """
        secrets = [*self._secrets, self._login_name, self._password.get_secret_value()]
        secrets += [*self._sender.cookie_values(), *self._retired_cookies]
        return secrets if self._last_username is None else [*secrets, self._last_username]

    # implements: authentication.SESSION.3, authentication.LOGIN.2, authentication.LOGIN.4, authentication.LOGIN.5
    async def _login(self) -> None:
        """One login attempt, with an empty cookie jar. The generation moves on only when the attempt
        is over, so a caller that looks while it is in flight waits for it instead of starting another."""
        self._username = self._failure = None
        retired = [value for value in self._sender.cookie_values() if value not in self._retired_cookies]
        self._retired_cookies = [*self._retired_cookies, *retired][-_RETIRED_COOKIES_KEPT:]
        self._sender.clear_cookies()
        endpoint = endpoints.LOGIN
        try:
            body = {Key.USERNAME: self._login_name, Key.PASSWORD: self._password.get_secret_value()}
            reply = await self._sender.send(endpoint, endpoint.path(), body=body)
            if not reply.ok:
                error = error_from_response(reply, endpoint, self.secret_values())
                if reply.status not in (401, 403):  # 403: an account Cooked will not let in
                    raise error
                raise CookedAuthError(
                    "Cooked rejected the configured username or password",
                    status=reply.status,
                    code=error.code,
                    next_step=f"check {self._credentials_from} and restart cooked-mcp; social-login and "
                    "passwordless Cooked accounts are not supported",
                )
            self._username = self._last_username = decode(LoginResult, reply, endpoint).username
        except CookedError as exc:
            self._failure, self._failed_at = exc, self._clock()
            raise
        finally:
            self._generation += 1
        logger.debug("logged in to Cooked (session %d)", self._generation)
