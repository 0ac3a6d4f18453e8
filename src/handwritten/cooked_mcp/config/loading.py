"""``load_settings``: the layers merged (flag, environment, file, default) and every refusal worded as
one line naming the source that won: a stale shell variable beating the file is the usual confusion.
Set-ups that work but are unsafe or probably mistaken are warned about, one line each, never refused.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from cooked_mcp.exceptions import ConfigError
from cooked_mcp.text import printable

from . import layers
from .settings import DECLARED, Settings, environment_variables
from .table import DEFAULT, Origin
from .toml_file import TomlFile, default_config_path, read_file

#: The credentials, in the order a missing-credentials message names them.
_CREDENTIALS = ("username", "password")


# implements: server.CONFIG.1, server.CONFIG.2
def load_settings(
    *,
    config_path: str | None,
    environ: Mapping[str, str],
    transport: str | None = None,
    http_addr: str | None = None,
    public_url: str | None = None,
) -> Settings:
    """Build the settings from flags, ``environ`` and the TOML file, or raise ``ConfigError``. Without
    ``config_path`` the XDG default file is read when it exists; ``environ`` is the caller's to choose.
    """
    file = read_file(config_path, environ, DECLARED.values())
    flags = layers.flags(Settings, {"transport": transport, "http_addr": http_addr, "public_url": public_url})
    from_file = layers.config_file(Settings, file)
    ordered = (flags, layers.environment(Settings, environ), from_file)
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


def _refusal(
    errors: list[ErrorDetails], sources: Mapping[str, Origin], file: TomlFile, environ: Mapping[str, str]
) -> str:
    """The first problem; missing credentials are reported together, so one run names them all."""
    missing = [
        str(e["loc"][0])
        for e in errors
        if e["type"] == "missing" and e["loc"] and e["loc"][0] in _CREDENTIALS
    ]
    if missing and errors[0]["loc"] and errors[0]["loc"][0] in missing:
        location = file.path or default_config_path(environ) or "the config file (--config)"
        return _missing_credentials(missing, location, environ)
    return _value_refusal(errors[0], sources)


# implements: authentication.CREDENTIALS.9
def _missing_credentials(missing: list[str], location: object, environ: Mapping[str, str]) -> str:
    """Every way to set each missing credential, and a set variable that looks like a misspelling of one."""
    nouns = " or ".join(missing)
    variables = " and ".join(str(DECLARED[s].env) for s in missing)
    keys = " and ".join(str(DECLARED[s].file_key) for s in missing)
    commands = " and ".join(f"{DECLARED[s].file_key}_cmd" for s in missing)
    message = f"no Cooked {nouns} configured: set {variables}, or {keys} (or {commands}) in {location}"
    wanted = {DECLARED[s].env for s in missing}
    for name, nearest in misspelt_variables(environ).items():
        if nearest in wanted:
            message += f"; {printable(name)} is set but is not a cooked-mcp setting (did you mean {nearest}?)"
    return message


def _value_refusal(error: ErrorDetails, sources: Mapping[str, Origin]) -> str:
    """One line naming the setting, where its value came from, and how to fix it; never the value."""
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


#: The file keys that hold a secret as plain text, and those that name a command to run.
_PLAINTEXT_SECRETS = [(d.table, d.key) for d in DECLARED.values() if d.secret and d.table and d.key]
_COMMANDS = [(d.table, f"{d.key}_cmd") for d in DECLARED.values() if d.command and d.table]


def file_permission_warnings(file: TomlFile) -> list[str]:
    """A plaintext secret others can read, or a command others can change: warned (one ``stat``), not refused."""
    if file.path is None:
        return []
    try:
        info = file.path.stat()
    except OSError:
        return []
    foreign_owner = hasattr(os, "geteuid") and info.st_uid != os.geteuid()
    warnings = []
    secrets = [f"{table}.{key}" for table, key in _PLAINTEXT_SECRETS if file.get(table, key) is not None]
    if secrets and (foreign_owner or info.st_mode & (stat.S_IRWXG | stat.S_IRWXO)):
        who = "is owned by another user" if foreign_owner else "other users can read it"
        warnings.append(
            f"{file.path} holds {' and '.join(secrets)} in plain text and {who}: "
            f"run chmod 600 {file.path} (and own it yourself)"
        )
    commands = [f"{table}.{key}" for table, key in _COMMANDS if file.get(table, key) is not None]
    if commands and not secrets and (foreign_owner or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)):
        who = "is owned by another user" if foreign_owner else "other users can change it"
        warnings.append(
            f"{file.path} runs {' and '.join(commands)} and {who}, so they choose what runs as you: "
            f"run chmod 600 {file.path} (and own it yourself)"
        )
    return warnings


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
