"""The watcher beside its peers: the same broken and fixed programs run under each tool, and what
each tool said about them, judged by hand; then what each tool costs one training loop.

    .venv/bin/python benchmarks/watch_peers.py --peers-site /tmp/peers-site --json reports/watch-peers.json

``--peers-site`` is a folder the peers were installed into without touching the project's torch
(``pip install --no-deps --target DIR`` of torch-audit 0.3.0, guardtower 0.1.0, torchtest2 0.1.0,
traincheck 0.2.0, and of their own non-torch dependencies: TrainCheck's astor, numba, llvmlite,
pandas, python-dateutil, polars, polars-runtime-32, orjson, watchdog, pytz, tzdata); a tool that
is not there is recorded as not run, with the error. ``--cases ID ...`` and ``--tools NAME ...``
run part of the study and replace those rows of the record at ``--json``; ``--no-overhead``
leaves the recorded overhead as it is; ``--rejudge`` runs nothing and applies ``VERDICTS`` again
to the record's reports (by their digests), after verdicts were written for a run's reports.

The programs are the broken and the fixed variant of the 14 cases whose silent training failures
the watcher's round-2 detectors report (``CASES``). Each case is imported with
``torch_pitfalls.loader.load_case``, and each (case, variant, tool) runs in a fresh child
interpreter on the CPU (one torch thread), one at a time. How each tool is applied, following its
own README (the long description in its wheel's METADATA):

* ``watch`` and ``watch-pedantic``: the project's watcher, through ``proofs.watched`` (the
  function the detectors' proofs run a variant with): ``watch(explain=False)`` around the
  variant, with the sound detectors, or every detector with ``pedantic=True``.
* ``detect-anomaly``: ``with torch.autograd.detect_anomaly(): variant("cpu")``. What it reports
  is the error it raises and the warning that carries the forward traceback; its notice that
  anomaly detection is on is not a report.
* ``torch-audit``: its zero-touch mode, as the README's Quick Start writes it: ``auditor =
  autopatch(model, optimizer=optimizer, every_n_steps=1, run_static=True, run_init=True)``
  ("set to 1 to audit every step": these programs run a few dozen steps, under the default
  1000 only the first would be audited), then ``auditor.finish()`` and ``auditor.unpatch()`` when
  the variant returns. Its findings of severity WARN and above are the report, one line per
  finding (a finding repeated at every step is counted); its INFO hints ("consider AMP") are
  kept in the record as ``info``.
* ``guardtower``: its two documented calls. ``guardtower.audit(model, lambda: loss_fn(model(x),
  y), optimizer=optimizer, inputs=x)`` ("full pre-flight (runs one step)") on the first real
  batch, like its Trainer callback, which "audits the model on the first real batch". And
  ``with guardtower.monitor(model, on_nonfinite="raise")`` around the rest of the run ("keep a
  cheap NaN watch on a real run"). A variant that steps no optimizer has no training step for
  ``audit`` to repeat, so it gets only the monitor. Its WARN and FAIL findings are the report, and
  the monitor's ``NonFiniteActivation``; its INFO lines ("all trainable parameters receive
  gradient") are kept as ``info``.
* ``torchtest2``: ``torchtest2.check_model(model, inputs, targets, loss_fn=loss_fn,
  optimizer=optimizer)`` on the first real batch, as its Quick start calls it. ``frozen=`` names
  what the variant means to have frozen from the start, where its code says so; README: "Name
  the parameters you expect to be frozen with ``frozen=``". ``batch_dim=1`` is given where the
  data is sequence-first (``TORCHTEST2_ARGS``). A variant that steps no optimizer gets the
  minimum call, ``check_model(model, inputs)``, on the model it built, once it has returned. Its
  FAIL and WARN lines are the report (PASS and SKIP are not).
* ``traincheck``: its four steps, as its README gives them, each its own command. (1)
  ``traincheck-collect --pyscript program.py --models-to-track NAME`` on the case's fixed
  variant, the reference. (2) ``traincheck-infer -f reference_trace -o invariants.json``. (3)
  ``traincheck-collect --invariants invariants.json`` on the variant checked. (4) ``traincheck-check
  -f target_trace -i invariants.json``. Its report is the list of invariants the checked run
  violated (``violations_summary.json``). TrainCheck instruments the script's own source: it
  wraps the assignments of the tracked model in a proxy and marks the steps of loops that look
  like training. So ``program.py`` is the case file's own code with its ``if __name__ ==
  "__main__":`` demo blocks switched off, and one call of the variant at the end. ``NAME`` is
  the variable the case keeps its model in (``TRAINCHECK_MODELS``). TrainCheck's runner replaces
  ``PYTHONPATH`` with the script's folder, so the program is run through a shell script (its
  ``--shscript`` option) that puts the peers' folder back. The fixed row checks the fixed
  variant against the invariants of its own reference run: the same program run twice. A
  violation there is a false alarm.

The three tools that sit in the training loop (torch-audit, guardtower, torchtest2) need the
model, the optimizer and a batch, which a case builds inside its variant. ``Attachment`` finds
them in the child interpreter. Finding them changes nothing the variant computes; a tool's own
work may (guardtower's audit runs one more forward and backward on the first batch):

* ``nn.Module.__call__`` is wrapped at the class. The first module with parameters called from
  outside any module's forward is the variant's model, and the tool is attached to it before
  that call runs.
* ``torch.optim.Optimizer.__init__`` is wrapped to note each optimizer built.
* ``F.mse_loss`` and ``F.cross_entropy`` are wrapped to note the loss function and the target of
  the latest call.
* A global optimizer-step pre-hook runs the pre-flight tools once, at the variant's first
  ``optimizer.step()``: its backward has run by then, so a tool's own step cannot disturb it.

Two variants call two modules in turn rather than one model: the exploding-gradients RNN and its
head, and the two layers of inplace-edit-through-data. A tool that takes one ``model(inputs)`` is
given the smallest module that calls them as the variant does (``COMPOSE``). A hook-based tool
is attached to each module.

Every report is judged by hand (``VERDICTS``): whether it is about the case's pitfall, with one
line why. A verdict is keyed by a digest of the report's text, numbers and addresses left out,
so a report that changes is "unjudged": its text is printed to stderr, and the script exits 1.
TrainCheck's reports vary between two runs of the same program: its invariants about object
identity (a tensor's ``data_ID`` or ``grad_ID``, "receives distinct arguments") come and go as the
addresses do, and are left out of its digest. Another line that came in one run and not the other
gave a second digest, read and judged like the first (a verdict may hold several). The record
keeps each report whole (``report``), a short ``excerpt``, and the verdict.

Overhead: one training loop, the ``mlp`` and ``training_step`` of
``benchmarks/test_bench_watch_overhead.py``. It is ``mlp([128, 512, 512, 10])``, batch 64, Adam
(lr 1e-3), ``OVERHEAD_STEPS`` steps. It is run plain and under each tool as applied above, in
interleaved rounds: each round runs every side once, starting one side later than the round
before. A side's ratio is the median over the rounds of its loop time over the plain loop of the
same round, in CPU seconds of the process (wall-clock ratios are recorded beside them). A side's
time includes its one-off work: a pre-flight check, an audit at the end. TrainCheck runs the loop
in its own instrumented interpreter, so its rounds are separate and fewer: a plain interpreter,
reference collection and checking collection, each timing the same loop from inside the program.
Only ratios are recorded; nothing is asserted about time.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CASES_DIR = ROOT / "cases"
DEFAULT_JSON = ROOT / "reports" / "watch-peers.json"

CASES = (
    "requires-grad-typo",
    "frozen-params-keep-moving",
    "loss-rewrapped-from-item",
    "parameter-unused-in-forward",
    "graph-cut-in-forward",
    "submodules-in-plain-list",
    "init-after-load-state-dict",
    "inplace-edit-through-data",
    "rnn-batch-first-mismatch",
    "training-data-not-shuffled",
    "exploding-gradients-without-clipping",
    "forgot-train-after-eval",
    "frozen-by-name-filter",
    "model-eval-freezes-nothing",
)
VARIANTS = ("broken", "fixed")

# tool -> (its name, the distribution whose version is recorded or None for the project and torch,
# how it is applied)
TOOLS = {
    "watch": ("pitfalls watch", None, "proofs.watched(variant, 'cpu'): the sound detectors"),
    "watch-pedantic": (
        "pitfalls watch --pedantic",
        None,
        "proofs.watched(variant, 'cpu', pedantic=True): every detector, the heuristic ones too",
    ),
    "detect-anomaly": ("torch.autograd.detect_anomaly", None, "with torch.autograd.detect_anomaly(): variant('cpu')"),
    "torch-audit": (
        "torch-audit",
        "torch-audit",
        "autopatch(model, optimizer=optimizer, every_n_steps=1, run_static=True, run_init=True) on the "
        "variant's model as it is first called; finish() and unpatch() when the variant returns",
    ),
    "guardtower": (
        "guardtower",
        "guardtower",
        "guardtower.audit(model, lambda: loss_fn(model(x), y), optimizer=optimizer, inputs=x) on the first "
        "batch, at the first optimizer step; guardtower.monitor(model, on_nonfinite='raise') around the run",
    ),
    "torchtest2": (
        "torchtest2",
        "torchtest2",
        "torchtest2.check_model(model, x, y, loss_fn=loss_fn, optimizer=optimizer) on the first batch, at "
        "the first optimizer step; check_model(model, x) after a variant that steps no optimizer",
    ),
    "traincheck": (
        "TrainCheck",
        "traincheck",
        "traincheck-collect on the fixed variant (the reference), traincheck-infer, traincheck-collect "
        "--invariants on the variant checked, traincheck-check",
    ),
}
PEER_MODULES = {"torch-audit": "torch_audit", "guardtower": "guardtower", "torchtest2": "torchtest2"}

# A tool that takes one model(inputs) is given these, where a variant calls two modules in turn:
# case -> (the modules' names in the variant, in the order it first calls them; the variant's
# forward, written with them).
COMPOSE = {
    "exploding-gradients-without-clipping": (("rnn", "head"), lambda m, x: m.head(m.rnn(x)[0][-1])),
    "inplace-edit-through-data": (("layer1", "layer2"), lambda m, x: m.layer2(m.layer1(x).tanh())),
}

# torchtest2's arguments that state what the variant's code means (its README's frozen= and
# batch_dim=): the part meant to be frozen from the first step, and sequence-first data.
TORCHTEST2_ARGS = {
    "requires-grad-typo": {"frozen": ["backbone"]},  # "p.require_grad = False" on model.backbone
    "model-eval-freezes-nothing": {"frozen": ["backbone"]},  # "meant as 'freeze the backbone'"
    "frozen-by-name-filter": {"frozen": ["features"]},  # "train only the fc head": the backbone frozen
    "exploding-gradients-without-clipping": {"batch_dim": 1, "output_batch_dim": 0},  # x is (seq, batch, 1)
}

# TrainCheck's --models-to-track: the variables the case's code keeps its model in.
TRAINCHECK_MODELS = {
    "rnn-batch-first-mismatch": ["lstm"],
    "exploding-gradients-without-clipping": ["rnn", "head"],
    "inplace-edit-through-data": ["layer1", "layer2"],
}

OVERHEAD_STEPS = 200
OVERHEAD_ROUNDS = 10
TRAINCHECK_ROUNDS = 3
CHILD_TIMEOUT_S = 600

# (case, variant, tool) -> (digest of the report's text, on target?, why). Written by hand after
# reading each report (the script prints an unjudged one in full). On target: the report is about
# the case's pitfall. On a fixed variant, any report is a false alarm, and the why says of what.
# A tool that failed (no report) has None. TrainCheck's broken reports were read beside the fixed
# program's self-check: a violation that also comes when the reference is checked against itself
# is not about anything the broken program does.
_TA200 = (
    "only TA200, torch-audit's tensor-core alignment hint (Linear sizes not multiples of 8): a speed hint "
    "about layer sizes, the same on the broken and the fixed program; nothing about the pitfall"
)
_OVERFIT = (
    "only overfit_batch's WARN: its own 200 steps on the first batch did not bring this small model to 10% "
    "of its first loss; a heuristic that fires on broken and fixed programs alike, not the pitfall"
)
_TC_SELF = (
    "the reference program checked against its own invariants: every violation (torch internals such as "
    "Library.impl() and CustomOpDef.register_fake(), and the sampled steps) is a false alarm, none about "
    "the pitfall"
)
_TC_CRASH = (
    "no report: traincheck-check crashed (IndexError in get_returned_tensors, "
    "invariant/consistency_transient_vars.py, on a call whose returned value was empty)"
)


def _watch(case_text: str) -> str:
    return f"names the case at the line where it happens: {case_text}"


VERDICTS: dict[tuple[str, str, str], tuple[str | tuple[str, ...], bool | None, str]] = {
    # -- pitfalls watch (the sound detectors; --pedantic adds the two heuristic ones below)
    **{
        (case, "broken", tool): (d, True, _watch(why))
        for tool in ("watch", "watch-pedantic")
        for case, d, why in (
            ("requires-grad-typo", "830d1eb7c6cf647c", "p.require_grad = False, a typo that freezes nothing"),
            (
                "frozen-params-keep-moving",
                "28e2e6de319d28df",
                "the step that moved the frozen backbone (zeroed .grad tensors, momentum)",
            ),
            ("loss-rewrapped-from-item", "4655104ce1068ab7", "backward() on the leaf rebuilt from .item(), each step"),
            ("parameter-unused-in-forward", "00d1fa1544177103", "fc2, in the optimizer, never got a gradient"),
            ("graph-cut-in-forward", "3d184b03f40e6e0f", "the encoder never got a gradient: the graph cut in forward"),
            ("submodules-in-plain-list", "b657375190252894", "blocks run in forward but kept in a plain list"),
            ("init-after-load-state-dict", "5e7a6234cf2551d4", "the init overwrote what load_state_dict loaded"),
            ("inplace-edit-through-data", "14500b1b71422182", "the .data clamp between forward and backward"),
            ("rnn-batch-first-mismatch", "d956f7d2856ac82c", "out[:, -1] on a batch_first=False LSTM's output"),
            ("training-data-not-shuffled", "8ef3cd51f0963313", "batches in dataset order, one label each"),
            ("exploding-gradients-without-clipping", "14c5594b2e0f374e", "the loss grew, then inf/nan: clip it"),
            ("forgot-train-after-eval", "6588de39ccacf255", "training steps in eval mode after validation"),
        )
    },
    ("frozen-by-name-filter", "broken", "watch-pedantic"): (
        "8ac464bb3abe35d6",
        True,
        _watch("(heuristic) the output layer frozen while earlier layers train: a name filter"),
    ),
    ("model-eval-freezes-nothing", "broken", "watch-pedantic"): (
        "3f5f284a12b768e8",
        True,
        _watch("(heuristic) the backbone put in eval mode, and its weights still updated"),
    ),
    # -- torch.autograd.detect_anomaly
    ("exploding-gradients-without-clipping", "broken", "detect-anomaly"): (
        "26e161b9536f15ce",
        True,
        "raised at the first nan gradient (TanhBackward0 returned nan), with the forward traceback: the end of "
        "the explosion, where it turned nan; nothing says the gradients grew, or to clip them",
    ),
    # -- guardtower
    ("parameter-unused-in-forward", "broken", "guardtower"): (
        "597e5c0890e8215f",
        True,
        "GRAD-001: two trainable parameters (fc2.weight ...) received no gradient and will never update",
    ),
    ("graph-cut-in-forward", "broken", "guardtower"): (
        "f94bbfc72849878e",
        True,
        "GRAD-001: the encoder's parameters received no gradient; INPUT-001: the loss does not depend on the "
        "input: both the graph cut inside forward",
    ),
    ("exploding-gradients-without-clipping", "broken", "guardtower"): (
        "3e94bc2f43a76844",
        True,
        "its monitor raised at the RNN's first non-finite activation: the explosion, stopped where it turned "
        "inf; nothing about clipping",
    ),
    # -- torch-audit
    **{
        (case, variant, "torch-audit"): (d, False, _TA200)
        for case, variants, d in (
            ("requires-grad-typo", ("broken", "fixed"), "f1041e37339e8abe"),
            ("frozen-params-keep-moving", ("broken", "fixed"), "f1041e37339e8abe"),
            ("loss-rewrapped-from-item", ("fixed",), "e1eba5c8f4766302"),
            ("parameter-unused-in-forward", ("fixed",), "41be6bdb4047c3da"),
            ("submodules-in-plain-list", ("fixed",), "13e5a677f523ca8b"),
            ("init-after-load-state-dict", ("broken", "fixed"), "92df6bf8e4342ef1"),
            ("inplace-edit-through-data", ("broken", "fixed"), "e1eba5c8f4766302"),
            ("training-data-not-shuffled", ("broken", "fixed"), "e1eba5c8f4766302"),
            ("exploding-gradients-without-clipping", ("fixed",), "e1eba5c8f4766302"),
            ("forgot-train-after-eval", ("broken", "fixed"), "aabec454af479567"),
            ("frozen-by-name-filter", ("broken", "fixed"), "b615eff916ca7647"),
        )
        for variant in variants
    },
    ("loss-rewrapped-from-item", "broken", "torch-audit"): (
        "9e2e2ef1b5e48d08",
        True,
        "TA104 at every step: no gradients found in the model (it guesses a forgotten loss.backward(); backward "
        "ran, on the leaf rebuilt from .item()): the pitfall's symptom; the other line is TA200",
    ),
    ("parameter-unused-in-forward", "broken", "torch-audit"): (
        "5baf2fc2fa6cecf2",
        True,
        "TA500: fc2 defined but never called (a zombie layer), at every step; the other lines are TA200",
    ),
    **{
        ("graph-cut-in-forward", variant, "torch-audit"): (
            "645edd87bc662749",
            False,
            _TA200 + " (its TA104 wants no gradient anywhere in the model, and the head after the cut has one)",
        )
        for variant in ("broken", "fixed")
    },
    ("submodules-in-plain-list", "broken", "torch-audit"): (
        "ea9d9816070e6846",
        False,
        "only TA200, for the head: the blocks kept in a plain list are not in the model it audits, so it "
        "neither sees nor reports them",
    ),
    ("exploding-gradients-without-clipping", "broken", "torch-audit"): (
        "ae8df2926f5e8a30",
        True,
        "TA102: the global gradient norm over its threshold, step after step, then TA100: NaN/Inf in the "
        "parameters and gradients: the explosion; nothing says to clip",
    ),
    **{
        ("model-eval-freezes-nothing", variant, "torch-audit"): (
            "48900851c3dfb772",
            False,
            "TA400 (a Linear with a bias before BatchNorm: a redundant bias) and TA200: architecture hints, the "
            "same on the fixed program; nothing about eval() not freezing the backbone",
        )
        for variant in ("broken", "fixed")
    },
    # -- torchtest2 (check_model on the first batch)
    **{
        (case, variant, "torchtest2"): ("2b77ca0341f769ca", False, _OVERFIT)
        for case, variant in (
            ("requires-grad-typo", "fixed"),
            ("loss-rewrapped-from-item", "fixed"),
            ("parameter-unused-in-forward", "fixed"),
            ("submodules-in-plain-list", "broken"),
            ("submodules-in-plain-list", "fixed"),
            ("training-data-not-shuffled", "fixed"),
            ("frozen-by-name-filter", "fixed"),
            ("model-eval-freezes-nothing", "fixed"),
        )
    },
    ("requires-grad-typo", "broken", "torchtest2"): (
        "e1c4fc27b3a112f9",
        True,
        "frozen_params FAIL: the backbone, named with frozen=['backbone'] as its README asks, changed after a "
        "step (requires_grad still True?): found through the intent it was given; plus overfit_batch's WARN",
    ),
    ("loss-rewrapped-from-item", "broken", "torchtest2"): (
        "2b77ca0341f769ca",
        False,
        "only overfit_batch's WARN: its own steps use the loss function the loop calls (F.mse_loss); the "
        "rebuild from .item() is in the loop, which it does not run",
    ),
    ("parameter-unused-in-forward", "broken", "torchtest2"): (
        "0a27bf4c31c36551",
        True,
        "gradient_flow and params_change FAIL: fc2.weight and fc2.bias get no gradient and do not change "
        "(unused in forward); plus overfit_batch's WARN",
    ),
    ("graph-cut-in-forward", "broken", "torchtest2"): (
        "3de729f9fce7f0d2",
        True,
        "gradient_flow and params_change FAIL for the encoder (a graph cut by no_grad?), and input_dependency "
        "FAIL; batch_independence fails too, as on the fixed program",
    ),
    ("graph-cut-in-forward", "fixed", "torchtest2"): (
        "3a10fab290995651",
        False,
        "batch_independence FAIL: the model standardises its features over the batch (mean and std over dim 0) "
        "by design, so the samples do depend on each other; true of the model, not the pitfall",
    ),
    ("rnn-batch-first-mismatch", "broken", "torchtest2"): (
        "cc2135675fea2f7c",
        True,
        "batch_independence FAIL: changing sample 0 changed sample 1's output ('a batch_first mix-up?')",
    ),
    ("exploding-gradients-without-clipping", "broken", "torchtest2"): (
        "70750a621dc54eb1",
        True,
        "overfit_batch FAIL: the loss became inf after 20 of its own steps with the program's optimizer (lr too "
        "high? unstable ops?): the explosion, without naming clipping",
    ),
    ("exploding-gradients-without-clipping", "fixed", "torchtest2"): (
        "70750a621dc54eb1",
        True,
        "the same overfit_batch FAIL: its own steps run the optimizer without the clipping the fixed program "
        "does in its loop, so it reports the explosion the fix prevents: a false alarm",
    ),
    ("frozen-by-name-filter", "broken", "torchtest2"): (
        "635641c308c24272",
        True,
        "frozen_params FAIL: given frozen=['features'], it names the squeeze-excite fc1 and fc2 that still "
        "train: the filter froze the wrong names; it does not say the head is frozen; plus overfit_batch's WARN",
    ),
    ("model-eval-freezes-nothing", "broken", "torchtest2"): (
        "066d8ab12f5ef555",
        True,
        "frozen_params FAIL: given frozen=['backbone'], the backbone's weights changed after a step: eval() "
        "froze nothing; plus overfit_batch's WARN",
    ),
    # -- TrainCheck (invariants of the fixed program; the broken one checked against them). "The
    # self-check": the fixed program checked against the invariants of its own reference run.
    **{
        (case, "fixed", "traincheck"): (d, False, _TC_SELF)
        for case, d in (
            ("requires-grad-typo", "e50fed8bf6a9fa7b"),
            ("frozen-params-keep-moving", "c8a4c80a688a3436"),
            ("loss-rewrapped-from-item", "c2270c793df41b83"),
            ("parameter-unused-in-forward", "cbb8b1d74cd5f707"),
            ("graph-cut-in-forward", "682945b239034283"),
            ("submodules-in-plain-list", "7f3ef91f9514e646"),
            ("rnn-batch-first-mismatch", "590a5b4710ccec66"),
            ("training-data-not-shuffled", "c2270c793df41b83"),
            ("exploding-gradients-without-clipping", "0ef030e5633d5515"),
            # two runs: "Sequential.forward() always calls functional.batch_norm()" violated in one only
            ("forgot-train-after-eval", ("faae762397db68ed", "bf7fa0bf4b90b234")),
            ("frozen-by-name-filter", "bfdbe5507d756911"),
            ("model-eval-freezes-nothing", "90f0e6ff6032e67f"),
        )
    },
    ("init-after-load-state-dict", "broken", "traincheck"): ("749525da18fe0915", None, _TC_CRASH),
    ("init-after-load-state-dict", "fixed", "traincheck"): ("282a4a371ab69e68", None, _TC_CRASH),
    ("requires-grad-typo", "broken", "traincheck"): (
        "40f2a51b4c37adc9",
        True,
        "the violations the self-check does not have are all about the backbone: its Sequential and Tanh now "
        "return tensors that require grad, with a grad_fn, where the reference's frozen backbone returned none: "
        "the backbone is not frozen",
    ),
    ("frozen-params-keep-moving", "broken", "traincheck"): (
        "c8a4c80a688a3436",
        False,
        "its violations are those of the self-check: nothing about the backbone moving after the freeze",
    ),
    ("loss-rewrapped-from-item", "broken", "traincheck"): (
        "0e730729b8ebca6c",
        True,
        "the violations the self-check does not have say SGD.step() no longer calls sgd.sgd() or changes "
        "Parameter.data, and zero_grad() no longer clears a gradient: no parameter got one, nothing learns; the "
        "rebuilt loss is not named",
    ),
    ("parameter-unused-in-forward", "broken", "traincheck"): (
        "682945b239034283",
        False,
        "beyond the self-check's, only 'SGD.step() changes Parameter.grad: None --> non-zero' and its like, with "
        "the step call as the only evidence: the kind other cases' self-checks show; no parameter named, not fc2",
    ),
    ("graph-cut-in-forward", "broken", "traincheck"): (
        "1cd4ad1d7fd8e5df",
        False,
        "beyond the self-check's, only 'zero_grad()/SGD.step() changes Parameter.grad/data', with the API call "
        "as the only evidence: the kind other cases' self-checks show; not the encoder",
    ),
    ("submodules-in-plain-list", "broken", "traincheck"): (
        "72a4f67ea5778cf4",
        False,
        "beyond the self-check's, only 'zero_grad()/SGD.step() changes Parameter.grad', naming no parameter: "
        "nothing about the blocks missing from parameters()",
    ),
    ("rnn-batch-first-mismatch", "broken", "traincheck"): (
        "590a5b4710ccec66",
        False,
        "its violations are the self-check's (LSTM internals, the RNG state): nothing about the batch axis",
    ),
    ("training-data-not-shuffled", "broken", "traincheck"): (
        "c2270c793df41b83",
        False,
        "its violations are the self-check's (torch internals): nothing about the batches' order",
    ),
    ("exploding-gradients-without-clipping", "broken", "traincheck"): (
        "de347abb44f1b86b",
        True,
        "the violations the self-check does not have say clip_grad_norm_() is missing: the reference (the fixed "
        "program) always called it between forward and step, the checked run never does",
    ),
    ("forgot-train-after-eval", "broken", "traincheck"): (
        "483d4dbb6e6e0c32",
        True,
        "the violations the self-check does not have are about Dropout in the training steps; the evidence "
        "attached to them shows Sequential and Dropout with training=False at training steps, the eval mode "
        "left on, though the one-line names do not say so",
    ),
    ("frozen-by-name-filter", "broken", "traincheck"): (
        "da618c2e03424cd5",
        True,
        "the violations the self-check does not have: the backbone's Sequential now returns tensors that "
        "require grad, where the reference's frozen backbone did not: part of it trains; not that the head is "
        "frozen",
    ),
    ("model-eval-freezes-nothing", "broken", "traincheck"): (
        "8c3997e1a2ef4e41",
        True,
        "among the violations the self-check does not have, the backbone's Sequential and ReLU now return "
        "tensors that require grad, with a grad_fn, where the reference's frozen backbone did not: eval() froze "
        "nothing",
    ),
}


# -- the report's text, and its verdict -------------------------------------------------------------
# TrainCheck's invariants about object identity (a tensor's data_ID or grad_ID; "receives distinct
# arguments") come and go between two runs of the same program, as the addresses do.
IDENTITY = re.compile(r"\b(?:data_ID|grad_ID)\b|receives distinct arguments")


def digest(lines: list[str], tool: str = "") -> str:
    """Of the report's text with numbers and addresses left out (and TrainCheck's invariants about
    object identity): a loss value or a count that moves in its last digits keeps its verdict, a
    new message does not."""
    if tool == "traincheck":
        lines = [line for line in lines if not IDENTITY.search(line)]
    text = "\n".join(lines)
    text = re.sub(r"0x[0-9a-fA-F]+", "0x_", text)
    text = re.sub(r"\d+(?:\.\d+)?(?:[eE][-+]?\d+)?", "#", text)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def judged(case: str, variant: str, tool: str, lines: list[str]) -> tuple[bool | None, str]:
    """(on target, why) for a report; (None, "unjudged: ...") when no verdict matches its text."""
    if not lines:
        return None, ""
    d = digest(lines, tool)
    found = VERDICTS.get((case, variant, tool))
    if found is None or d not in (found[0] if isinstance(found[0], tuple) else (found[0],)):
        return None, f"unjudged: no verdict for this report (digest {d})"
    return found[1], found[2]


def excerpt(lines: list[str], limit: int = 600) -> str:
    text = "\n".join(lines)
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- in the child: the case, and the tool around it ------------------------------------------------
def load(case_id: str):
    from torch_pitfalls.loader import case_id_of, find_case_files, load_case

    path = next(p for p in find_case_files(CASES_DIR) if case_id_of(p) == case_id)
    return load_case(path)


def first_line(text: object) -> str:
    lines = str(text).strip().splitlines()
    return lines[0] if lines else ""


class Attachment:
    """Finds the model a variant builds, the optimizer it steps and its first batch, and hands
    them to a tool. ``on_root(module)`` runs before the first call of each module with
    parameters that is called from outside any module's forward; ``on_first_step(optimizer)``
    runs at the variant's first ``optimizer.step()``, before the step. While the tool runs,
    nothing is noted (``busy``)."""

    def __init__(self, on_root=None, on_first_step=None):
        self.on_root, self.on_first_step = on_root, on_first_step
        self.roots: list = []
        self.inputs: dict[int, tuple] = {}  # id(root) -> (args, kwargs) of its latest call
        self.optimizers: list = []
        self.loss = None  # (the loss function, its target) of the latest call
        self.depth = 0
        self.busy = False
        self.stepped = False
        self.errors: list[str] = []

    def guard(self, fn, *args):
        self.busy = True
        try:
            return fn(*args)
        except Exception as exc:  # noqa: BLE001 - the tool's failure is recorded, the variant goes on
            self.errors.append(f"{type(exc).__name__}: {first_line(exc)}")
            return None
        finally:
            self.busy = False

    def start(self) -> None:
        import torch
        import torch.nn.functional as F
        from torch import nn
        from torch.optim import optimizer as optim

        me = self
        self._saved = (nn.Module.__call__, torch.optim.Optimizer.__init__, F.mse_loss, F.cross_entropy)
        call, opt_init, mse, xent = self._saved

        def module_call(module, *args, **kwargs):
            if me.busy:
                return call(module, *args, **kwargs)
            if me.depth == 0:
                if all(r is not module for r in me.roots) and next(module.parameters(), None) is not None:
                    me.roots.append(module)
                    if me.on_root is not None:
                        me.guard(me.on_root, module)
                me.inputs[id(module)] = (args, kwargs)
            me.depth += 1
            try:
                return call(module, *args, **kwargs)
            finally:
                me.depth -= 1

        def optimizer_init(opt, *args, **kwargs):
            opt_init(opt, *args, **kwargs)
            me.optimizers.append(opt)

        def noting(fn):
            def loss(*args, **kwargs):
                if not me.busy:
                    me.loss = (fn, args[1] if len(args) > 1 else kwargs.get("target"))
                return fn(*args, **kwargs)

            return loss

        def step_pre_hook(opt, args, kwargs):
            if not me.busy and not me.stepped:
                me.stepped = True
                if me.on_first_step is not None:
                    me.guard(me.on_first_step, opt)

        nn.Module.__call__ = module_call
        torch.optim.Optimizer.__init__ = optimizer_init
        F.mse_loss, F.cross_entropy = noting(mse), noting(xent)
        self._hook = optim.register_optimizer_step_pre_hook(step_pre_hook)

    def stop(self) -> None:
        import torch
        import torch.nn.functional as F
        from torch import nn

        nn.Module.__call__, torch.optim.Optimizer.__init__, F.mse_loss, F.cross_entropy = self._saved
        self._hook.remove()

    def optimizer_of(self, module):
        params = {id(p) for p in module.parameters()}
        for opt in self.optimizers:
            if any(id(p) in params for g in opt.param_groups for p in g["params"]):
                return opt
        return None

    def model(self, case_id: str):
        """The one model a tool is given: the variant's model, or for a variant that calls two
        modules in turn, the module that calls them as it does (``COMPOSE``)."""
        if case_id not in COMPOSE:
            return self.roots[0]
        from torch import nn

        names, forward = COMPOSE[case_id]

        class Composite(nn.Module):
            def forward(self, x):
                return forward(self, x)

        composite = Composite()
        for name, module in zip(names, self.roots):
            composite.add_module(name, module)
        return composite

    def batch(self):
        """The inputs of the first root's latest call (a batch of one tensor in these cases)."""
        args, kwargs = self.inputs[id(self.roots[0])]
        return args[0] if len(args) == 1 and not kwargs else args


