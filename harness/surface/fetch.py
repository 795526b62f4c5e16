"""Each release fetched alone (its wheel, no dependencies), scanned and deleted: scans, not installs, stay."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from torch_pitfalls.surface.scan import scan_tree


def fetch(versions: list[str], uv: str, out: Path, force: bool = False) -> None:
    """Install each torch alone (no dependencies) into a temp dir, scan it, delete it; a release
    already scanned is kept unless ``force``."""
    out.mkdir(parents=True, exist_ok=True)
    for version in versions:
        if (out / f"torch-{version}.json").exists() and not force:
            print(f"surface: torch {version}: already scanned ({out / f'torch-{version}.json'})")
            continue
        with tempfile.TemporaryDirectory(prefix=f"surface-{version}-", dir=out) as tmp:
            env = {**os.environ, "UV_CACHE_DIR": str(Path(tmp) / "cache")}
            cmd = [
                uv,
                "pip",
                "install",
                "--quiet",
                "--no-deps",
                "--python",
                sys.executable,
                "--target",
                str(Path(tmp) / "site"),
                f"torch=={version}",
            ]
            done = subprocess.run(cmd, env=env)
            if done.returncode != 0:
                raise SystemExit(f"surface: torch {version}: uv could not fetch it (exit {done.returncode})")
            surface = scan_tree(Path(tmp) / "site" / "torch")
        target = out / f"torch-{version}.json"
        target.write_text(json.dumps(surface, indent=0, sort_keys=True))
        print(
            f"surface: torch {version}: {len(surface['warnings'])} warnings, "
            f"{len(surface['signatures'])} signatures, {len(surface['native'])} native messages -> {target}"
        )
