"""Set-ups that work but are unsafe or probably mistaken: warned about, one line each, never refused."""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence

from cooked_mcp.text import printable

from .settings import DECLARED, environment_variables
from .toml_file import TomlFile

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


def format_warnings(warnings: Sequence[str]) -> list[str]:
    """One stderr line per warning, in the CLI's voice."""
    return [f"cooked-mcp: warning: {warning}" for warning in warnings]