def run_variant(fn) -> str | None:
    """The variant run as ``proofs.watched`` runs it; the exception that ended it, if any."""
    try:
        result = fn("cpu")
    except Exception as exc:  # noqa: BLE001 - a tool may stop a run: that is recorded
        return f"{type(exc).__name__}: {first_line(exc)}"
    del result
    return None


def child_watch(lc, variant: str, pedantic: bool) -> dict:
    from torch_pitfalls.watch.proofs import watched

    raised: list[str] = []

    def fn(device):
        try:
            return getattr(lc.module, variant)(device)
        except Exception as exc:
            raised.append(f"{type(exc).__name__}: {first_line(exc)}")
            raise

    w = watched(fn, "cpu", pedantic=pedantic)
    lines = [f"{f.case} at {Path(f.path).name}:{f.line} (x{f.count}): {f.message}" for f in w.findings]
    return {"lines": lines, "tool_errors": list(w.errors), "variant_error": raised[0] if raised else None}


def child_anomaly(lc, variant: str) -> dict:
    import torch

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with torch.autograd.detect_anomaly():
            error = run_variant(getattr(lc.module, variant))
    lines = [
        first_line(w.message) for w in caught if not str(w.message).startswith("Anomaly Detection has been enabled")
    ]
    if error:
        lines.append(error)
    return {"lines": lines, "tool_errors": [], "variant_error": error}


