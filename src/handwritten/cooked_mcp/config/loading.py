"""Flags over environment over the TOML file over defaults. Each refusal is one line naming the source
that won (a stale shell variable beating the file is the usual confusion) or the file's ``path:line``,
never a value."""

from __future__ import annotations

import functools
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic_core import ErrorDetails

from cooked_mcp.exceptions import ConfigError
from cooked_mcp.text import ASCII_WHITESPACE, printable

from .settings import DECLARED, DEFAULT, Command, Origin, Settings, environment_variables

#: Each setting a source sets: its value, and where in the source it was.
Layer = dict[str, tuple[object, Origin]]


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
    file = read_file(config_path, environ)
    given = {"transport": transport, "http_addr": http_addr, "public_url": public_url}
    flags = {
        s: (value, Origin(str(DECLARED[s].flag), "flag")) for s, value in given.items() if value is not None
    }
    from_file = _config_file(file)
    warnings = (*file_permission_warnings(file, from_file), *unknown_variable_warnings(environ))
    layers = (flags, _environment(environ), from_file)
    # A public URL from any source means HTTP (remote mode), whose settings warn of an unused token.
    http = transport == "http" or any("public_url" in layer for layer in layers)
    if not http:
        # A stdio server never uses the file's token: only the shared checks (set once, not empty) apply.
        from_file.pop("http_token", None)
    chosen: Layer = {}
    for layer in reversed(layers):  # the first layer that has a setting wins
        chosen.update(layer)
    origins = {setting: origin for setting, (_, origin) in chosen.items()}
    # A stdio server has no token, so its settings name no source for one.
    sources = {setting: origin for setting, origin in origins.items() if setting != "http_token" or http}
    provenance = {
        "config_file": file.path,
        "sources": sources,
        "overridden": {
            setting: str(origin)
            for setting, (_, origin) in from_file.items()
            if sources.get(setting, DEFAULT) not in (origin, DEFAULT)
        },
        "warnings": warnings,
    }
    try:
        return Settings(**{setting: value for setting, (value, _) in chosen.items()}, **provenance)
    except ValidationError as exc:
        raise ConfigError(_refusal(exc.errors(), origins, file, environ)) from None


# implements: server.CONFIG.3
def _environment(environ: Mapping[str, str]) -> Layer:
    """An empty variable counts as unset, except the bearer token: an empty one is always a mistake."""
    layer: Layer = {}
    for d in DECLARED.values():
        if d.env is None:
            continue
        value = environ.get(d.env, "")
        if d.name == "username":
            # Like a command's output: a username never has surrounding whitespace, a paste often does.
            value = value.strip(ASCII_WHITESPACE)
        if value or (d.name == "http_token" and d.env in environ):
            layer[d.name] = (value, Origin(d.env, "environment"))
    return layer


