"""``load_settings``: flags over environment over the TOML file over defaults, each value remembering
where it came from, and every refusal one line naming the source that won (a stale shell variable
beating the file is the usual confusion) or, for the file, its ``path:line``, never a value.
Unsafe or probably mistaken set-ups are warned about, not refused.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic_core import ErrorDetails

from cooked_mcp.exceptions import ConfigError
from cooked_mcp.text import ASCII_WHITESPACE, printable

from .settings import DECLARED, Command, Settings, environment_variables
from .table import DEFAULT, Declared, Origin


@dataclass(frozen=True)
class Layer:
    """One place settings come from: its values, and where in it each value was."""

    values: dict[str, object]
    origins: Mapping[str, Origin]


# implements: server.CONFIG.1, server.CONFIG.2
def load_settings(
    *,
    config_path: str | None,
    environ: Mapping[str, str],
    transport: str | None = None,
    http_addr: str | None = None,
    public_url: str | None = None,
) -> Settings:
    """The settings, or ``ConfigError``; without ``config_path`` the XDG default file, if any, is read."""
    file = read_file(config_path, environ, DECLARED.values())
    given = {"transport": transport, "http_addr": http_addr, "public_url": public_url}
    chosen: dict[str, object] = {setting: value for setting, value in given.items() if value is not None}
    flags = Layer(chosen, {setting: Origin(str(DECLARED[setting].flag), "flag") for setting in chosen})
    from_file = _config_file(file)
    ordered = (flags, _environment(environ), from_file)
    # A public URL from any source means HTTP (remote mode), whose settings warn of an unused token.
    http = transport == "http" or any("public_url" in layer.values for layer in ordered)
    if not http:
        # A stdio server has no use for the file's token: past the checks every transport shares
        # (set once, not empty), its shape is not checked, as the token is never used.
        from_file.values.pop("http_token", None)
    merged: dict[str, object] = {}
    origins: dict[str, Origin] = {}
    for layer in reversed(ordered):  # the first layer that has a setting wins
        merged.update(layer.values)
        origins.update(layer.origins)
    # A stdio server has no token, so its settings name no source for one.
    sources = {setting: origin for setting, origin in origins.items() if setting != "http_token" or http}
    provenance = {
        "config_file": file.path,
        "sources": sources,
        "overridden": {
            setting: str(origin)
            for setting, origin in from_file.origins.items()
            if sources.get(setting, DEFAULT) not in (origin, DEFAULT)
        },
        "warnings": (*file_permission_warnings(file), *unknown_variable_warnings(environ)),
    }
    try:
        return Settings(**merged, **provenance)
    except ValidationError as exc:
        raise ConfigError(_refusal(exc.errors(), origins, file, environ)) from None


# implements: server.CONFIG.3
def _environment(environ: Mapping[str, str]) -> Layer:
    """An empty variable counts as unset, except the bearer token: an empty one is always a mistake."""
    values: dict[str, object] = {}
    variables = {d.name: d.env for d in DECLARED.values() if d.env}
    for setting, name in variables.items():
        value = environ.get(name, "")
        if setting == "username":
            # Like a command's output: a username never has surrounding whitespace, a paste often does.
            value = value.strip(ASCII_WHITESPACE)
        if value or (setting == "http_token" and name in environ):
            values[setting] = value
    return Layer(values, {setting: Origin(variables[setting], "environment") for setting in values})


# implements: authentication.CREDENTIALS.8, authentication.CREDENTIALS.8-1, authentication.CREDENTIALS.8-2, server.SECURITY.8
def _config_file(file: TomlFile) -> Layer:
    """``table.key`` or ``table.key_cmd``: both at once, or an empty one, is refused even when the
    environment wins, so a mistake in a shared file shows up whatever the shell sets."""
    values: dict[str, object] = {}
    origins: dict[str, Origin] = {}
    for d in DECLARED.values():
        if d.table is None or d.key is None:
            continue
        table, key = d.table, d.key
        value, command = file.get(table, key), file.get(table, f"{key}_cmd") if d.command else None
        if value is not None and command is not None:
            raise ConfigError(
                f"{file.where(table, f'{key}_cmd')}: {table}.{key} and {table}.{key}_cmd are both set; "
                "keep only one of them"
            )
        if command is not None:
            origin = origins[d.name] = file.origin(table, f"{key}_cmd")
            if not str(command).strip(ASCII_WHITESPACE):
                raise ConfigError(f"{origin.where}: {table}.{key}_cmd is empty: set a command or remove it")
            values[d.name] = Command(origin, str(command))
        elif value is not None:
            if d.command and isinstance(value, str) and not value.strip(ASCII_WHITESPACE):
                raise ConfigError(
                    f"{file.where(table, key)}: {table}.{key} is empty: set a value or remove it"
                )
            values[d.name], origins[d.name] = value, file.origin(table, key)
    return Layer(values, origins)


def _refusal(
    errors: list[ErrorDetails], sources: Mapping[str, Origin], file: TomlFile, environ: Mapping[str, str]
) -> str:
    """The first problem; missing credentials are reported together, so one run names them all."""
    missing = [
        str(e["loc"][0])
        for e in errors
        if e["type"] == "missing" and e["loc"] and e["loc"][0] in ("username", "password")
    ]
    if missing and errors[0]["loc"] and errors[0]["loc"][0] in missing:
        return _missing_credentials(missing, file, environ)
    error = errors[0]
    cause = error.get("ctx", {}).get("error")
    problem = str(cause) if isinstance(cause, ValueError) else error["msg"]
    if not error["loc"]:
        return problem  # a rule between settings: its validator wrote the whole sentence
    setting = str(error["loc"][0])
    origin = sources.get(setting, DEFAULT)
    declared = DECLARED.get(setting)
    return (declared.refusal if declared else "{source}: {problem}").format(
        source=origin,
        where=origin.where,
        name=origin.name,
        problem=problem,
        input=printable(error.get("input")),
        default=declared.default if declared else None,
    )


# implements: authentication.CREDENTIALS.9
def _missing_credentials(missing: list[str], file: TomlFile, environ: Mapping[str, str]) -> str:
    """Every way to set each missing credential, and a set variable that looks like a misspelling of one."""
    location = file.path or default_config_path(environ) or "the config file (--config)"
    variables = " and ".join(str(DECLARED[s].env) for s in missing)
    keys = " and ".join(str(DECLARED[s].file_key) for s in missing)
    commands = " and ".join(f"{DECLARED[s].file_key}_cmd" for s in missing)
    message = f"no Cooked {' or '.join(missing)} configured: set {variables}, or {keys} (or {commands}) in {location}"
    wanted = {DECLARED[s].env for s in missing}
    for name, nearest in misspelt_variables(environ).items():
        if nearest in wanted:
            message += f"; {printable(name)} is set but is not a cooked-mcp setting (did you mean {nearest}?)"
    return message


def file_permission_warnings(file: TomlFile) -> list[str]:
    """A plaintext secret others can read, or a command others can change: warned (one ``stat``), not refused."""
    if file.path is None:
        return []
    try:
        info = file.path.stat()
    except OSError:
        return []
    foreign_owner = hasattr(os, "geteuid") and info.st_uid != os.geteuid()
    files = [d for d in DECLARED.values() if d.table and d.key]
    secrets = [d.file_key for d in files if d.secret and file.get(str(d.table), str(d.key)) is not None]
    commands = [
        f"{d.file_key}_cmd" for d in files if d.command and file.get(str(d.table), f"{d.key}_cmd") is not None
    ]
    fix = f"run chmod 600 {file.path} (and own it yourself)"
    if secrets and (foreign_owner or info.st_mode & (stat.S_IRWXG | stat.S_IRWXO)):
        who = "is owned by another user" if foreign_owner else "other users can read it"
        return [f"{file.path} holds {' and '.join(map(str, secrets))} in plain text and {who}: {fix}"]
    if commands and not secrets and (foreign_owner or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)):
        who = "is owned by another user" if foreign_owner else "other users can change it"
        return [
            f"{file.path} runs {' and '.join(commands)} and {who}, so they choose what runs as you: {fix}"
        ]
    return []


def misspelt_variables(environ: Mapping[str, str]) -> dict[str, str | None]:
    """Each ``COOKED_*`` variable that is no setting, with the setting's variable it is nearest to."""
    known = environment_variables()
    unknown = sorted(name for name in environ if name.startswith("COOKED_") and name not in known)
    if not unknown:
        return {}
    import difflib  # here, not at the top: only a misspelling needs it (start-up time)

    return {
        name: next(iter(difflib.get_close_matches(name, known, n=1, cutoff=0.6)), None) for name in unknown
    }


def unknown_variable_warnings(environ: Mapping[str, str]) -> list[str]:
    """A misspelt variable is otherwise silently ignored, and the setting falls back to the file."""
    return [
        f"environment variable {printable(name)} is not a cooked-mcp setting: "
        + (f"did you mean {nearest}?" if nearest else "see cooked-mcp --help for the names")
        for name, nearest in misspelt_variables(environ).items()
    ]


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
