"""param-reassignment-detaches-optimizer: ``module.weight = nn.Parameter(...)`` (or a whole layer,
``model.fc = nn.Linear(...)``) after the optimizer was built leaves the optimizer stepping the old
Parameters, which the model no longer uses."""

from __future__ import annotations

import weakref

from torch.nn.modules import module as nn_module
from torch.optim import optimizer as optim

from torch_pitfalls.watch.detectors.base import Detector
from torch_pitfalls.watch.sites import user_site


class ParamReassignmentDetachesOptimizer(Detector):
    case = "param-reassignment-detaches-optimizer"
    message = (
        "the optimizer steps a Parameter the model replaced after the optimizer was built, so the model's "
        "new Parameter never changes; copy new values into the existing one (with torch.no_grad(): "
        "p.copy_(...)) or build the optimizer after the replacement"
    )

    def start(self):
        self.replaced: dict[int, tuple] = {}  # id(old Parameter) -> (its weakref, where, which)
        self.handles = [
            nn_module.register_module_parameter_registration_hook(self._registered),
            nn_module.register_module_module_registration_hook(self._module_registered),
            optim.register_optimizer_step_pre_hook(self._stepping),
        ]

    def stop(self):
        for h in self.handles:
            h.remove()

    def _registered(self, module, name, param):
        self.watcher.guarded(self, self._note, module, name, param)

    def _module_registered(self, module, name, child):
        self.watcher.guarded(self, self._note_module, module, name, child)

    def _note(self, module, name, param):
        old = module._parameters.get(name)
        if old is not None and old is not param:
            self._remember(old, user_site(2), f"{type(module).__name__}.{name}")

    def _note_module(self, module, name, child):
        old = module._modules.get(name)
        if old is None or old is child:
            return
        site = user_site(2)
        kept = {id(p) for p in child.parameters()} if child is not None else set()
        for pname, p in old.named_parameters():
            if id(p) not in kept:  # a Parameter the new layer does not reuse
                self._remember(p, site, f"{type(module).__name__}.{name}.{pname}")

    def _remember(self, old, site, which):
        key = id(old)
        self.replaced[key] = (weakref.ref(old, lambda _, k=key: self.replaced.pop(k, None)), site, which)

    def _stepping(self, opt, args, kwargs):
        self.watcher.guarded(self, self._check, opt)

    def _check(self, opt):
        if not self.replaced:
            return
        for group in opt.param_groups:
            for p in group["params"]:
                entry = self.replaced.get(id(p))
                if entry is not None and entry[0]() is p:
                    self.report(
                        f"{entry[2]} was replaced; {type(opt).__name__}.step() still updates the old one", site=entry[1]
                    )
