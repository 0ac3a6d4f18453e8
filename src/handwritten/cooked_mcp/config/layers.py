"""The places settings come from (flags, environment, config file), each remembering where a value was."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from cooked_mcp import credential_command
from cooked_mcp.exceptions import ConfigError
from cooked_mcp.text import ASCII_WHITESPACE

from .table import Origin, declared
from .toml_file import TomlFile


# implements: authentication.CREDENTIALS.5, authentication.CREDENTIALS.6, authentication.CREDENTIALS.15
@dataclass(frozen=True)
class Command:
    """A ``*_cmd`` key's command: it passes the static checks untouched and runs after all of them."""

    origin: Origin
    line: str = field(repr=False)

    def run(self) -> str:
        return credential_command.run_secret_command(self.origin.name, self.line, where=self.origin.where)


@dataclass(frozen=True)
class Layer:
    """One place settings come from: its values, and where in it each value was."""

    values: dict[str, Any]
    origins: Mapping[str, Origin]


def flags(settings_cls: type[BaseModel], given: Mapping[str, str | None]) -> Layer:
    """``given``: each flag's value (None when not given) by setting name."""
    chosen = {setting: value for setting, value in given.items() if value is not None}
    settings = declared(settings_cls)
    return Layer(chosen, {setting: Origin(str(settings[setting].flag), "flag") for setting in chosen})


# implements: server.CONFIG.3
def environment(settings_cls: type[BaseModel], environ: Mapping[str, str]) -> Layer:
    """An empty variable counts as unset, except the bearer token: an empty one is always a mistake."""
    values: dict[str, object] = {}
    variables = {d.name: d.env for d in declared(settings_cls).values() if d.env}
    for setting, name in variables.items():
        value = environ.get(name, "")
        if setting == "username":
            # Like a command's output: a username never has surrounding whitespace, a paste often does.
            value = value.strip(ASCII_WHITESPACE)
        if value or (setting == "http_token" and name in environ):
            values[setting] = value
    return Layer(values, {setting: Origin(variables[setting], "environment") for setting in values})


def config_file(settings_cls: type[BaseModel], file: TomlFile) -> Layer:
    values: dict[str, object] = {}
    origins: dict[str, Origin] = {}
    for d in declared(settings_cls).values():
        if d.table is None or d.key is None:
            continue
        # Each origin is a search of the file: only for the keys it sets.
        if d.command:
            found = _value_or_command(file, d.table, d.key)
        else:
            value = file.get(d.table, d.key)
            found = None if value is None else (value, file.origin(d.table, d.key))
        if found is not None:
            values[d.name], origins[d.name] = found
    return Layer(values, origins)


# implements: authentication.CREDENTIALS.8, authentication.CREDENTIALS.8-1, authentication.CREDENTIALS.8-2, server.SECURITY.8
def _value_or_command(file: TomlFile, table: str, key: str) -> tuple[object, Origin] | None:
    """``table.key`` or ``table.key_cmd`` (None when neither is set); both at once, or an empty
    one, is refused, even when the environment wins: a mistake in a shared file shows up
    whatever the shell sets."""
    value, command = file.get(table, key), file.get(table, f"{key}_cmd")
    if value is not None and command is not None:
        raise ConfigError(
            f"{file.where(table, f'{key}_cmd')}: {table}.{key} and {table}.{key}_cmd are both set; "
            "keep only one of them"
        )
    if command is None:
        if value is None:
            return None
        if isinstance(value, str) and not value.strip(ASCII_WHITESPACE):
            raise ConfigError(f"{file.where(table, key)}: {table}.{key} is empty: set a value or remove it")
        return value, file.origin(table, key)
    origin = file.origin(table, f"{key}_cmd")
    if not str(command).strip(ASCII_WHITESPACE):
        raise ConfigError(f"{origin.where}: {table}.{key}_cmd is empty: set a command or remove it")
    return Command(origin, str(command)), origin
