"""The tool list a client receives, byte for byte as committed in served_tools.json.

Agent frameworks and the Inspector convert these schemas by their exact shape (type arrays
with null plus ``nullable``, no ``additionalProperties``, nested objects inlined), so a
change to how the generated layer builds them must not change what is served. The file
was written from main before the generated layer derived its schemas from the models;
after a deliberate change to the table, rewrite it with
``.venv/bin/python tests/tools/test_served_tools_golden.py`` and review its diff.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import anyio
import pytest
from mcp import Client
from pydantic import BaseModel, Field

from cooked_mcp_generated.tools import TOOLS, create_server
from cooked_mcp_runtime.schemas import input_schema, output_schema

pytestmark = pytest.mark.tooling

GOLDEN = Path(__file__).with_name("served_tools.json")


class _NoHandlers:
    """Listing never reaches a handler."""


async def _listed(tool_names: list[str] | None) -> list[dict[str, Any]]:
    server = create_server(_NoHandlers(), version="golden", tool_names=tool_names, withheld_because="test")  # type: ignore[arg-type]
    async with Client(server) as client:
        result = await client.list_tools()
    return [tool.model_dump(mode="json", by_alias=True, exclude_unset=True) for tool in result.tools]


async def served() -> str:
    """Every tool, then the read-only listing (write tools withheld, lines naming them dropped)."""
    read_only = [spec.name for spec in TOOLS if spec.read_only]
    listing = {"all": await _listed(None), "read_only": await _listed(read_only)}
    return json.dumps(listing, indent=1, ensure_ascii=False) + "\n"


def test_the_served_tool_list_is_byte_for_byte_the_committed_one() -> None:
    text = anyio.run(served)
    assert text == GOLDEN.read_text("utf-8"), "the served tool list changed; see this module's docstring"


def test_a_shape_the_table_cannot_declare_fails_at_import_instead_of_being_served_wrong() -> None:
    with pytest.raises(TypeError, match="no served JSON schema"):
        input_schema({"ratio": Annotated[float, Field(description="A ratio.")]})
    with pytest.raises(TypeError, match=r"Annotated\[type, Field\(...\)\]"):
        input_schema({"name": str})

    class Odd(BaseModel):
        ratio: float = Field(description="A ratio.")

    with pytest.raises(TypeError, match="no served JSON schema"):
        output_schema(Odd)


if __name__ == "__main__":
    GOLDEN.write_text(anyio.run(served), encoding="utf-8")
    sys.exit(0)
