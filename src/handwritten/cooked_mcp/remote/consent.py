"""The consent page: the owner sees who asks, types the owner password, and allows or denies.

No JavaScript, one small form that reads on a phone; ``Cache-Control: no-store`` and no framing
(``frame-ancestors 'none'``, ``X-Frame-Options: DENY``), so no other page can dress it up or
click it. The form carries the request's CSRF token; a POST without it, or for a request that
has expired or was already answered, changes nothing. Wrong passwords are counted for every
client together: past ``RemoteLimits.password_failures`` in ``RemoteLimits.lockout_seconds`` none is
checked until that long has passed, and the page never says more than "that password is not right".
"""

from __future__ import annotations

import hashlib
import hmac
import html
import logging
import time
from dataclasses import dataclass

from mcp.server.auth.provider import construct_redirect_uri
from pydantic import SecretStr
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from .provider import Pending, Provider
from .url import is_loopback
from .window import Window

logger = logging.getLogger(__name__)

CONSENT_PATH = "/consent"
_HEADERS = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
}
_STYLE = (
    "body{font:1.1rem/1.5 system-ui,sans-serif;max-width:32rem;margin:2rem auto;padding:0 1rem}"
    "input,button{font:inherit;padding:.6rem;width:100%;box-sizing:border-box;margin:.3rem 0}"
    "button{border:0;border-radius:.4rem}.allow{background:#2a6;color:#fff}.err{color:#b00}"
)


@dataclass
class OwnerCheck:
    """The owner password, compared in constant time, with guessing bounded for all clients together."""

    password: SecretStr
    #: Wrong passwords; while it is full none is checked.
    failures: Window

    def check(self, typed: str) -> bool:
        # Digests first: compare_digest of equal-length values leaks not even the length.
        expected = hashlib.sha256(self.password.get_secret_value().encode()).digest()
        right = hmac.compare_digest(hashlib.sha256(typed.encode()).digest(), expected)
        if not right:
            self.failures.add()
            logger.warning("a wrong owner password was typed on the consent page")
        return right


# implements: extensions.REMOTE.9, extensions.REMOTE.10, extensions.REMOTE.11
def consent_routes(provider: Provider, owner: OwnerCheck) -> list[Route]:
    async def consent(request: Request) -> Response:
        if request.method == "GET":
            pending = provider.pending.get(request.query_params.get("request", ""))
            if pending is None or pending.expires < time.monotonic():
                return _stale()
            return _page(request.query_params["request"], pending)
        form = await request.form()
        key, csrf = str(form.get("request", "")), str(form.get("csrf", ""))
        pending = provider.pending.get(key)
        if (
            pending is None
            or pending.expires < time.monotonic()
            or not hmac.compare_digest(csrf.encode(), pending.csrf.encode())  # bytes: any text typed
        ):
            return _stale()
        redirect = str(pending.params.redirect_uri)
        if form.get("decision") != "allow":
            del provider.pending[key]
            target = construct_redirect_uri(redirect, error="access_denied", state=pending.params.state)
            return RedirectResponse(target, status_code=303, headers=_HEADERS)
        wait = owner.failures.wait()
        if wait:
            minutes = max(1, round(wait / 60))
            message = f"Too many wrong passwords: try again in {minutes} minute{'s' * (minutes > 1)}."
            return _page(key, pending, error=message, status=429)
        if not owner.check(str(form.get("password", ""))):
            return _page(key, pending, error="That password is not right.", status=401)
        del provider.pending[key]
        code = provider.approve(pending)
        return RedirectResponse(
            construct_redirect_uri(redirect, code=code, state=pending.params.state),
            status_code=303,
            headers=_HEADERS,
        )

    return [Route(CONSENT_PATH, consent, methods=["GET", "POST"])]


def _page(key: str, pending: Pending, *, error: str = "", status: int = 200) -> HTMLResponse:
    who, csrf = html.escape(pending.host), pending.csrf
    problem = f'<p class="err" role="alert">{html.escape(error)}</p>' if error else ""
    # Where the code goes, when that is not the host named: a page from the client's own
    # document may send it to a program on this device, which anyone could have started.
    goes_to = pending.params.redirect_uri.host or ""
    if goes_to and goes_to != pending.host:
        local = (
            " (a program on this device: allow only if you started it)"
            if is_loopback(goes_to.strip("[]"))
            else ""
        )
        problem = f"<p>Your answer is sent to <b>{html.escape(goes_to)}</b>{local}.</p>{problem}"
    body = f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1"><title>Connect {who} to Cooked?</title>
<style>{_STYLE}</style></head><body><h1>Connect <b>{who}</b> to your Cooked account?</h1>
<p><b>{who}</b> will be able to read and change this Cooked account's recipes and shopping list,
until you revoke it (<code>cooked-mcp --revoke {who}</code>).</p>{problem}
<form method="post" action="{CONSENT_PATH}"><input type="hidden" name="request" value="{html.escape(key)}">
<input type="hidden" name="csrf" value="{html.escape(csrf)}">
<label for="password">Owner password</label>
<input id="password" name="password" type="password" autocomplete="current-password" autofocus>
<button class="allow" name="decision" value="allow">Allow</button>
<button name="decision" value="deny">Deny</button></form></body></html>"""
    return HTMLResponse(body, status_code=status, headers=_HEADERS)


def _stale() -> HTMLResponse:
    body = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" '
        'content="width=device-width,initial-scale=1"><title>Expired</title></head><body>'
        "<p>This page has expired or was already answered. Start connecting again from your app.</p></body></html>"
    )
    return HTMLResponse(body, status_code=400, headers=_HEADERS)
