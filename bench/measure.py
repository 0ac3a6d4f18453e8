"""Timing samples and the statistics the report shows."""

from __future__ import annotations

import math
import random
import statistics
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

#: Milliseconds per second; every duration in the report is in ms.
MS = 1000.0


def percentile(samples: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100) by the nearest-rank method: always an observed sample."""
    if not samples:
        raise ValueError("no samples")
    ordered = sorted(samples)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


@dataclass(frozen=True)
class Stats:
    """Summary of one series of durations, in milliseconds."""

    n: int
    p50: float
    p99: float
    mean: float
    min: float
    max: float

    @classmethod
    def of(cls, seconds: Sequence[float]) -> Stats:
        ms = [s * MS for s in seconds]
        return cls(
            n=len(ms),
            p50=percentile(ms, 50),
            p99=percentile(ms, 99),
            mean=statistics.fmean(ms),
            min=min(ms),
            max=max(ms),
        )

    def as_dict(self) -> dict[str, float | int]:
        return {
            "n": self.n,
            "p50_ms": round(self.p50, 3),
            "p99_ms": round(self.p99, 3),
            "mean_ms": round(self.mean, 3),
            "min_ms": round(self.min, 3),
            "max_ms": round(self.max, 3),
        }


async def timed(call: Callable[[], Awaitable[object]]) -> float:
    """Seconds one awaited call took."""
    start = time.perf_counter()
    await call()
    return time.perf_counter() - start


async def interleaved(
    count: int,
    *calls: Callable[[], Awaitable[object]],
    alternate: bool = False,
    shuffle: random.Random | None = None,
) -> list[list[float]]:
    """Time ``calls`` in turn ``count`` times each (A,B,C,A,B,C...), one series per call, so
    drift in machine load hits every series alike.

    ``alternate`` reverses the order every other round (A,B,B,A,...): two calls over the same
    connection pool otherwise differ by which one always comes second (about 0.3 ms in
    bench/wire_ab.py, more than the difference measured there). ``shuffle`` puts them in a
    random order every round instead, for three or more calls: with a fixed order one always
    follows the same other one, and on this machine a process does the same work at up to
    twice the CPU time after a pause of a few ms (the fake Cooked: 0.28-0.31 ms per request
    back to back, 0.51-0.69 ms with 3.5 ms gaps), so which call comes after which matters.
    """
    series: list[list[float]] = [[] for _ in calls]
    pairs = list(zip(calls, series, strict=True))
    for round_ in range(count):
        if shuffle is not None:
            shuffle.shuffle(pairs)
        for call, times in reversed(pairs) if alternate and round_ % 2 else pairs:
            times.append(await timed(call))
    return series


def ms(value: float) -> float:
    """Rounded milliseconds for the JSON report."""
    return round(value, 3)
