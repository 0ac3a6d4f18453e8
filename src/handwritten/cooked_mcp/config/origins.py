"""Where a setting's value came from: what every message about a setting names, never the value."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class Origin:
    """A flag, an environment variable, a key in the config file, or the default.

    ``str()`` is how a refusal names it (``COOKED_BASE_URL``, ``cooked.base_url in
    path:line``, ``--http-addr``); ``describe()`` is the same for a sentence about a value
    that was accepted (``the environment variable COOKED_BASE_URL``).
    """

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
