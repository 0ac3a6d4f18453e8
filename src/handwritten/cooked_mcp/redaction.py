"""How a secret can show up in text, and how every such spelling is replaced.

Secrets travel in more than one form: raw in a JSON body, percent-encoded in a URL or a
form body, JSON-escaped when a body is quoted inside another string. Text we do not control
(Cooked's error messages, a library's log line) may carry any of these forms, in any letter
case (Cooked matches the login name case-insensitively and may echo it back in another case),
so scrubbing looks for each form, case-insensitively. Replacing a look-alike of a secret in
another case costs nothing; missing an encoded copy would leak it.

Used by the Cooked session (error text) and by the log redaction filter, so both agree.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from urllib.parse import quote, quote_plus

__all__ = ["MIN_SECRET_LENGTH", "REDACTED", "redact", "spellings"]

REDACTED = "[redacted]"
#: Shorter values are left alone: scrubbing every "ab" from a text only garbles it.
MIN_SECRET_LENGTH = 3


def spellings(secret: str) -> set[str]:
    """The raw value, its percent-encodings (path and form style) and its JSON-escaped form."""
    forms = {secret, quote(secret, safe=""), quote_plus(secret, safe=""), json.dumps(secret)[1:-1]}
    return {form for form in forms if len(form) >= MIN_SECRET_LENGTH}


# implements: api-client.ERRORS.6, authentication.SECRETS.3, tools.RESPONSES.7
def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every spelling of every secret (of at least MIN_SECRET_LENGTH) replaced."""
    forms = {form for secret in secrets if len(secret) >= MIN_SECRET_LENGTH for form in spellings(secret)}
    if not forms:
        return text
    # Longest first, so a secret that contains another is replaced whole.
    alternatives = "|".join(re.escape(form) for form in sorted(forms, key=len, reverse=True))
    return re.sub(alternatives, REDACTED, text, flags=re.IGNORECASE)
