"""Install the corpus as a user would and use it from an empty directory; what each step did is
written as JSON to argv[1] (tests/project/test_install.py reads it; tests/background.py starts it).

1. build the wheel from a temp copy of the project (``python -m build``), check it
   (``check-wheel-contents``);
2. make a fresh venv that sees this interpreter's packages (torch, NumPy, pytest, ipykernel: the
   user's own, never installed by us) and install the wheel into it without dependencies;
3. from an empty directory: ``pitfalls run`` on a sample of cases, ``pytest --pyargs
   torch_pitfalls.cases`` on the same sample, ``pitfalls matrix``/``upgrade``/``lint --upgrade``/``lint
   --diff`` on the recorded matrix the wheel ships, and the site's downloaded notebooks of that
   sample in a Jupyter kernel of the venv (nbclient), top to bottom.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

from torch_pitfalls.helpers import stretched

ROOT = Path(__file__).resolve().parent.parent
# A sample that crosses the corpus: a warning, an error, a value through NumPy.
SAMPLE = {"tensor-copy-construct": "dtypes", "backward-twice": "autograd", "from-numpy-shares-memory": "data"}
# The site's downloaded notebooks run in a kernel that has torch and no torch-pitfalls: a value, an
# exception caught and shown, and a helper of the harness inlined (ops_called). A kernel each.
NOTEBOOKS = {
    "nan-grad-through-mask": "autograd",
    "torch-load-weights-only-default": "upgrade",
    "python-loop-vs-broadcast": "devices",
}
LINTED = "import torch\n\n\ndef resume(path):\n    return torch.load(path)\n"  # `pitfalls lint` on the user's file


def main(out: Path) -> None:
    steps: dict[str, dict] = {}
    work = Path(tempfile.mkdtemp(prefix="pitfalls-install-"))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}  # nothing from the checkout

    def step(name, cmd, cwd, **extra_env):
        done = subprocess.run(
            [str(c) for c in cmd],
            cwd=cwd,
            env={**env, **extra_env},
            capture_output=True,
            text=True,
            timeout=stretched(600),
        )
        steps[name] = {
            "rc": done.returncode,
            "stdout": done.stdout[-4000:],
            "stderr": done.stderr[-4000:],
            "head": done.stdout[:400],
        }  # the output's first lines, which a long one's tail loses
        return done

    try:
        src = work / "src"
        src.mkdir()
        for name in ("pyproject.toml", "README.md"):
            shutil.copy(ROOT / name, src / name)
        for name in ("harness", "cases", "reports"):
            shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        dist = work / "dist"
        step("build", [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", dist, src], src)
        wheels = sorted(dist.glob("*.whl"))
        steps["wheel"] = {"names": [w.name for w in wheels]}
        if not wheels:
            return
        step("check-wheel-contents", [Path(sys.executable).parent / "check-wheel-contents", wheels[0]], work)

        venv = work / "venv"
        step("venv", [sys.executable, "-m", "venv", "--without-pip", venv], work)
        site = next((venv / "lib").glob("python*/site-packages"))
        # the user's torch and the rest: this interpreter's packages, seen through a .pth (not installed)
        (site / "_users_own_packages.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
        step(
            "install",
            [
                sys.executable,
                "-m",
                "pip",
                "--python",
                venv / "bin" / "python",
                "install",
                "--quiet",
                "--no-deps",
                "--no-index",
                wheels[0],
            ],
            work,
        )
        empty = work / "empty"
        empty.mkdir()
        py = venv / "bin" / "python"
        step(
            "where",
            [
                py,
                "-c",
                "import torch_pitfalls, torch_pitfalls.cases, pathlib; print(torch_pitfalls.__file__); "
                "print(list(torch_pitfalls.cases.__path__)[0])",
            ],
            empty,
        )
        # the wheel installs one top-level package, torch_pitfalls: no generic `harness` to collide with
        step(
            "no-harness",
            [py, "-c", "import importlib.util, sys; sys.exit(importlib.util.find_spec('harness') is not None)"],
            empty,
        )
        step(
            "run",
            [venv / "bin" / "pitfalls", "run", *SAMPLE, "--device", "cpu", "--json", empty / "report.json"],
            empty,
        )
        steps["run"]["report"] = (
            json.loads((empty / "report.json").read_text()) if (empty / "report.json").exists() else None
        )
        step(
            "pytest",
            [
                py,
                "-m",
                "pytest",
                "--pyargs",
                "torch_pitfalls.cases",
                "-p",
                "no:cacheprovider",
                "-p",
                "no:randomly",
                "-k",
                " or ".join(SAMPLE),
                "-rA",
                "-q",
            ],
            empty,
        )
        # the recorded matrix shipped in the wheel, read from a folder that has none
        step("matrix", [venv / "bin" / "pitfalls", "matrix", "--check"], empty)
        up = step("upgrade", [venv / "bin" / "pitfalls", "upgrade", "2.3.1", "2.6.0", "--json"], empty)
        if up.returncode == 0:  # whole: the step keeps only the last 4000 characters of its output
            result = json.loads(up.stdout)
            steps["upgrade"]["result"] = {"from": result["from"], "to": result["to"], "cases": len(result["cases"])}
        step("upgrade-text", [venv / "bin" / "pitfalls", "upgrade", "2.3.1", "2.6.0"], empty)
        step("upgrade-usage", [venv / "bin" / "pitfalls", "upgrade", "2.6.0", "2.3.1"], empty)
        # the linter's view of an upgrade, and its fixes, on a file of the user's, from the same folder
        (empty / "train.py").write_text(LINTED)
        step("lint-upgrade", [venv / "bin" / "pitfalls", "lint", "--upgrade", "2.3.1", "2.6.0", "train.py"], empty)
        step(
            "lint-upgrade-usage", [venv / "bin" / "pitfalls", "lint", "--upgrade", "2.3.0", "2.6.0", "train.py"], empty
        )
        step(
            "lint-diff",
            [venv / "bin" / "pitfalls", "lint", "--all-versions", "--diff", "--unsafe-fixes", "train.py"],
            empty,
        )
        steps["notebooks"] = notebooks(work, py, empty, env)
    finally:
        out.write_text(json.dumps({"work": str(work), "steps": steps}, indent=1))
        shutil.rmtree(work, ignore_errors=True)


def notebooks(work: Path, py: Path, cwd: Path, env: dict) -> dict:
    """The site's downloaded notebooks, run top to bottom in a kernel of a venv that sees the user's
    torch (and its neighbours) but not torch-pitfalls: no wheel installed, no checkout on its path."""
    import nbclient
    import nbformat

    from docs.site.execute import execute_case
    from docs.site.notebook import download_notebook
    from docs.site.stamp import Stamp
    from torch_pitfalls.loader import load_case

    bare = work / "bare-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", bare], check=True, env=env)
    site = next((bare / "lib").glob("python*/site-packages"))
    # the user's packages as a plain path entry: their .pth files (the checkout's editable install) are not read
    (site / "_users_own_packages.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    py = bare / "bin" / "python"
    probe = subprocess.run([py, "-c", "import torch_pitfalls"], cwd=cwd, env=env, capture_output=True, text=True)
    harness = {"importable": probe.returncode == 0, "stderr": probe.stderr[-300:]}
    results = {}
    kernels = work / "jupyter" / "kernels" / "pitfalls-venv"
    kernels.mkdir(parents=True)
    (kernels / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [str(py), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "torch alone",
                "language": "python",
            }
        )
    )
    os.environ["JUPYTER_PATH"] = str(work / "jupyter")
    for key in ("PYTHONPATH", "VIRTUAL_ENV"):
        os.environ.pop(key, None)
    for case_id, topic in NOTEBOOKS.items():
        lc = load_case(ROOT / "cases" / topic / f"{case_id.replace('-', '_')}.py")
        (work / "site-build").mkdir(exist_ok=True)
        nb = download_notebook(execute_case(lc, work / "site-build", Stamp.here()))
        path = cwd / f"{case_id}.ipynb"
        nbformat.write(nb, path)
        fresh = nbformat.read(path, as_version=4)
        try:
            nbclient.NotebookClient(
                fresh,
                kernel_name="pitfalls-venv",
                timeout=int(stretched(300)),
                allow_errors=False,
                resources={"metadata": {"path": str(cwd)}},
            ).execute()
            where = [o for c in fresh.cells if c.cell_type == "code" for o in c.get("outputs", [])]
            results[case_id] = {
                "ok": True,
                "sources": [c.source for c in fresh.cells],
                "outputs": len(where),
                "calls": {"recorded": _call_texts(nb), "here": _call_texts(fresh)},
            }
        except Exception as exc:  # noqa: BLE001 - the test reports what failed
            results[case_id] = {"ok": False, "error": f"{type(exc).__name__}: {str(exc)[-2000:]}"}
    return {"harness": harness, "runs": results}


def _call_texts(nb) -> dict:
    """What each call cell (``broken("cpu")``, ``fixed("cpu")``) showed, by function."""
    texts = {}
    for cell in nb.cells:
        for name in ("broken", "fixed"):
            if cell.cell_type == "code" and re.match(rf'(?:try:\s+)?{name}\("cpu"\)', cell.source):
                texts[name] = "".join(
                    o.get("text", "") or o.get("data", {}).get("text/plain", "")
                    for o in cell.outputs
                    if o.output_type in ("stream", "execute_result")
                )
    return texts


if __name__ == "__main__":
    main(Path(sys.argv[1]))
