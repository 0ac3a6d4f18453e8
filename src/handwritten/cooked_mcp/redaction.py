"""Finds every spelling of a secret in text (SECURITY.md lists them) and replaces it: in the text
as it is, then, when it could hold another spelling, in a normalised view (format characters out,
NFKC, escapes decoded until stable) whose matches are mapped back over the original characters."""

from __future__ import annotations

import base64
import html
import json
import math
import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache, lru_cache
from urllib.parse import quote, unquote

REDACTED = "[redacted]"
#: Shorter values are left alone: scrubbing every "ab" from a text only garbles it.
MIN_SECRET_LENGTH = 3


@cache
def _format_chars() -> tuple[frozenset[str], re.Pattern[str], dict[int, None]]:
    """Invisible (Cf) characters, a pattern and a ``translate`` table dropping them: built at first use."""
    chars = frozenset(
        char
        for plane in (range(0x20000), range(0xE0000, 0xE1000))
        for char in map(chr, plane)
        if unicodedata.category(char) == "Cf"
    )
    pattern = re.compile("[" + "".join(re.escape(char) for char in sorted(chars)) + "]")
    return chars, pattern, dict.fromkeys(map(ord, chars))


#: What may stand between two parts of a secret where it has whitespace: whitespace (``\s`` covers
#: NBSP, U+2028 and U+2029; escaped and percent-encoded whitespace is decoded in the normalised
#: view), ``+`` (form encoding), or nothing (a zero-width space was taken out).
_SEPARATOR = r"[\s+]*"


def _part_spellings(part: str) -> set[str]:
    """A whitespace-free piece of a secret: raw, percent-encoded, JSON-escaped. Every other escape
    is decoded in the normalised view; these three are matched as they are because a secret
    holding ``%`` or a backslash is decoded into something else there."""
    return {part, quote(part, safe=""), json.dumps(part)[1:-1], json.dumps(part, ensure_ascii=False)[1:-1]}


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


#: An encoded form shorter than this is not looked for: a few base64 or hex characters also turn
#: up in ordinary words and IDs, and scrubbing them would garble text for little gain.
MIN_ENCODED_LENGTH = 6


#: The secret's UTF-8 bytes encoded whole: (encoder, bits per character, whether the encoding's
#: letters come in either case). Each is also found inside a longer encoded text (``login:password``
#: in a Basic ``Authorization`` header). Base64's letter case is data, so only its own is matched.
_ENCODINGS: tuple[tuple[Callable[[bytes], bytes], int, bool], ...] = (
    (base64.b64encode, 6, False),
    (base64.urlsafe_b64encode, 6, False),
    (base64.b32encode, 5, True),
    (lambda raw: raw.hex().encode("ascii"), 4, True),
)


