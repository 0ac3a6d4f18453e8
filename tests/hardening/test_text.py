"""The one text module: untrusted text on one line, typed text shown as typed, ASCII whitespace,
and the library loggers held at WARNING. Every hand-written message goes through these."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from cooked_mcp.logging_setup import QUIET_LIBRARY_LOGGERS, quiet_library_loggers
from cooked_mcp.text import ASCII_WHITESPACE, MAX_INLINE_CHARS, one_line, printable


@pytest.mark.req("api-client.ERRORS.4", "tools.RESPONSES.1")
def test_untrusted_text_lands_on_one_bounded_line_or_the_fallback() -> None:
    hostile = "line one\nline two\r\x1b[31mred\x1b[0m\u202etxet\u2028end\x00"
    assert one_line(hostile, "?") == "line one line two [31mred [0m txet end"
    assert one_line("  Crème   brûlée  ", "?") == "Crème brûlée"
    # Past the limit: cut one short, a space before the cut dropped, then "…" (limit characters at most).
    assert one_line("ab cd ef", "?", limit=4) == "ab…"
    assert one_line("abcdefgh", "?", limit=4) == "abc…"
    assert len(one_line("x" * 1000, "?")) == MAX_INLINE_CHARS
    assert one_line(None, "(untitled)") == one_line("\n\u200b\t", "(untitled)") == "(untitled)"


@pytest.mark.req("server.CONFIG.2")
def test_typed_text_is_shown_as_typed_with_a_mark_where_a_character_would_not_print() -> None:
    assert printable("nmae\n\x1b[2J") == "nmae??[2J"
    assert printable("é ✓") == "é ✓"
    assert printable(42) == "42"
    assert printable("k" * 81) == "k" * 79 + "…"
    assert printable("k" * 80) == "k" * 80
    assert printable("ab", limit=1) == "…"


@pytest.mark.req("authentication.CREDENTIALS.18")
def test_ascii_whitespace_is_what_the_spec_says_and_leaves_unicode_spaces() -> None:
    assert set(ASCII_WHITESPACE) == {" ", "\t", "\n", "\v", "\f", "\r"}
    assert "\u00a0secret \t\r\n".strip(ASCII_WHITESPACE) == "\u00a0secret"


@pytest.fixture
def library_levels() -> Iterator[None]:
    levels = {name: logging.getLogger(name).level for name in QUIET_LIBRARY_LOGGERS}
    yield
    for name, level in levels.items():
        logging.getLogger(name).setLevel(level)


@pytest.mark.req("authentication.SECRETS.1", "server.SECURITY.2")
def test_library_loggers_are_raised_to_warning_and_a_quieter_choice_is_kept(library_levels: None) -> None:
    logging.getLogger("httpx").setLevel(logging.NOTSET)
    logging.getLogger("httpcore").setLevel(logging.DEBUG)
    logging.getLogger("sse_starlette").setLevel(logging.ERROR)
    quiet_library_loggers()
    assert logging.getLogger("httpx").level == logging.WARNING
    assert logging.getLogger("httpcore.http11").getEffectiveLevel() == logging.WARNING
    assert logging.getLogger("sse_starlette").level == logging.ERROR
