"""The bundle's icon, drawn here so no binary file is kept in the repository.

A 512x512 PNG (the size Claude Desktop recommends): a cooking pot (white) on a round tomato-red badge. Standard library
only (zlib + struct); the same bytes every build.
"""

from __future__ import annotations

import struct
import zlib
from typing import Final

SIZE: Final = 512
_BADGE: Final = (214, 69, 65, 255)
_POT: Final = (255, 255, 255, 255)
_CLEAR: Final = (0, 0, 0, 0)


def _pixel(x: int, y: int) -> tuple[int, int, int, int]:
    cx = cy = SIZE / 2
    if (x + 0.5 - cx) ** 2 + (y + 0.5 - cy) ** 2 > (SIZE / 2 - 4) ** 2:
        return _CLEAR
    x, y = x // 2, y // 2  # the shapes are drawn on a 256-unit grid
    in_body = 72 <= x < 184 and 112 <= y < 184
    in_rim = 60 <= x < 196 and 100 <= y < 114
    in_lid_knob = 116 <= x < 140 and 84 <= y < 100
    in_handles = (44 <= x < 60 or 196 <= x < 212) and 120 <= y < 134
    return _POT if in_body or in_rim or in_lid_knob or in_handles else _BADGE


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png() -> bytes:
    rows = b"".join(b"\x00" + bytes(c for x in range(SIZE) for c in _pixel(x, y)) for y in range(SIZE))
    header = struct.pack(">IIBBBBB", SIZE, SIZE, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(rows, 9))
        + _chunk(b"IEND", b"")
    )
