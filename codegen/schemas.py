"""Turns table rows into JSON Schema and into pydantic field declarations.

Both come from the same Param, so the schema a client sees and the
validation the server runs cannot drift apart.
"""

from __future__ import annotations

from typing import Any

from .spec import ObjectType, OutputField, Param, Tool

_JSON_TO_PYTHON = {"string": "str", "integer": "int", "boolean": "bool"}


def input_schema(tool: Tool) -> dict[str, Any]:
    """A flat ``type: object`` schema: clients reject a top-level oneOf."""
    properties = {p.name: _param_schema(p) for p in tool.params}
    required = [p.name for p in tool.params if p.required]
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    return schema


def _param_schema(p: Param) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": [p.type, "null"] if p.nullable else p.type}
    schema["description"] = p.description
    for key, value in (
        ("enum", list(p.enum) or None),
        ("default", p.default),
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
    return schema


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


def param_annotation(p: Param) -> str:
    """The Python type of a parameter on its arguments model."""
    if p.enum:
        base = "Literal[" + ", ".join(repr(v) for v in p.enum) + "]"
    elif p.type == "array":
        constraints = _call_args(
            ("min_length", p.items.get("minLength")), ("max_length", p.items.get("maxLength"))
        )
        base = f"list[Annotated[str, StringConstraints({constraints})]]" if constraints else "list[str]"
    else:
        base = _JSON_TO_PYTHON[p.type]
    optional = p.nullable or (not p.required and p.default is None)
    return f"{base} | None" if optional else base


def param_field(p: Param) -> str:
    """The ``Field(...)`` call carrying a parameter's default and bounds."""
    length_min = p.min_items if p.type == "array" else p.min_length
    length_max = p.max_items if p.type == "array" else p.max_length
    args = _call_args(
        ("ge", p.minimum),
        ("le", p.maximum),
        ("min_length", length_min),
        ("max_length", length_max),
        ("pattern", p.pattern),
        ("description", p.description),
    )
    default = "..." if p.required else f"default={p.default!r}"
    return f"Field({default}, {args})"


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


def _call_args(*pairs: tuple[str, Any]) -> str:
    parts = []
    for key, value in pairs:
        if value is None:
            continue
        parts.append(f"{key}={value!r}")
    return ", ".join(parts)
