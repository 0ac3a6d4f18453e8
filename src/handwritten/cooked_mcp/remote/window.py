"""The one sliding window behind the consent page's wrong passwords, DCR and CIMD fetches."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Window:
    """At most ``limit`` events in any ``seconds``, for everyone together; ``clock`` is for tests."""

    limit: int
    seconds: float
    clock: Callable[[], float] = time.monotonic
    _times: deque[float] = field(default_factory=deque, init=False, repr=False)

    def wait(self) -> float:
        """Seconds until one more event fits (0: it fits now)."""
        now = self.clock()
        while self._times and self._times[0] <= now - self.seconds:
            self._times.popleft()
        return self._times[0] + self.seconds - now if len(self._times) >= self.limit else 0.0

    def add(self) -> None:
        self._times.append(self.clock())
