"""`pitfalls lint` on real PyTorch code, side by side with TorchFix.

    .venv/bin/python benchmarks/lint_real_code.py build/realcode/src --json build/lint-real.json

SRC holds one folder per package (the .py files of its wheel, unzipped: torchvision, timm,
lightning, transformers, ...). The script reports

* lines checked (physical lines of every *.py file), per package and in all;
* findings per 1,000 lines per rule: `pitfalls lint` (every rule, ``--all-versions``) over every
  file, in process; TorchFix (``--select ALL``) over the speed sample below;
* speed in lines per second, on one sample of files (each package's files in sorted order, every
  k-th, about ``--sample-lines`` lines per package; every file when a package is smaller), copied
  to a temporary folder (with each package's declaration: its ``*.dist-info``, ``pyproject.toml``,
  ``setup.cfg``) that each tool gets as its one argument: `pitfalls lint` in process
  (``lint_text`` over every file with the rules and releases ``--all-versions`` gives it:
  harness/lint/scope.py, each package's declared torch; reading the files included), and as a
  subprocess (``python -m torch_pitfalls lint --all-versions --format json DIR``), and TorchFix as a
  subprocess (``python -m torchfix --select ALL -j 1 DIR``). The tools take turns (the order
  alternates from one repetition to the next); the median wall time of ``--reps`` repetitions
  counts, and the ratio is pitfalls-lint speed / TorchFix speed, subprocess to subprocess.

TorchFix reads only the files that contain the word "torch" (its own shortcut); both tools are
charged for the same lines, those of every file they were given. Its speed on the whole of a
large package (transformers: over a million lines, at under a thousand lines a second) would
take the better part of an hour per repetition, hence the sample. Standard library only (plus
the harness and TorchFix in the same environment).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from torch_pitfalls.lint import lint_text, python_files  # noqa: E402
from torch_pitfalls.lint.scope import FileRules  # noqa: E402

TORCHFIX_LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<rule>TOR\d+)\b")


def count_lines(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def packages(src: Path) -> dict[str, list[Path]]:
    return {p.name: python_files([p]) for p in sorted(src.iterdir()) if p.is_dir()}


def sample(files: list[Path], lines: dict[Path, int], target: int) -> list[Path]:
    """Every k-th file (sorted), k chosen so that the sample has about ``target`` lines."""
    total = sum(lines[f] for f in files)
    stride = max(1, round(total / target)) if target else 1
    return files[::stride]


def per_kloc(counts: Counter, lines: int) -> dict[str, float]:
    return {rule: round(1000 * n / lines, 4) for rule, n in sorted(counts.items())}


def lint_all(texts: dict[Path, str]) -> tuple[list, FileRules]:
    """Every file as ``pitfalls lint --all-versions`` checks it (its package's declared torch)."""
    scope, found = FileRules(None), []
    for path, text in texts.items():
        rules, releases = scope.for_path(path)
        found += lint_text(text, str(path), rules, releases=releases)
    return found, scope


def run_inprocess(folder: Path) -> tuple[float, list]:
    start = time.perf_counter()
    texts = {path: read(path) for path in python_files([folder])}
    found, _ = lint_all({p: t for p, t in texts.items() if t is not None})
    return time.perf_counter() - start, found


def copy_declarations(src: Path, dest: Path) -> None:
    """A package folder's declaration files (what --all-versions reads), beside its copied code."""
    for pkg in (p for p in src.iterdir() if p.is_dir()):
        for info in pkg.glob("*.dist-info"):
            shutil.copytree(info, dest / pkg.name / info.name, dirs_exist_ok=True)
        for name in ("pyproject.toml", "setup.cfg"):
            if (pkg / name).is_file():
                (dest / pkg.name).mkdir(parents=True, exist_ok=True)
                shutil.copyfile(pkg / name, dest / pkg.name / name)


def run_subprocess(cmd: list[str]) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    return time.perf_counter() - start, done


def pitfalls_cmd(folder: Path) -> list[str]:
    return [sys.executable, "-m", "torch_pitfalls", "lint", "--all-versions", "--format", "json", str(folder)]


def torchfix_cmd(folder: Path) -> list[str]:
    return [sys.executable, "-m", "torchfix", "--select", "ALL", "-j", "1", str(folder)]


def torchfix_findings(stdout: str) -> list[tuple[str, int, str]]:
    out = []
    for line in stdout.splitlines():
        m = TORCHFIX_LINE.match(line)
        if m:
            out.append((m["path"], int(m["line"]), m["rule"]))
    return out


def main(argv=None) -> int:  # noqa: C901 - one command's options, read in order
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("src", type=Path, help="one folder per package")
    ap.add_argument("--json", type=Path, help="write the results here")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument(
        "--sample-lines",
        type=int,
        default=25_000,
        help="about this many lines per package in the speed sample (0: every file)",
    )
    args = ap.parse_args(argv)

    pkgs = packages(args.src)
    texts: dict[Path, str] = {}
    for files in pkgs.values():
        for f in files:
            t = read(f)
            if t is not None:
                texts[f] = t
    lines = {f: count_lines(t) for f, t in texts.items()}
    per_pkg = {
        name: {"files": len(files), "lines": sum(lines.get(f, 0) for f in files)} for name, files in pkgs.items()
    }
    total_lines = sum(p["lines"] for p in per_pkg.values())

    # --- pitfalls lint over everything, in process -------------------------------------------
    start = time.perf_counter()
    everything, scope = lint_all(texts)
    full_s = time.perf_counter() - start
    rules = scope.every_rule()
    by_rule = Counter(f.rule for f in everything)
    by_pkg_rule: dict[str, Counter] = {name: Counter() for name in pkgs}
    for f in everything:
        by_pkg_rule[Path(f.path).relative_to(args.src).parts[0]][f.rule] += 1

    # --- the speed sample ---------------------------------------------------------------------
    with tempfile.TemporaryDirectory(prefix="lint-real-") as tmp:
        folder = Path(tmp) / "sample"
        chosen = {
            name: sample([f for f in files if f in texts], lines, args.sample_lines) for name, files in pkgs.items()
        }
        for files in chosen.values():
            for f in files:
                dest = folder / f.relative_to(args.src)
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(f, dest)
        copy_declarations(args.src, folder)
        sample_lines = {name: sum(lines[f] for f in files) for name, files in chosen.items()}
        n_sample = sum(sample_lines.values())
        runs = {"pitfalls-lint (in process)": [], "pitfalls-lint (subprocess)": [], "torchfix (subprocess)": []}
        tf_out = pl_out = None
        for rep in range(args.reps):
            order = list(runs)
            if rep % 2:
                order.reverse()
            for tool in order:
                if tool == "pitfalls-lint (in process)":
                    secs, _ = run_inprocess(folder)
                elif tool == "pitfalls-lint (subprocess)":
                    secs, done = run_subprocess(pitfalls_cmd(folder))
                    if done.returncode not in (0, 1):
                        raise SystemExit(f"pitfalls lint failed ({done.returncode}): {done.stderr[-1000:]}")
                    pl_out = done.stdout
                else:
                    secs, done = run_subprocess(torchfix_cmd(folder))
                    if done.returncode not in (0, 1) or "Finished checking" not in done.stderr:
                        raise SystemExit(f"torchfix failed ({done.returncode}): {done.stderr[-1000:]}")
                    tf_out = done.stdout
                runs[tool].append(secs)
                print(f"  rep {rep + 1}: {tool}: {secs:.2f} s", file=sys.stderr, flush=True)
        tf_found = torchfix_findings(tf_out or "")
        pl_sample = json.loads(pl_out)["findings"] if pl_out else []

    speed = {
        tool: {
            "seconds": [round(s, 3) for s in secs],
            "median_s": round(statistics.median(secs), 3),
            "lines_per_s": round(n_sample / statistics.median(secs)),
        }
        for tool, secs in runs.items()
    }
    ratio = speed["pitfalls-lint (subprocess)"]["lines_per_s"] / speed["torchfix (subprocess)"]["lines_per_s"]
    tf_rules = Counter(r for _, _, r in tf_found)
    result = {
        "src": str(args.src),
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
        "lines": {"total": total_lines, "files": sum(p["files"] for p in per_pkg.values()), "packages": per_pkg},
        "pitfalls_lint_all": {
            "rules": len(rules),
            "declared": {d.root.name: d.text for d in scope.declarations.values()},
            "seconds": round(full_s, 3),
            "lines_per_s": round(total_lines / full_s),
            "findings": len(everything),
            "per_rule": dict(sorted(by_rule.items())),
            "per_kloc": per_kloc(by_rule, total_lines),
            "per_package": {name: dict(sorted(c.items())) for name, c in by_pkg_rule.items()},
            "list": [[f.path, f.line, f.rule] for f in everything],
        },
        "speed": {
            "sample": {
                "lines": n_sample,
                "per_package": sample_lines,
                "files": sum(len(v) for v in chosen.values()),
                "lines_per_package_target": args.sample_lines,
            },
            "reps": args.reps,
            "tools": speed,
            "ratio_pitfalls_over_torchfix_subprocess": round(ratio, 2),
        },
        "sample_findings": {
            "pitfalls-lint": {
                "findings": len(pl_sample),
                "per_kloc": per_kloc(Counter(f["rule"] for f in pl_sample), n_sample),
            },
            "torchfix": {"findings": len(tf_found), "per_kloc": per_kloc(tf_rules, n_sample)},
        },
    }
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1) + "\n")

    # --- the short table ----------------------------------------------------------------------
    print(f"lines checked: {total_lines} in {result['lines']['files']} files")
    for name, p in per_pkg.items():
        print(f"  {name:<14} {p['lines']:>9} lines {p['files']:>5} files")
    print(
        f"pitfalls lint, every file in process: {full_s:.1f} s, {total_lines / full_s:,.0f} lines/s, "
        f"{len(everything)} findings ({1000 * len(everything) / total_lines:.3f} per 1,000 lines)"
    )
    print(f"{'rule':<8} {'findings':>8} {'per kloc':>9}  " + " ".join(f"{n[:12]:>12}" for n in pkgs))
    for rule, n in sorted(by_rule.items()):
        print(
            f"{rule:<8} {n:>8} {1000 * n / total_lines:>9.4f}  "
            + " ".join(f"{by_pkg_rule[name][rule]:>12}" for name in pkgs)
        )
    print(
        f"speed sample: {n_sample} lines ({', '.join(f'{k} {v}' for k, v in sample_lines.items())}), "
        f"median of {args.reps}"
    )
    for tool, s in speed.items():
        print(f"  {tool:<28} {s['median_s']:>8.2f} s {s['lines_per_s']:>10,} lines/s")
    print(f"  ratio pitfalls lint / TorchFix (subprocess to subprocess): {ratio:.1f}x")
    print(
        f"findings per 1,000 lines on the sample: pitfalls lint {1000 * len(pl_sample) / n_sample:.3f}, "
        f"TorchFix {1000 * len(tf_found) / n_sample:.3f}"
    )
    for rule, n in sorted(tf_rules.items()):
        print(f"  {rule:<8} {n:>6} {1000 * n / n_sample:>9.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
