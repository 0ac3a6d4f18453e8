"""A setting declared once, as a ``Settings`` field whose default is ``setting(...)``, and the one
reading of those declarations that every layer, message and ``--help`` uses."""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import Any, Literal, get_args

from pydantic import BaseModel, Field, SecretStr


@dataclass(frozen=True)
class Origin:
    """Where a value came from: ``str()`` names it in a refusal, ``describe()`` in a sentence."""

    name: str
    kind: Literal["flag", "environment", "file", "default"]
    #: ``path:line`` of a file key (the line is a best-effort text scan); None otherwise.
    where: str | None = None

    def __str__(self) -> str:
        return f"{self.name} in {self.where}" if self.where else self.name

    def describe(self) -> str:
        if self.kind == "environment":
            return f"the environment variable {self.name}"
        if self.kind == "flag":
            return f"the {self.name} flag"
        return str(self)


DEFAULT = Origin("the default", "default")

#: The config file's tables, in the order its messages and ``--help`` list them.
TABLES = ("cooked", "user", "mcp", "log")


@dataclass(frozen=True)
class Declared:
    """One setting as declared: what every place that reads, checks or names it reads."""

    env: str | None
    table: str | None
    key: str | None
    flag: str | None
    metavar: str | None
    command: bool
    refusal: str
    # The rest is the field's, filled in by ``declared``.
    name: str = ""
    help: str | None = None
    secret: bool = False
    #: The field's Python type: the config file's value must have the matching TOML type.
    annotation: Any = None
    default: Any = None

    @property
    def file_key(self) -> str | None:
        """``table.key``, as messages and ``--help`` name it."""
        return f"{self.table}.{self.key}" if self.table else None


def setting(
    default: Any = ...,
    *,
    env: str | None = None,
    file: str | None = None,
    flag: str | None = None,
    metavar: str | None = None,
    help: str | None = None,
    command: bool = False,
    refusal: str = "",
    **field: Any,
) -> Any:
    """A ``Settings`` field that users set: ``pydantic.Field`` plus its ``env``, ``file`` key, ``command``
    (a ``_cmd`` key), flag and ``refusal`` wording (``{source}``, ``{problem}``, ``{where}``, ``{name}``,
    ``{input}``, ``{default}``). No ``default``: required.
    """
    table, _, key = file.partition(".") if file else (None, "", None)
    info = Field(default, description=help, **field)
    info.metadata.append(Declared(env, table, key, flag, metavar, command, refusal))
    return info


#: What a refused value of a type is told when its declaration says nothing more.
_REFUSALS: dict[object, str] = {bool: "{source} must be true or false (1/0, yes/no, on/off); fix or unset it"}


@functools.cache
def declared(model: type[BaseModel]) -> dict[str, Declared]:
    """Every ``setting(...)`` field of ``model`` by name, in the config file's order."""
    found = [
        dataclasses.replace(
            mark,
            name=name,
            help=info.description,
            secret=SecretStr in (info.annotation, *get_args(info.annotation)),
            refusal=mark.refusal or _REFUSALS.get(info.annotation, "{source}: {problem}"),
            annotation=info.annotation,
            default=None if info.is_required() else info.default,
        )
        for name, info in model.model_fields.items()
        for mark in info.metadata
        if isinstance(mark, Declared)
    ]
    order = {table: index for index, table in enumerate(TABLES)}
    found.sort(key=lambda d: order.get(d.table, len(TABLES)) if d.table else len(TABLES) + 1)
    return {d.name: d for d in found}