def _encoded_forms(secret: str) -> set[str]:
    """Each of ``_ENCODINGS`` at every alignment inside a longer text, cut to the characters that
    depend on the secret alone."""
    raw = secret.encode("utf-8")
    forms: set[str] = set()
    for encode, bits, either_case in _ENCODINGS:
        group = math.lcm(8, bits) // 8  # bytes per group of whole characters: 3 for base64, 5 for base32
        for offset in range(group):
            encoded = encode(bytes(offset) + raw).decode("ascii")
            form = encoded[-(-8 * offset // bits) : 8 * (offset + len(raw)) // bits]
            forms |= {form.lower(), form.upper()} if either_case else {form}
    return {form for form in forms if len(form) >= MIN_ENCODED_LENGTH}


@lru_cache(maxsize=64)
def _pattern(secrets: frozenset[str]) -> re.Pattern[str] | None:
    """One cached pattern for all secrets, also NFKC and in any letter case (encodings only in their own)."""
    spelt = secrets | {unicodedata.normalize("NFKC", secret) for secret in secrets}
    # Longest first, so a secret that contains another is replaced whole.
    patterns = [
        pattern
        for secret in sorted(spelt, key=len, reverse=True)
        if (pattern := _secret_pattern(secret)) is not None
    ]
    encoded = {
        form for secret in secrets if len(secret) >= MIN_SECRET_LENGTH for form in _encoded_forms(secret)
    }
    patterns = ["(?i:" + "|".join(patterns) + ")"] if patterns else []
    patterns += [re.escape(form) for form in sorted(encoded, key=len, reverse=True)]
    return re.compile("|".join(patterns)) if patterns else None


# implements: api-client.ERRORS.6, authentication.SECRETS.3, tools.RESPONSES.7
def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every spelling of every secret (of at least MIN_SECRET_LENGTH) replaced."""
    pattern = _pattern(frozenset(secrets))
    if pattern is None:
        return text
    decoded = _decoded(text)
    if decoded == text or not pattern.search(decoded):  # the usual log line: cheap to tell
        return pattern.sub(REDACTED, text)
    # A secret hides behind an encoding: find where, over the original's characters.
    view = _normalised(text)
    found = [match for match in pattern.finditer(view.text) if match.end() > match.start()]
    if not found:  # only normalising the text whole joined it (Hangul jamo): scrub it whole
        return REDACTED
    spans = [match.span() for match in pattern.finditer(text)]
    spans += [(view.starts[match.start()], view.ends[match.end() - 1]) for match in found]
    return _replace(text, spans)


#: New text and the span (relative to a match) it replaces.
_Piece = tuple[str, int, int]
#: A match's new text, or pieces of it each from its own span of the match.
_Rewrite = Callable[[str], str | list[_Piece]]


@dataclass(frozen=True)
class _View:
    """A rewritten copy of a text: for each of its characters, the span of the original it came from."""

    text: str
    starts: list[int]
    ends: list[int]

    def rewritten(self, found: re.Pattern[str], rewrite: _Rewrite) -> _View:
        """Each match of ``found`` replaced by the pieces ``rewrite`` makes of it."""
        text: list[str] = []
        starts: list[int] = []
        ends: list[int] = []
        done = 0
        for match in found.finditer(self.text):
            made = rewrite(match.group())
            pieces = [(made, 0, len(match.group()))] if isinstance(made, str) else made
            if len(pieces) == 1 and pieces[0][0] == match.group():
                continue
            start = match.start()
            text.append(self.text[done:start])
            starts += self.starts[done:start]
            ends += self.ends[done:start]
            for new, piece_start, piece_end in pieces:
                text.append(new)
                starts += [self.starts[start + piece_start]] * len(new)
                ends += [self.ends[start + piece_end - 1]] * len(new)
            done = match.end()
        if not done:
            return self
        text.append(self.text[done:])
        return _View("".join(text), starts + self.starts[done:], ends + self.ends[done:])


#: A run of non-ASCII characters and the character before it (a combining mark's base).
_NON_ASCII = re.compile(r"[\x00-\x7f]?[^\x00-\x7f]+")
#: Percent-escapes in a row, decoded together (UTF-8 takes several).
_PERCENT = re.compile(r"(?:%[0-9a-fA-F]{2})+")
#: An HTML character reference: named, decimal or hexadecimal (the ``;`` may be missing).
_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});?")
#: A backslash escape as JSON, Python and C write them: a run of ``\\xHH`` (a bytes repr's UTF-8, or
#: Latin-1 letters), a ``\\uHHHH`` surrogate pair, or one escape of any kind.
_ESCAPE = re.compile(
    r"(?:\\x[0-9a-fA-F]{2})+"
    r"|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"
    r"|\\u[0-9a-fA-F]{4}|\\U[0-9a-fA-F]{8}|\\[\\\"'/bfnrtv]"
)
_SIMPLE_ESCAPES = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
#: Decoding rounds at most: ``%252540`` takes three; more is not a spelling, it is an attack on time.
_ROUNDS = 4


def _decoded(text: str) -> str:
    """The normalised view's text (format characters out, NFKC, percent-escapes and HTML
    entities decoded, until stable), made whole by the standard library: fast, no spans."""
    for _ in range(_ROUNDS):
        before = text
        if not text.isascii():
            text = unicodedata.normalize("NFKC", text.translate(_format_chars()[2]))
        if "%" in text:
            text = unquote(text, errors="replace")
        if "&" in text:
            text = html.unescape(text)
        if "\\" in text:
            text = _ESCAPE.sub(lambda found: _unescaped_chars(found.group()), text)
        if text == before:
            break
    return text


def _normalised(text: str) -> _View:
    """``_decoded(text)`` made step by step, each character keeping the span it came from."""
    view = _View(text, list(range(len(text))), list(range(1, len(text) + 1)))
    for _ in range(_ROUNDS):
        before = view.text
        for found, rewrite in _steps(before):
            view = view.rewritten(found, rewrite)
        if view.text == before:
            break
    return view


def _steps(text: str) -> list[tuple[re.Pattern[str], _Rewrite]]:
    """The rewrites that would change ``text``, in order."""
    steps: list[tuple[re.Pattern[str], _Rewrite]] = []
    if not text.isascii():
        format_chars, any_format_char, _ = _format_chars()
        if not format_chars.isdisjoint(text):
            steps.append((any_format_char, lambda found: ""))
        if not unicodedata.is_normalized("NFKC", text):
            steps.append((_NON_ASCII, _nfkc))
    if "%" in text and _PERCENT.search(text):
        steps.append((_PERCENT, lambda found: unquote(found, errors="replace")))
    if "&" in text and _ENTITY.search(text):
        steps.append((_ENTITY, html.unescape))
    if "\\" in text and _ESCAPE.search(text):
        steps.append((_ESCAPE, _unescaped_chars))
    return steps


def _unescaped_chars(found: str) -> str:
    """What one match of ``_ESCAPE`` stands for; an escape of no character stays as it is."""
    kind = found[1]
    if kind == "x":
        raw = bytes.fromhex(found.replace("\\x", ""))
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return raw.decode("latin-1")
    if kind in "uU":
        try:
            units = "".join(chr(int(unit, 16)) for unit in found.split("\\" + kind)[1:])
        except ValueError:  # beyond U+10FFFF
            return found
        return units.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return _SIMPLE_ESCAPES.get(kind, kind)


def _nfkc(run: str) -> list[_Piece]:
    """``run`` NFKC-normalised a character (with its combining marks) at a time: each keeps its span."""
    pieces: list[_Piece] = []
    start = 0
    for index in range(1, len(run) + 1):
        if index == len(run) or not unicodedata.combining(run[index]):
            pieces.append((unicodedata.normalize("NFKC", run[start:index]), start, index))
            start = index
    return pieces


def _replace(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with each span (overlapping ones merged) replaced by one ``REDACTED``."""
    pieces, done = [], 0
    for start, end in sorted(spans):
        if end <= done:
            continue
        if start < done:  # overlaps the span just replaced: extend it
            done = end
            continue
        pieces += [text[done:start], REDACTED]
        done = end
    pieces.append(text[done:])
    return "".join(pieces)
