# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `torch.onnx.export` switches to the `torch.export`-based exporter in 2.9, which needs onnxscript
#
# A deployment script has exported its model the same way for years:
# `torch.onnx.export(model, (x,), "model.onnx", input_names=["x"], output_names=["y"],
# dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})`. Its requirements list `torch` and
# `onnx`, because the TorchScript-based exporter has needed `onnx` since 2.0. After the upgrade to 2.9 the
# same line fails before exporting anything: `ModuleNotFoundError: No module named
# 'onnxscript'`. The 2.8 release printed a `DeprecationWarning` first ("Starting in PyTorch 2.9,
# the new torch.export-based ONNX exporter will be the default"). Python hides that category
# unless the call sits in `__main__`, so many users never saw it.

# %%
import json
import re
import tempfile

import torch

from torch_pitfalls import observe, run_python

# %% [markdown]
# ## The broken code
# The export runs in a fresh interpreter, so that the environment can be set up without
# touching the test process. The child is a machine with `onnx` installed and **without**
# `onnxscript`, as in the downstream reports below. To reproduce that whatever this venv holds,
# the child refuses to import `onnxscript` the way Python does for a package that is not
# installed. It exports a one-layer model with a dynamic batch axis. Then it reports, as JSON:
# what the export raised, which warnings it gave, the exported input's dimensions, and the
# output of the exported graph on a batch of 5 (the model was exported with a batch of 4). The
# graph is run with `onnx`'s own reference evaluator, so no runtime is needed.

# %%
W = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]]  # the Linear(3, 2) weights, set by hand
B = [0.1, -0.2]
XS = [[float(3 * i + j) for j in range(3)] for i in range(5)]  # the batch of 5 the graph is run on

PROBE = """
import json, os, sys, tempfile, warnings
BLOCK = {block!r}
if BLOCK:
    import importlib.abc

    class _NotInstalled(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == BLOCK or name.startswith(BLOCK + "."):
                raise ModuleNotFoundError(f"No module named {{BLOCK!r}}", name=BLOCK)
            return None

    sys.meta_path.insert(0, _NotInstalled())
import torch

model = torch.nn.Linear(3, 2).eval()
with torch.no_grad():
    model.weight.copy_(torch.tensor({W!r}))
    model.bias.copy_(torch.tensor({B!r}))
x = torch.ones(4, 3)
release = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
report = {{"error": None, "missing": None, "message": None, "returned": None, "warnings": [],
          "input_dims": None, "y": None}}
with tempfile.TemporaryDirectory() as folder:
    path = os.path.join(folder, "model.onnx")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
{call}
            report["returned"] = type(result).__name__
        except Exception as exc:
            report["error"] = type(exc).__name__
            report["missing"] = getattr(exc, "name", None)
            report["message"] = (str(exc).splitlines() or [""])[0][:200]
    report["warnings"] = [[w.category.__name__, (str(w.message).splitlines() or [""])[0][:160]] for w in caught]
    if report["error"] is None and os.path.exists(path):
        import numpy as np
        import onnx
        from onnx.reference import ReferenceEvaluator

        proto = onnx.load(path)  # external data (model.onnx.data, written from 2.9) is read from the folder
        report["input_dims"] = [d.dim_param or d.dim_value for d in proto.graph.input[0].type.tensor_type.shape.dim]
        xs = np.array({XS!r}, dtype=np.float32)
        report["y"] = ReferenceEvaluator(proto).run(None, {{"x": xs}})[0].tolist()
print("REPORT " + json.dumps(report))
"""

LEGACY_CALL = """\
            result = torch.onnx.export(model, (x,), path, input_names=["x"], output_names=["y"],
                                       dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})"""


def _export_in_child(call, block=None):
    code = PROBE.format(block=block, call=call, W=W, B=B, XS=XS)
    with tempfile.TemporaryDirectory() as folder:
        child = run_python(code, cwd=folder, timeout=240.0)
    lines = [line for line in child.stdout.splitlines() if line.startswith("REPORT ")]
    if child.returncode != 0 or not lines:
        raise RuntimeError(f"probe failed ({child.returncode}): {child.stderr.strip()[-800:]}")
    return json.loads(lines[-1][len("REPORT ") :])


