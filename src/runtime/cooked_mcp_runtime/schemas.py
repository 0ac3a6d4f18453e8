"""The JSON schemas a client is served, derived from the generated models.

Each parameter and each output field is declared once, as a pydantic field (cooked_mcp_generated
.models); the schemas here are read off those declarations at import, so what a client sees and
what the server validates cannot drift apart. They are built by walking ``model_fields`` rather
than by ``model_json_schema`` (several times slower at start-up), spelled exactly as clients
were served them before (tests/tools/served_tools.json):

- a parameter that may be left out, or whose type allows null, is served as a type array with
  "null" plus ``nullable: true`` (the forms OpenAI's strict mode, google-genai and smolagents
  read; ``anyOf`` would lose the description or the type in some of them);
- no ``additionalProperties``, no ``title``: google-genai's MCP conversion fails on the first,
  and the validation step refuses unknown parameters by name anyway;
- nested output objects are inlined, since some clients do not resolve ``$ref``.

Only the shapes the tool table allows are known (strings, integers, booleans, lists of strings,
string enums, named output objects, lists of them); any other fails at import, never silently.
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from copy import copy
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo

_JSON_TYPES: dict[Any, str] = {str: "string", int: "integer", bool: "boolean"}


def input_schema(
    parameters: type[BaseModel] | Mapping[str, Any], *, mode: str | None = None
) -> dict[str, Any]:
    """A flat ``type: object`` schema of a model's fields, or of ``parameters`` (name -> annotated
    type), in their order.

    With a ``mode`` parameter only it is required (each mode's own rules are checked by the
    validation step: strict clients reject a top-level oneOf); without, every parameter
    without a default is.
    """
    if isinstance(parameters, type):
        fields = {name: (f.annotation, f) for name, f in parameters.model_fields.items()}
    else:
        fields = {name: _declared(annotation) for name, annotation in parameters.items()}
    required = [mode] if mode is not None else [name for name, (_, f) in fields.items() if f.is_required()]
    properties = {
        name: _parameter(annotation, f, name in required) for name, (annotation, f) in fields.items()
    }
    return {"type": "object", "properties": properties, **({"required": required} if required else {})}


def _declared(annotation: Any) -> tuple[Any, FieldInfo]:
    """``Annotated[T, Field(...)]`` -> (T, the field): read as declared, without building a model.

    Constraints of a named type (``Annotated[Id, Field(...)]``, which Python flattens) join the field's.
    """
    base, *metadata = get_args(annotation) if get_origin(annotation) is Annotated else (annotation,)
    fields = [item for item in metadata if isinstance(item, FieldInfo)]
    if len(fields) != 1:
        raise TypeError(f"a parameter is declared as Annotated[type, Field(...)], not {annotation!r}")
    field = fields[0]
    named = [item for item in metadata if not isinstance(item, FieldInfo)]
    if named:
        field = copy(field)
        field.metadata = [*named, *field.metadata]
    return base, field


def _parameter(annotation: Any, f: FieldInfo, required: bool) -> dict[str, Any]:
    base, allows_null = _without_none(annotation)
    schema = _value(base, f.metadata)
    if allows_null or not required:
        schema["type"] = [schema["type"], "null"]
        schema["nullable"] = True
    schema["description"] = f.description
    if not f.is_required() and f.default is not None:
        schema["default"] = f.default
    return schema


def _value(annotation: Any, metadata: list[Any]) -> dict[str, Any]:
    """The schema of one value, its keys in the order served: type, enum, bounds, pattern, items."""
    annotation, metadata = _unannotated(annotation, metadata)
    if get_origin(annotation) is list:
        (item,) = get_args(annotation)
        return _declared_only(
            {
                "type": "array",
                "items": _value(item, []),
                "minItems": _bound(metadata, "min_length"),
                "maxItems": _bound(metadata, "max_length"),
            }
        )
    if get_origin(annotation) is Literal:
        values = list(get_args(annotation))
        kind: dict[str, Any] = {"type": _json_type(type(values[0])), "enum": values}
    else:
        kind = {"type": _json_type(annotation)}
    return _declared_only(
        {
            **kind,
            "minimum": _bound(metadata, "ge"),
            "maximum": _bound(metadata, "le"),
            "minLength": _bound(metadata, "min_length"),
            "maxLength": _bound(metadata, "max_length"),
            "pattern": _bound(metadata, "pattern"),
        }
    )


def _declared_only(schema: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in schema.items() if value is not None}


def output_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's own fields first, then those it inherits (the fields every result has)."""
    inherited = next((base.model_fields for base in model.__mro__[1:] if issubclass(base, BaseModel)), {})
    names = [name for name in model.model_fields if name not in inherited] + list(inherited)
    return _object(model, names)


def _object(model: type[BaseModel], names: list[str]) -> dict[str, Any]:
    fields = model.model_fields
    properties = {name: _output_field(fields[name]) for name in names}
    required = [name for name in names if fields[name].is_required()]
    return {"type": "object", "properties": properties, **({"required": required} if required else {})}


def _output_field(f: FieldInfo) -> dict[str, Any]:
    annotation, _ = _without_none(f.annotation)
    if get_origin(annotation) is list:
        (item,) = get_args(annotation)
        schema: dict[str, Any] = {"type": "array", "items": _output_value(item)}
    else:
        schema = _output_value(annotation)
    return {**schema, "description": f.description}


def _output_value(annotation: Any) -> dict[str, Any]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _object(annotation, list(annotation.model_fields))
    return {"type": _json_type(annotation)}


def _without_none(annotation: Any) -> tuple[Any, bool]:
    """``T | None`` -> (T, True); anything else -> (it, False)."""
    if get_origin(annotation) in (Union, types.UnionType):
        kept = [arg for arg in get_args(annotation) if arg is not type(None)]
        if len(kept) == 1:
            return kept[0], len(kept) < len(get_args(annotation))
    return annotation, False


def _unannotated(annotation: Any, metadata: list[Any]) -> tuple[Any, list[Any]]:
    """``Annotated[T, constraints...]`` -> (T, its constraints after ``metadata``)."""
    if get_origin(annotation) is Annotated:
        base, *extra = get_args(annotation)
        return base, [*metadata, *extra]
    return annotation, metadata


def _bound(metadata: list[Any], name: str) -> Any:
    """The value of constraint ``name`` (annotated_types', pydantic's or StringConstraints'), if declared."""
    return next((value for item in metadata if (value := getattr(item, name, None)) is not None), None)


def _json_type(annotation: Any) -> str:
    if annotation not in _JSON_TYPES:
        raise TypeError(f"no served JSON schema for {annotation!r}: the tool table has no such type")
    return _JSON_TYPES[annotation]
