"""A setting declared once, as a ``Settings`` field whose default is ``setting(...)``, and the one
reading of those declarations that every layer, message and ``--help`` uses."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Literal, get_args

from pydantic import BaseModel, Field, SecretStr
from pydantic.config import JsonDict


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

#: What a refused value of each kind is told when its declaration says nothing more.
_BOOLEAN_REFUSAL = "{source} must be true or false (1/0, yes/no, on/off); fix or unset it"
_REFUSAL = "{source}: {problem}"

_MARK = "cooked_mcp_setting"


def setting(
    default: Any = ...,
    *,
    env: str | None = None,
    file: str | None = None,
    flag: str | None = None,
    metavar: str | None = None,
    help: str | None = None,
    command: bool = False,
    refusal: str | None = None,
    **field: Any,
) -> Any:
    """A ``Settings`` field that users set: ``pydantic.Field`` plus its ``env``, ``file`` key, ``command``
    (a ``_cmd`` key), flag and ``refusal`` wording (``{source}``, ``{problem}``, ``{where}``, ``{name}``,
    ``{input}``, ``{default}``). No ``default``: required.
    """
    given = {"env": env, "file": file, "flag": flag, "metavar": metavar, "refusal": refusal}
    extra: JsonDict = {_MARK: True, "command": command} | {k: v for k, v in given.items() if v is not None}
    return Field(default, description=help, json_schema_extra=extra, **field)


@dataclass(frozen=True)
class Declared:
    """One setting as declared: what every place that reads, checks or names it reads."""

    name: str
    env: str | None
    table: str | None
    key: str | None
    flag: str | None
    metavar: str | None
    help: str | None
    command: bool
    secret: bool
    refusal: str
    #: The field's Python type: the config file's value must have the matching TOML type.
    annotation: Any
    default: Any

    @property
    def file_key(self) -> str | None:
        """``table.key``, as messages and ``--help`` name it."""
        return f"{self.table}.{self.key}" if self.table else None


@functools.cache
def declared(model: type[BaseModel]) -> dict[str, Declared]:
    """Every ``setting(...)`` field of ``model`` by name, in the config file's order."""
    found = []
    for name, info in model.model_fields.items():
        extra = info.json_schema_extra
        if not isinstance(extra, dict) or extra.get(_MARK) is not True:
            continue
        table, _, key = str(extra["file"]).partition(".") if "file" in extra else (None, "", None)
        text = {k: str(extra[k]) if k in extra else None for k in ("env", "flag", "metavar", "refusal")}
        found.append(
            Declared(
                name=name,
                env=text["env"],
                table=table,
                key=key,
                flag=text["flag"],
                metavar=text["metavar"],
                help=info.description,
                command=extra.get("command") is True,
                secret=SecretStr in (info.annotation, *get_args(info.annotation)),
                refusal=text["refusal"] or (_BOOLEAN_REFUSAL if info.annotation is bool else _REFUSAL),
                annotation=info.annotation,
                default=None if info.is_required() else info.default,
            )
        )
    order = {table: index for index, table in enumerate(TABLES)}
    found.sort(key=lambda d: order.get(d.table, len(TABLES)) if d.table else len(TABLES) + 1)
    return {d.name: d for d in found}
