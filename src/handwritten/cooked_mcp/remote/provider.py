"""The SDK's ``OAuthAuthorizationServerProvider`` for one owner: codes, tokens, clients.

The SDK's handlers parse the requests and check PKCE (S256 only), the redirect URI (``Client``:
exact match, but any port on a loopback IP) and the code's expiry; this provider decides the rest:

- an authorization code lives ``code_seconds`` (at most 60) and is used once; a second use
  revokes everything the first one issued (RFC 6749 section 4.1.2);
- the ``resource`` (RFC 8707) must be this server's, and is bound into every token;
- refresh tokens rotate on every use; a rotated one used again revokes its whole family;
- DCR clients are capped (the oldest without a connection is dropped) and all made public
  (``none``): PKCE and the exact redirect URI carry the proof, and no client secret needs storing;
- an ``https`` client_id is a Client ID Metadata Document, fetched by ``cimd``.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    OAuthAuthorizationServerProvider,
    RefreshToken,
    RegistrationError,
    TokenError,
)
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyUrl

from ..config.limits import RemoteLimits
from .store import Grant, State, Store, Token, digest

logger = logging.getLogger(__name__)


#: RFC 8252 section 7.3: a native client listens on a port the system picks when it asks, so a
#: registered redirect URI on a loopback IP literal matches the request's on any port. Not
#: ``localhost``: section 8.3 advises against it, as the name may resolve off the machine.
LOOPBACK_IPS = ("127.0.0.1", "[::1]")


# implements: extensions.REMOTE.15
class Client(OAuthClientInformationFull):
    """A client whose redirect URIs match as the SDK matches them (parsed URLs, equal), except
    that a registered loopback IP one accepts any port; path, query and the rest still must be equal."""

    def validate_redirect_uri(self, redirect_uri: AnyUrl | None) -> AnyUrl:
        if redirect_uri is not None and redirect_uri.host in LOOPBACK_IPS:
            for registered in self.redirect_uris or []:
                if _all_but_port(registered) == _all_but_port(redirect_uri):
                    return redirect_uri
        return super().validate_redirect_uri(redirect_uri)


def _all_but_port(url: AnyUrl) -> tuple[str | None, ...]:
    return (url.scheme, url.username, url.password, url.host, url.path, url.query, url.fragment)


#: Fetches and validates a Client ID Metadata Document (``cimd.CimdFetcher``); None when refused.
ClientFetcher = Callable[[str], Awaitable[Client | None]]


@dataclass
class Pending:
    """An authorization request waiting for the owner on the consent page."""

    client: OAuthClientInformationFull
    params: AuthorizationParams
    host: str
    csrf: str
    expires: float


@dataclass
class _Code:
    code: AuthorizationCode
    host: str
    #: The grant its exchange created: a second use revokes it.
    grant: str | None = None


@dataclass
class Provider(OAuthAuthorizationServerProvider[AuthorizationCode, RefreshToken, AccessToken]):
    store: Store
    issuer: str
    resource: str
    bounds: RemoteLimits
    fetch_client: ClientFetcher
    pending: dict[str, Pending] = field(default_factory=dict)
    _codes: dict[str, _Code] = field(default_factory=dict)
    #: The last secrets handed out, for the log redaction filter (``wiring``).
    recent: deque[str] = field(default_factory=lambda: deque(maxlen=64))

    # --- clients ---------------------------------------------------------------------------

    async def get_client(self, client_id: str) -> Client | None:
        if client_id.startswith("https://"):
            return await self.fetch_client(client_id)
        stored = self.store.read().clients.get(client_id)
        return None if stored is None else Client.model_validate(stored)

    # implements: extensions.REMOTE.8
    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        # The rate is bounded in front of the route (wiring). The handler answers with this very
        # object, so the client learns that it is public.
        client_info.token_endpoint_auth_method = "none"
        client_info.client_secret = None
        client_info.client_secret_expires_at = None
        with self.store.change() as state:
            if len(state.clients) >= self.bounds.max_clients:
                _drop_oldest_unused(state)
            if len(state.clients) >= self.bounds.max_clients:
                raise RegistrationError("invalid_client_metadata", "too many clients are registered")
            state.clients[client_info.client_id] = client_info.model_dump(mode="json", exclude_none=True)

    # --- authorization -----------------------------------------------------------------------

    # implements: extensions.REMOTE.5
    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        if params.resource is not None and not self._is_ours(params.resource):
            raise AuthorizeError("invalid_target", f"this server is the resource {self.resource}")
        now = time.monotonic()
        for key in [key for key, p in self.pending.items() if p.expires < now]:
            del self.pending[key]
        if len(self.pending) >= self.bounds.open_consents:
            # The oldest page goes rather than the new request: anyone may open pages, and
            # refusing would let a stranger keeping 20 open keep the owner from connecting.
            del self.pending[next(iter(self.pending))]
        request = secrets.token_urlsafe(24)
        self.pending[request] = Pending(
            client,
            params,
            client_host(client, params.redirect_uri),
            secrets.token_urlsafe(24),
            now + self.bounds.consent_seconds,
        )
        return f"{self.issuer}/consent?request={request}"

    def approve(self, pending: Pending) -> str:
        """The code for an approved request (its redirect is built by the consent page)."""
        code = secrets.token_urlsafe(32)
        self.recent.append(code)
        self._codes = {k: c for k, c in self._codes.items() if c.code.expires_at > time.time() - 600}
        self._codes[digest(code)] = _Code(
            AuthorizationCode(
                code=code,
                scopes=pending.params.scopes or [],
                expires_at=time.time() + min(self.bounds.code_seconds, 60.0),
                client_id=pending.client.client_id,
                code_challenge=pending.params.code_challenge,
                redirect_uri=pending.params.redirect_uri,
                redirect_uri_provided_explicitly=pending.params.redirect_uri_provided_explicitly,
                resource=self.resource,
            ),
            pending.host,
        )
        return code

    # implements: extensions.REMOTE.6
    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        found = self._codes.get(digest(authorization_code))
        if found is None:
            return None
        if found.grant is not None:
            self._revoke(found.grant, "an authorization code was used twice")
            return None
        return found.code

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        found = self._codes.get(digest(authorization_code.code))
        if found is None or found.grant is not None:
            raise TokenError("invalid_grant", "authorization code does not exist")
        grant = secrets.token_urlsafe(16)
        found.grant = grant
        now = time.time()
        with self.store.change() as state:
            state.grants[grant] = Grant(
                client_id=client.client_id,
                host=found.host,
                resource=self.resource,
                connected=now,
                last_used=now,
            )
            return self._issue(state, grant)

    # --- tokens ------------------------------------------------------------------------------

    # implements: extensions.REMOTE.7
    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        state = self.store.read()
        token = state.refresh.get(digest(refresh_token))
        if token is None or token.expires < time.time():
            return None
        grant = state.grants.get(token.grant)
        if grant is None:
            return None
        if token.used:
            self._revoke(token.grant, "a rotated refresh token was used again")
            return None
        return RefreshToken(
            token=refresh_token,
            client_id=grant.client_id,
            scopes=[],
            expires_at=int(token.expires),
            resource=grant.resource,
        )

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        issued = None
        with self.store.change() as state:
            token = state.refresh.get(digest(refresh_token.token))
            if token is not None and (token.used or token.grant not in state.grants):
                state.revoke(token.grant)  # used twice at once: the second one is the reuse
            elif token is not None:
                token.used = True
                issued = self._issue(state, token.grant)
        if issued is None:
            raise TokenError("invalid_grant", "refresh token does not exist")
        return issued

    async def load_access_token(self, token: str) -> AccessToken | None:
        state = self.store.read()
        found = state.access.get(digest(token))
        now = time.time()
        if found is None or found.expires < now:
            return None
        grant = state.grants.get(found.grant)
        if grant is None:
            return None
        if now - grant.last_used > 60:  # "last used" to the minute, not a write per request
            with self.store.change() as changed:
                if found.grant in changed.grants:
                    changed.grants[found.grant].last_used = now
        return AccessToken(
            token=token,
            client_id=grant.client_id,
            scopes=[],
            expires_at=int(found.expires),
            resource=grant.resource,
        )

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        state = self.store.read()
        found = state.access.get(digest(token.token)) or state.refresh.get(digest(token.token))
        if found is not None:
            self._revoke(found.grant, "the client revoked its token")

    def _issue(self, state: State, grant: str) -> OAuthToken:
        access, refresh = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        self.recent.extend((access, refresh))
        now = time.time()
        lifetime = min(self.bounds.access_token_seconds, 3600.0)
        state.access[digest(access)] = Token(grant=grant, expires=now + lifetime)
        state.refresh[digest(refresh)] = Token(grant=grant, expires=now + self.bounds.refresh_token_seconds)
        # Rotated tokens are kept to recognise their reuse, the newest few per grant: an hourly
        # refresh would otherwise pile up 720 a month.
        used = sorted((t.expires, key) for key, t in state.refresh.items() if t.grant == grant and t.used)
        for _, key in used[: -self.bounds.rotated_kept]:
            del state.refresh[key]
        return OAuthToken(access_token=access, expires_in=int(lifetime), refresh_token=refresh)

    def _revoke(self, grant: str, why: str) -> None:
        with self.store.change() as state:
            host = state.grants[grant].host if grant in state.grants else "a client"
            state.revoke(grant)
        logger.warning("revoked the connection of %s: %s", host, why)

    def _is_ours(self, resource: str) -> bool:
        return resource.rstrip("/") == self.resource.rstrip("/")


def client_host(client: OAuthClientInformationFull, redirect_uri: AnyUrl) -> str:
    """Who the consent page says is asking: the host of a CIMD client_id URL, else that of the
    redirect URI this request's code goes to (a client may register several, on other hosts);
    never the self-asserted ``client_name``."""
    if client.client_id.startswith("https://"):
        return urlsplit(client.client_id).hostname or client.client_id
    return redirect_uri.host or "an unknown client"


def _drop_oldest_unused(state: State) -> None:
    used = {grant.client_id for grant in state.grants.values()}
    unused = [cid for cid in state.clients if cid not in used]
    if unused:
        oldest = min(unused, key=lambda cid: float(str(state.clients[cid].get("client_id_issued_at", 0))))
        del state.clients[oldest]
