"""A YAML loader that remembers where every key was written.

Validation errors must name the file and line a person has to fix, and PyYAML
silently keeps the last of two duplicate keys; this loader does neither.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


class SpecError(Exception):
    """A problem in features/, located at ``path:line``."""

    def __init__(self, path: Path, line: int | None, message: str) -> None:
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {message}")


class Located(dict[Any, Any]):
    """A mapping that knows the line of itself and of each of its keys."""

    path: Path
    line: int
    key_lines: dict[Any, int]

    def line_of(self, key: Any) -> int:
        return self.key_lines.get(key, self.line)

    def error(self, key: Any | None, message: str) -> SpecError:
        return SpecError(self.path, self.line if key is None else self.line_of(key), message)


def load(path: Path) -> Located:
    """Parse one YAML file whose top level is a mapping."""

    class Loader(yaml.SafeLoader):
        pass

    def construct_mapping(loader: Loader, node: yaml.MappingNode) -> Located:
        mapping = Located()
        mapping.path, mapping.line, mapping.key_lines = path, node.start_mark.line + 1, {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            if key in mapping:
                raise SpecError(path, key_node.start_mark.line + 1, f"duplicate key {key!r}")
            mapping[key] = loader.construct_object(value_node, deep=True)
            mapping.key_lines[key] = key_node.start_mark.line + 1
        return mapping

    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping)
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=Loader)  # noqa: S506 - SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else None
        raise SpecError(path, line, f"invalid YAML: {exc.problem}") from exc
    if not isinstance(data, Located):
        raise SpecError(path, 1, "the top level must be a mapping")
    return data