def child_torch_audit(lc, variant: str) -> dict:
    from torch_audit import autopatch

    auditors = []

    def on_root(module):
        auditors.append(
            autopatch(module, optimizer=at.optimizer_of(module), every_n_steps=1, run_static=True, run_init=True)
        )

    at = Attachment(on_root=on_root)
    at.start()
    try:
        error = run_variant(getattr(lc.module, variant))
    finally:
        at.stop()
    # One line per finding with its numbers masked (a gradient norm differs at every step): its
    # first text, and how often it came.
    first: dict[str, tuple[bool, str]] = {}
    counts: dict[str, int] = {}
    for auditor in auditors:
        result = at.guard(auditor.finish)
        at.guard(auditor.unpatch)
        for f in result.findings if result is not None else []:
            where = f.module_path or f.entity or ""
            text = f"{f.rule_id} {f.severity.value} {where}: {f.message}".replace(" :", ":")
            key = re.sub(r"\d+(?:\.\d+)?", "#", text)
            first.setdefault(key, (f.severity.value != "INFO", text))
            counts[key] = counts.get(key, 0) + 1
    lines = [f"{text} (x{counts[k]})" for k, (warns, text) in first.items() if warns]
    info = [f"{text} (x{counts[k]})" for k, (warns, text) in first.items() if not warns]  # hints: "consider AMP"
    return {"lines": lines, "info": info, "tool_errors": at.errors, "variant_error": error}


