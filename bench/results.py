"""What a run found: per-section data for results.json, the targets, and every failure."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Check:
    """One line of the targets table; ``passed`` is None for an informational line."""

    section: str
    name: str
    limit: str
    measured: str
    passed: bool | None

    @property
    def verdict(self) -> str:
        return "info" if self.passed is None else ("PASS" if self.passed else "FAIL")

    def as_dict(self) -> dict[str, Any]:
        return {
            "section": self.section,
            "name": self.name,
            "limit": self.limit,
            "measured": self.measured,
            "result": self.verdict,
        }


@dataclass
class Results:
    sections: dict[str, Any] = field(default_factory=dict)
    checks: list[Check] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    def check(self, section: str, name: str, limit: str, measured: str, passed: bool | None) -> Check:
        found = Check(section, name, limit, measured, passed)
        self.checks.append(found)
        print(f"  [{found.verdict}] {name}: {measured} (target {limit})", flush=True)
        if passed is False:
            self.failures.append(f"{section}: {name}: {measured}, target {limit}")
        return found

    def fail(self, message: str) -> None:
        """A failure that is not a target line (a call above the minimum, a crashed section)."""
        print(f"  FAILURE: {message}", flush=True)
        self.failures.append(message)

    @property
    def ok(self) -> bool:
        return not self.failures
