"""The fake's records and their wire shapes.

A missing title is left out rather than sent as null: the contract says it "may be absent".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Recipe:
    id: str
    title: str | None
    description: str
    portions: int | None
    owner: str
    source_url: str | None = None
    thumbnail_url: str | None = None
    image_url: str | None = None

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id}
        if self.title is not None:
            out["title"] = self.title
        out.update({"thumbnail-url": self.thumbnail_url, "type": "saved", "source-url": self.source_url})
        return out

    def detail(self, viewer: str) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id}
        if self.title is not None:
            out["title"] = self.title
        out.update(
            {
                "description": self.description,
                "portions": self.portions,
                "owner": self.owner,
                "can-edit": self.owner == viewer,
                "source-url": self.source_url,
                "thumbnail-url": self.thumbnail_url,
                "image-url": self.image_url,
            }
        )
        return out


@dataclass
class Draft:
    id: str
    title: str | None
    description: str
    portions: int | None
    source_url: str | None = None
    thumbnail_url: str | None = None

    def detail(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id}
        if self.title is not None:
            out["title"] = self.title
        out.update(
            {
                "description": self.description,
                "portions": self.portions,
                "source-url": self.source_url,
                "thumbnail-url": self.thumbnail_url,
            }
        )
        return out


@dataclass
class ProductGroup:
    id: str
    name: str
    quantity: str | None
    selected: bool = False

    def wire(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "quantity": self.quantity, "selected": self.selected}


@dataclass
class Aisle:
    """Groups live inside their aisle because Cooked has no ``aisle-id`` on a group: nesting is the truth."""

    id: str
    name: str
    groups: list[ProductGroup] = field(default_factory=list)

    def wire(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "product-groups": [g.wire() for g in self.groups]}
