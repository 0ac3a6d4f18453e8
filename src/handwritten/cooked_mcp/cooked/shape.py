"""The shape of a JSON answer for a report: JSON types, never values; a key only when it looks like a
schema key (a key can be data too). Depth and width are bounded.
"""

from __future__ import annotations

import re
from typing import Any, Final

#: Nesting levels described; deeper values show as their type only.
MAX_SHAPE_DEPTH: Final = 4
#: Keys described per object; more are counted, not listed.
MAX_SHAPE_KEYS: Final = 30
#: Array elements whose shapes are merged into the array's element shape.
_ELEMENTS_LOOKED_AT: Final = 5
#: What a key that does not look like a schema key is shown as (numbered: ``<other key 1>``).
OTHER_KEY: Final = "<other key>"
_SCHEMA_KEY = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*\??")
_MAX_KEY_CHARS: Final = 32


def shape_of(value: Any, secrets: tuple[str, ...] = (), depth: int = 0) -> Any:
    """``{"items": ["array", {"id": "string"}]}`` for ``{"items": [{...}]}``; ``secrets`` never show as keys."""
    if isinstance(value, dict):
        if depth >= MAX_SHAPE_DEPTH:
            return "object"
        out: dict[str, Any] = {}
        others = 0
        for key in list(value)[:MAX_SHAPE_KEYS]:
            shown = _shown_key(key, secrets)
            if shown == OTHER_KEY:
                others += 1
                shown = f"<other key {others}>"
            out[shown] = shape_of(value[key], secrets, depth + 1)
        if len(value) > MAX_SHAPE_KEYS:
            out["<more keys>"] = len(value) - MAX_SHAPE_KEYS
        return out
    if isinstance(value, list):
        if depth >= MAX_SHAPE_DEPTH or not value:
            return ["array"]
        elements: list[Any] = []
        for element in value[:_ELEMENTS_LOOKED_AT]:
            shape = shape_of(element, secrets, depth + 1)
            if shape not in elements:
                elements.append(shape)
        return ["array", *elements]
    return _type_name(value)


def _shown_key(key: str, secrets: tuple[str, ...]) -> str:
    folded = key.casefold()
    if len(key) > _MAX_KEY_CHARS or not _SCHEMA_KEY.fullmatch(key):
        return OTHER_KEY
    if any(secret and secret.casefold() in folded for secret in secrets):
        return OTHER_KEY
    return key


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return "string"
