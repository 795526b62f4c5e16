"""The rule changes of the tuning-half review (issue 38, benchmarks/lint_review_tuning.md): each
snippet that must stay quiet is modelled on a false finding read in a tuning library, written anew;
beside it, the pitfall the rule is proven by still has to be caught."""

from __future__ import annotations

import textwrap

import pytest

from torch_pitfalls.lint import active_rules, lint_text

EVERY_RULE = active_rules(None)


def rules_found(text: str) -> list[str]:
    return [f.rule for f in lint_text(textwrap.dedent(text), "m.py", EVERY_RULE)]


# (rule, snippet): the code is right, the rule's premise does not hold there
QUIET = {
    # PTF012: the second forward pass binds the same names again: a new graph for each backward
    "backward-after-a-second-forward": (
        "PTF012",
        """
        def accumulate(net, criterion, first, second, target):
            pred = net(first)
            err = criterion(pred, target)
            err.backward()
            pred = net(second)
            err = criterion(pred, target)
            err.backward()
        """,
    ),
    # PTF012: two models built from one config value (a builtin's result is not a graph node)
    "two-models-one-config-value": (
        "PTF012",
        """
        import torch

        class Tower(torch.nn.Module):
            def __init__(self, width):
                super().__init__()
                self.fc = torch.nn.Linear(width, 1)

        def compare(options, inputs):
            width = int(options.width)
            left = Tower(width)
            right = Tower(width)
            left(inputs).mean().backward()
            right(inputs).mean().backward()
        """,
    ),
    # PTF012: a test case's own helper hands out two models, not one forward's outputs
    "pair-from-a-test-helper": (
        "PTF012",
        """
        import unittest
        import torch

        class GradParity(unittest.TestCase):
            def _build(self, width):
                return torch.nn.Linear(width, 3), torch.nn.Linear(width, 3)

            def test_parity(self):
                base, other = self._build(3)
                inputs = torch.randn(5, 3)
                base(inputs).sum().backward()
                other(inputs).sum().backward()
        """,
    ),
    # PTF012: two leaves (requires_grad_() on a copy, an `is not None` test): no shared graph
    "two-leaves-compared": (
        "PTF012",
        """
        import torch

        def parity(fast, slow, n):
            bias = (0.5 * torch.rand(n)).requires_grad_()
            bias_ref = bias.detach().clone().requires_grad_() if bias is not None else None
            got = fast(bias)
            want = slow(bias_ref)
            upstream = torch.randn_like(got)
            want.backward(upstream)
            got.backward(upstream)
        """,
    ),
    # PTF008: an int given as a size on purpose and every element written at once
    "sized-then-filled": (
        "PTF008",
        """
        import torch

        def random_boxes(count, label):
            xs = torch.FloatTensor(count).uniform_(0, 640)
            tag = torch.LongTensor(1).cuda().fill_(label)
            return xs, tag
        """,
    ),
    # PTF015: the class moves the tensor to the input's device where it uses it
    "attribute-moved-at-use": (
        "PTF015",
        """
        import torch
        from torch import nn

        class Bucketise(nn.Module):
            def __init__(self, lo, hi, n):
                super().__init__()
                self.edges = torch.linspace(lo, hi, n)

            def forward(self, x):
                edges = self.edges.to(x.device)
                return torch.bucketize(x, edges)
        """,
    ),
    # PTF015: a placeholder replaced at run time by a tensor computed from the input
    "placeholder-replaced-at-run-time": (
        "PTF015",
        """
        import torch
        from torch import nn

        class Rotary(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.table = torch.empty(0, dim)

            def forward(self, x):
                self.table = x.float().cos()
                return x * self.table
        """,
    ),
    # PTF007: the functional dropout runs only while the module is training
    "dropout-under-a-training-test": (
        "PTF007",
        """
        import torch.nn.functional as F
        from torch import nn

        class Head(nn.Module):
            def __init__(self, p):
                super().__init__()
                self.p = p

            def forward(self, x):
                if self.p > 0 and self.training:
                    x = F.dropout(x, p=self.p)
                return x

            def smooth(self, w):
                if not self.training:
                    return w
                else:
                    return F.dropout(w, p=self.p)
        """,
    ),
    # PTF016: Lightning runs the validation step and its evaluation hooks under no_grad
    "lightning-runs-validation-without-grad": (
        "PTF016",
        """
        from lightning.pytorch import Callback

        class Regressor:
            def validation_step(self, batch, batch_idx):
                features, target = batch
                return (self.net(features) - target).abs().mean()

        class PlotPredictions(Callback):
            def on_validation_epoch_end(self, trainer, model):
                model.eval()
                for sample in trainer.val_dataloaders:
                    model(sample)
        """,
    ),
    # PTF016: a test puts the model in train mode and reads the graph it records
    "training-forward-in-an-eval-test": (
        "PTF016",
        """
        def test_eval_keeps_checkpoint_nodes(model, inputs):
            model.train()
            out = model(inputs)
            assert out.grad_fn is not None
        """,
    ),
    # PTF028: arrays nobody else holds (a Generator's draw; a local buffer handed over for good)
    "fresh-arrays-written-through": (
        "PTF028",
        """
        import numpy as np
        import torch

        def fake_tokens(seed, n, marker):
            rng = np.random.default_rng(seed)
            ids = torch.from_numpy(rng.integers(0, 1000, size=n))
            ids[:4] = marker
            return ids

        def pad_batch(rows, width, pad):
            grid = np.full((len(rows), width), pad, dtype=np.int64)
            for i, row in enumerate(rows):
                grid[i, : len(row)] = row
            batch = torch.from_numpy(grid)
            batch[batch == pad] = 0
            return batch
        """,
    ),
    # PTF125: an override passes on its own caller's arguments
    "state-dict-override-forwards": (
        "PTF125",
        """
        from torch import nn

        class Wrapper(nn.Module):
            def full_state(self, *args, **kwargs):
                with self.gathered():
                    return super().state_dict(*args, **kwargs)
        """,
    ),
    # PTF101: backward() between zero_grad() and the write fills .grad again
    "grad-written-after-backward": (
        "PTF101",
        """
        def adversarial_step(model, opt, loss, scale):
            opt.zero_grad()
            loss.backward()
            for p in model.parameters():
                p.grad *= scale
            opt.step()
        """,
    ),
    # PTF017: an early return for tensors: only numbers reach torch.tensor
    "tensor-returned-before-the-copy": (
        "PTF017",
        """
        import torch

        def as_output(value: torch.Tensor) -> torch.Tensor:
            if isinstance(value, torch.Tensor):
                return value
            return torch.tensor(value, dtype=torch.float64)
        """,
    ),
    # guards (PTF106): a torch-release flag from another module (WITH_PT20); its else runs on < 2.0
    "release-flag-from-another-module": (
        "PTF106",
        """
        from mypkg.compat import WITH_PT20

        def nbytes(t):
            if WITH_PT20:
                return t.untyped_storage().nbytes()
            else:
                return t.storage().size() * t.element_size()
        """,
    ),
    # guards (PTF126): the `if` for new torch always leaves (try/except, both return): the rest is its else
    "early-exit-through-try": (
        "PTF126",
        """
        import pickle
        import torch
        from mypkg.compat import WITH_PT24

        def read(path):
            if WITH_PT24:
                try:
                    return torch.load(path, weights_only=True)
                except pickle.UnpicklingError:
                    return torch.load(path, weights_only=False)
            return torch.load(path)
        """,
    ),
}

