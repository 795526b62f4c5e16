"""The GitHub workflows: what each runs, and that each is safe to enable (zizmor, offline)."""

from __future__ import annotations

import shutil
import subprocess

import pytest
import yaml
from planting import ROOT

from torch_pitfalls.helpers import stretched
from torch_pitfalls.matrix import DEFAULT_VERSIONS

WORKFLOWS = ROOT / ".github" / "workflows"


def load(name: str) -> dict:
    workflow = yaml.safe_load((WORKFLOWS / name).read_text())
    workflow["on"] = workflow.pop(True, workflow.get("on"))  # YAML 1.1 reads the key `on` as True
    return workflow


def runs(job: dict) -> str:
    return " ".join(step.get("run", "") for step in job["steps"])


def test_zizmor_finds_nothing_in_the_workflows():
    """Actions pinned to commits, least permissions, no persisted credentials, no expression
    expanded in a script: zizmor's own audits, offline, at its strictest persona that a
    self-hosted GPU lane can pass (the one finding it cannot is ignored inline, with its reason)."""
    zizmor = shutil.which("zizmor", path=str(ROOT / ".venv" / "bin")) or shutil.which("zizmor")
    if zizmor is None:
        pytest.skip("zizmor is not installed (pip install -e '.[test]')")
    for persona in ("regular", "pedantic", "auditor"):
        done = subprocess.run(
            [zizmor, "--offline", f"--persona={persona}", "--no-progress", str(ROOT / ".github")],
            capture_output=True,
            text=True,
            timeout=stretched(120),
        )
        assert done.returncode == 0 and "No findings to report" in done.stdout + done.stderr, (
            persona,
            done.stdout[-3000:] + done.stderr[-3000:],
        )


def test_every_action_is_pinned_to_a_commit_with_its_release_named():
    for path in WORKFLOWS.glob("*.yml"):
        for line in path.read_text().splitlines():
            if "uses:" in line:
                ref = line.split("uses:")[1].split("#")[0].strip()
                assert len(ref.split("@")[1]) == 40 and "# v" in line, f"{path.name}: {line.strip()}"


def test_the_matrix_workflow_builds_the_default_versions_with_the_same_targets():
    jobs = load("matrix.yml")["jobs"]
    assert tuple(jobs["version"]["strategy"]["matrix"]["torch"]) == DEFAULT_VERSIONS
    assert jobs["version"]["env"]["TORCH_RELEASE"] == "${{ matrix.torch }}"
    assert 'make matrix VERSIONS="$TORCH_RELEASE"' in runs(jobs["version"])
    assert "want == got == recorded" in runs(jobs["version"])  # the guard step
    assert "make matrix-check" in runs(jobs["merge"])
    for target in ("matrix", "matrix-check", "docs", "docs-check"):  # the targets exist and expand without running
        dry = subprocess.run(["make", "-n", target, "VERSIONS=2.4.1"], cwd=ROOT, capture_output=True, text=True)
        assert dry.returncode == 0, dry.stderr
    assert (
        "torch_pitfalls.matrix.build"
        in subprocess.run(["make", "-n", "matrix"], cwd=ROOT, capture_output=True, text=True).stdout
    )


def test_the_docs_workflow_builds_with_make_docs_and_deploys_that_folder_to_pages():
    workflow = load("docs.yml")
    build, deploy = workflow["jobs"]["build"], workflow["jobs"]["deploy"]
    assert "make docs-check" in runs(build)  # built by `make docs`, then its tests
    (upload,) = [s for s in build["steps"] if "upload-pages-artifact" in s.get("uses", "")]
    assert upload["with"]["path"] == "build/site"  # where `make docs` writes the site
    assert deploy["needs"] == "build" and deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert workflow["permissions"] == {"contents": "read"}


def test_the_gpu_workflow_runs_the_cuda_lane_on_a_self_hosted_gpu_runner_by_hand_only():
    workflow = load("gpu.yml")
    assert set(workflow["on"]) == {"workflow_dispatch"}  # never a pull request's code
    (job,) = workflow["jobs"].values()
    assert job["runs-on"] == ["self-hosted", "linux", "gpu"]
    assert "python3 -m pytest cases/" in runs(job) and "--pitfalls-json" in runs(job) and "-cuda.json" in runs(job)
    assert "pip install" not in runs(job)  # the runner's own torch, never replaced