def child_guardtower(lc, variant: str) -> dict:
    import guardtower

    monitors, reports, notes = [], [], []

    def on_root(module):
        m = guardtower.monitor(module, on_nonfinite="raise")
        m.__enter__()
        monitors.append(m)

    def on_first_step(opt):
        model, x = at.model(lc.id), at.batch()
        loss_fn, y = at.loss
        reports.append(guardtower.audit(model, lambda: loss_fn(model(x), y), optimizer=opt, inputs=x))

    at = Attachment(on_root=on_root, on_first_step=on_first_step)
    at.start()
    try:
        error = run_variant(getattr(lc.module, variant))
    finally:
        for m in monitors:
            m.__exit__(None, None, None)
        at.stop()
    if not at.stepped:
        notes.append("audit() not run: the variant steps no optimizer (no training step to repeat)")
    found = [
        (f.severity, f"{f.severity.label} {f.check}{f' [{f.catalog_id}]' if f.catalog_id else ''}: {f.message}")
        for rep in reports
        for f in sorted(rep.findings, key=lambda f: -int(f.severity))
    ]
    lines = [text for severity, text in found if severity >= guardtower.Severity.WARN]
    info = [text for severity, text in found if severity < guardtower.Severity.WARN]  # e.g. "all ... receive gradient"
    if error and error.startswith("NonFiniteActivation"):
        lines.append(error)
    return {"lines": lines, "info": info, "tool_errors": at.errors, "variant_error": error, "notes": notes}


