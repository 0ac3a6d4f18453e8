"""Hypothesis strategies for tool arguments, derived from the served schemas.

Deriving them from the generated definitions (not from a second copy of the
rules) means a change to features/tools.yaml changes what is generated here.
"""

from __future__ import annotations

import typing
from typing import Any

from hypothesis import strategies as st

from cooked_mcp_generated.tools import TOOLS, ToolSpec

SPECS: dict[str, ToolSpec] = {spec.name: spec for spec in TOOLS}

#: Every character an MCP client can send: JSON-safe text, no surrogates. It is the set hypothesis's
#: default ``characters(codec="utf-8")`` draws from, spelt as categories alone: given a codec,
#: hypothesis builds that codec's table by encoding every code point, 1.3 s of CPU in each fresh
#: checkout. Every open-ended text strategy in the suite draws from this one (or a subset of its
#: categories); the rest draw from a short fixed alphabet (``sampled_from``).
ANY_CHARACTER = st.characters(exclude_categories=("Cs",))


def properties(tool: str) -> dict[str, dict[str, Any]]:
    return dict(SPECS[tool].definition.input_schema["properties"])


def mode_rules(tool: str) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """mode value -> (requires, accepts); a tool without modes has one rule under ""."""
    rules = SPECS[tool].modes
    if rules is None:
        required = tuple(SPECS[tool].definition.input_schema.get("required", []))
        return {"": (required, tuple(n for n in properties(tool) if n not in required))}
    return {value: (rules.requires[value], rules.accepts[value]) for value in rules.requires}


def value_for(schema: dict[str, Any], null_is_a_value: bool = False) -> st.SearchStrategy[Any]:
    """Any valid value of one parameter; null only where it is a value of its own (portions unknown).

    Every optional parameter is served nullable (a type array with "null"), but there null
    means "not given", which null_filled and the lenient-argument tests cover.
    """
    kind = (
        schema["type"] if isinstance(schema["type"], str) else next(t for t in schema["type"] if t != "null")
    )
    if "enum" in schema:
        base: st.SearchStrategy[Any] = st.sampled_from(schema["enum"])
    elif kind == "integer":
        base = st.integers(schema.get("minimum", -(2**31)), schema.get("maximum", 2**31))
    elif kind == "boolean":
        base = st.booleans()
    elif kind == "array":
        item = schema["items"]
        base = st.lists(
            st.text(
                ANY_CHARACTER, min_size=item.get("minLength", 0), max_size=min(item.get("maxLength", 20), 20)
            ),
            min_size=schema.get("minItems", 0),
            max_size=min(schema.get("maxItems", 5), 5),
        )
    elif schema.get("pattern", "").startswith("^https?"):
        base = st.builds(
            lambda path: "https://example.org/" + path,
            st.text(st.sampled_from("abcdefghij-_/0123456789"), max_size=30),
        )
    else:
        limit = min(schema.get("maxLength", 40), 40)
        base = st.text(ANY_CHARACTER, min_size=schema.get("minLength", 0), max_size=limit)
        if "pattern" in schema:
            base = base.filter(lambda s: any(not c.isspace() for c in s))
    return st.one_of(st.none(), base) if null_is_a_value else base


def null_is_a_value(tool: str, mode: str, name: str) -> bool:
    """Whether the mode requires ``name`` and its model takes null for it (portions: unknown)."""
    rules = SPECS[tool].arguments
    field = rules.models[mode].model_fields[name]
    return field.is_required() and type(None) in typing.get_args(field.annotation)


@st.composite
def valid_arguments(draw: st.DrawFn, tool: str) -> dict[str, Any]:
    """Arguments the server must accept: a mode, its required parameters, some of the accepted ones."""
    props = properties(tool)
    mode = SPECS[tool].modes.param if SPECS[tool].modes else None
    rules = mode_rules(tool)
    value = draw(st.sampled_from(sorted(rules)))
    requires, accepts = rules[value]
    args: dict[str, Any] = {mode: value} if mode else {}
    for name in requires:
        args[name] = draw(value_for(props[name], null_is_a_value(tool, value, name)))
    one_of = SPECS[tool].modes.requires_one_of.get(value, ()) if SPECS[tool].modes else ()
    if one_of:
        name = draw(st.sampled_from(one_of))
        args[name] = draw(value_for(props[name]))
    for name in accepts:
        if name not in args and draw(st.booleans()):
            args[name] = draw(value_for(props[name]))
    return args
