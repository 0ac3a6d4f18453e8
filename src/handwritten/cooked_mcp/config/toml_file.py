"""The TOML config file: found, read and checked against its schema; every mistake names ``path:line``, never a value."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from cooked_mcp.exceptions import ConfigError
from cooked_mcp.text import printable

from .table import Declared, Origin

# Built at the first file checked, not at import: most starts have no file (start-up time).
_STRICT = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True)


class _Table(BaseModel):
    model_config = _STRICT


# implements: authentication.CREDENTIALS.13, authentication.CREDENTIALS.14, authentication.CREDENTIALS.15
def schema(settings: Iterable[Declared]) -> dict[str, type[BaseModel]]:
    """Every table and key the file may hold, typed, in order; a model-typed setting is a table of its own."""
    tables: dict[str, dict[str, Any]] = {}
    nested: dict[str, type[BaseModel]] = {}
    for d in settings:
        if d.table is None or d.key is None:
            continue
        keys = tables.setdefault(d.table, {})
        if isinstance(d.annotation, type) and issubclass(d.annotation, BaseModel):
            name = f"{d.table}.{d.key}"
            nested[name] = type(f"_{d.annotation.__name__}", (d.annotation,), {"model_config": _STRICT})
            holding = ", ".join(d.annotation.model_fields)
            keys[d.key] = _typed(dict[str, object], f"a table ([{name}]) holding {holding}")
        else:
            origin = getattr(d.annotation, "__origin__", d.annotation)
            keys[d.key] = _typed(*_TOML_TYPES.get(origin, (str, "a string")))
        if d.command:
            keys[f"{d.key}_cmd"] = _typed(str, "a string")
    models = {
        table: create_model(f"_{table.title()}", __base__=_Table, **keys) for table, keys in tables.items()
    }
    return models | nested


#: The strict TOML type a setting of each Python type takes, named as a message names it.
_TOML_TYPES: dict[object, tuple[Any, str]] = {
    bool: (bool, "a boolean (true or false)"),
    float: (float, "a number of seconds"),
    int: (int, "a whole number"),
    tuple: (list[str], "a list of strings"),
}


def _typed(toml: Any, description: str) -> tuple[Any, None]:
    return Annotated[toml | None, Field(description=description)], None


@dataclass(frozen=True)
class TomlFile:
    """The parsed, schema-checked file (or none), able to say where a key was written."""

    path: Path | None
    text: str = ""
    data: Mapping[str, Mapping[str, object]] | None = None

    def get(self, table: str, key: str) -> object | None:
        return (self.data or {}).get(table, {}).get(key)

    def where(self, table: str | None, key: str | None) -> str:
        """``path:line`` of a key (or, failing that, its table, as for an inline ``limits = {...}``)."""
        line = _find_line(self.text, table, key)
        if line is None and table is not None:
            # A sub-table's own header, the sub-table inline in its parent, the table, the parent.
            parent, _, name = table.rpartition(".")
            candidates = [
                (f"{table}.{key}" if key else "", None),
                (parent, name),
                (table, None),
                (parent, None),
            ]
            line = next(
                (n for t, k in candidates if t and (n := _find_line(self.text, t, k)) is not None), None
            )
        return f"{self.path}:{line}" if line is not None else str(self.path)

    def origin(self, table: str, key: str) -> Origin:
        return Origin(f"{table}.{key}", "file", self.where(table, key))


# implements: server.CONFIG.7, server.CONFIG.7-1
def default_config_path(environ: Mapping[str, str]) -> Path | None:
    """XDG base-directory rules: a relative XDG_CONFIG_HOME is invalid and ignored."""
    xdg = environ.get("XDG_CONFIG_HOME", "")
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / "cooked-mcp" / "config.toml"
    home = environ.get("HOME", "")
    return Path(home) / ".config" / "cooked-mcp" / "config.toml" if home else None


# implements: server.CONFIG.2, server.CONFIG.6
def read_file(config_path: str | None, environ: Mapping[str, str], settings: Iterable[Declared]) -> TomlFile:
    """The file ``--config`` names (it must exist), else the default one if it exists, checked
    against the keys ``settings`` declare."""
    if config_path is not None:
        path = Path(config_path)
        if not path.exists():
            raise ConfigError(f"config file {path} does not exist: check the --config path")
    else:
        default = default_config_path(environ)
        if default is None or not default.exists():
            return TomlFile(path=None)
        path = default
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ConfigError(
            f"cannot read config file {path}: {reason}; check the path and its permissions"
        ) from None
    except UnicodeDecodeError:
        raise ConfigError(f"config file {path} is not valid UTF-8 text: save it as UTF-8") from None
    import tomllib  # here, not at the top: most starts have no file (start-up time)

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(_syntax_message(path, str(exc))) from None
    file = TomlFile(path=path, text=text, data=data)
    _check_schema(file, data, schema(settings))
    return file


def _syntax_message(path: Path, message: str) -> str:
    """tomllib (3.11) puts the position in the message: move it up front as ``path:line:col``."""
    match = re.search(r"\s*\(at (?:line (\d+), column (\d+)|(end of document))\)\s*$", message)
    reason = message[: match.start()] if match else message
    where = str(path)
    if match and match.group(3):
        where += " (at the end)"
    elif match:
        where += f":{match.group(1)}:{match.group(2)}"
    return f"{where}: invalid TOML: {printable(reason)}; fix the syntax there"


def _check_schema(file: TomlFile, data: Mapping[str, object], tables: Mapping[str, type[BaseModel]]) -> None:
    """The first mistake in document order, as ``path:line: what is wrong, how to fix it``."""
    known_tables = ", ".join(f"[{name}]" for name in tables if "." not in name)
    for table, content in data.items():
        model = tables.get(table) if "." not in table else None  # a sub-table only in its parent
        if model is None and isinstance(content, dict):
            raise ConfigError(
                f"{file.where(table, None)}: unknown table [{printable(table)}]: remove it or fix its name "
                f"(known tables: {known_tables})"
            )
        if model is None:
            raise ConfigError(
                f"{file.where(None, table)}: unknown key {printable(table)}: remove it or move it into "
                f"one of the tables {known_tables}"
            )
        _check_table(file, table, content, model, tables)


def _check_table(
    file: TomlFile, table: str, content: object, model: type[BaseModel], tables: Mapping[str, type[BaseModel]]
) -> None:
    keys = list(model.model_fields)
    if not isinstance(content, dict):
        raise ConfigError(
            f"{file.where(table, None)}: {table} must be a table ([{table}]) holding {', '.join(keys)}"
        )
    try:
        model.model_validate(content)
    except ValidationError as exc:
        errors = [(str(error["loc"][0]), error["type"]) for error in exc.errors()]
        key, kind = min(errors, key=lambda error: _find_line(file.text, table, error[0]) or 0)
        if kind == "extra_forbidden":
            raise ConfigError(
                f"{file.where(table, key)}: unknown key {table}.{printable(key)}: remove it or fix its "
                f"spelling (known keys in [{table}]: {', '.join(keys)})"
            ) from None
        expected = model.model_fields[key].description
        raise ConfigError(f"{file.where(table, key)}: {table}.{key} must be {expected}") from None
    for key, value in content.items():
        inner = tables.get(f"{table}.{key}")
        if inner is not None:
            _check_table(file, f"{table}.{key}", value, inner, tables)


_HEADER = re.compile(r"^\s*\[\[?\s*([^\[\]#]+?)\s*\]\]?\s*(?:#.*)?$")


def _find_line(text: str, table: str | None, key: str | None) -> int | None:
    """Where ``[table] key =``, ``table.key =`` or the table is written: tomllib gives no positions, so scan."""
    current: str | None = None
    for number, line in enumerate(text.split("\n"), 1):
        if header := _HEADER.match(line):
            current = ".".join(part.strip().strip("\"'") for part in header.group(1).split("."))
            if key is None and current == table:
                return number
        elif key is None:
            if current is None and table is not None and _assigns(line, table, then="[=.]"):
                return number
        elif (current == table and _assigns(line, key)) or (
            current is None and table is not None and _assigns(line, table, key)
        ):
            return number
    return None


def _assigns(line: str, *names: str, then: str = "=") -> bool:
    """Whether ``line`` starts with the dotted key ``names`` (each bare or quoted), then ``then``."""
    keys = "\\s*\\.\\s*".join(f"(?:{re.escape(n)}|\"{re.escape(n)}\"|'{re.escape(n)}')" for n in names)
    return re.match(f"^\\s*{keys}\\s*{then}", line) is not None
