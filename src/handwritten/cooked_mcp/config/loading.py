"""``load_settings``: the layers merged (flag, environment, file, default) and every refusal worded as
one line naming the source that won: a stale shell variable beating the file is the usual confusion.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from cooked_mcp.exceptions import ConfigError
from cooked_mcp.text import printable

from . import layers
from .origins import DEFAULT, Origin
from .settings import DECLARED, Settings
from .toml_file import TomlFile, default_config_path, read_file
from .warnings import file_permission_warnings, misspelt_variables, unknown_variable_warnings

#: The credentials, in the order a missing-credentials message names them.
_CREDENTIALS = ("username", "password")


# implements: server.CONFIG.1, server.CONFIG.2
def load_settings(
    *,
    config_path: str | None,
    environ: Mapping[str, str],
    transport: str | None = None,
    http_addr: str | None = None,
) -> Settings:
    """Build the settings from flags, ``environ`` and the TOML file, or raise ``ConfigError``. Without
    ``config_path`` the XDG default file is read when it exists; ``environ`` is the caller's to choose.
    """
    file = read_file(config_path, environ, DECLARED.values())
    flags = layers.flags(Settings, {"transport": transport, "http_addr": http_addr})
    from_file = layers.config_file(Settings, file)
    if transport != "http":
        # A stdio server has no use for the file's token: past the checks every transport shares
        # (set once, not empty), its shape is not checked, as the token is never used.
        from_file.values.pop("http_token", None)
    ordered = (flags, layers.environment(Settings, environ), from_file)
    merged: dict[str, object] = {}
    origins: dict[str, Origin] = {}
    for layer in reversed(ordered):  # the first layer that has a setting wins
        merged.update(layer.values)
        origins.update(layer.origins)
    # A stdio server has no token, so its settings name no source for one.
    sources = {
        setting: origin
        for setting, origin in origins.items()
        if setting != "http_token" or transport == "http"
    }
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
