"""Reads and validates the feature files and the tool schema table.

Everything the templates render comes from the dataclasses here, so a mistake
in features/ is caught once, with its file and line, before any output is
written.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .yaml_lines import Located, SpecError, load

GROUP_SECTIONS = ("components", "constraints")
PARAM_TYPES = {"string", "integer", "boolean", "array"}
OUTPUT_TYPES = {"string", "integer", "boolean", "array", "object"}
ANNOTATION_KEYS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
TOOL_NAME = re.compile(r"^[a-z][a-z0-9_]{0,30}$")
#: ``{limit.maximum}`` in a description: that value of a parameter of the same tool (its table
#: key); ``{settings.import_answer_seconds}``: a setting's default from the settings table. So a
#: description states a bound or default only by naming it, and can never disagree with it.
REFERENCE = re.compile(r"\{(\w+)\.(\w+)\}")
_REFERABLE = {
    "default": "default",
    "minimum": "minimum",
    "maximum": "maximum",
    "minLength": "min_length",
    "maxLength": "max_length",
    "minItems": "min_items",
    "maxItems": "max_items",
}
#: The strictest description limit of the major LLM APIs an agent framework hands tools to:
#: OpenAI's function declarations take at most 1,024 characters (a framework that checks
#: refuses the tool, one that does not gets a 400), the strictest documented one we know of.
MAX_DESCRIPTION = 1024


@dataclass(frozen=True)
class Requirement:
    id: str
    feature: str
    group: str
    section: str
    text: str


@dataclass(frozen=True)
class Feature:
    name: str
    file: str
    description: str
    requirements: tuple[Requirement, ...]


@dataclass(frozen=True)
class ParamType:
    """A named string type (``parameter_types`` in the table): its bounds written once, for every
    parameter (or array item) whose ``type`` names it."""

    name: str
    description: str
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    pattern_hint: str | None = None

    @property
    def alias(self) -> str:
        return _camel(self.name)


@dataclass(frozen=True)
class Param:
    name: str
    type: str
    nullable: bool
    description: str
    required: bool = False
    enum: tuple[str, ...] = ()
    default: Any = None
    minimum: int | None = None
    maximum: int | None = None
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    #: What a value matching ``pattern`` is, in words: error messages never show the regex.
    pattern_hint: str | None = None
    items: dict[str, Any] = field(default_factory=dict)
    min_items: int | None = None
    max_items: int | None = None
    implements: tuple[str, ...] = ()
    #: The alias of the named type (``ParamType``) of the value, or of each item of an array.
    named: str | None = None
    items_named: str | None = None


@dataclass(frozen=True)
class Mode:
    value: str
    requires: tuple[str, ...]
    accepts: tuple[str, ...]
    implements: tuple[str, ...]
    #: At least one of these must be given (a change needs something to change).
    requires_one_of: tuple[str, ...] = ()
    #: Parameter -> the sentence that helps an agent recover from a problem with it in this mode.
    hints: dict[str, str] = field(default_factory=dict)

    @property
    def uses(self) -> tuple[str, ...]:
        return (*self.requires, *self.accepts)


@dataclass(frozen=True)
class OutputField:
    name: str
    type: str
    description: str
    required: bool
    ref: str | None = None  # a named type, for object fields and array items
    items: str | None = None  # a scalar type or a named type, for arrays


@dataclass(frozen=True)
class ObjectType:
    name: str
    description: str
    fields: tuple[OutputField, ...]


@dataclass(frozen=True)
class Tool:
    name: str
    title: str
    description: str
    annotations: dict[str, bool]
    implements: tuple[str, ...]
    params: tuple[Param, ...]
    mode: str | None
    modes: tuple[Mode, ...]
    output: tuple[OutputField, ...]

    @property
    def class_prefix(self) -> str:
        return _camel(self.name)

    def mode_class(self, mode: Mode) -> str:
        """The model of one mode, e.g. ReadRecipes or ChangeShoppingListUpdateItem."""
        return self.class_prefix + _camel(mode.value)

    @property
    def params_by_name(self) -> dict[str, Param]:
        return {p.name: p for p in self.params}


def _camel(snake: str) -> str:
    return "".join(part.capitalize() for part in snake.split("_"))


@dataclass(frozen=True)
class Table:
    server_name: str
    instructions: str
    server_implements: tuple[str, ...]
    types: tuple[ObjectType, ...]
    tools: tuple[Tool, ...]
    #: Output fields every tool's structured output has besides its own.
    result_fields: tuple[OutputField, ...] = ()
    parameter_types: tuple[ParamType, ...] = ()


def load_features(directory: Path) -> tuple[Feature, ...]:
    """Every ``*.feature.yaml`` in ``directory``, in file-name order."""
    features = []
    seen: dict[str, Path] = {}
    for path in sorted(directory.glob("*.feature.yaml")):
        doc = load(path)
        only_keys(doc, {"feature", *GROUP_SECTIONS})
        head = child_mapping(doc, "feature")
        only_keys(head, {"name", "product", "description"})
        name = required_text(head, "name")
        requirements = []
        for section in GROUP_SECTIONS:
            groups = doc.get(section) or Located()
            for group, body in groups.items():
                if not isinstance(body, Located):
                    raise groups.error(group, f"group {group} must be a mapping with 'requirements'")
                only_keys(body, {"requirements"})
                reqs = child_mapping(body, "requirements")
                for key, text in reqs.items():
                    rid = f"{name}.{group}.{key}"
                    if rid in seen:
                        raise reqs.error(key, f"duplicate requirement ID {rid} (also in {seen[rid]})")
                    if not isinstance(text, str) or not text.strip():
                        raise reqs.error(key, f"requirement {rid} needs a text")
                    seen[rid] = path
                    requirements.append(Requirement(rid, name, str(group), section, text))
        features.append(Feature(name, path.name, str(head.get("description", "")), tuple(requirements)))
    if not features:
        raise SpecError(directory, None, "no *.feature.yaml files found")
    return tuple(features)


def load_table(path: Path, requirement_ids: set[str], settings: Mapping[str, object] | None = None) -> Table:
    """The tool schema table, checked against the requirement IDs; ``settings``: each setting's
    default, for ``{settings.NAME}`` in descriptions (default: the settings table's)."""
    if settings is None:
        from cooked_mcp.config import DECLARED

        settings = {name: declared.default for name, declared in DECLARED.items()}
    doc = load(path)
    only_keys(doc, {"server", "parameter_types", "types", "result_fields", "tools"})
    server = child_mapping(doc, "server")
    only_keys(server, {"name", "instructions", "implements"})
    types = tuple(
        _object_type(name, body, doc["types"]) for name, body in child_mapping(doc, "types").items()
    )
    type_names = {t.name for t in types}
    for object_type in types:
        for f in object_type.fields:
            _check_ref(f, type_names, doc["types"][object_type.name]["fields"])
    named = {}
    if "parameter_types" in doc:
        named_map = child_mapping(doc, "parameter_types")
        named = {str(n): _param_type(str(n), body, named_map) for n, body in named_map.items()}
    tools_map = child_mapping(doc, "tools")
    tools = tuple(
        _tool(name, body, tools_map, type_names, settings, named) for name, body in tools_map.items()
    )
    common: tuple[OutputField, ...] = ()
    if "result_fields" in doc:
        common_map = child_mapping(doc, "result_fields")
        common = tuple(_output_field(f, fbody, common_map) for f, fbody in common_map.items())
        for f in common:
            _check_ref(f, type_names, common_map)
            for tool in tools:
                if f.name in {own.name for own in tool.output}:
                    raise common_map.error(
                        f.name, f"result field {f.name} is also an output field of {tool.name}"
                    )
    table = Table(
        server_name=required_text(server, "name"),
        instructions=required_text(server, "instructions"),
        server_implements=_ids(server, "implements"),
        types=types,
        tools=tools,
        result_fields=common,
        parameter_types=tuple(named.values()),
    )
    check_citations(doc, requirement_ids)
    return table


def _tool(
    name: str,
    body: Any,
    parent: Located,
    type_names: set[str],
    settings: Mapping[str, object],
    named: Mapping[str, ParamType],
) -> Tool:
    if not isinstance(body, Located):
        raise parent.error(name, f"tool {name} must be a mapping")
    if not TOOL_NAME.match(name):
        raise parent.error(name, f"tool name {name!r} must be short snake_case")
    only_keys(
        body,
        {"title", "description", "annotations", "implements", "mode", "parameters", "modes", "output"},
    )
    annotations = child_mapping(body, "annotations")
    only_keys(annotations, set(ANNOTATION_KEYS))
    for key in ANNOTATION_KEYS:
        if not isinstance(annotations.get(key), bool):
            raise annotations.error(key, f"{name}: annotation {key} must be true or false")
    params_map = child_mapping(body, "parameters")
    params = tuple(_param(pname, pbody, params_map, named) for pname, pbody in params_map.items())
    values = {p.name: p for p in params}
    params = tuple(
        replace(p, description=_filled(p.description, values, settings, params_map[p.name])) for p in params
    )
    by_name = {p.name: p for p in params}
    mode = body.get("mode")
    modes: tuple[Mode, ...] = ()
    if mode is not None:
        if mode not in by_name or not by_name[mode].enum:
            raise body.error("mode", f"{name}: mode {mode!r} must name an enum parameter")
        modes_map = child_mapping(body, "modes")
        for value in by_name[mode].enum:
            if value not in modes_map:
                raise modes_map.error(None, f"{name}: {mode} value {value!r} has no required-parameter rule")
        modes = tuple(_mode(value, mbody, modes_map, by_name, mode) for value, mbody in modes_map.items())
        for value in modes_map:
            if value not in by_name[mode].enum:
                raise modes_map.error(value, f"{name}: {value!r} is not a value of {mode}")
        if not by_name[mode].required:
            by_name[mode] = _replace_required(by_name[mode])
            params = tuple(by_name[p.name] for p in params)
    elif "modes" in body:
        raise body.error("modes", f"{name}: modes need a mode parameter")
    output_map = child_mapping(body, "output")
    output = tuple(_output_field(fname, fbody, output_map) for fname, fbody in output_map.items())
    for f in output:
        _check_ref(f, type_names, output_map)
    return Tool(
        name=name,
        title=required_text(body, "title"),
        description=_filled(_description(body), values, settings, body),
        annotations={k: bool(annotations[k]) for k in ANNOTATION_KEYS},
        implements=_ids(body, "implements"),
        params=params,
        mode=mode,
        modes=modes,
        output=output,
    )


def _filled(text: str, params: Mapping[str, Param], settings: Mapping[str, object], node: Located) -> str:
    """``text`` with each ``{parameter.key}`` and ``{settings.name}`` replaced by the value it names."""

    def value(match: re.Match[str]) -> str:
        owner, key = match.groups()
        if owner == "settings":
            found = settings.get(key)
        else:
            p = params.get(owner)
            found = getattr(p, _REFERABLE[key]) if p is not None and key in _REFERABLE else None
        if found is None:
            raise node.error(
                "description",
                f"{match.group(0)} names no value (a parameter of this tool and one of "
                f"{', '.join(_REFERABLE)}, or settings.NAME)",
            )
        return f"{found:g}" if isinstance(found, float) else str(found)

    return REFERENCE.sub(value, text)


def _replace_required(param: Param) -> Param:
    return Param(**{**param.__dict__, "required": True})


_STRING_BOUNDS = ("minLength", "maxLength", "pattern", "patternHint")


def _param_type(name: str, body: Any, parent: Located) -> ParamType:
    if not isinstance(body, Located):
        raise parent.error(name, f"parameter type {name} must be a mapping")
    only_keys(body, {"type", "description", *_STRING_BOUNDS})
    if body.get("type") != "string":
        raise body.error("type", f"parameter type {name}: type must be string")
    if "patternHint" in body and "pattern" not in body:
        raise body.error("patternHint", f"parameter type {name}: patternHint needs a pattern")
    return ParamType(
        name=name,
        description=required_text(body, "description"),
        min_length=body.get("minLength"),
        max_length=body.get("maxLength"),
        pattern=body.get("pattern"),
        pattern_hint=required_text(body, "patternHint") if "patternHint" in body else None,
    )


def _named_type(body: Located, named: Mapping[str, ParamType], what: str) -> ParamType | None:
    """The named type ``body``'s ``type`` names (whose bounds ``body`` may not restate), if any."""
    raw = body.get("type")
    found = next((named[str(t)] for t in (raw if isinstance(raw, list) else [raw]) if t in named), None)
    if found is not None:
        for key in _STRING_BOUNDS:
            if key in body:
                raise body.error(key, f"{what}: {key} comes from its type {found.name}; remove it here")
    return found


def _param(name: str, body: Any, parent: Located, named: Mapping[str, ParamType]) -> Param:
    if not isinstance(body, Located):
        raise parent.error(name, f"parameter {name} must be a mapping")
    only_keys(
        body,
        {
            "type",
            "description",
            "required",
            "enum",
            "default",
            "minimum",
            "maximum",
            "minLength",
            "maxLength",
            "pattern",
            "patternHint",
            "items",
            "minItems",
            "maxItems",
            "implements",
        },
    )
    own = _named_type(body, named, f"parameter {name}")
    raw_type = body.get("type")
    types = raw_type if isinstance(raw_type, list) else [raw_type]
    if own is not None:
        types = ["string" if t == own.name else t for t in types]
    nullable = "null" in types
    base = [t for t in types if t != "null"]
    if len(base) != 1 or base[0] not in PARAM_TYPES:
        allowed = ", ".join(sorted(PARAM_TYPES))
        raise body.error("type", f"parameter {name}: type must be one of {allowed}, optionally with null")
    enum = body.get("enum", [])
    if not isinstance(enum, list) or not all(isinstance(v, str) for v in enum):
        raise body.error("enum", f"parameter {name}: enum must be a list of strings")
    if "patternHint" in body and "pattern" not in body:
        raise body.error("patternHint", f"parameter {name}: patternHint needs a pattern")
    if "default" in body and body.get("required"):
        raise body.error("default", f"parameter {name}: a required parameter takes no default")
    items = body.get("items", {})
    items_type = (
        _named_type(items, named, f"parameter {name}'s items") if isinstance(items, Located) else None
    )
    if items_type is not None:
        items = {"type": "string", **_bounds_of(items_type)}
    if base[0] == "array" and (not isinstance(items, dict) or items.get("type") != "string"):
        raise body.error("type", f"parameter {name}: arrays must have items of type string")
    return Param(
        name=name,
        type=base[0],
        nullable=nullable,
        description=_description(body),
        required=bool(body.get("required", False)),
        enum=tuple(enum),
        default=body.get("default"),
        minimum=body.get("minimum"),
        maximum=body.get("maximum"),
        min_length=own.min_length if own else body.get("minLength"),
        max_length=own.max_length if own else body.get("maxLength"),
        pattern=own.pattern if own else body.get("pattern"),
        pattern_hint=own.pattern_hint
        if own
        else required_text(body, "patternHint")
        if "patternHint" in body
        else None,
        items=dict(items),
        min_items=body.get("minItems"),
        max_items=body.get("maxItems"),
        implements=_ids(body, "implements"),
        named=own.alias if own else None,
        items_named=items_type.alias if items_type else None,
    )


def _bounds_of(named: ParamType) -> dict[str, Any]:
    """A named type's bounds as table keys (how an array's ``items`` spells them)."""
    bounds = {"minLength": named.min_length, "maxLength": named.max_length, "pattern": named.pattern}
    return {key: value for key, value in bounds.items() if value is not None}


def _mode(value: str, body: Any, parent: Located, params: dict[str, Param], mode: str) -> Mode:
    if not isinstance(body, Located):
        raise parent.error(value, f"mode {value} must be a mapping (use {{}} when nothing is required)")
    only_keys(body, {"requires", "accepts", "implements", "requires_one_of", "hints"})
    requires, accepts = _names(body, "requires"), _names(body, "accepts")
    for pname in (*requires, *accepts):
        if pname not in params or pname == mode:
            raise body.error(None, f"mode {value}: {pname!r} is not a parameter")
    for pname in requires:
        if params[pname].default is not None:
            raise body.error(None, f"mode {value}: {pname!r} has a default, so it can only be accepted")
    one_of = _names(body, "requires_one_of")
    for pname in one_of:
        if pname not in accepts:
            raise body.error(
                "requires_one_of", f"mode {value}: {pname!r} must be one of its accepted parameters"
            )
    hints_map = body.get("hints", Located())
    if not isinstance(hints_map, Located):
        raise body.error("hints", f"mode {value}: hints must map parameter names to sentences")
    for pname in hints_map:
        if pname not in params or pname == mode:
            raise hints_map.error(pname, f"mode {value}: hint for {pname!r}, which is not a parameter")
    hints = {str(pname): required_text(hints_map, pname) for pname in hints_map}
    return Mode(value, requires, accepts, _ids(body, "implements"), one_of, hints)


def _object_type(name: str, body: Any, parent: Located) -> ObjectType:
    if not isinstance(body, Located):
        raise parent.error(name, f"type {name} must be a mapping")
    only_keys(body, {"description", "fields"})
    fields_map = child_mapping(body, "fields")
    return ObjectType(
        name=name,
        description=required_text(body, "description"),
        fields=tuple(_output_field(f, fbody, fields_map) for f, fbody in fields_map.items()),
    )


def _output_field(name: str, body: Any, parent: Located) -> OutputField:
    if not isinstance(body, Located):
        raise parent.error(name, f"output field {name} must be a mapping")
    only_keys(body, {"type", "description", "required", "ref", "items"})
    kind = body.get("type")
    if kind not in OUTPUT_TYPES:
        raise body.error("type", f"output field {name}: type must be one of {sorted(OUTPUT_TYPES)}")
    if kind == "object" and "ref" not in body:
        raise body.error("type", f"output field {name}: an object needs a ref to a named type")
    if kind == "array" and "items" not in body:
        raise body.error("type", f"output field {name}: an array needs items")
    return OutputField(
        name=name,
        type=kind,
        description=required_text(body, "description"),
        required=bool(body.get("required", False)),
        ref=body.get("ref"),
        items=body.get("items"),
    )


def _check_ref(f: OutputField, type_names: set[str], where: Located) -> None:
    for target in (f.ref, f.items):
        if target is not None and target not in type_names and target not in {"string", "integer", "boolean"}:
            raise where.error(f.name, f"output field {f.name}: unknown type {target!r}")


def check_citations(node: Any, requirement_ids: set[str]) -> None:
    """Every ``implements`` list anywhere in the table must cite existing IDs."""
    if isinstance(node, Located):
        for key, value in node.items():
            if key == "implements":
                for rid in value or []:
                    if rid not in requirement_ids:
                        raise node.error(key, f"unknown requirement ID {rid!r}")
            else:
                check_citations(value, requirement_ids)


def only_keys(node: Located, allowed: Iterable[str]) -> None:
    allowed = set(allowed)
    for key in node:
        if key not in allowed:
            raise node.error(key, f"unknown key {key!r} (allowed: {', '.join(sorted(allowed))})")


def child_mapping(node: Located, key: str) -> Located:
    value = node.get(key)
    if not isinstance(value, Located):
        raise node.error(key if key in node else None, f"{key!r} must be a mapping")
    return value


def required_text(node: Located, key: str) -> str:
    value = node.get(key)
    if not isinstance(value, str) or not value.strip():
        raise node.error(key if key in node else None, f"{key!r} must be a non-empty string")
    return value


def _description(node: Located) -> str:
    """A tool's or parameter's description, within every LLM API's limit."""
    text = required_text(node, "description")
    if len(text) > MAX_DESCRIPTION:
        raise node.error(
            "description",
            f"description is {len(text)} characters, more than the {MAX_DESCRIPTION} OpenAI's function "
            "declarations take; move detail into parameter descriptions or the result's next-step text",
        )
    return text


def _names(node: Located, key: str) -> tuple[str, ...]:
    value = node.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise node.error(key, f"{key!r} must be a list of names")
    return tuple(value)


def _ids(node: Located, key: str) -> tuple[str, ...]:
    return _names(node, key)
