from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from remote_support import Harness, harness


@pytest.fixture
async def oauth(tmp_path: Path) -> AsyncIterator[Harness]:
    async for built in harness(tmp_path):
        yield built
