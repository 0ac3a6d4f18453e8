"""The shape of ``--public-url``: read by the settings, so it imports nothing heavy."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit


# implements: extensions.REMOTE.3
def public_url(url: str) -> str:
    """``https://host[:port]`` (``http://`` only for a loopback host), without a trailing slash.

    The issuer, the resource and every metadata URL are built from it alone, never from request
    headers, so a forged ``Host`` cannot steer a client elsewhere.
    """
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    if scheme not in ("https", "http") or not parts.hostname:
        raise ValueError("it must be an https:// URL with a host")
    if scheme == "http" and not is_loopback(parts.hostname):
        raise ValueError(
            "plain http:// is refused unless the host is loopback: claude.ai and ChatGPT need https on port 443"
        )
    if parts.username is not None or parts.query or parts.fragment or parts.path not in ("", "/"):
        raise ValueError("it must be only scheme, host and port (no path, query or user name)")
    try:
        parts.port  # noqa: B018 - parsing the port is the check
    except ValueError:
        raise ValueError("the port is not a number between 0 and 65535") from None
    return f"{scheme}://{parts.netloc.lower()}"


def is_loopback(host: str) -> bool:
    """As ``config.values.is_loopback``, which this module cannot import (the settings import it)."""
    try:
        return host.lower() == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
