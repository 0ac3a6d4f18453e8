"""The result fields that carry the text's guidance into the structured output.

Some clients give the model only structuredContent (pydantic-ai, smolagents' structured
mode), others only the text (the OpenAI Agents SDK, LangChain). ``data_only`` checks that
each guidance field says what the text says, word for word, and hands back the rest, so
the tests that compare outputs keep comparing data.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types

GUIDANCE = ("notice", "next_step", "data_from_cooked")


def data_only(result: types.CallToolResult) -> dict[str, Any]:
    """The structured output without its guidance fields, once those are checked against the text."""
    assert result.structured_content is not None
    output = dict(result.structured_content)
    text = "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))
    for key in ("notice", "next_step"):
        for line in str(output.get(key, "")).splitlines():
            assert line in text, f"{key} {line!r} is not in the text {text!r}"
    for path in output.get("data_from_cooked", []):
        assert path.split(".")[0].removesuffix("[]") in output, (
            f"data_from_cooked names {path}, not in the output"
        )
    return {key: value for key, value in output.items() if key not in GUIDANCE}