def broken(device):
    # `device` plays no part: the exporter works on a CPU model.
    return _export_in_child(LEGACY_CALL, block="onnxscript")


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `torch.onnx.export` used to trace the model into TorchScript and convert that graph to ONNX.
# The function gained a `dynamo` keyword in 2.4 (then routed to the older `dynamo_export`,
# which ignored most arguments). From 2.5, `dynamo=True` captures the model with `torch.export`
# and builds the ONNX graph with the `onnxscript` library. `onnxscript` is an
# optional dependency that torch's wheel does not install. In pytorch/pytorch#159646 ("[ONNX]
# Default to dynamo export", August 2025) the default became `dynamo=True`, and 2.9 shipped it.
# The new path imports `onnxscript` first thing (`torch/onnx/_internal/exporter/_core.py`), so
# an environment without it fails at that import, whatever the model. With `onnxscript`
# installed, the old call does export, but through the new path. It warns that `dynamic_axes`
# "is not recommended when dynamo=True" and converts it to `dynamic_shapes`, and it writes the
# weights to a separate `model.onnx.data` file beside the model.
#
# `dynamo=False` still selects the old exporter, and many projects pinned it. It is not a quiet
# way out. From 2.8 the old path warns `DeprecationWarning` that it is legacy, and from 2.7
# every old-path export also warns `DeprecationWarning: The feature will be removed`, from
# torch's own call of a helper it had deprecated. Before 2.4 the keyword does not exist, and
# passing it is a `TypeError`.
#
# ## The fix
# Depend on `onnxscript` (what ray, darts and rsl_rl did), and say which exporter you want. Use
# the new one where torch already recommends it, and the old one before that:
# - From 2.8 (the release whose legacy path tells you to switch), `dynamo=True` with
#   `dynamic_shapes` (a `torch.export.Dim` for the batch axis) instead of `dynamic_axes`.
# - Before 2.8, the unchanged call. There it is the default exporter, and an `onnxscript`
#   version that matches those older releases is a separate question.
#
# The branch on the release is needed because no single spelling works everywhere:
# `dynamo=True` means the torch.export-based exporter only from 2.5, and on 2.5–2.6 the old path
# is still the default and warns nothing (2.7 adds only torch's internal warning named above).
#
# The check evaluates the exported graph on a batch of 5 (it was exported with 4, so the batch
# axis really is dynamic). It compares with x Wᵀ + b worked out from the weights by hand, and
# requires that the export gave no warning about the choice of exporter or `dynamic_axes`.

# %%
FIXED_CALL = """\
            if release >= (2, 8):  # the torch.export-based exporter: default from 2.9, announced in 2.8
                batch = torch.export.Dim("batch")
                result = torch.onnx.export(model, (x,), path, input_names=["x"], output_names=["y"],
                                           dynamo=True, dynamic_shapes=({0: batch},))
            else:  # the TorchScript-based exporter, the default (and the only one) there
                result = torch.onnx.export(model, (x,), path, input_names=["x"], output_names=["y"],
                                           dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})"""


def fixed(device):
    return _export_in_child(FIXED_CALL)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# Downstream reports of the 2.9 break:
# - open-edge-platform/anomalib#3050 ("Onnx export fails for torch 2.9.0 and above with missing
#   `onnxscript`. `ModuleNotFoundError: No module named 'onnxscript'`").
# - PriorLabs/TabPFN#554, which set `dynamo=False`: "torch 2.9 came out and changed dynamo to
#   be the default onnx export mode ... this requires the onnxscript dependency, which we don't
#   have".
# - unit8co/darts#2930 and leggedrobotics/rsl_rl#127 added `onnxscript`.
# - ray-project/ray#64410 pinned `onnxscript>=0.6.2`: 0.5.x rejected every model the new
#   exporter emits. It also rewrote RLlib's examples for the new exporter.
# - Xilinx/brevitas#1526 routes by release ("never forward the `dynamo` kwarg on PyTorch
#   <2.5").
# - doobidoo/mcp-memory-service#1202 guards `dynamo=False` with `inspect.signature`.
# - In ultralytics/ultralytics#20348, torch's ONNX maintainer justinchuby says: "onnxscript is
#   an optional requirement for torch needed for the new exporter".
#
# Upstream:
# - pytorch/pytorch#159646 flipped the default.
# - The 2.9.1, 2.10.0 and 2.13.0 wheels have `dynamo: bool = True`, and the 2.8.0 wheel
#   `dynamo: bool = False` with the legacy-path `DeprecationWarning`.
# - The 2.0.1 wheel's legacy path calls `_add_onnxscript_fn`, which raises "Module onnx is not
#   installed!" without `onnx`. 1.13.1 needs no `onnx`.
#
# Observed here on torch 2.13.0 only, with onnx 1.23.2 and onnxscript 0.7.2 installed beside the
# venv:
# - `broken` (child without onnxscript) raised `ModuleNotFoundError: No module named
#   'onnxscript'`.
# - Without the block, the same old call exported through the new path. It gave the warnings
#   about `dynamic_axes` (`UserWarning`, and a `DeprecationWarning` from
#   `from_dynamic_axes_to_dynamic_shapes`).
# - `fixed` exported, the graph evaluated to x Wᵀ + b on a batch of 5, and the only warning was
#   a `FutureWarning` from inside torch ("`isinstance(treespec, LeafSpec)` is deprecated"), raised
#   while `torch.export` deep-copies its own tree specs. It is not caused by the call, and no
#   argument avoids it.
#
# The 2.8 form (the heads-up warning) and the 2.9 boundary come from the wheels, not from runs.
# The version matrix has to confirm them, and whether the `onnxscript` it installs works with
# 2.8's exporter.

