"""A time-first layer read as if it were batch-first (rnn-batch-first-mismatch).

``nn.RNN``, ``nn.LSTM``, ``nn.GRU``, ``nn.MultiheadAttention`` and the ``nn.Transformer`` layers
take and return (time, batch, ...) unless built with ``batch_first=True``. A batch-first tensor
fed to one runs without a complaint (the recurrence then runs across the batch), and the mistake
shows in what the code does with the output: ``out[:, -1]`` ("each sequence's last step") or
``out[:, 0]`` ("the first token") picks one position along axis 1, which for a time-first output is
one *sample* of every time step. No correct program wants that from a time-first output, whose
last step is ``out[-1]``; so the output of a time-first layer indexed at one position of axis 1 is
the sign, reported at that line.
"""

from __future__ import annotations

import weakref

import torch
from torch import nn

from torch_pitfalls.watch.detectors.base import Detector
from torch_pitfalls.watch.detectors.training import _Run

_ALL = slice(None)
LAYERS = (
    nn.RNNBase,
    nn.MultiheadAttention,
    nn.TransformerEncoderLayer,
    nn.TransformerDecoderLayer,
    nn.TransformerEncoder,
    nn.TransformerDecoder,
    nn.Transformer,
)


def _time_first(module) -> bool:
    """batch_first is False: the layer's own flag, or its attention's (the transformer layers
    keep it there; an encoder or decoder, in its first layer)."""
    if isinstance(module, (nn.TransformerEncoder, nn.TransformerDecoder)):
        module = module.layers[0] if len(module.layers) else module
    if not hasattr(module, "batch_first"):
        module = getattr(module, "self_attn", module)
    return getattr(module, "batch_first", True) is False


def _one_position_of_axis_1(key) -> bool:
    """``[:, i]``, ``[:, i, ...]``: every element of axis 0, one integer position of axis 1."""
    if not (isinstance(key, tuple) and len(key) >= 2 and key[0] == _ALL):
        return False
    i = key[1]
    if isinstance(i, torch.Tensor):
        return i.dim() == 0 and not i.is_floating_point() and i.dtype != torch.bool
    return isinstance(i, int) and not isinstance(i, bool)


class BatchFirstMismatch(Detector):
    """The output of a recurrent, attention or transformer layer built time-first (``batch_first``
    False, the default) indexed ``out[:, i]`` or ``out.select(1, i)``: one position of axis 1, the
    batch axis of that output, the batch-first idiom for "the last step" or "the first token". The
    batch-first tensor that the code treats it as went in as (time, batch) too, so the layer ran
    its recurrence or attention across the samples of the batch. Fix: ``batch_first=True``, or
    transpose the input and read ``out[-1]``."""

    case = "rnn-batch-first-mismatch"
    message = (
        "the output of a time-first layer (batch_first=False, the default for nn.RNN/LSTM/GRU, "
        "nn.MultiheadAttention and nn.Transformer) was indexed out[:, i], the batch-first way to pick a "
        "time step: its axis 1 is the batch, so the input was most likely batch-first too and the layer "
        "ran across the samples; build the layer with batch_first=True (or transpose the input and read out[-1])"
    )
    KEPT = 64  # outputs remembered

    def functions(self):
        return (torch.Tensor.__getitem__, torch.Tensor.select)

    def start(self):
        self.outputs: dict[int, tuple] = {}  # id(output) -> (weakref, layer name)
        self.run = _Run.join(self)
        self.run.on_return.append(self._returned)

    def stop(self):
        if self._returned in self.run.on_return:
            self.run.on_return.remove(self._returned)
        self.run.leave(self)
        self.outputs = {}

    def _returned(self, module, out, stack) -> None:
        if isinstance(module, LAYERS) and _time_first(module):
            self.watcher.guarded(self, self._keep, module, out)

    def _keep(self, module, out) -> None:
        first = out[0] if isinstance(out, tuple) else out
        if isinstance(first, torch.Tensor) and first.dim() >= 2:
            if len(self.outputs) >= self.KEPT:
                self.outputs = {k: v for k, v in self.outputs.items() if v[0]() is not None}
                while len(self.outputs) >= self.KEPT:
                    del self.outputs[next(iter(self.outputs))]
            self.outputs[id(first)] = (weakref.ref(first), type(module).__name__)

    def before(self, func, args, kwargs):
        if len(args) < 2 or not self.outputs:
            return
        entry = self.outputs.get(id(args[0]))
        if entry is None or entry[0]() is not args[0]:
            return
        if func is torch.Tensor.select:
            dim = args[1] if len(args) > 1 else kwargs.get("dim")
            hit = dim == 1 or dim == 1 - args[0].dim()
        else:
            hit = _one_position_of_axis_1(args[1])
        if hit:
            shape = tuple(args[0].shape)
            self.report(
                f"{entry[1]}(batch_first=False) output of shape {shape} (time, batch, ...) indexed at one "
                f"position of axis 1, its batch axis"
            )
