"""What ``pitfalls watch`` costs a training step, recorded under ``pitfalls.watch`` in the
benchmark JSON (``summary.py`` prints it).

One training step (forward, cross-entropy loss, backward, ``Adam.step()``) of three models, timed
three ways in the same process: unwatched, inside ``torch_pitfalls.watch.watch()``, and inside
``torch.autograd.detect_anomaly()`` instead (the tool users reach for when they look for trouble
at run time, and what the watcher's cost should be read against):

* ``mlp-small``: 16 -> 32 -> 4, batch 16. A step is a few hundred microseconds of Python
  dispatch, so it shows the watcher's per-call cost at its worst;
* ``mlp-128x512x3``: batch 128, width 512, three Linear layers;
* ``cnn-32x32``: two 3x3 convolutions (16 and 32 channels, each with ReLU and 2x2 max pooling)
  and a Linear, on a batch of 32 RGB images of 32x32.

The goal is at most ``WATCH_GOAL`` (1.10x) on the two mid-sized models; the small MLP has none.

The sides alternate within every round, each round starting with the next side, so load from
other work on the machine falls on all three alike and no side always runs first. A round times
one block of steps per side (as many steps as take about ``BLOCK_S`` unwatched), after ``WARMUP``
steps inside the block that are not timed (the steady state of a long run is what is measured). A ratio is the median over the rounds of the side's block
divided by the unwatched block of the same round. Seconds are this process's CPU seconds (one
torch thread, as ``conftest.py`` sets): on a machine shared with other work, wall seconds swing
with the others' load, CPU seconds much less; the wall-clock ratios are recorded beside them.
The figures are ratios, never asserted. What is asserted is that the watcher found nothing and
had no errors: these loops hold no pitfall.

``Adam`` on the CPU steps each parameter with a loop of in-place ops (its single-tensor path),
about a hundred torch calls a step that the watcher's ``TorchFunctionMode`` sees.
"""

from __future__ import annotations

import contextlib
import statistics
import time
import warnings

import pytest
import torch
import torch.nn.functional as F
from summary import WATCH_GOAL
from torch import nn

from torch_pitfalls.watch import watch

SIDES = ("off", "on", "anomaly")
ROUNDS = 20
BLOCK_S = 0.05  # unwatched seconds per block of steps
# Steps run, untimed, after entering a side: some detectors look closely at a run's first steps
# only (inplace-edit-through-data: its first 4 backward passes; the optimizer census), which a
# training run of thousands of steps pays once, as it pays the start. What is timed is the steady
# state: the cost of each further step.
WARMUP = 8


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.fc = nn.Linear(32 * 8 * 8, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(x.flatten(1))


def mlp(widths: list[int]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for a, b in zip(widths, widths[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    return nn.Sequential(*layers[:-1])  # no ReLU after the last layer


# name -> (model, input batch shape, classes, the goal on its ratio or None)
WORKLOADS = {
    "mlp-small": (lambda: mlp([16, 32, 4]), (16, 16), 4, None),
    "mlp-128x512x3": (lambda: mlp([512, 512, 512, 10]), (128, 512), 10, WATCH_GOAL),
    "cnn-32x32": (SmallCNN, (32, 3, 32, 32), 10, WATCH_GOAL),
}


def training_step(model, opt, x, y):
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss


@contextlib.contextmanager
def side(name: str):
    """The surroundings of a block of steps; yields the watcher where there is one."""
    if name == "off":
        yield None
    elif name == "on":
        with watch() as w:
            yield w
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "Anomaly Detection has been enabled ..." at every entry
            with torch.autograd.detect_anomaly():
                yield None


def steps_per_block(step) -> int:
    started, n = time.perf_counter(), 0
    while time.perf_counter() - started < BLOCK_S or n < 3:
        step()
        n += 1
    return n


@pytest.mark.benchmark(group="watch-overhead")
@pytest.mark.parametrize("workload", list(WORKLOADS))
def test_watched_training_step(benchmark, workload):
    build, shape, classes, goal = WORKLOADS[workload]
    torch.manual_seed(0)
    model = build()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(shape), torch.randint(0, classes, (shape[0],))

    def step():
        training_step(model, opt, x, y)

    steps = steps_per_block(step)  # also the warm-up
    cpu: dict[str, list[float]] = {s: [] for s in SIDES}
    wall: dict[str, list[float]] = {s: [] for s in SIDES}
    rounds = iter(range(ROUNDS))

    def one_round():
        r = next(rounds)
        for name in SIDES[r % len(SIDES) :] + SIDES[: r % len(SIDES)]:
            with side(name) as w:
                for _ in range(WARMUP):  # not timed: the first steps after entering
                    step()
                started, started_cpu = time.perf_counter(), time.process_time()
                for _ in range(steps):
                    step()
                cpu[name].append((time.process_time() - started_cpu) / steps)
                wall[name].append((time.perf_counter() - started) / steps)
            if w is not None:
                assert (w.findings, w.errors) == ([], []), w.text()

    benchmark.pedantic(one_round, rounds=ROUNDS, iterations=1)

    def ratio(seconds, name):
        return statistics.median(s / off for s, off in zip(seconds[name], seconds["off"]))

    benchmark.extra_info["watch"] = {
        "workload": workload,
        "steps": steps,
        "rounds": ROUNDS,
        "threads": torch.get_num_threads(),
        "clock": "cpu",
        **{f"{name}_s": statistics.median(cpu[name]) for name in SIDES},
        "on_ratio": ratio(cpu, "on"),
        "anomaly_ratio": ratio(cpu, "anomaly"),
        "goal": goal,
        "wall_on_ratio": ratio(wall, "on"),
        "wall_anomaly_ratio": ratio(wall, "anomaly"),
    }
