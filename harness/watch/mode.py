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
    """``table`` maps a torch callable to its watchers: (detector, before or None, after or None),
    only the methods a detector overrides, so an unwatched side costs nothing."""

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
        entries = self.table.get(func)
        if entries is None or self.watcher.busy or os.getpid() != self.pid:
            return func(*args, **kwargs)
        guarded = self.watcher.guarded
        states = [before and guarded(d, before, func, args, kwargs) for d, before, _ in entries]
        result = func(*args, **kwargs)
        for (d, _, after), state in zip(entries, states):
            if after is not None:
                guarded(d, after, func, args, kwargs, result, state)
        return result


# Modules whose inference fast path (fused kernels) is taken only when no torch-function mode is
# on (they ask torch.overrides.has_torch_function): under the watcher they would run the slow
# path, 3x slower and not bit-identical. Their forward runs with the watcher's mode set aside.
FAST_PATH = (torch.nn.MultiheadAttention, torch.nn.TransformerEncoderLayer, torch.nn.TransformerEncoder)


class FastPathsKept:
    """Global forward hooks that take the watcher's mode off the stack around a fast-path
    module's forward (when it is on top) and put it back after, also when the forward raises."""

    def __init__(self, mode: WatchMode):
        self.mode, self.popped, self.handles = mode, [], []

    def start(self) -> None:
        from torch.nn.modules import module as nn_module

        if not hasattr(torch._C, "_pop_torch_function_stack"):  # 1.13: one mode, no stack to edit
            return
        try:
            post = nn_module.register_module_forward_hook(self._after, always_call=True)
        except TypeError:  # before 2.1 a raising forward would leave the mode off: keep the slow path
            return
        self.handles = [nn_module.register_module_forward_pre_hook(self._before), post]

    def stop(self) -> None:
        for h in self.handles:
            h.remove()

    def _before(self, module, args):
        if not isinstance(module, FAST_PATH):
            return
        n = torch._C._len_torch_function_stack()
        top = torch._C._get_function_stack_at(n - 1) if n else None
        self.popped.append(top is self.mode)
        if top is self.mode:
            torch._C._pop_torch_function_stack()

    def _after(self, module, args, output):
        if isinstance(module, FAST_PATH) and self.popped and self.popped.pop():
            torch._C._push_on_torch_function_stack(self.mode)


def set_aside(mode: WatchMode) -> bool:
    """Take ``mode`` off the top of torch's function-mode stack, where it is on top: the calls
    that follow (an optimizer's step, which the watcher does not look into) then skip the
    Python dispatch entirely. True when it was taken off; ``put_back`` returns it."""
    if not hasattr(torch._C, "_pop_torch_function_stack"):  # 1.13: one mode, no stack to edit
        return False
    n = torch._C._len_torch_function_stack()
    if n and torch._C._get_function_stack_at(n - 1) is mode:
        torch._C._pop_torch_function_stack()
        return True
    return False


def put_back(mode: WatchMode) -> None:
    torch._C._push_on_torch_function_stack(mode)
