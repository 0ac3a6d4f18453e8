"""Cooked's text smarts, faked just well enough to be predictable in tests.

Ingredient line rule: after stripping whitespace and a leading list bullet ("- ", "* ", "• "), a line is
parsed (and counted in ``added``) when it is non-blank and does not start with ``#`` (a markdown heading)
or ``??`` (Cooked's "unreadable" marker). A leading amount plus an optional unit becomes the quantity,
the rest the name.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from .seed import markdown

_UNITS = (
    "kg|g|mg|l|dl|cl|ml|oz|lbs?|tsp|tbsp|teaspoons?|tablespoons?|cups?|cans?|cloves?|slices?|bunch(?:es)?"
    "|pinch(?:es)?|handfuls?|packs?|pieces?|sticks?|sheets?|balls?"
)
_AMOUNT = r"(?:\d+(?:[.,/]\d+)?(?:\s+\d/\d)?|[½¼¾⅓⅔])(?:\s*(?:-|to)\s*\d+(?:[.,/]\d+)?)?"
_LINE = re.compile(rf"^(?P<qty>{_AMOUNT}(?:\s*(?:{_UNITS})\b)?)\s*(?:of\s+)?(?P<name>.+)$", re.IGNORECASE)
_BULLET = re.compile(r"^[-*•]\s+")
_SERVES = re.compile(r"serves\s+(\d+)|(\d+)\s+(?:servings|portions|people)", re.IGNORECASE)

# First matching aisle wins; a word matches when it starts with a keyword ("tomatoes" ~ "tomato").
AISLE_KEYWORDS: dict[str, str] = {
    "produce": "tomato onion garlic carrot potato lemon lime spinach lettuce basil parsley cilantro apple"
    " banana ginger celery mushroom zucchini cucumber avocado herb",
    "dairy": "milk butter cheese yogurt yoghurt cream egg parmesan feta mozzarella",
    "meat": "chicken beef pork lamb bacon sausage fish salmon shrimp tuna turkey mince ham",
    "pantry": "flour sugar rice pasta spaghetti noodle oil salt vinegar bean lentil stock broth spice cumin"
    " paprika oats honey sauce chickpea",
}
DEFAULT_AISLE = "other"


def parse_ingredient(line: str) -> tuple[str | None, str] | None:
    """(quantity, name) for a parsable line, None for one Cooked would not count."""
    text = _BULLET.sub("", line.strip()).strip()
    if not text or text.startswith(("#", "??")):
        return None
    match = _LINE.match(text)
    if match is None:
        return None, text[:1].upper() + text[1:]
    name = match["name"].strip()
    return match["qty"].strip(), name[:1].upper() + name[1:]


def aisle_for(name: str) -> str:
    words = re.findall(r"[a-z]+", name.lower())
    for aisle, keywords in AISLE_KEYWORDS.items():
        if any(w.startswith(k) for w in words for k in keywords.split()):
            return aisle
    return DEFAULT_AISLE


def preview(title: str | None, text: str) -> tuple[str, str, int | None]:
    """Raw text to (title, markdown, portions): amount-led pieces are ingredients, sentences are steps."""
    ingredients: list[str] = []
    steps: list[str] = []
    for chunk in re.split(r"[\n;]+|\.(?:\s+|$)", text):
        chunk = _BULLET.sub("", chunk.strip()).strip()
        if not chunk or chunk.startswith("#") or _SERVES.fullmatch(chunk):
            continue
        if _LINE.match(chunk):
            ingredients.extend(p.strip() for p in chunk.split(",") if p.strip())
        else:
            steps.append(chunk)
    serves = _SERVES.search(text)
    portions = int(serves[1] or serves[2]) if serves else None
    first_line = text.strip().splitlines()[0] if text.strip() else "Untitled"
    chosen = title.strip() if title and title.strip() else first_line[:60].strip()
    return chosen, markdown(ingredients, steps), portions or None


def title_from_url(url: str) -> str:
    parts = urlsplit(url)
    last = next((p for p in reversed(parts.path.split("/")) if p), "")
    words = re.sub(r"\.[a-z0-9]+$", "", last).replace("-", " ").replace("_", " ").strip()
    return words.title() if words else (parts.hostname or "Imported recipe")
