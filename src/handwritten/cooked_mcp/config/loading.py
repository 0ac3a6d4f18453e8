"""``load_settings``: flags over environment over the config file over defaults, each value remembering
where it came from, and every refusal one line naming the source that won: a stale shell variable
beating the file is the usual confusion. Unsafe or probably mistaken set-ups are warned about, not refused.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from cooked_mcp.exceptions import ConfigError
from cooked_mcp.text import ASCII_WHITESPACE, printable

from .settings import DECLARED, Command, Settings, environment_variables
from .table import DEFAULT, Origin
from .toml_file import TomlFile, default_config_path, read_file


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
