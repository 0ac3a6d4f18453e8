"""What every section gets: the plan (how much to measure), the fake, a scratch folder, the results."""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from cooked_fake import SEED_LOGIN, SEED_PASSWORD

from .fake import RemoteFake
from .procs import server_env
from .results import Results


@dataclass(frozen=True)
class Plan:
    """How much to measure; ``--quick`` shortens everything but keeps every measurement."""

    quick: bool
    mode: str  # the SDK client's connect mode: "legacy" (initialize handshake) or "auto"
    startup_runs: int
    overhead_warmup: int
    overhead_rounds: int  # each row's calls come in rounds spread over the section
    overhead_calls_per_round: int
    concurrency_seconds: float
    baseline_concurrency_seconds: float
    concurrency_levels: tuple[int, ...]
    expiry_clients: int
    expiry_bursts: int
    memory_warmup: int
    memory_calls: int
    memory_sample_every: int
    sweep_delays: tuple[float, ...]
    sweep_budget_seconds: float  # per delay and side: fewer calls when Cooked is slow
    server_env: tuple[tuple[str, str], ...] = ()  # extra variables for every server process

    @property
    def overhead_calls(self) -> int:
        """Calls per row in the overhead section, all rounds together."""
        return self.overhead_rounds * self.overhead_calls_per_round

    @classmethod
    def make(cls, *, quick: bool, mode: str, server_env: dict[str, str] | None = None) -> Plan:
        return cls(
            server_env=tuple(sorted((server_env or {}).items())),
            quick=quick,
            mode=mode,
            startup_runs=10 if quick else 24,
            overhead_warmup=20 if quick else 30,
            overhead_rounds=4 if quick else 10,
            overhead_calls_per_round=50,
            concurrency_seconds=2.0 if quick else 10.0,
            baseline_concurrency_seconds=1.0 if quick else 2.0,
            concurrency_levels=(1, 8, 32),
            expiry_clients=32,
            expiry_bursts=3,
            memory_warmup=200,
            memory_calls=5000,
            memory_sample_every=1000,
            sweep_delays=(0.0, 0.02, 0.1),
            sweep_budget_seconds=1.5 if quick else 4.0,
        )


@dataclass
class Context:
    plan: Plan
    fake: RemoteFake
    workdir: Path
    results: Results

    @property
    def logs(self) -> Path:
        path = self.workdir / "logs"
        path.mkdir(parents=True, exist_ok=True)
        return path

    def env(self, **extra: str) -> dict[str, str]:
        """The whole environment of a server process: a scratch HOME, the fake, the seed user."""
        return server_env(
            self.workdir / "home",
            self.fake.base_url,
            login=SEED_LOGIN,
            password=SEED_PASSWORD,
            **{**dict(self.plan.server_env), **extra},
        )

    @contextlib.contextmanager
    def errlog(self, name: str) -> Iterator[TextIO]:
        """A file for a server's stderr (appended to, one per kind of server)."""
        with (self.logs / f"{name}.log").open("a") as log:
            yield log


def new_token() -> str:
    return secrets.token_urlsafe(24)