# %% [markdown]
# ## How the harness checks it
# The near miss is another missing package in the same call: the child blocks `onnx`, not
# `onnxscript`. On 2.9+ it fails with a `ModuleNotFoundError` too (onnxscript imports onnx). On
# 2.0–2.8 it fails with torch's `OnnxExporterError: Module onnx is not installed!`, and on 1.13
# it exports. The symptom asks for the error and for the missing module to be `onnxscript`, so
# it refuses all three. The 2.8 form is the heads-up `DeprecationWarning` on an export that
# worked.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source

EXPORTER_CHOICE = re.compile(r"legacy TorchScript-based|dynamic_axes|onnxscript", re.IGNORECASE)


def symptom(run):
    """2.9 on: the old call goes to the torch.export-based exporter, which cannot start without
    onnxscript; 2.8: the old call still exports and warns that this default changes in 2.9."""
    if run.error is not None or not isinstance(run.value, dict):
        return False
    seen = run.value
    if seen["error"] == "ModuleNotFoundError" and seen["missing"] == "onnxscript":
        return "ModuleNotFoundError"
    if seen["error"] is None and any(
        category == "DeprecationWarning" and "Starting in PyTorch 2.9" in message
        for category, message in seen["warnings"]
    ):
        return "DeprecationWarning"
    return False


def near_miss(device):
    return _export_in_child(LEGACY_CALL, block="onnx")


def check(run, device):
    """The export worked; the graph, run on a batch of 5 (exported with 4), gives x W^T + b
    worked out by hand; and nothing warned about the exporter choice or dynamic_axes."""
    assert run.error is None and isinstance(run.value, dict), f"raised {run.error!r}"
    seen = run.value
    assert seen["error"] is None, f"the export raised {seen['error']}: {seen['message']}"
    assert isinstance(seen["input_dims"][0], str) and seen["input_dims"][1] == 3, seen["input_dims"]
    expected = [[sum(xi * wi for xi, wi in zip(row, w_row)) + b for w_row, b in zip(W, B)] for row in XS]
    torch.testing.assert_close(torch.tensor(seen["y"]), torch.tensor(expected))
    about_exporter = [m for _, m in seen["warnings"] if EXPORTER_CHOICE.search(m)]
    assert not about_exporter, f"warned about the exporter: {about_exporter[0]}"


def stable(value):
    """What the fingerprint keeps: the outcome, not the wording of torch's internal warnings."""
    return {k: value[k] for k in ("error", "missing", "returned", "input_dims")} if isinstance(value, dict) else value


CASE = Case(
    id="onnx-export-dynamo-default",
    title="torch.onnx.export switches to the torch.export-based exporter in 2.9, which needs onnxscript",
    kind="error",
    symptom_category="error",
    symptom_line="After upgrading to 2.9, torch.onnx.export fails: No module named 'onnxscript'.",
    affects=(
        Affects(
            ">=2.9",
            form="ModuleNotFoundError",
            reason="dynamo=True is the default; the new exporter imports onnxscript first (2.9, from the wheels)",
            issue="https://github.com/pytorch/pytorch/pull/159646",
        ),
        Affects(
            ">=2.8,<2.9",
            form="DeprecationWarning",
            reason="the legacy exporter, still the default, warns that the torch.export-based one becomes "
            "the default in 2.9 (read in the 2.8.0 wheel's torch/onnx/__init__.py, not run)",
            issue="https://github.com/pytorch/pytorch/pull/159646",
        ),
    ),
    devices=("cpu",),
    device_independent=True,  # an export runs on the CPU whatever the model is meant for
    sources=(
        Source(
            title="pytorch/pytorch#159646: [ONNX] Default to dynamo export",
            url="https://github.com/pytorch/pytorch/pull/159646",
        ),
    ),
    tags=("upgrade", "onnx", "export", "dependency"),
    references=(
        "https://github.com/pytorch/pytorch/pull/159646",  # 2.9: dynamo=True by default
        "https://github.com/open-edge-platform/anomalib/issues/3050",  # downstream: No module named 'onnxscript' on 2.9
        "https://github.com/PriorLabs/TabPFN/pull/554",  # downstream: dynamo=False
        "https://github.com/unit8co/darts/pull/2930",  # downstream: onnxscript added
        "https://github.com/leggedrobotics/rsl_rl/pull/127",  # downstream: onnxscript added
        "https://github.com/ray-project/ray/pull/64410",  # downstream: onnxscript>=0.6 + new exporter
        "https://github.com/Xilinx/brevitas/pull/1526",  # downstream: routing by release
        "https://github.com/doobidoo/mcp-memory-service/pull/1202",  # downstream: dynamo=False behind a signature test
        "https://github.com/ultralytics/ultralytics/issues/20348",  # maintainer: onnxscript is an optional requirement
    ),
    # Each variant starts a fresh Python that imports torch, onnx and onnxscript and runs an export.
    timeout=300.0,
    requires=("onnx", "onnxscript"),
)
