"""How a secret can show up in text, and how every such spelling is replaced.

Secrets travel in more than one form: raw in a JSON body, percent-encoded in a URL or a
form body, JSON-escaped when a body is quoted inside another string, as a Python bytes repr
(``j\\xc3\\xb6``) when a library logs raw bytes, or with ``\\xf6`` / ``\\u00f6`` escapes. Text we
do not control (Cooked's error messages, a library's log line) may carry any of these forms,
in any letter case (Cooked matches the login name case-insensitively and may echo it back in
another case), and with the secret's spaces spelt differently: a newline, a tab, two spaces,
a no-break space, a line separator, a zero-width space, or an escape of one of them. An
invisible format character (zero-width space, joiner, soft hyphen, BOM) may also sit anywhere
inside it.

So matching works on a normalised copy of the text, with format characters taken out, and a
secret's parts (split at its whitespace) may be joined by any run of whitespace, escaped
whitespace or nothing at all; each part may take any of the spellings above. The matches are
then replaced in the original text. Replacing a look-alike of a secret costs nothing; missing
an encoded copy would leak it.

Used by the Cooked session (error text) and by the log redaction filter, so both agree.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable
from functools import cache, lru_cache
from urllib.parse import quote, quote_plus

__all__ = ["MIN_SECRET_LENGTH", "REDACTED", "redact"]

REDACTED = "[redacted]"
#: Shorter values are left alone: scrubbing every "ab" from a text only garbles it.
MIN_SECRET_LENGTH = 3


@cache
def _format_chars() -> tuple[frozenset[str], re.Pattern[str]]:
    """Invisible characters that change no word a reader sees (Unicode category Cf), and a pattern
    finding any of them. They live in the Basic and Supplementary Multilingual Planes and in plane
    14 (tags), so only those are scanned: ~130,000 lookups, made on the first redaction rather than
    at import, so that start-up (and ``--help``) does not pay for them.
    """
    chars = frozenset(
        char
        for plane in (range(0x20000), range(0xE0000, 0xE1000))
        for char in map(chr, plane)
        if unicodedata.category(char) == "Cf"
    )
    return chars, re.compile("[" + "".join(re.escape(char) for char in sorted(chars)) + "]")


#: What may stand between two parts of a secret where it has whitespace: whitespace (``\s`` covers
#: NBSP, U+2028 and U+2029), an escape of a character (``\n``, ``\xa0``, ``\u2028``), a
#: percent-escape, ``+`` (form encoding), or nothing (a zero-width space was taken out).
_SEPARATOR = r"(?:\s|\\[ntrfv]|\\x[0-9a-f]{2}|\\u[0-9a-f]{4}|\\U[0-9a-f]{8}|%[0-9a-f]{2}|\+)*"


def _part_spellings(part: str) -> set[str]:
    """A whitespace-free piece of a secret: raw, percent-encoded, JSON-escaped, bytes repr, escaped."""
    forms = {
        part,
        quote(part, safe=""),
        quote_plus(part, safe=""),
        json.dumps(part)[1:-1],
        json.dumps(part, ensure_ascii=False)[1:-1],
    }
    forms |= {repr(form.encode("utf-8"))[2:-1] for form in forms}  # b'j\xc3\xb6' as printed
    forms |= {form.encode("unicode_escape").decode("ascii") for form in forms}  # j\xf6, \u2028
    return forms


def _secret_pattern(secret: str) -> str | None:
    parts = _format_chars()[1].sub("", secret).split()
    if sum(map(len, parts)) < MIN_SECRET_LENGTH:
        return None
    return _SEPARATOR.join(
        "(?:"
        + "|".join(re.escape(form) for form in sorted(_part_spellings(part), key=len, reverse=True))
        + ")"
        for part in parts
    )


@lru_cache(maxsize=64)
def _pattern(secrets: frozenset[str]) -> re.Pattern[str] | None:
    """One pattern for all secrets; cached, since the same few secrets are scrubbed from every line."""
    # Longest first, so a secret that contains another is replaced whole.
    patterns = [
        pattern
        for secret in sorted(secrets, key=len, reverse=True)
        if (pattern := _secret_pattern(secret)) is not None
    ]
    return re.compile("|".join(patterns), re.IGNORECASE) if patterns else None


# implements: api-client.ERRORS.6, authentication.SECRETS.3, tools.RESPONSES.7
def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every spelling of every secret (of at least MIN_SECRET_LENGTH) replaced."""
    pattern = _pattern(frozenset(secrets))
    if pattern is None:
        return text
    format_chars, any_format_char = _format_chars()
    if not any_format_char.search(text):
        return pattern.sub(REDACTED, text)
    # Match on the text without its format characters; replace in the original.
    kept = [index for index, char in enumerate(text) if char not in format_chars]
    normal = "".join(text[index] for index in kept)
    pieces, done = [], 0
    for match in pattern.finditer(normal):
        if match.end() > match.start():
            start, end = kept[match.start()], kept[match.end() - 1] + 1
            pieces += [text[done:start], REDACTED]
            done = end
    pieces.append(text[done:])
    return "".join(pieces)