def child_torchtest2(lc, variant: str) -> dict:
    import torchtest2

    reports, notes = [], []
    args = TORCHTEST2_ARGS.get(lc.id, {})

    def on_first_step(opt):
        loss_fn, y = at.loss
        reports.append(torchtest2.check_model(at.model(lc.id), at.batch(), y, loss_fn=loss_fn, optimizer=opt, **args))

    at = Attachment(on_first_step=on_first_step)
    at.start()
    try:
        error = run_variant(getattr(lc.module, variant))
        if not at.stepped and at.roots:
            notes.append("the variant steps no optimizer: check_model(model, inputs) after it returned")
            shape = {k: v for k, v in args.items() if k != "frozen"}
            at.guard(lambda: reports.append(torchtest2.check_model(at.model(lc.id), at.batch(), **shape)))
    finally:
        at.stop()
    lines = []
    for rep in reports:
        for r in rep.failures + rep.warnings:
            lines.append(f"{r.status.name} {r.name}: {r.message}")
    return {"lines": lines, "tool_errors": at.errors, "variant_error": error, "notes": notes}


CHILDREN = {
    "watch": lambda lc, v: child_watch(lc, v, pedantic=False),
    "watch-pedantic": lambda lc, v: child_watch(lc, v, pedantic=True),
    "detect-anomaly": child_anomaly,
    "torch-audit": child_torch_audit,
    "guardtower": child_guardtower,
    "torchtest2": child_torchtest2,
}


def child_main(tool: str, case_id: str, variant: str, out: Path) -> None:
    import torch

    torch.set_num_threads(1)
    lc = load(case_id)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # what a variant warns is not a tool's report (detect-anomaly records its own)
        result = CHILDREN[tool](lc, variant)
    out.write_text(json.dumps(result), encoding="utf-8")


def child_env(peers_site: Path | None, **extra: str) -> dict:
    paths = [str(ROOT), str(peers_site) if peers_site else None, os.environ.get("PYTHONPATH")]
    return dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(p for p in paths if p),
        CUDA_VISIBLE_DEVICES="",
        OMP_NUM_THREADS="1",
        **extra,
    )


