"""Build the version matrix: one torch per venv, one report per version, one version at a time.

    python -m torch_pitfalls.matrix.build [--versions "2.4.1 2.6.0"] [--cases "id ..."] [--keep]

For each version a venv is made with uv (shared cache), torch==VERSION installed with the
project, ``pitfalls run --json`` run in it, the report written to
``reports/torch-<VERSION>-<device>.json``; then the venv is deleted and that torch's wheels are
cleaned from the cache, so the disk holds one version's worth at a time (PyPI's Linux torch is a
CUDA build of 1.4-3.9 GB). The torch of the project's own ``.venv`` (2.13.0, the local CPU
wheel) is run there, without a new venv.

``--watch-proofs`` also runs the watcher's proofs (harness/watch/proofs.py) with each torch and
records them in ``reports/watch-proofs.json``: which releases each run-time detector works on is
observed, not assumed. ``--fix-proofs`` does the same for the linter's fixes
(harness/lint/fix_proofs.py, ``reports/lint-fix-proofs.json``: a fix proven on every release where
its rule applies is safe). ``--skip-cases`` runs only the proofs.

``--cases`` re-runs only those cases and merges their records into the existing report, so a
changed case costs seconds per version, not a full run; ``--stale`` finds them per version: the
cases whose record was made from an older text of the case, or that have none.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from packaging.version import InvalidVersion, Version

from torch_pitfalls.matrix import DEFAULT_VERSIONS, report_path
from torch_pitfalls.run.devices import torch_version
from torch_pitfalls.run.numpy_rule import numpy_requirement
from torch_pitfalls.run.report import build_report, load_report, records_of, write_report
from torch_pitfalls.versions import release_of

ROOT = Path(__file__).resolve().parents[2]
# Optional dependencies of some cases (Case.requires), installed beside each torch. torchvision
# is pinned to the release whose METADATA pins that torch (read from each wheel); 1.13.1's
# torchvision 0.14.1 has no cp311 wheel, and no torchvision pins 2.15.0 (the newest takes
# torch>=2.14). Where it does not install or import, the cases that need it are `unverified` in
# that report, with the reason, never silently skipped.
TORCHVISION = {
    "2.0.1": "0.15.2",
    "2.1.2": "0.16.2",
    "2.2.2": "0.17.2",
    "2.3.1": "0.18.1",
    "2.4.1": "0.19.1",
    "2.5.1": "0.20.1",
    "2.6.0": "0.21.0",
    "2.7.1": "0.22.1",
    "2.8.0": "0.23.0",
    "2.9.1": "0.24.1",
    "2.10.0": "0.25.0",
    "2.11.0": "0.26.0",
    "2.12.1": "0.27.1",
    "2.13.0": "0.28.0",
    "2.14.1": "0.29.1",
}


def case_extras(version: str) -> list[str]:
    vision = TORCHVISION.get(version)
    # torch.utils.tensorboard of torch < 2.0 imports six, which tensorboard no longer brings
    board = ["six", "tensorboard"] if Version(version) < Version("2.0") else ["tensorboard"]
    # onnx-export-dynamo-default exports with what each release's torch.onnx.export needs
    return [*board, f"torchvision=={vision}" if vision else "torchvision", "onnx", "onnxscript"]


class BuildError(Exception):
    pass


def parse_versions(text: str) -> list[str]:
    """Exact releases only ("2.4.1"): a matrix cell names the torch it ran."""
    versions = text.split()
    if not versions:
        raise BuildError("no versions given")
    for v in versions:
        try:
            parsed = Version(v)
        except InvalidVersion:
            raise BuildError(f"bad torch version {v!r}: give exact releases such as 2.4.1") from None
        if parsed.local or parsed.is_prerelease or len(parsed.release) != 3:
            raise BuildError(f"bad torch version {v!r}: give exact releases such as 2.4.1")
    return list(dict.fromkeys(versions))


def _run(cmd: list, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], **kw)


def _installed_torch(python: Path) -> str | None:
    out = _run([python, "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True)
    return out.stdout.strip() if out.returncode == 0 else None


def _du(*paths: Path) -> int:
    """Bytes on disk under paths, hard links counted once (uv links venvs to its cache)."""
    existing = [str(p) for p in paths if p.exists()]
    if not existing:
        return 0
    out = _run(["du", "-scb", *existing], capture_output=True, text=True)
    return int(out.stdout.split()[-2]) if out.returncode == 0 else 0


def make_venv(uv: Path, version: str, venv: Path, cache: Path, python: str, index: str | None = None) -> Path:
    env = {**os.environ, "UV_CACHE_DIR": str(cache)}
    if venv.exists():
        shutil.rmtree(venv)
    _run([uv, "venv", "--quiet", "--python", python, venv], env=env, check=True)
    py = venv / "bin" / "python"
    pins = [f"torch=={version}", *filter(None, [numpy_requirement(version)])]
    # An extra index (PyTorch's CPU wheels on CI) comes first for uv: torch is taken from it.
    extra = ["--extra-index-url", index] if index else []
    done = _run([uv, "pip", "install", "--quiet", "--python", py, *extra, *pins, "-e", ROOT], env=env)
    if done.returncode != 0:
        raise BuildError(f"torch {version}: uv could not install it (exit {done.returncode})")
    for spec in case_extras(version):  # one at a time: one that has no wheel here leaves the others
        got = _run([uv, "pip", "install", "--quiet", "--python", py, *extra, *pins, spec], env=env)
        if got.returncode != 0:
            print(
                f"matrix: torch {version}: {spec} did not install beside it; the cases that need it will be unverified",
                file=sys.stderr,
            )
    # The guard other projects' matrices lack: the torch that runs is the torch the cell names.
    got = _installed_torch(py)
    if got is None or release_of(got) != Version(version):
        raise BuildError(f"torch {version}: the venv imports torch {got}, not {version}")
    return py


def clean_cache(uv: Path, venv: Path, cache: Path) -> None:
    """Remove this version's heavy wheels (torch, triton, nvidia-*) from uv's cache."""
    heavy = sorted(
        {
            d.name.split("-")[0].replace("_", "-")
            for d in (venv / "lib").glob("python*/site-packages/*.dist-info")
            if d.name.startswith(("torch-", "triton-", "nvidia_", "nvidia-"))
        }
    )
    if heavy:
        _run([uv, "cache", "clean", "--quiet", *heavy], env={**os.environ, "UV_CACHE_DIR": str(cache)})


def run_cases(python: Path, device: str, cases: list[str], out: Path, cases_dir: Path) -> int:
    """`pitfalls run` in the version's interpreter; exit 0 or 1 both give a report."""
    cmd = [python, "-m", "torch_pitfalls", "--cases", cases_dir, "run", "--device", device, "-q", "--json", out, *cases]
    return _run(cmd, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}).returncode


