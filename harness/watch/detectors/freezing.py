"""Freezing gone wrong, seen from the modules that run: the output layer frozen while layers before
it train (frozen-by-name-filter), and ``.eval()`` taken for a freeze (model-eval-freezes-nothing).

Both are heuristic (``--pedantic``): freezing the output layer is what adapter fine-tuning does on
purpose (LoRA or prompt tuning leave a language model's head as it was), and training a submodule
in eval mode is how some fine-tuning recipes keep dropout off.
"""

from __future__ import annotations

import weakref

import torch
from torch import nn
from torch.nn.modules.batchnorm import _NormBase

from torch_pitfalls.watch.detectors.base import Detector
from torch_pitfalls.watch.detectors.training import _listed, _params, _Run, _step_hooks
from torch_pitfalls.watch.sites import user_site


def _own(module) -> list:
    return [p for p in module._parameters.values() if p is not None]


def _first_tensor(out):
    if isinstance(out, torch.Tensor):
        return out
    if isinstance(out, (list, tuple)) and out and isinstance(out[0], torch.Tensor):
        return out[0]
    return None


class FrozenOutputLayer(Detector):
    """In a top-level module's forward, run with gradients on, the last layer with parameters to
    run had every parameter frozen (``requires_grad`` False) and yet an output that requires grad
    (trainable layers before it), while an optimizer steps other parameters of that model: the
    layer that makes the predictions cannot learn, only what feeds it. What a name filter such as
    ``"fc" not in name`` does to a model whose head has another name. Reported once per model and
    layer, at the line that called the model. Fix: freeze by module (``model.backbone.requires_grad_(False)``)
    and print the trainable names before training."""

    case = "frozen-by-name-filter"
    pedantic = True
    message = (
        "the model's last layer (its output layer) is frozen while layers before it train: the layer "
        "that makes the predictions cannot learn (a freezing filter such as '\"fc\" not in name' that "
        "matched the wrong names?); freeze by module, e.g. model.backbone.requires_grad_(False), and "
        "print the names of the trainable parameters once (unless the head is frozen on purpose, as in "
        "adapter fine-tuning)"
    )

    def start(self):
        self.call = None  # (root, its call site) of the top-level call running
        self.last = None  # (layer, whether its output requires grad) of the last layer with parameters
        self.candidates: dict[tuple, tuple] = {}  # (id root, id layer) -> (weakrefs, site, name)
        self.done: set[tuple] = set()
        self.run = _Run.join(self)
        self.run.on_root.append(self._root)
        self.run.on_return.append(self._returned)
        self.handles = _step_hooks(pre=self._stepping)

    def stop(self):
        for h in self.handles:
            h.remove()
        for hooks, fn in ((self.run.on_root, self._root), (self.run.on_return, self._returned)):
            if fn in hooks:
                hooks.remove(fn)
        self.run.leave(self)

    def _root(self, module) -> None:
        self.call = (module, user_site(3)) if torch.is_grad_enabled() else None
        self.last = None

    def _returned(self, module, out, stack) -> None:
        if self.call is None:
            return
        if stack:
            if module._parameters and _own(module):
                t = _first_tensor(out)
                self.last = (module, t is not None and t.requires_grad)
            return
        root, site = self.call
        self.call = None
        if root is not module or self.last is None:
            return
        layer, output_requires_grad = self.last
        if not output_requires_grad or any(p.requires_grad for p in _own(layer)):
            return
        key = (id(root), id(layer))
        if key in self.done or key in self.candidates:
            return
        self.watcher.guarded(self, self._candidate, key, root, layer, site)

    def _candidate(self, key, root, layer, site) -> None:
        trainable = [n for n, p in root.named_parameters() if p.requires_grad]
        if not trainable:
            return
        name = next((n for n, m in root.named_modules() if m is layer), type(layer).__name__)
        self.candidates[key] = (weakref.ref(root), weakref.ref(layer), site, name, trainable)

    def _stepping(self, opt, args, kwargs):
        if self.candidates:
            self.watcher.guarded(self, self._step, opt)

    def _step(self, opt) -> None:
        held = {id(p) for p in _params(opt)}
        for key, (root_ref, layer_ref, site, name, trainable) in list(self.candidates.items()):
            root, layer = root_ref(), layer_ref()
            if root is None or layer is None:
                del self.candidates[key]
                continue
            if not any(id(p) in held and p.requires_grad for p in root.parameters()):
                continue  # this optimizer trains another model
            del self.candidates[key]
            self.done.add(key)
            if any(p.requires_grad for p in _own(layer)):
                continue  # unfrozen since
            self.report(
                f"{type(root).__name__}.{name} ({type(layer).__name__}), the last layer to run, is frozen; "
                f"trainable: {_listed(trainable, 4)}",
                site=site,
            )