def run_child(tool: str, case_id: str, variant: str, peers_site: Path, tmp: Path) -> dict:
    out = tmp / f"{tool}.{case_id}.{variant}.json"
    peers = peers_site if tool in PEER_MODULES else None
    try:
        proc = subprocess.run(
            [sys.executable, __file__, "--child", tool, case_id, variant, str(out)],
            cwd=tmp,
            env=child_env(peers),
            capture_output=True,
            text=True,
            timeout=CHILD_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        return {"lines": [], "tool_errors": [f"timed out after {CHILD_TIMEOUT_S} s"], "variant_error": None}
    if not out.is_file():
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        return {"lines": [], "tool_errors": [f"the child failed (exit {proc.returncode}): {' | '.join(tail)}"]}
    return json.loads(out.read_text(encoding="utf-8"))


# -- TrainCheck: its own commands, on a script of the case's code -----------------------------------
def traincheck_program(case_path: Path, variant: str, folder: Path, peers_site: Path) -> Path:
    """``program.py``: the case file's code, its ``__main__`` demo blocks switched off, then one
    call of ``variant``; ``run.sh``: what TrainCheck runs it with (the peers' folder on the path,
    which its runner would otherwise replace)."""
    folder.mkdir(parents=True, exist_ok=True)
    text = case_path.read_text(encoding="utf-8")
    text = re.sub(r'^if __name__ == "__main__":', "if False:  # the case file's demo block", text, flags=re.M)
    text += f'\n\nif __name__ == "__main__":\n    {variant}("cpu")\n'
    (folder / "program.py").write_text(text, encoding="utf-8")
    path = os.pathsep.join([str(peers_site), str(ROOT)])
    (folder / "run.sh").write_text(f'PYTHONPATH="{path}" exec "{sys.executable}" -u program.py\n', encoding="utf-8")
    return folder / "program.py"


def traincheck_command(
    module: str, args: list[str], cwd: Path, peers_site: Path, log: Path, **extra_env: str
) -> tuple[int, str]:
    with open(log, "w", encoding="utf-8") as out:
        try:
            proc = subprocess.run(
                [sys.executable, "-m", module, *args],
                cwd=cwd,
                env=child_env(peers_site, **extra_env),
                stdout=out,
                stderr=subprocess.STDOUT,
                timeout=CHILD_TIMEOUT_S,
            )
            status = proc.returncode
        except subprocess.TimeoutExpired:
            status = 124
    text = log.read_text(encoding="utf-8", errors="replace")
    lines = [ln for ln in re.split(r"[\r\n]+", text) if ln.strip() and "Recursion detected" not in ln]
    return status, " | ".join(lines[-3:])[-600:]


def traincheck_case(case_id: str, peers_site: Path, tmp: Path, variants=VARIANTS, keep=False) -> dict[str, dict]:
    """TrainCheck's rows for ``variants`` of a case; its traces (megabytes each) are deleted once
    read, unless ``keep``."""
    from torch_pitfalls.loader import case_id_of, find_case_files

    case_path = next(p for p in find_case_files(CASES_DIR) if case_id_of(p) == case_id)
    work = tmp / f"traincheck.{case_id}"
    models = TRAINCHECK_MODELS.get(case_id, ["model"])
    track = ["--models-to-track", *models]
    folders = {v: work / v for v in VARIANTS}
    for v, folder in folders.items():
        traincheck_program(case_path, v, folder, peers_site)

    def collect(variant: str, out: Path, extra: list[str]) -> tuple[int, str]:
        args = ["--pyscript", "program.py", "--shscript", "run.sh", *track, "--output-dir", str(out), *extra]
        return traincheck_command(
            "traincheck.collect_trace", args, folders[variant], peers_site, out.with_suffix(".log")
        )

    failed = None
    status, tail = collect("fixed", work / "reference_trace", [])
    if status != 0:
        failed = f"traincheck-collect (reference, fixed) exited {status}: {tail}"
    else:
        invariants = work / "invariants.json"
        status, tail = traincheck_command(
            "traincheck.infer_engine",
            ["-f", str(work / "reference_trace"), "-o", str(invariants)],
            work,
            peers_site,
            work / "infer.log",
        )
        if status != 0 or not invariants.is_file():
            failed = f"traincheck-infer exited {status}: {tail}"
    rows = {}
    for v in variants:
        if failed:
            rows[v] = {"lines": [], "tool_errors": [failed], "variant_error": None}
            continue
        trace = work / f"{v}_trace"
        status, tail = collect(v, trace, ["--invariants", str(invariants)])
        if status != 0:
            rows[v] = {"lines": [], "tool_errors": [f"traincheck-collect ({v}) exited {status}: {tail}"]}
            continue
        checked = work / f"{v}_check"
        status, tail = traincheck_command(
            "traincheck.checker",
            ["-f", str(trace), "-i", str(invariants), "-o", str(checked), "--no-html-report"],
            work,
            peers_site,
            work / f"{v}_check.log",
        )
        summary = checked / trace.name / "violations_summary.json"
        if status != 0 or not summary.is_file():
            rows[v] = {"lines": [], "tool_errors": [f"traincheck-check ({v}) exited {status}: {tail}"]}
            continue
        found = json.loads(summary.read_text(encoding="utf-8"))
        names = sorted({x["display_name"] for x in found.get("violations", [])})
        checked_count = re.search(r"(\d+) invariants checked", (work / f"{v}_check.log").read_text(errors="replace"))
        rows[v] = {
            "lines": names,
            "tool_errors": [],
            "variant_error": None,
            "notes": [f"{checked_count.group(1) if checked_count else '?'} invariants inferred from the fixed run"],
        }
    if not keep:
        shutil.rmtree(work, ignore_errors=True)
    return rows


# -- the overhead of one training loop ----------------------------------------------------------------
# side -> what runs around the loop (the record carries it, the page shows it)
OVERHEAD_SIDES = {
    "plain": "the loop alone",
    "watch": "pitfalls watch: with watch(), the sound detectors",
    "watch-pedantic": "pitfalls watch --pedantic: with watch(pedantic=True), every detector",
    "detect-anomaly": "with torch.autograd.detect_anomaly()",
    "torch-audit": "torch-audit: autopatch(model, optimizer=opt, every_n_steps=1), an audit at every step, as in "
    "the study",
    "torch-audit-every-1000": "torch-audit: autopatch(model, optimizer=opt, every_n_steps=1000), its default: the "
    "first step audited",
    "guardtower": "guardtower: audit() on the first batch, then monitor() around the loop",
    "torchtest2": "torchtest2: check_model() on the first batch (its checks include overfitting that batch), then "
    "the loop",
}
TRAINCHECK_SIDES = {
    "traincheck-collect": "TrainCheck: traincheck-collect, the reference trace (every torch call and the model's "
    "state traced)",
    "traincheck-collect-invariants": "TrainCheck: traincheck-collect --invariants, the trace a check reads (sampled: "
    "its default for checking is 10 warm-up steps, then every 10th)",
}


def overhead_loop():
    """The model, optimizer, batch and step of the loop timed (the existing overhead bench's)."""
    import torch
    import torch.nn.functional as F

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from test_bench_watch_overhead import mlp, training_step

    torch.manual_seed(0)
    model = mlp([128, 512, 512, 10])
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(64, 128), torch.randint(0, 10, (64,))
    return model, opt, x, y, F.cross_entropy, training_step


def overhead_side(name: str, steps: int) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of ``steps`` training steps with tool ``name`` applied."""
    import torch

    model, opt, x, y, loss_fn, training_step = overhead_loop()
    training_step(model, opt, x, y)  # warm: the first step of a fresh model allocates Adam's state
    started, started_cpu = time.perf_counter(), time.process_time()
    if name == "plain":
        for _ in range(steps):
            training_step(model, opt, x, y)
    elif name in ("watch", "watch-pedantic"):
        from torch_pitfalls.watch import watch

        with watch(pedantic=name == "watch-pedantic") as w:
            for _ in range(steps):
                training_step(model, opt, x, y)
        assert not w.findings and not w.errors, w.text()
    elif name == "detect-anomaly":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with torch.autograd.detect_anomaly():
                for _ in range(steps):
                    training_step(model, opt, x, y)
    elif name.startswith("torch-audit"):
        from torch_audit import autopatch

        every = 1000 if name.endswith("1000") else 1
        auditor = autopatch(model, optimizer=opt, every_n_steps=every, run_static=True, run_init=True)
        for _ in range(steps):
            training_step(model, opt, x, y)
        auditor.finish()
        auditor.unpatch()
    elif name == "guardtower":
        import guardtower

        guardtower.audit(model, lambda: loss_fn(model(x), y), optimizer=opt, inputs=x)
        with guardtower.monitor(model, on_nonfinite="raise"):
            for _ in range(steps):
                training_step(model, opt, x, y)
    elif name == "torchtest2":
        import torchtest2

        torchtest2.check_model(model, x, y, loss_fn=loss_fn, optimizer=opt)
        for _ in range(steps):
            training_step(model, opt, x, y)
    else:
        raise ValueError(name)
    return time.process_time() - started_cpu, time.perf_counter() - started


def child_overhead(out: Path, rounds: int, steps: int, sides: list[str]) -> None:
    import torch

    torch.set_num_threads(1)
    cpu: dict[str, list[float]] = {s: [] for s in sides}
    wall: dict[str, list[float]] = {s: [] for s in sides}
    errors: dict[str, str] = {}
    for r in range(rounds):
        for name in sides[r % len(sides) :] + sides[: r % len(sides)]:
            if name in errors:
                continue
            try:
                c, w = overhead_side(name, steps)
            except Exception as exc:  # noqa: BLE001 - a tool that cannot run the loop is recorded
                errors[name] = f"{type(exc).__name__}: {first_line(exc)}"
                continue
            cpu[name].append(c)
            wall[name].append(w)
    out.write_text(json.dumps({"cpu": cpu, "wall": wall, "errors": errors}), encoding="utf-8")


TRAINCHECK_LOOP = """
import json, os, sys, time
import torch
import torch.nn.functional as F
sys.path.insert(0, {benchmarks!r})
from test_bench_watch_overhead import mlp, training_step

torch.set_num_threads(1)
torch.manual_seed(0)
model = mlp([128, 512, 512, 10])
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x, y = torch.randn(64, 128), torch.randint(0, 10, (64,))
training_step(model, opt, x, y)
started, started_cpu = time.perf_counter(), time.process_time()
for step in range({steps}):
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
seconds = [time.process_time() - started_cpu, time.perf_counter() - started]
with open(os.environ["PEERS_LOOP_TIMES"], "w") as out:
    json.dump(seconds, out)
"""


def traincheck_overhead(peers_site: Path, tmp: Path, rounds: int, steps: int) -> dict:
    """Plain interpreter, reference collection and checking collection of the same loop, each
    timed from inside the program; the loop is written out in the program (TrainCheck marks the
    steps of the loops it finds in the script's source)."""
    work = tmp / "traincheck.overhead"
    work.mkdir(parents=True, exist_ok=True)
    program = work / "program.py"
    program.write_text(TRAINCHECK_LOOP.format(benchmarks=str(ROOT / "benchmarks"), steps=steps), encoding="utf-8")
    path = os.pathsep.join([str(peers_site), str(ROOT)])
    (work / "run.sh").write_text(f'PYTHONPATH="{path}" exec "{sys.executable}" -u program.py\n', encoding="utf-8")
    times_file = work / "times.json"
    env_extra = {"PEERS_LOOP_TIMES": str(times_file)}  # TrainCheck's runner hands its environment on

    def timed(kind: str, r: int) -> list[float] | str:
        times_file.unlink(missing_ok=True)
        if kind == "plain":
            proc = subprocess.run(
                [sys.executable, "-u", str(program)],
                cwd=work,
                env=child_env(peers_site, **env_extra),
                capture_output=True,
            )
            status, tail = proc.returncode, proc.stderr.decode(errors="replace")[-300:]
        else:
            out = work / f"{kind}_{r}"
            extra = ["--invariants", str(work / "invariants.json")] if kind == "checking" else []
            args = ["--pyscript", "program.py", "--shscript", "run.sh", "--models-to-track", "model"]
            status, tail = traincheck_command(
                "traincheck.collect_trace",
                [*args, "--output-dir", str(out), *extra],
                work,
                peers_site,
                work / "c.log",
                **env_extra,
            )
            shutil.rmtree(out, ignore_errors=True)  # traces of a few hundred megabytes
        if status != 0 or not times_file.is_file():
            return f"{kind} exited {status}: {tail}"
        return json.loads(times_file.read_text())

    # invariants for the checking collection, from one reference run of the loop
    ref = work / "reference"
    status, tail = traincheck_command(
        "traincheck.collect_trace",
        ["--pyscript", "program.py", "--shscript", "run.sh", "--models-to-track", "model", "--output-dir", str(ref)],
        work,
        peers_site,
        work / "ref.log",
        **env_extra,
    )
    if status == 0:
        status, tail = traincheck_command(
            "traincheck.infer_engine",
            ["-f", str(ref), "-o", str(work / "invariants.json")],
            work,
            peers_site,
            work / "infer.log",
        )
    shutil.rmtree(ref, ignore_errors=True)
    if status != 0:
        return {"error": f"could not infer the loop's invariants: {tail}"}
    kinds = ("plain", "reference", "checking")
    got: dict[str, list] = {k: [] for k in kinds}
    for r in range(rounds):
        for kind in kinds[r % 3 :] + kinds[: r % 3]:
            got[kind].append(timed(kind, r))
    for runs in got.values():
        bad = [x for x in runs if isinstance(x, str)]
        if bad:
            return {"error": bad[0]}
    return {
        "rounds": rounds,
        "cpu": {k: statistics.median(t[0] / p[0] for t, p in zip(got[k], got["plain"])) for k in kinds[1:]},
        "wall": {k: statistics.median(t[1] / p[1] for t, p in zip(got[k], got["plain"])) for k in kinds[1:]},
    }


def overhead(peers_site: Path, tmp: Path, have: set[str]) -> dict:
    sides = [s for s in OVERHEAD_SIDES if s == "plain" or s.split("-every")[0] in have]
    out = tmp / "overhead.json"
    subprocess.run(
        [sys.executable, __file__, "--child-overhead", str(out), str(OVERHEAD_ROUNDS), str(OVERHEAD_STEPS), *sides],
        cwd=tmp,
        env=child_env(peers_site),
        check=False,
        timeout=3600,
    )
    if not out.is_file():
        return {"error": "the overhead child failed"}
    got = json.loads(out.read_text(encoding="utf-8"))

    def ratios(clock: str) -> dict:
        plain = got[clock]["plain"]
        return {
            s: round(statistics.median(t / p for t, p in zip(got[clock][s], plain)), 3)
            for s in sides
            if s != "plain" and len(got[clock][s]) == len(plain)
        }

    record = {
        "workload": "mlp([128, 512, 512, 10]) of benchmarks/test_bench_watch_overhead.py, batch 64, Adam (lr 1e-3), "
        "cross-entropy",
        "steps": OVERHEAD_STEPS,
        "rounds": OVERHEAD_ROUNDS,
        "threads": 1,
        "clock": "cpu",
        "ratios": ratios("cpu"),
        "wall_ratios": ratios("wall"),
        "errors": got["errors"],
        "sides": {s: OVERHEAD_SIDES[s] for s in sides},
    }
    if "traincheck" in have:
        tc = traincheck_overhead(peers_site, tmp, TRAINCHECK_ROUNDS, OVERHEAD_STEPS)
        if "error" in tc:
            record["errors"]["traincheck"] = tc["error"]
        else:
            record["traincheck_rounds"] = tc["rounds"]
            record["ratios"]["traincheck-collect"] = round(tc["cpu"]["reference"], 3)
            record["ratios"]["traincheck-collect-invariants"] = round(tc["cpu"]["checking"], 3)
            record["wall_ratios"]["traincheck-collect"] = round(tc["wall"]["reference"], 3)
            record["wall_ratios"]["traincheck-collect-invariants"] = round(tc["wall"]["checking"], 3)
            record["sides"].update(TRAINCHECK_SIDES)
    return record


# -- the study ----------------------------------------------------------------------------------------
def tool_versions(peers_site: Path) -> dict[str, dict]:
    """Each tool's version, or why it cannot run: its import, tried in a child with the peers' folder."""
    from importlib import metadata

    import torch

    from torch_pitfalls import __version__

    found = {
        d.metadata["Name"].lower().replace("_", "-"): d.version for d in metadata.distributions(path=[str(peers_site)])
    }
    tools = {}
    for tool, (name, dist, applied) in TOOLS.items():
        version = __version__ if tool.startswith("watch") else torch.__version__ if dist is None else found.get(dist)
        entry = {"name": name, "version": version, "applied": applied, "status": "ran", "why_not": None}
        module = PEER_MODULES.get(tool, "traincheck.checker" if tool == "traincheck" else None)
        if dist is not None and version is None:
            entry.update(status="not run", why_not=f"{dist} is not installed in {peers_site}")
        elif module is not None:
            proc = subprocess.run(
                [sys.executable, "-c", f"import {module}"], env=child_env(peers_site), capture_output=True, text=True
            )
            if proc.returncode != 0:
                last = proc.stderr.strip().splitlines()[-1:] or [f"exit {proc.returncode}"]
                entry.update(status="not run", why_not=f"import {module} failed: {last[0]}")
        tools[tool] = entry
    return tools


def row(case: str, variant: str, tool: str, got: dict) -> dict:
    lines = got.get("lines", [])
    errors = got.get("tool_errors", [])
    text = lines + [f"tool error: {e}" for e in errors]
    if got.get("not_run"):  # nothing ran: nothing to judge
        on_target, why = None, f"not run: {errors[0]}"
    else:
        on_target, why = judged(case, variant, tool, text)
    return {
        "case": case,
        "variant": variant,
        "tool": tool,
        "reported": bool(lines),
        "on_target": on_target,
        "verdict": why,
        "unjudged": why.startswith("unjudged"),
        "digest": digest(text, tool) if text else None,
        "excerpt": excerpt(text),
        "report": text,  # the whole report: what was judged
        "report_lines": len(lines),
        "tool_errors": errors,
        "variant_error": got.get("variant_error"),
        "notes": got.get("notes", []),
        "info": excerpt(got.get("info", []), 300),  # what the tool said at its informational level: not a report
    }


def summarise(rows: list[dict], tools: list[str]) -> dict:
    out = {}
    for tool in tools:
        mine = [r for r in rows if r["tool"] == tool]
        broken = [r for r in mine if r["variant"] == "broken"]
        fixed = [r for r in mine if r["variant"] == "fixed"]
        out[tool] = {
            "cases": len(broken),
            "broken_reported": sum(r["reported"] for r in broken),
            "broken_on_target": sum(r["on_target"] is True for r in broken),
            "fixed_reported": sum(r["reported"] for r in fixed),
            "fixed_on_target": sum(r["on_target"] is True for r in fixed),
            "tool_errors": sum(bool(r["tool_errors"]) for r in mine),
            "unjudged": sum(r["unjudged"] for r in mine),
        }
    return out


def study(cases: list[str], tools: list[str], peers_site: Path, with_overhead: bool, previous: dict | None) -> dict:
    import torch

    versions = tool_versions(peers_site)
    runnable = [t for t in tools if versions[t]["status"] == "ran"]
    rows = []
    with tempfile.TemporaryDirectory(prefix="watch-peers-") as tmp_name:
        tmp = Path(tmp_name)
        for case in cases:
            for tool in runnable:
                started = time.perf_counter()
                if tool == "traincheck":
                    got = traincheck_case(case, peers_site, tmp)
                else:
                    got = {v: run_child(tool, case, v, peers_site, tmp) for v in VARIANTS}
                for v in VARIANTS:
                    rows.append(row(case, v, tool, got[v]))
                    r = rows[-1]
                    state = "unjudged" if r["unjudged"] else ("on target" if r["on_target"] else "-")
                    print(
                        f"{case:38s} {v:7s} {tool:15s} reported={str(r['reported']):5s} {state:10s} "
                        f"({time.perf_counter() - started:.0f} s)",
                        file=sys.stderr,
                    )
        record_overhead = overhead(peers_site, tmp, set(runnable)) if with_overhead else None
    for tool in tools:
        if versions[tool]["status"] != "ran":
            for case in cases:
                for v in VARIANTS:
                    rows.append(row(case, v, tool, {"not_run": True, "tool_errors": [versions[tool]["why_not"]]}))
    if previous:  # a partial run replaces its own rows, and keeps the others
        ran = {(r["case"], r["variant"], r["tool"]) for r in rows}
        rows = [r for r in previous.get("rows", []) if (r["case"], r["variant"], r["tool"]) not in ran] + rows
        versions = {**previous.get("tools", {}), **versions}
        if record_overhead is None:
            record_overhead = previous.get("overhead")
    order = {c: i for i, c in enumerate(CASES)}
    tool_order = {t: i for i, t in enumerate(TOOLS)}
    rows.sort(key=lambda r: (order.get(r["case"], 99), VARIANTS.index(r["variant"]), tool_order.get(r["tool"], 99)))
    return {
        "torch": torch.__version__,
        "python": sys.version.split()[0],
        "device": "cpu",
        "cases": list(CASES),
        "tools": versions,
        "rows": rows,
        "summary": summarise(rows, list(TOOLS)),
        "unjudged": sum(r["unjudged"] for r in rows),
        "overhead": record_overhead,
    }


def table(record: dict) -> str:
    tools = list(TOOLS)
    out = [f"{'case':38s} {'variant':7s} " + " ".join(f"{t[:13]:13s}" for t in tools)]
    by = {(r["case"], r["variant"], r["tool"]): r for r in record["rows"]}
    for case in record["cases"]:
        for v in VARIANTS:
            cells = []
            for t in tools:
                r = by.get((case, v, t))
                if r is None:
                    cells.append("")
                elif r["unjudged"]:
                    cells.append("UNJUDGED")
                elif r["tool_errors"] and not r["reported"]:
                    cells.append("error")
                elif not r["reported"]:
                    cells.append("-")
                else:
                    cells.append("on target" if r["on_target"] else "off target")
            out.append(f"{case:38s} {v:7s} " + " ".join(f"{c:13s}" for c in cells))
    if record.get("overhead"):
        o = record["overhead"]
        out.append(
            f"overhead ({o.get('rounds')} rounds, cpu clock): " + ", ".join(f"{k} {v}x" for k, v in o["ratios"].items())
        )
    return "\n".join(out)


def print_unjudged(record: dict) -> None:
    for r in record["rows"]:
        if r["unjudged"]:
            print(f"\n--- unjudged: {r['case']} / {r['variant']} / {r['tool']}  digest {r['digest']}", file=sys.stderr)
            print("\n".join(r.get("report") or [r["excerpt"]]), file=sys.stderr)


def rejudge(path: Path) -> int:
    """The record at ``path`` with each report's verdict looked up again, by the digest of its
    recorded text."""
    record = json.loads(path.read_text(encoding="utf-8"))
    for r in record["rows"]:
        if not r.get("report") or r["verdict"].startswith("not run"):
            continue
        r["digest"] = digest(r["report"], r["tool"])
        r["on_target"], r["verdict"] = judged(r["case"], r["variant"], r["tool"], r["report"])
        r["unjudged"] = r["verdict"].startswith("unjudged")
    record["summary"] = summarise(record["rows"], list(TOOLS))
    record["unjudged"] = sum(r["unjudged"] for r in record["rows"])
    path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(table(record))
    print_unjudged(record)
    return 1 if record["unjudged"] else 0


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        child_main(argv[1], argv[2], argv[3], Path(argv[4]))
        return 0
    if argv[:1] == ["--child-overhead"]:
        child_overhead(Path(argv[1]), int(argv[2]), int(argv[3]), argv[4:])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peers-site", required=True, type=Path, help="the folder the peers were installed into")
    parser.add_argument("--json", default=str(DEFAULT_JSON), help="where to write the record")
    parser.add_argument("--cases", nargs="*", default=None, choices=CASES, metavar="ID", help="part of the cases")
    parser.add_argument(
        "--tools", nargs="*", default=None, choices=list(TOOLS), metavar="TOOL", help="part of the tools"
    )
    parser.add_argument("--no-overhead", action="store_true", help="keep the recorded overhead (or none)")
    parser.add_argument(
        "--rejudge", action="store_true", help="run nothing: apply VERDICTS again to the record's reports (by digest)"
    )
    args = parser.parse_args(argv)
    path = Path(args.json)
    if args.rejudge:
        return rejudge(path)
    partial = args.cases is not None or args.tools is not None or args.no_overhead
    previous = json.loads(path.read_text(encoding="utf-8")) if partial and path.is_file() else None
    record = study(
        list(args.cases or CASES), list(args.tools or TOOLS), args.peers_site.resolve(), not args.no_overhead, previous
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)
    print(table(record))
    print_unjudged(record)
    if record["unjudged"]:
        print(
            f"{record['unjudged']} report(s) unjudged: read them, then add their verdicts to VERDICTS", file=sys.stderr
        )
    return 1 if record["unjudged"] else 0


if __name__ == "__main__":
    sys.exit(main())
