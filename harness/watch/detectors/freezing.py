"""Freezing and modes gone wrong, seen from the modules that run: the output layer frozen while
layers before it train (frozen-by-name-filter), ``.eval()`` taken for a freeze
(model-eval-freezes-nothing), and training left in eval mode after an evaluation
(forgot-train-after-eval).

The first two are heuristic (``--pedantic``): freezing the output layer is what adapter fine-tuning
does on purpose (LoRA or prompt tuning leave a language model's head as it was), and training a
submodule in eval mode is how some fine-tuning recipes keep dropout off. The third is sound: it asks
for a model that took steps in training mode before.
"""

from __future__ import annotations

import weakref

import torch
from torch import nn
from torch.nn.modules.batchnorm import _NormBase

from torch_pitfalls.watch.detectors.base import ClassPatch, Detector
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


REQUIRES_GRAD_SET = torch.Tensor.requires_grad.__set__
FREEZES = (REQUIRES_GRAD_SET, torch.Tensor.requires_grad_)


class FrozenOutputLayer(Detector):
    """In a top-level module's forward, run with gradients on, the last layer with parameters to
    run had every parameter frozen (``requires_grad`` False) and yet an output that requires grad
    (trainable layers before it), while an optimizer steps other parameters of that model: the
    layer that makes the predictions cannot learn, only what feeds it. What a name filter such as
    ``"fc" not in name`` does to a model whose head has another name. Reported once per model and
    layer, at the line that froze the layer's parameter (``p.requires_grad = False``,
    ``requires_grad_(False)``) when the watcher saw it, else at the line that called the model. Fix: freeze by module (``model.backbone.requires_grad_(False)``)
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

    def functions(self):
        return FREEZES

    def before(self, func, args, kwargs):
        if len(args) < 1 or not isinstance(args[0], nn.Parameter):
            return
        value = args[1] if len(args) > 1 else kwargs.get("requires_grad", func is not REQUIRES_GRAD_SET)
        if value is False and len(self.frozen_at) < 100_000:
            self.frozen_at[id(args[0])] = (weakref.ref(args[0]), user_site(2))

    def start(self):
        self.frozen_at: dict[int, tuple] = {}  # id(parameter) -> (weakref, the line that froze it)
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
            frozen = [self.frozen_at.get(id(p)) for p in _own(layer)]
            at = next((f[1] for f, p in zip(frozen, _own(layer)) if f is not None and f[0]() is p and f[1]), None)
            ran = f"; the model runs at line {site[1]}" if at and site else ""
            self.report(
                f"{type(root).__name__}.{name} ({type(layer).__name__}), the last layer to run, is frozen; "
                f"trainable: {_listed(trainable, 4)}{ran}",
                site=at or site,
            )


class ModelEvalFreezesNothing(Detector):
    """``.eval()`` (``.train(False)``) called on a part of a model (a submodule, not the model a
    loop calls), after which, within the next ``STEPS`` optimizer steps, an optimizer updates the
    weights of that part: eval mode only switches dropout and batch norm, it freezes no weight (and
    a later ``model.train()`` undoes even that). Only layers whose behaviour eval mode does not
    change count as evidence (a Linear, a convolution, an embedding; not a norm layer, which recipes
    put in eval mode on purpose while training its affine weights). A part that is then run with
    gradients off was put in eval mode to be evaluated, and is left alone. Reported at the line
    that called ``.eval()``. Fix: ``requires_grad_(False)`` on the part to freeze (and eval mode
    too, to keep its batch-norm statistics)."""

    case = "model-eval-freezes-nothing"
    pedantic = True
    message = (
        "a part of the model was put in eval mode, and an optimizer then updated its weights: .eval() "
        "only switches dropout and batch norm, it does not freeze parameters; use "
        "module.requires_grad_(False) to freeze (keep .eval() as well for frozen batch-norm statistics)"
    )
    STEPS = 3  # optimizer steps looked at after each .eval()

    def start(self):
        self.sites: dict[int, list] = {}  # id(module) -> [weakref, site of its .eval(), steps since]
        self.depth = 0
        self.run = _Run.join(self)
        self.run.on_return.append(self._returned)
        detector = self

        def watched(original):
            def train(module, mode=True):
                detector.depth += 1
                try:
                    return original(module, mode)
                finally:
                    detector.depth -= 1
                    if detector.depth == 0 and mode is False:
                        detector.watcher.guarded(detector, detector._evaluated, module)

            return train

        self.patch = ClassPatch(nn.Module, "train", watched)
        self.handles = _step_hooks(pre=self._stepping)

    def stop(self):
        for h in self.handles:
            h.remove()
        self.patch.restore()
        if self._returned in self.run.on_return:
            self.run.on_return.remove(self._returned)
        self.run.leave(self)

    def _evaluated(self, module) -> None:
        if len(self.sites) < 1000:
            self.sites[id(module)] = [weakref.ref(module), user_site(2), 0]

    def _returned(self, module, out, stack) -> None:
        if self.sites and not torch.is_grad_enabled():
            entry = self.sites.get(id(module))
            if entry is not None and entry[0]() is module:
                del self.sites[id(module)]  # run with gradients off: evaluated, not meant frozen

    def _stepping(self, opt, args, kwargs):
        if self.sites:
            self.watcher.guarded(self, self._step, opt)

    def _step(self, opt) -> None:
        stepped = {id(p) for p in _params(opt) if p.requires_grad and p.grad is not None}
        for key, entry in list(self.sites.items()):
            module, site = entry[0](), entry[1]
            entry[2] += 1
            ran_alone = self.run.roots.get(key)
            if module is None or entry[2] > self.STEPS or (ran_alone is not None and ran_alone() is module):
                del self.sites[key]  # gone, looked at long enough, or a whole model (evaluated on its own)
                continue
            layers = [
                name
                for name, m in module.named_modules()
                if not isinstance(m, _NormBase) and any(id(p) in stepped for p in _own(m))
            ]
            if layers:
                del self.sites[key]
                still = "is still" if not module.training else "was put"
                self.report(
                    f"{type(module).__name__} {still} in eval mode, and {type(opt).__name__} steps the weights "
                    f"of {len(layers)} of its layers: {_listed([n or type(module).__name__ for n in layers], 4)}",
                    site=site,
                )


# -- forgot-train-after-eval -------------------------------------------------------------------------------
def _mode_layers(module) -> list:
    """The submodules whose forward depends on the mode: dropout that drops, batch norm that tracks."""
    return [
        m
        for m in module.modules()
        if (isinstance(m, nn.modules.dropout._DropoutNd) and m.p > 0)
        or (isinstance(m, nn.modules.batchnorm._BatchNorm) and m.track_running_stats)
    ]


class ForgotTrainAfterEval(Detector):
    """Optimizer steps on a model whose forward ran in eval mode although it holds dropout or batch
    norm, after the same model took steps in training mode: an evaluation switched it to eval and
    nothing switched it back. A model fine-tuned in eval mode on purpose is in eval mode from its
    first step and is left alone (so is one trained in eval mode from the start by mistake: no sign
    tells the two apart). Reported once per model, at the line of the forward that ran in eval mode. Fix: ``model.train()`` at the start of
    every epoch (evaluation calls ``model.eval()``)."""

    case = "forgot-train-after-eval"
    message = (
        "the model trains in eval mode: an evaluation called model.eval() and nothing called model.train() "
        "again, so dropout is off and batch norm neither uses the batch's statistics nor updates its running "
        "ones; call model.train() at the start of every epoch"
    )

    def start(self):
        self.ran: dict[
            int, tuple
        ] = {}  # id(root) -> (weakref, training, site) of its grad-enabled calls since the step
        self.trained: set[int] = set()  # roots that took a step in training mode
        self.done: set[int] = set()
        self.run = _Run.join(self)
        self.run.on_root.append(self._root)
        self.handles = _step_hooks(pre=self._stepping)

    def stop(self):
        for h in self.handles:
            h.remove()
        if self._root in self.run.on_root:
            self.run.on_root.remove(self._root)
        self.run.leave(self)

    def _root(self, module) -> None:
        if not torch.is_grad_enabled() or id(module) in self.done:
            return
        entry = self.ran.get(id(module))
        if entry is None or entry[0]() is not module or entry[1] != module.training:
            if len(self.ran) > 256:
                self.ran = {k: v for k, v in self.ran.items() if v[0]() is not None}
            self.ran[id(module)] = (weakref.ref(module), module.training, user_site(3))

    def _stepping(self, opt, args, kwargs):
        if self.ran:
            self.watcher.guarded(self, self._step, opt)

    def _step(self, opt) -> None:
        stepped = {id(p) for p in _params(opt) if p.grad is not None}
        ran, self.ran = self.ran, {}
        for key, (ref, training, site) in ran.items():
            root = ref()
            if root is None or not any(id(p) in stepped for p in root.parameters()):
                continue  # not what this optimizer trains
            if training:
                self.trained.add(key)
                continue
            layers = _mode_layers(root)
            if layers and key in self.trained:
                self.done.add(key)
                kinds = sorted({type(m).__name__ for m in layers})
                self.report(
                    f"{type(root).__name__} ran in eval mode ({', '.join(kinds)} inside) for a "
                    f"{type(opt).__name__} step after steps in training mode",
                    site=site,
                )
