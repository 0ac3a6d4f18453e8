"""The descriptions of the tools with several modes read as sentences also where a client joins their
lines into one paragraph (the MCP Inspector does): no list markers that would run together."""

from __future__ import annotations

import pytest

from cooked_mcp_generated.tools import TOOLS


@pytest.mark.req("tools.SCHEMA.3", "tools.SCHEMA.5")
@pytest.mark.parametrize("tool", ["save_recipe", "change_shopping_list"])
def test_a_description_reads_as_sentences_with_its_line_breaks_or_without(tool: str) -> None:
    """Before: "Choose how with `source`: - `raw_text` (title, text): ... - `prepared` ..."."""
    [spec] = [spec for spec in TOOLS if spec.name == tool]
    lines = (spec.definition.description or "").split("\n")
    collapsed = " ".join(lines)
    assert " - " not in collapsed and not any(line.startswith("-") for line in lines), collapsed
    assert all(line.endswith(".") for line in lines), lines
    modes = spec.definition.input_schema["properties"]["source" if tool == "save_recipe" else "action"][
        "enum"
    ]
    assert all(f"`{mode}`" in collapsed for mode in modes)
