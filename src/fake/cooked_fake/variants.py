"""Contract variants: the fake answering as Cooked's own app shows Cooked may answer, or as a
deliberately different contract.

cooked-api.md is partly reconstructed. Its "observed habits" section lists answers Cooked's
public app reads that the contract's own shapes do not show; a switch here makes the fake send
them, so tests, ``make demo`` and ``cooked-fake`` can prove cooked-mcp tolerates them. The
``drifted`` variant is not tolerated on purpose: ``--check`` must name each of its differences.
Every variant changes only the wire form of answers, never the account's data.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from typing import Any, Final

__all__ = ["OBSERVED", "VARIANTS", "add_variant_option", "checked", "rejected_login_status", "reshape"]

#: name -> what the fake does differently.
VARIANTS: Final[dict[str, str]] = {
    "bare-lists": "recipe lists and searches are bare JSON arrays instead of {items}",
    "question-flags": "boolean keys end in '?' (can-edit?, selected?)",
    "extract-id": "a draft's ID is extract-id in the /api/new answer and in the draft itself",
    "login-403": "a rejected login answers 403 instead of 401",
    "drifted": (
        "a deliberately different contract: recipe updates answer {id} instead of {recipe-id}, "
        "selection changes answer 204 with no body, a deleted recipe answers 410 GONE"
    ),
}
#: The variants Cooked's app is seen to send, which cooked-mcp must read like the contract's shapes.
OBSERVED: Final = ("bare-lists", "question-flags", "extract-id", "login-403")


def checked(names: Iterable[str]) -> frozenset[str]:
    """The names as a set; ``observed`` stands for all of OBSERVED. Unknown names are refused."""
    chosen: set[str] = set()
    for name in names:
        if name == "observed":
            chosen.update(OBSERVED)
        elif name in VARIANTS:
            chosen.add(name)
        else:
            raise ValueError(f"unknown variant {name!r}; known: observed, {', '.join(VARIANTS)}")
    return frozenset(chosen)


def add_variant_option(parser: argparse.ArgumentParser) -> None:
    """``--variant NAME`` (repeatable), for ``cooked-fake`` and the demo."""
    parser.add_argument(
        "--variant",
        action="append",
        default=[],
        choices=["observed", *VARIANTS],
        metavar="NAME",
        help="answer as Cooked is seen to vary (repeatable): "
        + "; ".join(f"{n}: {d}" for n, d in VARIANTS.items())
        + "; observed: every variant but drifted",
    )


def rejected_login_status(active: frozenset[str]) -> int:
    return 403 if "login-403" in active else 401


def reshape(active: frozenset[str], handler: str, value: Any) -> tuple[int, Any]:
    """The (status, JSON value) the endpoint ``handler`` answers with under the ``active`` variants."""
    if not active:
        return 200, value
    if "bare-lists" in active and handler in {"list_recipes", "search"}:
        value = value["items"]
    if "extract-id" in active and handler in {"import_url", "get_draft"}:
        key = "extraction-id" if handler == "import_url" else "id"
        if key in value:
            value = {("extract-id" if k == key else k): v for k, v in value.items()}
    if "question-flags" in active:
        value = _question_flags(value)
    if "drifted" in active:
        if handler == "update_recipe":
            value = {"id": value["recipe-id"]}
        elif handler == "put_selected":
            return 204, None
    return 200, value


_FLAGS = frozenset({"can-edit", "selected"})


def _question_flags(value: Any) -> Any:
    if isinstance(value, list):
        return [_question_flags(v) for v in value]
    if isinstance(value, dict):
        return {(f"{k}?" if k in _FLAGS else k): _question_flags(v) for k, v in value.items()}
    return value
