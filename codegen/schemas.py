"""Turns table rows into pydantic declarations, each parameter and output field once.

A parameter becomes one annotated type (``ReadLimitParam``) holding its type, bounds,
default and description; each mode's model refers to it by name, and the served
inputSchema is derived from it at import (cooked_mcp_runtime.schemas), so the schema
a client sees and the validation the server runs cannot drift apart.
"""

from __future__ import annotations

from .spec import Mode, OutputField, Param, ParamType, Tool

_JSON_TO_PYTHON = {"string": "str", "integer": "int", "boolean": "bool"}


def param_alias(tool: Tool, p: Param) -> str:
    """The name of a parameter's annotated type, e.g. ReadLimitParam."""
    return f"{tool.class_prefix}{''.join(part.capitalize() for part in p.name.split('_'))}Param"


def required_somewhere(tool: Tool, p: Param) -> bool:
    """Whether some call must give the parameter: the mode, or one a mode (or a tool without modes) requires."""
    if not tool.modes or p.name == tool.mode:
        return p.required
    return any(p.name in m.requires for m in tool.modes)


def param_type(tool: Tool, p: Param) -> str:
    """``Annotated[T, Field(...)]``: the parameter's one declaration.

    A parameter no call must give defaults to its declared default, or to None ("not given").
    """
    if p.enum:
        base = "Literal[" + ", ".join(repr(v) for v in p.enum) + "]"
    elif p.items_named:
        base = f"list[{p.items_named}]"
    elif p.type == "array":
        item = ", ".join(
            f"{keyword}={p.items[key]!r}"
            for keyword, key in (
                ("min_length", "minLength"),
                ("max_length", "maxLength"),
                ("pattern", "pattern"),
            )
            if key in p.items
        )
        base = f"list[Annotated[str, StringConstraints({item})]]" if item else "list[str]"
    else:
        base = p.named or _JSON_TO_PYTHON[p.type]
    args = []
    if not required_somewhere(tool, p):
        args.append(f"default={p.default!r}")
        if p.default is None:
            base += " | None"
    elif p.nullable:
        base += " | None"
    own = p.named is None  # a named type carries its string bounds itself
    for keyword, value in (
        ("ge", p.minimum),
        ("le", p.maximum),
        ("min_length", p.min_items if p.type == "array" else p.min_length if own else None),
        ("max_length", p.max_items if p.type == "array" else p.max_length if own else None),
        ("pattern", p.pattern if own else None),
    ):
        if value is not None:
            args.append(f"{keyword}={value!r}")
    args.append(f"description={p.description!r}")
    return f"Annotated[{base}, Field({', '.join(args)})]"


def named_type(t: ParamType) -> str:
    """``Annotated[str, StringConstraints(...)]``: a named type's one declaration."""
    bounds = {"min_length": t.min_length, "max_length": t.max_length, "pattern": t.pattern}
    given = ", ".join(f"{keyword}={value!r}" for keyword, value in bounds.items() if value is not None)
    return f"Annotated[str, StringConstraints({given})]"


def param_use(tool: Tool, mode: Mode | None, p: Param) -> str:
    """The annotation of a parameter on a mode's model: its declaration, left optional where the
    mode only accepts a parameter another mode requires."""
    alias = param_alias(tool, p)
    if mode is not None and p.name not in mode.requires and required_somewhere(tool, p):
        return f"{alias} | None = None" if p.default is None else f"{alias} = {p.default!r}"
    return alias


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
