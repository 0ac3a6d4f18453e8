"""The endpoint table says which rows are confirmed, docs/check.md says the same, and answer shapes stay small."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cooked_mcp.cooked import endpoints
from cooked_mcp.cooked.decoding import MAX_SHAPE_DEPTH, MAX_SHAPE_KEYS, shape_of

CHECK_PAGE = Path(__file__).resolve().parents[2] / "docs" / "check.md"


@pytest.mark.req("api-client.RESPONSES.1")  # closest: the table is what answers are checked against
def test_only_what_public_sources_show_is_marked_confirmed() -> None:
    confirmed = {e.name for e in endpoints.ENDPOINTS if e.provenance.confirmed}
    assert confirmed == {"login", "search recipes", "import URL"}
    for endpoint in endpoints.ENDPOINTS:
        assert endpoint.provenance in (endpoints.CONFIRMED, endpoints.RECONSTRUCTED)
        assert endpoint.provenance.source


@pytest.mark.tooling
def test_the_documented_table_matches_the_endpoint_table() -> None:
    section = CHECK_PAGE.read_text().split("## Which Cooked endpoints are confirmed", 1)[1]
    rows = re.findall(r"^\| (GET|POST|PUT|DELETE) \| `([^`]+)` \| (\w+)", section, re.MULTILINE)
    expected = [
        (e.method, e.path_template, "confirmed" if e.provenance.confirmed else "reconstructed")
        for e in endpoints.ENDPOINTS
    ]
    assert rows == expected


@pytest.mark.req("api-client.ERRORS.6")
def test_a_shape_has_keys_and_types_only_and_is_bounded() -> None:
    answer = {
        "items": [{"id": "r-1", "title": "Secret soup", "portions": 2, "can-edit?": True, "x": None}],
        "Secret Soup": 1,
        "alice": {"a": {"b": {"c": {"d": "deep"}}}},
        **{f"k{i}": i for i in range(40)},
    }
    shape = shape_of(answer, secrets=("alice",))
    assert shape["items"] == [
        "array",
        {"id": "string", "title": "string", "portions": "number", "can-edit?": "boolean", "x": "null"},
    ]
    assert shape["<other key 1>"] == "number"  # not a schema-like key: data, so hidden
    assert shape["<other key 2>"] == {"a": {"b": {"c": "object"}}}  # a secret as key; depth bounded
    assert len(shape) == MAX_SHAPE_KEYS + 1 and shape["<more keys>"] == len(answer) - MAX_SHAPE_KEYS
    assert "Secret" not in repr(shape) and "alice" not in repr(shape) and "deep" not in repr(shape)
    assert MAX_SHAPE_DEPTH == 4
    # An array's element shape merges only its first 5 elements.
    assert shape_of([1, "a", None, True, 2.5, {"late": 1}]) == [
        "array",
        "number",
        "string",
        "null",
        "boolean",
    ]