# implements: authentication.CREDENTIALS.8, authentication.CREDENTIALS.8-1, authentication.CREDENTIALS.8-2, server.SECURITY.8
def _config_file(file: TomlFile) -> Layer:
    """``table.key`` or ``table.key_cmd``: both at once, or an empty one, is refused even when the
    environment wins, so a mistake in a shared file shows up whatever the shell sets."""
    layer: Layer = {}
    for d in DECLARED.values():
        if d.table is None or d.key is None:
            continue
        table, key, cmd = d.table, d.key, f"{d.key}_cmd"
        value, command = file.get(table, key), file.get(table, cmd) if d.command else None
        if value is not None and command is not None:
            raise ConfigError(
                f"{file.where(table, cmd)}: {table}.{key} and {table}.{cmd} are both set; keep only one of them"
            )
        if command is not None:
            origin = file.origin(table, cmd)
            if not str(command).strip(ASCII_WHITESPACE):
                raise ConfigError(f"{origin.where}: {table}.{cmd} is empty: set a command or remove it")
            layer[d.name] = (Command(origin, str(command)), origin)
        elif value is not None:
            if d.command and isinstance(value, str) and not value.strip(ASCII_WHITESPACE):
                raise ConfigError(
                    f"{file.where(table, key)}: {table}.{key} is empty: set a value or remove it"
                )
            layer[d.name] = (value, file.origin(table, key))
    return layer


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
    declared = DECLARED[str(error["loc"][0])]
    origin = sources.get(declared.name, DEFAULT)
    return declared.refusal.format(
        source=origin,
        where=origin.where,
        name=origin.name,
        problem=problem,
        input=printable(error.get("input")),
        default=declared.default,
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


def file_permission_warnings(file: TomlFile, layer: Layer) -> list[str]:
    """A plaintext secret others can read, or a command others can change: warned (one ``stat``), not refused."""
    secrets = [
        origin.name
        for setting, (value, origin) in layer.items()
        if DECLARED[setting].secret and not isinstance(value, Command)
    ]
    commands = [origin.name for value, origin in layer.values() if isinstance(value, Command)]
    try:
        info = file.path.stat() if file.path and (secrets or commands) else None
    except OSError:
        info = None
    if info is None:
        return []
    foreign_owner = hasattr(os, "geteuid") and info.st_uid != os.geteuid()
    fix = f"run chmod 600 {file.path} (and own it yourself)"
    if secrets and (foreign_owner or info.st_mode & (stat.S_IRWXG | stat.S_IRWXO)):
        who = "is owned by another user" if foreign_owner else "other users can read it"
        return [f"{file.path} holds {' and '.join(secrets)} in plain text and {who}: {fix}"]
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

#: The strict TOML type a setting of each Python type takes, named as a message names it.
_TOML_TYPES: dict[object, tuple[Any, str]] = {
    bool: (bool, "a boolean (true or false)"),
    float: (float, "a number of seconds"),
    int: (int, "a whole number"),
    tuple: (list[str], "a list of strings"),
}


# implements: authentication.CREDENTIALS.13, authentication.CREDENTIALS.14, authentication.CREDENTIALS.15
@functools.cache
def schema() -> dict[str, type[BaseModel]]:
    """The file's model (``""``) and each table's, by dotted name; a model-typed setting is a table of its own."""
    tables: dict[str, dict[str, Any]] = {}
    models: dict[str, type[BaseModel]] = {}
    for d in DECLARED.values():
        if d.table is None or d.key is None:
            continue
        keys = tables.setdefault(d.table, {})
        if isinstance(d.annotation, type) and issubclass(d.annotation, BaseModel):
            nested = type(f"_{d.annotation.__name__}", (d.annotation,), {"model_config": _STRICT})
            keys[d.key] = (nested | None, None)
            models[f"{d.table}.{d.key}"] = nested
        else:
            toml, description = _TOML_TYPES.get(
                getattr(d.annotation, "__origin__", d.annotation), (str, "a string")
            )
            keys[d.key] = (toml | None, Field(None, description=description))
        if d.command:
            keys[f"{d.key}_cmd"] = (str | None, Field(None, description="a string"))
    for table, keys in tables.items():
        models[table] = create_model(f"_{table.title()}", __config__=_STRICT, **keys)
    root: dict[str, Any] = {table: (models[table] | None, None) for table in tables}
    return {"": create_model("_File", __config__=_STRICT, **root), **models}


@dataclass(frozen=True)
class TomlFile:
    """The parsed, schema-checked file (or none), able to say where a key was written."""

    path: Path | None
    text: str = ""
    data: Mapping[str, Mapping[str, object]] | None = None

    def get(self, table: str, key: str) -> object | None:
        return (self.data or {}).get(table, {}).get(key)

    def line(self, table: str | None, key: str | None) -> int | None:
        """A key's line or, failing that, its table's (as for an inline ``limits = {...}``)."""
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
        return line

    def where(self, table: str | None, key: str | None) -> str:
        line = self.line(table, key)
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
def read_file(config_path: str | None, environ: Mapping[str, str]) -> TomlFile:
    """The file ``--config`` names (it must exist), else the default one if it exists, schema-checked."""
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
        file = TomlFile(path=path, text=text, data=tomllib.loads(text))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(_syntax_message(path, str(exc))) from None
    try:
        schema()[""].model_validate(file.data)
    except ValidationError as exc:
        raise ConfigError(_schema_message(file, exc.errors())) from None
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


def _schema_message(file: TomlFile, errors: list[ErrorDetails]) -> str:
    """The first mistake in document order, as ``path:line: what is wrong, how to fix it``."""

    def place(error: ErrorDetails) -> tuple[str, str | None]:
        # A list's index is not a key: a wrong item is its list's mistake.
        loc = [str(part) for part in error["loc"] if isinstance(part, str)]
        return (".".join(loc[:-1]), loc[-1]) if len(loc) > 1 else (loc[0], None)

    error = min(errors, key=lambda error: file.line(*place(error)) or 0)
    table, key = place(error)
    where, models = file.where(table, key), schema()
    name = f"{table}.{key}" if key else table
    if error["type"] == "model_type":  # a table was expected
        return f"{where}: {name} must be a table ([{name}]) holding {', '.join(models[name].model_fields)}"
    if error["type"] != "extra_forbidden":
        return f"{where}: {name} must be {models[table].model_fields[str(key)].description}"
    known = ", ".join(f"[{t}]" for t in models if t and "." not in t)
    if key is None and isinstance((file.data or {}).get(table), dict):
        return (
            f"{where}: unknown table [{printable(table)}]: remove it or fix its name (known tables: {known})"
        )
    if key is None:
        return f"{where}: unknown key {printable(table)}: remove it or move it into one of the tables {known}"
    keys = ", ".join(models[table].model_fields)
    return f"{where}: unknown key {table}.{printable(key)}: remove it or fix its spelling (known keys in [{table}]: {keys})"


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
