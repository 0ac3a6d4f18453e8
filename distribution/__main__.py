"""``python -m distribution``: write server.json, or build the MCP Bundle from a built wheel.

    python -m distribution server-json [--check]   # server.json in the repository root
    python -m distribution bundle WHEEL OUT.mcpb     # make bundle

``--check`` exits 1 when the committed server.json differs from what the metadata gives
(make test runs it through tests/distribution).
"""

from __future__ import annotations

import argparse
import sys
import zipfile
from pathlib import Path

from . import icon, metadata

#: A fixed timestamp for every entry, so the same inputs give the same bundle bytes.
_EPOCH = (2026, 1, 1, 0, 0, 0)


def write_server_json(check: bool) -> int:
    text = metadata.render_json(metadata.server_json(metadata.load()))
    current = metadata.SERVER_JSON.read_text("utf-8") if metadata.SERVER_JSON.exists() else None
    if check:
        if current != text:
            print("server.json is stale: run python -m distribution server-json", file=sys.stderr)
            return 1
        return 0
    if current != text:
        metadata.SERVER_JSON.write_text(text, "utf-8")
    return 0


def build_bundle(wheel: Path, out: Path) -> int:
    meta = metadata.load()
    if wheel.name != meta.wheel_name:
        print(f"expected the wheel {meta.wheel_name}, got {wheel.name}: run make dist", file=sys.stderr)
        return 1
    files: dict[str, bytes] = {
        "manifest.json": metadata.render_json(metadata.bundle_manifest(meta)).encode(),
        "pyproject.toml": metadata.bundle_pyproject(meta).encode(),
        metadata.BUNDLE_ENTRY_POINT: metadata.BUNDLE_MAIN.encode(),
        f"{metadata.BUNDLE_WHEELS}/{wheel.name}": wheel.read_bytes(),
        "icon.png": icon.png(),
        "LICENSE": (metadata.ROOT / "LICENSE").read_bytes(),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, _EPOCH)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, files[name])
    print(f"wrote {out} ({out.stat().st_size // 1024} KiB)")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m distribution")
    commands = parser.add_subparsers(dest="command", required=True)
    server = commands.add_parser("server-json", help="write server.json from the metadata")
    server.add_argument("--check", action="store_true", help="only check that server.json is up to date")
    bundle = commands.add_parser("bundle", help="build the MCP Bundle from a built wheel")
    bundle.add_argument("wheel", type=Path)
    bundle.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    if args.command == "server-json":
        return write_server_json(args.check)
    return build_bundle(args.wheel, args.out)


if __name__ == "__main__":
    sys.exit(main())
