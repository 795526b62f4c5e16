"""The one ``TorchFunctionMode`` every detector shares: a dict lookup per torch call, and the
detectors of that function around it. Calls nothing watches pass straight through; so do calls
while torch.compile traces (a detector's Python must not enter a graph) and calls made in a
forked child (DataLoader workers inherit the mode but report to nobody)."""
from __future__ import annotations

import os

import torch
from torch.overrides import TorchFunctionMode


def _compiling_probe():
    """torch.compiler.is_compiling (2.3+), torch._dynamo's (2.0-2.2), or never (1.13)."""
    probe = getattr(getattr(torch, "compiler", None), "is_compiling", None)
    if probe is None:
        probe = getattr(getattr(torch, "_dynamo", None), "is_compiling", None)
    return probe or (lambda: False)


is_compiling = _compiling_probe()


class WatchMode(TorchFunctionMode):
    def __init__(self, watcher, table: dict):
        super().__init__()
        self.watcher = watcher
        self.table = table
        self.pid = os.getpid()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        __tracebackhide__ = True  # pytest: the user's traceback, without the watcher's frame
        if kwargs is None:
            kwargs = {}
        if is_compiling():
            return func(*args, **kwargs)
        detectors = self.table.get(func)
        if detectors is None or self.watcher.busy or os.getpid() != self.pid:
            return func(*args, **kwargs)
        guarded = self.watcher.guarded
        states = [guarded(d, d.before, func, args, kwargs) for d in detectors]
        result = func(*args, **kwargs)
        for d, state in zip(detectors, states):
            guarded(d, d.after, func, args, kwargs, result, state)
        return result
