"""Where a setting's value came from: what every message about a setting names, never the value."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


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
