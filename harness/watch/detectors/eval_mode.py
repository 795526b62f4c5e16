"""eval-without-no-grad: a model in eval mode run with gradients on records a graph (and keeps
its activations) that no backward ever uses."""

from __future__ import annotations

import weakref

import torch
from torch.nn.modules import module as nn_module

from torch_pitfalls.watch.detectors.base import Detector
from torch_pitfalls.watch.sites import user_site


class _Graph:
    """Lives in the output's grad_fn metadata, so it dies with the graph: if backward never
    reached that node by then, the graph was recorded for nothing."""

    def __init__(self):
        self.used = False

    def reached(self, *grads):
        self.used = True


class EvalWithoutNoGrad(Detector):
    case = "eval-without-no-grad"
    message = (
        "a model in eval mode ran with gradients on: the forward recorded a graph and kept activations "
        "that no backward used; wrap evaluation in torch.no_grad() (or torch.inference_mode())"
    )
    KEY = "pitfalls_watch_eval_output"

    def start(self):
        self.depth, self.pending = 0, []
        try:  # always_call (2.1+) keeps the depth right when a forward raises
            post = nn_module.register_module_forward_hook(self._post, always_call=True)
        except TypeError:
            post = nn_module.register_module_forward_hook(self._post)
        self.handles = [nn_module.register_module_forward_pre_hook(self._pre), post]

    def stop(self):
        for h in self.handles:
            h.remove()
        for f in self.pending:  # graphs still alive when watching ends are judged now
            f()

    def _pre(self, module, args):
        self.depth += 1

    def _post(self, module, args, output):
        self.depth -= 1
        if self.depth == 0 and not module.training and torch.is_grad_enabled():
            self.watcher.guarded(self, self._watch_output, module, output)

    def _watch_output(self, module, output):
        out = output if isinstance(output, torch.Tensor) else None
        if out is None and isinstance(output, (tuple, list)) and output and isinstance(output[0], torch.Tensor):
            out = output[0]
        node = None if out is None else out.grad_fn
        if node is None or self.KEY in node.metadata:
            return
        graph = _Graph()
        node.register_prehook(graph.reached)
        node.metadata[self.KEY] = graph
        finalizer = weakref.finalize(graph, self._freed, graph.__dict__, user_site(2), type(module).__name__)
        finalizer.atexit = False
        self.pending = [f for f in self.pending if f.alive] + [finalizer]

    def _freed(self, state, site, name):
        if not state["used"]:
            self.report(f"{name} in eval mode: its output's graph was freed without a backward", site=site)
