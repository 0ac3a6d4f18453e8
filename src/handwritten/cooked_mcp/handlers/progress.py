"""Progress while a long call waits, so a client that drops silent calls sees life."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from cooked_mcp_runtime.results import ProgressReporter

logger = logging.getLogger("cooked_mcp.handlers")

#: How often a running URL import reports progress; clients drop a call that stays silent too long.
PROGRESS_INTERVAL_SECONDS = 3.0


@asynccontextmanager
async def ticking(report: ProgressReporter, message: str) -> AsyncIterator[None]:
    """Report progress every few seconds while the body runs. A plain task, not a task group (which would
    wrap the body's ToolError), cancelled without awaiting so the call's own cancellation passes.
    """
    ticker = asyncio.create_task(_tick(report, message))
    try:
        yield
    finally:
        ticker.cancel()


async def _tick(report: ProgressReporter, message: str) -> None:
    elapsed = 0.0
    while True:
        try:
            await report(elapsed, None, f"{message}; {elapsed:.0f} s so far")
        except Exception:
            # Progress is a courtesy: a client that cannot take it must not fail the import.
            logger.debug("progress report failed; no more progress for this call", exc_info=True)
            return
        await asyncio.sleep(PROGRESS_INTERVAL_SECONDS)
        elapsed += PROGRESS_INTERVAL_SECONDS