# (rule, snippet): the pitfall each changed rule is proven by, still caught
CAUGHT = {
    "shared-intermediate-backward-twice": (
        "PTF012",
        """
        import torch

        def grads():
            x = torch.tensor([1.0, 2.0], requires_grad=True)
            y = x * x
            first = y.sum()
            second = (2 * y).sum()
            first.backward()
            second.backward()
        """,
    ),
    "one-int-is-a-size": ("PTF008", "import torch\nx = torch.FloatTensor(3)\n"),
    "plain-tensor-attribute": (
        "PTF015",
        """
        import torch
        from torch import nn

        class Shift(nn.Module):
            def __init__(self):
                super().__init__()
                self.offset = torch.tensor([1.0, 2.0])

            def forward(self, x):
                return x + self.offset

        shift = Shift().cuda()
        """,
    ),
    "dropout-without-the-flag": (
        "PTF007",
        """
        import torch.nn.functional as F
        from torch import nn

        class Head(nn.Module):
            def forward(self, x):
                return F.dropout(x, p=0.5)
        """,
    ),
    "evaluation-with-autograd": (
        "PTF016",
        """
        def validate(model, loader):
            model.eval()
            for x in loader:
                model(x)
        """,
    ),
    "global-array-written-through": (
        "PTF028",
        """
        import numpy as np
        import torch

        arr = np.ones(7)
        t = torch.from_numpy(arr)
        t.add_(10)
        """,
    ),
    "local-array-read-again": (
        "PTF028",
        """
        import numpy as np
        import torch

        def scaled(n):
            raw = np.ones(n)
            t = torch.from_numpy(raw)
            t *= 2
            return raw.sum()
        """,
    ),
    "positional-state-dict": (
        "PTF125",
        """
        import torch.nn as nn

        def save(layer: nn.Module, dest):
            return layer.state_dict(dest, "layer.")
        """,
    ),
    "grad-written-after-zero-grad": (
        "PTF101",
        """
        def perturb(model, opt, noise):
            opt.zero_grad()
            for p in model.parameters():
                p.grad += noise
        """,
    ),
    "tensor-copied": (
        "PTF017",
        """
        import torch

        def copy(value: torch.Tensor) -> torch.Tensor:
            scaled = value * 2  # made here: a tensor (a parameter converted as passed may be an array)
            return torch.tensor(scaled)
        """,
    ),
    "storage-unguarded": ("PTF106", "import torch\n\ndef nbytes(t: torch.Tensor):\n    return t.storage().size()\n"),
    "load-unguarded": ("PTF126", "import torch\n\ndef read(path):\n    return torch.load(path)\n"),
}


@pytest.mark.parametrize("name", sorted(QUIET))
def test_the_false_finding_stays_quiet(name):
    rule, text = QUIET[name]
    assert rule not in rules_found(text)


@pytest.mark.parametrize("name", sorted(CAUGHT))
def test_the_pitfall_is_still_caught(name):
    rule, text = CAUGHT[name]
    assert rule in rules_found(text)
