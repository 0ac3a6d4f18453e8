"""The shapes of our own values; each check raises ``ValueError`` with the problem alone (``loading`` words it)."""

from __future__ import annotations

import ipaddress
import unicodedata
from typing import NamedTuple
from urllib.parse import urlsplit

from cooked_mcp.text import ASCII_WHITESPACE, printable

#: The words a boolean variable may hold (``COOKED_MCP_READ_ONLY=yes``), as every refusal lists them.
TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
FALSE_WORDS = frozenset({"0", "false", "no", "off"})


def boolean(word: str) -> bool:
    """The words the refusal names and no others (pydantic alone would also take ``t``, ``n``…)."""
    word = word.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise ValueError("not a boolean word")


def _has_space_or_control(text: str) -> bool:
    return any(char.isspace() or unicodedata.category(char) == "Cc" for char in text)


# implements: server.CONFIG.5
def base_url(url: str) -> str:
    """Only ``http(s)://host[:port]`` (API paths are appended verbatim); never echoed, as it may hold a password."""
    if _has_space_or_control(url):
        raise ValueError("it contains whitespace or control characters")
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https"):
        raise ValueError("the scheme must be http or https")
    if "@" in parts.netloc:
        raise ValueError("it must not contain a user name or password")
    if not parts.hostname:
        raise ValueError("it has no host")
    try:
        parts.port  # noqa: B018 - parsing the port is the check
    except ValueError:
        raise ValueError("the port is not a number between 0 and 65535") from None
    if "?" in url:
        raise ValueError("it must not have a query (?...)")
    if "#" in url:
        raise ValueError("it must not have a fragment (#...)")
    if parts.path not in ("", "/"):
        raise ValueError("it must not have a path (Cooked's API paths are added automatically)")
    return f"{parts.scheme.lower()}://{parts.netloc}"


class Address(NamedTuple):
    """Where the HTTP transport listens; ``host`` is bare (``::1``, not ``[::1]``)."""

    host: str
    port: int

    def shown(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


def http_addr(addr: str) -> Address:
    """``HOST:PORT`` with IPv6 hosts in brackets (``[::1]:8123``)."""
    if "://" in addr:
        raise ValueError("leave out the scheme (http://): the address is only where to listen")
    host, sep, port_text = addr.rpartition(":")
    if not sep or not host:
        raise ValueError("it must be HOST:PORT")
    if host.startswith("["):
        if not host.endswith("]"):
            raise ValueError("an IPv6 address needs a closing bracket")
        host = host[1:-1]
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise ValueError("the bracketed host is not an IPv6 address") from None
    elif ":" in host:
        raise ValueError("write an IPv6 host in brackets")
    elif any(char.isspace() or char in "[]/@" for char in host):
        raise ValueError("the host is not a valid host name or address")
    if not port_text.isascii() or not port_text.isdigit():
        raise ValueError("the port must be a number")
    port = int(port_text)
    if not 1 <= port <= 65535:
        raise ValueError("the port must be between 1 and 65535")
    return Address(host, port)


def is_loopback(host: str) -> bool:
    """Whether only this machine can reach a listener on ``host``; anything unsure counts as no."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def allowed(values: tuple[str, ...], *, origins: bool) -> tuple[str, ...]:
    """Extra ``Host`` values or origins for the DNS-rebinding defence, checked for the shape it compares
    against: a typo would otherwise fail every request with 421/403 and no hint.
    """
    for value in values:
        if not value or _has_space_or_control(value):
            form = "http://NAME:PORT" if origins else "NAME:PORT"
            raise ValueError(f"has an empty entry or one with whitespace: write each as {form}")
        if origins:
            scheme, sep, rest = value.partition("://")
            if not sep or scheme not in ("http", "https") or not rest or "/" in rest:
                raise ValueError(
                    f"entry {printable(value)!r} is not an origin: "
                    "write it as http://NAME:PORT or https://NAME (no path), as browsers send it"
                )
        elif "/" in value or "@" in value:
            raise ValueError(
                f"entry {printable(value)!r} is not a Host value: "
                "write it as NAME:PORT, NAME:* or [IPv6]:PORT (no scheme, no path)"
            )
    return values


# implements: server.SECURITY.11
def token(value: str) -> str:
    """A bearer token travels in an HTTP header: it must be visible ASCII, and never empty."""
    stripped = value.strip(ASCII_WHITESPACE)
    if not stripped:
        raise ValueError("is empty: set a non-empty HTTP bearer token or unset it")
    if not all(0x21 <= ord(char) <= 0x7E for char in stripped):
        raise ValueError("must contain only visible ASCII characters (no spaces), as HTTP headers require")
    return stripped