class ModelEvalFreezesNothing(Detector):
    """A submodule put in eval mode (``.eval()``, ``.train(False)``) inside a model that is
    training, whose layers' parameters still receive gradients that an optimizer steps: eval mode
    only switches dropout and batch norm, it freezes no weight. Only layers whose behaviour eval
    mode does not change count as evidence (a Linear, a convolution, an embedding; not a norm layer,
    which recipes put in eval mode on purpose while training its affine weights). Reported at the
    line that called ``.eval()``. Fix: ``requires_grad_(False)`` on the part to freeze (and eval
    mode too, to keep its batch-norm statistics)."""

    case = "model-eval-freezes-nothing"
    pedantic = True
    message = (
        "a submodule was put in eval mode while the model trains, and an optimizer still updates its "
        "weights: .eval() only switches dropout and batch norm, it does not freeze parameters; use "
        "module.requires_grad_(False) to freeze (keep .eval() as well for frozen batch-norm statistics)"
    )
    STEPS = 3  # optimizer steps looked at

    def start(self):
        self.sites: dict[int, tuple] = {}  # id(module) -> (weakref, site of its .eval())
        self.depth = 0
        self.steps = 0
        self.run = _Run.join(self)
        self.original = nn.Module.__dict__["train"]
        detector = self

        def train(module, mode=True):
            detector.depth += 1
            try:
                return detector.original(module, mode)
            finally:
                detector.depth -= 1
                if detector.depth == 0 and mode is False:
                    detector.watcher.guarded(detector, detector._evaluated, module)

        train.__wrapped__ = self.original
        train.__doc__ = self.original.__doc__
        self.patched = train
        nn.Module.train = train
        self.handles = _step_hooks(pre=self._stepping)

    def stop(self):
        for h in self.handles:
            h.remove()
        if nn.Module.__dict__.get("train") is self.patched:
            nn.Module.train = self.original
        self.run.leave(self)

    def _evaluated(self, module) -> None:
        if len(self.sites) < 1000:
            self.sites[id(module)] = (weakref.ref(module), user_site(2))

    def _stepping(self, opt, args, kwargs):
        if self.sites and self.steps < self.STEPS:
            self.steps += 1
            self.watcher.guarded(self, self._step, opt)

    def _step(self, opt) -> None:
        stepped = {id(p) for p in _params(opt) if p.requires_grad and p.grad is not None}
        training_roots = [r for r in self.run.live_roots() if r.training]
        for key, (ref, site) in list(self.sites.items()):
            module = ref()
            if module is None or module.training:
                del self.sites[key]
                continue
            if not any(any(m is module for m in root.modules()) for root in training_roots):
                continue
            layers = [
                name
                for name, m in module.named_modules()
                if not m.training and not isinstance(m, _NormBase) and any(id(p) in stepped for p in _own(m))
            ]
            if layers:
                del self.sites[key]
                self.report(
                    f"{type(module).__name__} is in eval mode inside a training model, and "
                    f"{type(opt).__name__} steps the weights of {len(layers)} of its layers: "
                    f"{_listed([n or type(module).__name__ for n in layers], 4)}",
                    site=site,
                )