# Proofs that run in each release's interpreter and are filed under the release, beside the
# reports: (the module that proves, its record file, the record's schema). Which releases each
# run-time detector works on (--watch-proofs) and each lint fix is proven on (--fix-proofs) is
# observed, not assumed.
WATCH_PROOFS = ("torch_pitfalls.watch.proofs", "watch-proofs.json", "torch-pitfalls/watch-proofs")
FIX_PROOFS = ("torch_pitfalls.lint.fix_proofs", "lint-fix-proofs.json", "torch-pitfalls/lint-fix-proofs")


def run_proofs(kind: tuple[str, str, str], python: Path, version: str, reports: Path, cases_dir: Path) -> dict:
    """``python -m <module> --json`` in the version's interpreter (a subprocess: the matrix does
    not import what it proves), its record filed under the release in ``reports/<file>``."""
    module, name, schema = kind
    with tempfile.TemporaryDirectory(prefix="pitfalls-proofs-") as tmp:
        out = Path(tmp) / "proofs.json"
        cmd = [python, "-m", module, "--cases", cases_dir, "--json", out]
        _run(cmd, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
        if not out.exists():
            raise BuildError(f"torch {version}: {module} wrote nothing")
        record = json.loads(out.read_text())
    path = reports / name
    whole = json.loads(path.read_text()) if path.exists() else {"schema": schema, "releases": {}}
    whole["releases"][version] = record
    whole["releases"] = dict(sorted(whole["releases"].items(), key=lambda kv: Version(kv[0])))
    write_report(whole, path)
    return record


def merge(old: dict, new: dict, cases: list[str]) -> dict:
    """The old report with these cases' records replaced by the new run's."""
    if release_of(old["torch"]) != release_of(new["torch"]):
        raise BuildError(f"cannot merge a torch {new['torch']} run into a report of torch {old['torch']}")
    fresh = {(r.case, r.device): r for r in records_of(new)}
    records = [fresh.pop((r.case, r.device), r) for r in records_of(old)]
    records += fresh.values()  # a new case
    started = dt.datetime.fromisoformat(old["started"])
    env = {k: new[k] for k in ("torch", "torch_cuda", "torch_git", "python", "platform", "devices", "provenance")}
    merged = build_report(records, started, env)
    merged["argv"] = old["argv"]
    merged["updated"] = [*old.get("updated", []), {"finished": new["finished"], "cases": cases}]
    return merged


def outdated_cases(reports: Path, version: str, device: str, cases_dir: Path) -> list[str]:
    """The cases whose record in this version's report is stale or missing (``--stale``)."""
    from torch_pitfalls.matrix import NOT_OBSERVED, STALE, load_matrix

    matrix = load_matrix(reports, cases_dir)
    return [c.id for c in matrix.cases if matrix.cell(c.id, version, device).status in (STALE, NOT_OBSERVED)]


def build_version(version: str, args, main_torch: str, cases: list[str]) -> dict:
    """One version: venv, run, report, clean up. Returns figures for the summary."""
    t0, out = time.perf_counter(), report_path(args.reports, version, args.device)
    work = Path(args.workdir)
    venv, cache = work / f"venv-{version}", work / "uv-cache"
    own = release_of(main_torch) == Version(version)
    if cases and not out.exists():
        raise BuildError(f"torch {version}: no report at {out} to merge --cases into; run it whole first")
    peak = 0
    try:
        python = (
            Path(sys.executable) if own else make_venv(Path(args.uv), version, venv, cache, args.python, args.index)
        )
        peak = _du(venv, cache)
        for wanted, kind, what in (
            (args.watch_proofs, WATCH_PROOFS, "the watcher's detectors"),
            (args.fix_proofs, FIX_PROOFS, "the linter's fixes"),
        ):
            if wanted:
                proofs = run_proofs(kind, python, version, Path(args.reports), Path(args.cases_dir))
                print(
                    f"matrix: torch {version}: {what}: {proofs['proven']} of {proofs['total']} proven",
                    file=sys.stderr,
                    flush=True,
                )
        if args.skip_cases:
            return {
                "version": version,
                "report": None,
                "seconds": round(time.perf_counter() - t0, 1),
                "peak_bytes": peak,
                "totals": {},
            }
        with tempfile.TemporaryDirectory(prefix="pitfalls-matrix-") as tmp:
            fresh = Path(tmp) / out.name
            rc = run_cases(python, args.device, cases, fresh, Path(args.cases_dir))
            if not fresh.exists():
                raise BuildError(f"torch {version}: the run exited {rc} and wrote no report")
            report = load_report(fresh)
            if cases:
                report = merge(load_report(out), report, cases)
            write_report(report, out)
    finally:
        if not args.keep and not own:
            if venv.exists():
                if not args.keep_cache:
                    clean_cache(Path(args.uv), venv, cache)
                shutil.rmtree(venv)
    return {
        "version": version,
        "report": str(out),
        "seconds": round(time.perf_counter() - t0, 1),
        "peak_bytes": peak,
        "totals": report["totals"],
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m torch_pitfalls.matrix.build", description=__doc__.split("\n")[0])
    p.add_argument("--versions", default=" ".join(DEFAULT_VERSIONS), help="torch releases (default: %(default)s)")
    p.add_argument("--cases", default="", help="only these case ids, merged into the existing reports")
    p.add_argument(
        "--stale",
        action="store_true",
        help="per version, only the cases whose record is stale or missing (no report: all)",
    )
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    p.add_argument(
        "--watch-proofs",
        action="store_true",
        help="also run the watcher's proofs with each torch (reports/watch-proofs.json)",
    )
    p.add_argument(
        "--fix-proofs",
        action="store_true",
        help="also prove each `pitfalls lint --fix` by running it with each torch "
        "(reports/lint-fix-proofs.json: what makes a fix safe)",
    )
    p.add_argument("--skip-cases", action="store_true", help="with --watch-proofs or --fix-proofs: run only those")
    p.add_argument("--reports", default=str(ROOT / "reports"))
    p.add_argument("--cases-dir", default=str(ROOT / "cases"))
    p.add_argument("--workdir", default=str(ROOT / "build" / "matrix"))
    p.add_argument("--uv", default=shutil.which("uv", path=str(Path(sys.executable).parent)) or "uv")
    p.add_argument(
        "--python",
        default=getattr(sys, "_base_executable", sys.executable),
        help="the interpreter each venv is made from",
    )
    p.add_argument("--index", help="an extra wheel index for torch, e.g. https://download.pytorch.org/whl/cpu")
    p.add_argument("--keep", action="store_true", help="keep each venv and its wheels in the cache")
    p.add_argument(
        "--keep-cache",
        action="store_true",
        help="delete each venv but keep its wheels in uv's cache (about 2.5 GB a release), so a "
        "re-run of some cases (CASES=stale) installs from disk instead of downloading",
    )
    args = p.parse_args(argv)
    args.cases = args.cases.split()
    try:
        versions = parse_versions(args.versions)
        from torch_pitfalls.loader import load_cases

        known = {lc.id for lc in load_cases(Path(args.cases_dir))}
        unknown = [c for c in args.cases if c not in known]
        if unknown:
            raise BuildError(f"unknown case id {unknown[0]!r}")
    except Exception as exc:  # BuildError, a malformed case: nothing is built
        print(f"matrix: error: {exc}", file=sys.stderr)
        return 2
    main_torch = torch_version()  # this interpreter's: that release runs here, with no venv
    figures, failed, t0 = [], [], time.perf_counter()
    for version in versions:
        print(f"matrix: torch {version} ...", file=sys.stderr, flush=True)
        cases = args.cases
        try:
            if args.stale and report_path(args.reports, version, args.device).exists():
                cases = outdated_cases(Path(args.reports), version, args.device, Path(args.cases_dir))
                if not cases:
                    print(f"matrix: torch {version}: every record is fresh, nothing to run", file=sys.stderr)
                    continue
            fig = build_version(version, args, main_torch, cases)
        except (BuildError, subprocess.CalledProcessError, ValueError) as exc:
            print(f"matrix: error: {exc}", file=sys.stderr, flush=True)
            failed.append(version)
            continue
        figures.append(fig)
        print(
            f"matrix: torch {version}: {fig['totals']} in {fig['seconds']} s, "
            f"peak {fig['peak_bytes'] / 2**30:.1f} GiB -> {fig['report']}",
            file=sys.stderr,
            flush=True,
        )
    peak = max((f["peak_bytes"] for f in figures), default=0)
    print(
        json.dumps(
            {
                "versions": len(figures),
                "failed": failed,
                "wall_s": round(time.perf_counter() - t0, 1),
                "peak_disk_gib": round(peak / 2**30, 2),
            }
        )
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
