"""Text from elsewhere made safe in our sentences: ``one_line`` for Cooked's or a web page's (it may
forge lines with breaks or bidi overrides), ``printable`` for what the user typed."""

from __future__ import annotations

import unicodedata

#: What the spec calls ASCII whitespace; str.strip() without arguments would also eat Unicode spaces.
ASCII_WHITESPACE = " \t\r\n\v\f"

#: Enough for any real title in a list line; the structured output keeps the whole title.
MAX_INLINE_CHARS = 120

#: Control, format (bidi overrides, zero-width) and line/paragraph separator characters.
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp"})


def one_line(text: str | None, fallback: str, limit: int = MAX_INLINE_CHARS) -> str:
    """Untrusted ``text`` on one line of at most ``limit`` characters, or ``fallback`` when nothing is left."""
    if text is None:
        return fallback
    # Printable text holds none of the unsafe categories, so the per-character scan (the slow
    # part, on every product name of a shopping list) is only needed for the rest.
    kept = (
        text
        if text.isprintable()
        else "".join(" " if unicodedata.category(char) in _UNSAFE_CATEGORIES else char for char in text)
    )
    collapsed = " ".join(kept.split())
    if not collapsed:
        return fallback
    return collapsed if len(collapsed) <= limit else collapsed[: limit - 1].rstrip() + "…"


def printable(text: object, limit: int = 80) -> str:
    """``text`` as typed but with "?" for each character that would not print, cut with "…" past ``limit``."""
    shown = "".join(char if char.isprintable() else "?" for char in str(text))
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"
