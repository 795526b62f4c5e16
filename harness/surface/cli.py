"""``python -m torch_pitfalls.surface scan|fetch|diff``: the surface scan from a terminal (``make upgrade-scan``)."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from packaging.version import Version

import torch_pitfalls.surface
from torch_pitfalls.surface.diff import diff, print_diff
from torch_pitfalls.surface.fetch import fetch
from torch_pitfalls.surface.scan import scan_tree


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m torch_pitfalls.surface", description=torch_pitfalls.surface.__doc__.split("\n")[0]
    )
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("scan", help="scan an installed torch package directory")
    s.add_argument("torch_dir", type=Path)
    s.add_argument("--out", type=Path, required=True)
    f = sub.add_parser("fetch", help="download each torch (no dependencies), scan it, delete it")
    f.add_argument("versions", nargs="*", help="releases (default: the matrix's)")
    f.add_argument("--force", action="store_true", help="scan again a release already scanned")
    f.add_argument("--uv", default=shutil.which("uv", path=str(Path(sys.executable).parent)) or "uv")
    f.add_argument("--out", type=Path, default=Path("build/surface"))
    d = sub.add_parser("diff", help="what changed between consecutive scanned releases")
    d.add_argument("directory", type=Path, nargs="?", default=Path("build/surface"))
    d.add_argument("--from", dest="start")
    d.add_argument("--to", dest="end")
    d.add_argument("--all", action="store_true", help="include torch's internal packages")
    d.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    if args.command == "scan":
        if not (args.torch_dir / "version.py").is_file():
            p.error(f"{args.torch_dir} is not a torch package directory (no version.py)")
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(scan_tree(args.torch_dir), indent=0, sort_keys=True))
        return 0
    if args.command == "fetch":
        from torch_pitfalls.matrix import DEFAULT_VERSIONS  # the releases the matrix runs

        fetch(args.versions or list(DEFAULT_VERSIONS), args.uv, args.out, args.force)
        return 0
    files = sorted(args.directory.glob("torch-*.json"), key=lambda f: Version(f.stem.split("-", 1)[1].split("+")[0]))
    surfaces = [json.loads(f.read_text()) for f in files]
    if len(surfaces) < 2:
        p.error(f"{args.directory}: fewer than two scanned releases (run `fetch` first)")
    pairs = list(zip(surfaces, surfaces[1:]))

    def rel(s):
        return Version(s["torch"].split("+")[0])

    if args.start:
        pairs = [(a, b) for a, b in pairs if rel(a) >= Version(args.start)]
    if args.end:
        pairs = [(a, b) for a, b in pairs if rel(b) <= Version(args.end)]
    diffs = [diff(a, b, args.all) for a, b in pairs]
    if args.json:
        json.dump(diffs, sys.stdout, indent=1)
    else:
        for d in diffs:
            print_diff(d)
    return 0
