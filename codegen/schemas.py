"""Turns table rows into JSON Schema and into pydantic field declarations.

Both come from the same Param, so the schema a client sees and the
validation the server runs cannot drift apart.
"""

from __future__ import annotations

from typing import Any

from .spec import ObjectType, OutputField, Param, Tool

_JSON_TO_PYTHON = {"string": "str", "integer": "int", "boolean": "bool"}


def input_schema(tool: Tool) -> dict[str, Any]:
    """A flat ``type: object`` schema: clients reject a top-level oneOf.

    No ``additionalProperties: false``: google-genai's MCP conversion crashes on it (the
    validation step still refuses an unknown parameter by name), and every strict-mode
    converter adds it back by itself.
    """
    properties = {p.name: _param_schema(p) for p in tool.params}
    required = [p.name for p in tool.params if p.required]
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def _param_schema(p: Param) -> dict[str, Any]:
    """Every optional parameter allows null, meaning "not given", so a strict-mode client
    (every property required) can still leave one out.

    Null is spelled as a type array with one type and null, the form OpenAI documents for
    strict mode, that google-genai turns into its own ``nullable`` keeping the description,
    and that mcpadapt passes to smolagents with its type; ``nullable: true`` beside it is the
    key smolagents reads to let the parameter be left out. ``anyOf`` would lose the
    description in google-genai and the type in mcpadapt.
    """
    schema: dict[str, Any] = {"type": [p.type, "null"] if _allows_null(p) else p.type}
    for key, value in (
        ("enum", list(p.enum) or None),
        ("minimum", p.minimum),
        ("maximum", p.maximum),
        ("minLength", p.min_length),
        ("maxLength", p.max_length),
        ("pattern", p.pattern),
        ("items", p.items or None),
        ("minItems", p.min_items),
        ("maxItems", p.max_items),
    ):
        if value is not None:
            schema[key] = value
    if _allows_null(p):
        schema["nullable"] = True
    schema["description"] = p.description
    if p.default is not None:
        schema["default"] = p.default
    return schema


def _allows_null(p: Param) -> bool:
    """Whether the served schema allows null: every optional parameter, and any declared so."""
    return p.nullable or not p.required


def output_schema(fields: tuple[OutputField, ...], types: dict[str, ObjectType]) -> dict[str, Any]:
    """Nested types are inlined: some clients do not resolve ``$ref``."""
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {f.name: _output_field_schema(f, types) for f in fields},
    }
    required = [f.name for f in fields if f.required]
    if required:
        schema["required"] = required
    return schema


def _output_field_schema(f: OutputField, types: dict[str, ObjectType]) -> dict[str, Any]:
    if f.type == "object":
        assert f.ref is not None
        return {**output_schema(types[f.ref].fields, types), "description": f.description}
    if f.type == "array":
        assert f.items is not None
        items = output_schema(types[f.items].fields, types) if f.items in types else {"type": f.items}
        return {"type": "array", "items": items, "description": f.description}
    return {"type": f.type, "description": f.description}


BOUNDS = (
    ("MINIMUM", "ge", "minimum"),
    ("MAXIMUM", "le", "maximum"),
    ("MIN_LENGTH", "min_length", "min_length"),
    ("MAX_LENGTH", "max_length", "max_length"),
    ("MIN_ITEMS", "min_length", "min_items"),
    ("MAX_ITEMS", "max_length", "max_items"),
)
ITEM_BOUNDS = (("ITEM_MIN_LENGTH", "min_length", "minLength"), ("ITEM_MAX_LENGTH", "max_length", "maxLength"))


def bound_constants(tool: Tool) -> list[tuple[str, int]]:
    """Every bound of every parameter as a named constant, e.g. READ_LIMIT_MAXIMUM = 30."""
    constants = []
    for p in tool.params:
        for suffix, _, attribute in BOUNDS:
            value = getattr(p, attribute)
            if value is not None:
                constants.append((_constant(tool, p, suffix), value))
        for suffix, _, key in ITEM_BOUNDS:
            if p.items.get(key) is not None:
                constants.append((_constant(tool, p, suffix), p.items[key]))
    return constants


def _constant(tool: Tool, p: Param, suffix: str) -> str:
    return f"{tool.name}_{p.name}_{suffix}".upper()


def param_annotation(tool: Tool, p: Param, required: bool) -> str:
    """The Python type of a parameter on the model of a mode that requires it or not."""
    if p.enum:
        base = "Literal[" + ", ".join(repr(v) for v in p.enum) + "]"
    elif p.type == "array":
        constraints = ", ".join(
            f"{keyword}={_constant(tool, p, suffix)}"
            for suffix, keyword, key in ITEM_BOUNDS
            if p.items.get(key) is not None
        )
        base = f"list[Annotated[str, StringConstraints({constraints})]]" if constraints else "list[str]"
    else:
        base = _JSON_TO_PYTHON[p.type]
    optional = p.nullable or (not required and p.default is None)
    return f"{base} | None" if optional else base


def param_field(tool: Tool, p: Param, required: bool) -> str:
    """The ``Field(...)`` call carrying a parameter's default and its bounds, by name."""
    args = [
        f"{keyword}={_constant(tool, p, suffix)}"
        for suffix, keyword, attribute in BOUNDS
        if getattr(p, attribute) is not None
    ]
    if p.pattern is not None:
        args.append(f"pattern={p.pattern!r}")
    args.append(f"description={p.description!r}")
    default = "..." if required else f"default={p.default!r}"
    return f"Field({', '.join([default, *args])})"


def mode_literal(tool: Tool, value: str) -> str:
    """The mode parameter on one mode's model: the discriminator of the tool's union."""
    assert tool.mode is not None
    description = tool.params_by_name[tool.mode].description
    return f"{tool.mode}: Literal[{value!r}] = Field(description={description!r})"


def output_annotation(f: OutputField) -> str:
    if f.type == "object":
        assert f.ref is not None
        base = f.ref
    elif f.type == "array":
        assert f.items is not None
        base = f"list[{_JSON_TO_PYTHON.get(f.items, f.items)}]"
    else:
        base = _JSON_TO_PYTHON[f.type]
    return base if f.required else f"{base} | None"
