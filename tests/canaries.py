"""Canaries: distinctive strings planted as secrets, and every spelling a leaked one could take.

``SPELLINGS`` is the one table of the spellings SECURITY.md says are redacted: the canary suites
make Cooked echo each of them and search every output for each of them, so the list there and
what the tests prove are the same list.
"""

from __future__ import annotations

import base64
import html
import json
import unicodedata
from collections.abc import Callable, Iterable
from urllib.parse import quote, quote_plus

#: ASCII letters, digits and punctuation to their fullwidth forms (U+FF01 to U+FF5E), the space to
#: the ideographic space: what NFKC normalises back.
FULLWIDTH = {code: code + 0xFEE0 for code in range(0x21, 0x7F)} | {0x20: 0x3000}


def _every(escape: Callable[[str], str]) -> Callable[[str], str]:
    return lambda secret: "".join(map(escape, secret))


def _utf8(secret: str) -> bytes:
    return secret.encode("utf-8")


#: Each spelling SECURITY.md lists, by name: what a leak would look like, and what Cooked echoes.
SPELLINGS: dict[str, Callable[[str], str]] = {
    "raw": str,
    "every letter in the other case": str.swapcase,  # upper to lower and lower to upper
    "percent-encoded": lambda s: quote(s, safe=""),
    "form-encoded": lambda s: quote_plus(s, safe=""),
    "percent-encoded twice": lambda s: quote(quote(s, safe=""), safe=""),
    "JSON-escaped": lambda s: json.dumps(s)[1:-1],
    "JSON-escaped, non-ASCII kept": lambda s: json.dumps(s, ensure_ascii=False)[1:-1],
    "bytes repr": lambda s: repr(_utf8(s))[2:-1],
    "non-ASCII \\x-escaped": lambda s: s.encode("unicode_escape").decode("ascii"),
    "every character \\u-escaped": _every(lambda c: f"\\u{ord(c):04x}"),
    "every character \\x-escaped": lambda s: "".join(f"\\x{byte:02x}" for byte in _utf8(s)),
    "decomposed (NFD)": lambda s: unicodedata.normalize("NFD", s),
    "fullwidth": lambda s: s.translate(FULLWIDTH),
    "HTML decimal references": _every(lambda c: f"&#{ord(c)};"),
    "HTML hex references": _every(lambda c: f"&#x{ord(c):x};"),
    "HTML-escaped twice": lambda s: html.escape(html.escape(s)),
    "base64": lambda s: base64.b64encode(_utf8(s)).decode(),
    "URL-safe base64": lambda s: base64.urlsafe_b64encode(_utf8(s)).decode().rstrip("="),
    "base32": lambda s: base64.b32encode(_utf8(s)).decode().rstrip("="),
    "hex": lambda s: _utf8(s).hex(),
}
#: What may stand in a secret's spaces when text dodges a naive scrub (issue 17); every spelling
#: above is also searched for with each of these in the secret's spaces.
SPACES = ("\n", "\t", "  ", "\xa0", "\u200b", "\u2028")
#: The whole-secret encodings: their input is the secret as it is, so space spellings do not apply.
_WHOLE = ("base64", "URL-safe base64", "base32", "hex")


def spellings(secret: str) -> set[str]:
    """Every form of ``secret`` a leak could take: each of ``SPELLINGS``, each also with the
    secret's spaces spelt as each of ``SPACES``."""
    variants = {secret, *(secret.replace(" ", space) for space in SPACES)}
    return {
        spell(variant)
        for name, spell in SPELLINGS.items()
        for variant in ({secret} if name in _WHOLE else variants)
    }


def assert_no_canary(canaries: Iterable[str], *texts: object) -> None:
    """None of ``canaries`` appears in any of ``texts`` (each taken as ``str()``: reprs, errors, logs)."""
    canaries = tuple(canaries)
    for text in texts:
        for canary in canaries:
            assert canary not in str(text), f"canary {canary!r} leaked into {text!r}"
